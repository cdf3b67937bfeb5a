"""The lingjun-cluster blueprint's meaning: Lingjun nodes on their own RDMA fabric, trained on through ACK."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from blueprints.advisor.budget import BudgetTier
from blueprints.architectures.kubernetes_pool.kueue import ACK_TOPOLOGY_DOC, TopologyChoice
from blueprints.architectures.kubernetes_pool.spec import AckPoolSpec
from blueprints.architectures.lingjun_cluster.profile import LingjunCompute, LingjunProfile, lingjun_row
from blueprints.catalog.pricing import price_cny
from blueprints.catalog.records import InstanceType
from blueprints.launch.kubernetes import RDMA_DEVICE_RESOURCE

if TYPE_CHECKING:
    from blueprints.catalog import Catalog

# ACK's lingjun-networktopology-collector labels Lingjun nodes with their PoD and access switch (ACK_TOPOLOGY_DOC):
# Kueue places a job's pods by them, widest level first, and by host last.
LINGJUN_TOPOLOGY = TopologyChoice(
    levels=("alibabacloud.com/point-of-delivery", "alibabacloud.com/asw-id", "kubernetes.io/hostname"),
    note=(
        "Topology-aware: Kueue places a job's pods under as few PoDs and access switches as fit (Topology levels "
        "alibabacloud.com/point-of-delivery, alibabacloud.com/asw-id, kubernetes.io/hostname), the labels ACK's "
        f"lingjun-networktopology-collector sets on Lingjun nodes ({ACK_TOPOLOGY_DOC})"
    ),
)

# ACK's RDMA device plugin: it registers a Lingjun node's RDMA NICs as rdma/hca (ACK "RDMA Device Plugin",
# https://help.aliyun.com/zh/ack/ack-managed-and-ack-dedicated/user-guide/rdma-device-plugin/).
RDMA_DEVICE_PLUGIN = "ack-rdma-device-plugin"
# ACK's CPFS mount client: CPFS mounts go through it once csi-plugin's FeatureGate AlinasMountProxy=true is set (ACK
# "管理cnfs-nas-daemon组件", https://www.alibabacloud.com/help/zh/ack/ack-managed-and-ack-dedicated/user-guide/manage-cnfs-nas-daemon).
CPFS_MOUNT_DAEMON = "cnfs-nas-daemon"

# ACK's Lingjun node management fee tiers (prices.csv ack_lingjun_node_fee): (first GPU count above the tier, tier).
FEE_TIERS = ((100, "gpus-0-100"), (500, "gpus-100-500"), (1000, "gpus-500-1000"), (None, "gpus-1000-"))

# How a Lingjun node gets ready (PAI custom images: https://www.alibabacloud.com/help/en/pai/use-a-custom-image).
LINGJUN_FABRIC = (
    "Lingjun RDMA (HPN): RoCE through the node's mlx5 devices, PAI's Lingjun NCCL defaults (NCCL_IB_HCA=mlx5, "
    "NCCL_IB_GID_INDEX=3, NCCL_IB_TC=136, NCCL_IB_SL=5, NCCL_IB_TIMEOUT=22, NCCL_IB_QPS_PER_CONNECTION=8); 800 Gbit/s "
    "as PAI states it for the cluster network (per node: the node spec's NICs)"
)


def fee_tier(gpus: int) -> str:
    """The prices.csv tier of ACK's Lingjun node management fee for a pool of ``gpus`` GPUs."""
    return next(tier for bound, tier in FEE_TIERS if bound is None or gpus <= bound)


class LingjunClusterSpec(AckPoolSpec[LingjunProfile]):
    """Lingjun cluster: PAI-Lingjun nodes on their own RDMA fabric (HPN), joined to an ACK Pro cluster as a Lingjun
    node pool, with Kueue and Kubeflow Trainer as on kubernetes-pool.

    For jobs on hundreds to thousands of GPUs whose gradients cross nodes every step: the HPN fabric (800 Gbit/s as
    PAI states it) is far above the 160 Gbit/s eRDMA of ECS GPU types. The nodes are bought (pay-as-you-go or a
    subscription), not autoscaled; the file system and the bucket outlive the cluster as on every blueprint, and an
    existing CPFS for Lingjun file system (which pulumi-alicloud cannot create) is shown and exported for jobs.
    """

    name = "lingjun-cluster"
    profile_model = LingjunProfile
    compute_unit = "lingjun"
    node_repair = "ACK's node auto repair repairs the Lingjun nodes of its Lingjun node pool"
    park_refusal = "Lingjun nodes are bought whole: remove them (compute.nodes) or destroy the stack to stop paying"
    foreign_node_image = "its Lingjun nodes boot compute.node_image_id (a Lingjun image) with their own drivers"

    def __init__(self, profile: LingjunProfile, catalog: "Catalog", today: dt.date):
        self.profile = profile
        self.catalog = catalog
        self.today = today
        self.instance = self.node_type()

    def node_type(self) -> InstanceType:
        """The Lingjun node as an instance record: the catalog row's id and fabric, the profile's stated spec."""
        compute = self.lingjun_compute
        row = lingjun_row(self.catalog, compute.instance_type)
        assert row is not None  # the profile checked it
        node = compute.node_spec
        rdma_gbps = node.rdma_nics * node.rdma_gbps_per_nic if node.rdma_nics and node.rdma_gbps_per_nic else None
        return InstanceType(
            instance_type=row.machine_type,
            family=row.family,
            vcpus=node.vcpus,
            memory_gib=node.memory_gib,
            gpu_model=node.gpu_model,
            gpu_model_confidence="stated" if node.gpu_model else None,
            gpu_count=node.gpus,
            gpu_memory_gib=None,
            network_gbps=None,
            rdma=row.fabric,
            rdma_gbps=rdma_gbps,
            rdma_nics=node.rdma_nics,
            nvlink=None,
            spec_source=f"profile compute.node_spec ({node.source}); id and fabric: {row.source}",
            spec_date=self.today.isoformat(),
            regions=row.regions,
            notes=row.notes,
        )

    @property
    def lingjun_compute(self) -> LingjunCompute:
        """The profile's compute section: the Lingjun nodes."""
        return self.profile.compute

    @property
    def network_instance_type(self) -> str:
        """The ACK system pool's ECS type: Lingjun machine types are not ECS types, so no ECS zone query knows them;
        the Lingjun nodes' zone is compute.zone, which the profile requires network.zones to be."""
        return self.settings.system_instance_type

    @property
    def cpfs_volume(self) -> tuple[str, str, str, int] | None:
        """The profile's CPFS for Lingjun file system, as a static volume every job mounts at /mnt/cpfs."""
        cpfs = self.profile.cpfs
        if cpfs is None:
            return None
        return (cpfs.file_system_id, cpfs.vpc_mount_target, cpfs.vsc_mount_target, cpfs.capacity_gib)

    @property
    def rdma_device(self) -> str | None:
        """Lingjun nodes' RDMA NICs, as ACK's RDMA device plugin advertises them."""
        return RDMA_DEVICE_RESOURCE

    @property
    def topology(self) -> TopologyChoice:
        """Lingjun nodes carry ACK's PoD and access-switch labels."""
        return LINGJUN_TOPOLOGY

    def addons(self) -> tuple[tuple[str, str, str], ...]:
        """As kubernetes-pool's without eRDMA, with ACK's RDMA device plugin: the fabric is Lingjun's RDMA."""
        wanted = (RDMA_DEVICE_PLUGIN, CPFS_MOUNT_DAEMON) if self.profile.cpfs else (RDMA_DEVICE_PLUGIN,)
        base = super().addons()
        chosen = [a for a in base if a[0] != "ack-erdma-controller" and a[0] not in wanted]
        pinned = [next((a for a in base if a[0] == name), (name, "", "")) for name in wanted]
        return (*chosen, *pinned)

    def compute_summary(self) -> dict[str, Any]:
        """The Lingjun nodes, their fabric and fee, then the cluster and queues as on kubernetes-pool."""
        compute = self.lingjun_compute
        node = compute.node_spec
        gpus = compute.nodes * node.gpus
        summary = super().compute_summary()
        summary["node_pools"] = (
            f"system: {self.settings.system_nodes} × {self.settings.system_instance_type}; gpu: a Lingjun node pool "
            f"of {compute.nodes} × {compute.instance_type} (bought, not autoscaled)"
        )
        fee = price_cny(self.catalog, "ack_lingjun_node_fee", fee_tier(gpus), self.profile.region)
        cpfs = self.profile.cpfs
        per_day = "unknown" if fee.cny is None else f"{fee.cny * gpus:,.2f} CNY/day"
        summary.update(
            lingjun=(
                f"{compute.nodes} × {compute.instance_type} ({compute.payment_type}"
                + (f", {compute.period_months} months" if compute.period_months else "")
                + f") in {compute.zone}, HPN zone {compute.hpn_zone}, a Lite Lingjun cluster in the training VPC"
            ),
            lingjun_node_spec=(
                f"{node.gpus} × {node.gpu_model or 'unnamed GPU'}, {node.vcpus} vCPUs, {node.memory_gib:g} GiB per "
                f"node, as stated by the profile ({node.source}): Alibaba publishes no spec for Lingjun machine types "
                "(eflo-controller ListMachineTypes)"
            ),
            lingjun_price=(
                "sold on quote: no list price, so the nodes' cost lines stay unknown (prices.csv lingjun_node)"
            ),
            lingjun_management_fee=(
                f"ACK's Lingjun node management fee, {gpus} GPUs at tier {fee_tier(gpus)}: {per_day} ({fee.source})"
            ),
            cpfs_for_lingjun=(
                f"{cpfs.file_system_id} (existing; HPN zone {cpfs.hpn_zone}), a static volume every job mounts at "
                "/mnt/cpfs through the bmcpfsplugin.csi.alibabacloud.com driver (VSC on Lingjun nodes); the "
                f"{CPFS_MOUNT_DAEMON} add-on is installed, and csi-plugin's FeatureGate AlinasMountProxy=true is a "
                "console step (ACK, manage cnfs-nas-daemon): aitrain does not know the add-on's config key for it"
                if cpfs
                else "none: pulumi-alicloud 4.0.0 cannot create CPFS for Lingjun (nas.FileSystem takes standard, "
                "extreme, cpfs, cpfsse); create one in the NAS console (CPFS for Lingjun) in this region and HPN zone "
                "and set cpfs.file_system_id"
            ),
        )
        return summary

    def node_software_summary(self) -> dict[str, Any]:
        """Lingjun nodes ship their drivers; PyTorch comes from the job's image; the fabric is Lingjun's RDMA."""
        return {
            "gpu_software": "Lingjun nodes ship built-in drivers (node_image_id); PyTorch, CUDA >= 11.2 and NCCL >= "
            "2.12.10 with the RDMA libraries come from each job's container image (PAI custom-image requirements)",
            "boot_to_ready": "unknown (UNVERIFIED): no Alibaba page states how long a Lingjun node takes to join",
            "fabric": LINGJUN_FABRIC,
        }

    def price_basis(self) -> tuple[int, str]:
        """Quoted at every node: they all run (a Lingjun node has no list price, so the figure stays unknown)."""
        return self.lingjun_compute.nodes, "every Lingjun node (bought, not autoscaled)"

    @classmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple[BudgetTier, ...]:
        """None: with no published GPU or price for any Lingjun type the advisor cannot choose it; it lists it."""
        return ()

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """The compute section for a machine type and node count (node spec, zones and image left to the user)."""
        return {"instance_type": instance_type, "nodes": nodes * jobs_in_parallel, "nodes_per_job": nodes}

    def security_notes(self) -> list[str]:
        """kubernetes-pool's notes, and what a reviewer of Lingjun nodes must know."""
        notes = super().security_notes()
        compute = self.lingjun_compute
        notes.append(
            "Lingjun: ACK's Lingjun node pools are allow-listed for ACK managed Pro clusters; ask for the allow-list "
            "before `pulumi up` (ACK, create and manage a Lingjun node pool)."
        )
        if compute.payment_type == "Subscription":
            notes.append(
                f"Subscription Lingjun nodes ({compute.period_months} months): replacing a node (a change of machine "
                "type, zone, HPN zone or payment type) buys a new one for a new term; `pulumi destroy` refunds "
                "through BSS RefundInstance (provider code), which Alibaba may refuse or charge for."
            )
        return notes


SPEC = LingjunClusterSpec
