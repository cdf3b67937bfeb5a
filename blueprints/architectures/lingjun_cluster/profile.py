"""The lingjun-cluster blueprint's profile: the Lingjun machine type, its node count and HPN zone, the node spec the
buyer's account reports, the optional CPFS for Lingjun file system, and the ACK cluster and queues it trains through."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, ValidationInfo, model_validator

from blueprints.architectures.kubernetes_pool.profile import AckProfile
from blueprints.architectures.kubernetes_pool.queues import check_queues
from blueprints.architectures.kubernetes_pool.settings import NODE_POOL_MAX_SIZE
from blueprints.catalog.lingjun import LingjunNodeType
from blueprints.core.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile.context import context_of
from blueprints.profile.model import ComputeBase
from blueprints.profile.sections import Scratch
from blueprints.profile.strict import Strict

if TYPE_CHECKING:
    from blueprints.catalog import Catalog

# ACK's Lingjun node pools need an ACK managed Pro cluster of Kubernetes 1.31 or later and a Lite Lingjun cluster
# ("Create and manage a Lingjun node pool", updated 2026-09-21:
# https://www.alibabacloud.com/help/zh/ack/ack-managed-and-ack-dedicated/user-guide/create-and-manage-a-lingjun-node-pool).
MIN_KUBERNETES = (1, 31)
# A CPFS for Lingjun file system id: "must start with bmcpfs-" (NAS API DescribeFilesystemsAssociatedHpnZones).
BMCPFS_ID = re.compile(r"^bmcpfs-[a-z0-9]{6,32}$")
# eflo.Node period: "Prepaid cycle. The unit is Month" (pulumi-alicloud 4.0.0 eflo/node.py); 1–36 months is the range
# the provider's examples use (36), not a documented bound, so longer terms are refused rather than guessed at.
MAX_PERIOD_MONTHS = 36


class LingjunNodeSpec(Strict):
    """A Lingjun node as the buyer's account reports it (eflo-controller ListMachineTypes): Alibaba publishes none."""

    gpus: int = Field(ge=1, le=16, description="GPUs per node (ListMachineTypes GpuInfoDetail.GpuCount).")
    gpu_model: str | None = Field(
        default=None,
        description="The GPU, as a gpu_model of the catalog's gpus.csv, when ListMachineTypes names one; empty: "
        "unnamed (the time estimate then has no peak to start from).",
    )
    vcpus: int = Field(ge=1, le=1024, description="vCPUs per node (CpuInfoDetail.VCpuCores).")
    memory_gib: float = Field(gt=0, le=65536, description="Memory per node, GiB (MemoryInfoDetail.MemorySizeInGB).")
    rdma_nics: int | None = Field(
        default=None, ge=1, le=64, description="Backend RDMA NICs per node (RdmaInfoDetail.BackendRdmaNicCount)."
    )
    rdma_gbps_per_nic: float | None = Field(
        default=None, gt=0, le=3200, description="Bandwidth of one backend RDMA NIC, Gbit/s (BackendRdmaNicBwInGbps)."
    )
    source: str = Field(
        min_length=3,
        max_length=200,
        description="Where these figures come from (e.g. 'ListMachineTypes, cn-wulanchabu, 2026-11-30'): shown in "
        "every plan beside them.",
    )


class CpfsForLingjun(Strict):
    """An existing CPFS for Lingjun file system (pulumi-alicloud 4.0.0 cannot create one: nas.FileSystem takes
    standard, extreme, cpfs and cpfsse only)."""

    file_system_id: str = Field(description="Its id, bmcpfs-… (NAS console, CPFS for Lingjun).")
    region: str = Field(description="The region it was created in: the id does not say, and it mounts only there.")
    hpn_zone: str = Field(description="Its HPN zone: a pod's node must be in the same one to mount it.")
    vpc_mount_target: str = Field(
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        max_length=253,
        description="Its VPC mount target domain (NAS console): the CSI driver's vpcMountTarget.",
    )
    vsc_mount_target: str = Field(
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        max_length=253,
        description="Its VSC mount target domain (NAS console): the CSI driver's vscMountTarget (Lingjun nodes).",
    )
    capacity_gib: int = Field(
        ge=1,
        le=20 * 1048576,
        description="Its capacity in GiB, as the volume states it (CPFS for Lingjun: up to 1 PiB, 20 PiB by ticket).",
    )


class LingjunCompute(ComputeBase):
    """Lingjun nodes of one machine type in one zone and HPN zone, joined to the ACK cluster as a Lingjun node pool."""

    instance_type: str = Field(
        description="Lingjun machine type (eflo), e.g. efg1.nvga8n: one of the catalog's lingjun_node_types.csv."
    )
    nodes: int = Field(
        ge=1,
        le=NODE_POOL_MAX_SIZE,
        description="Lingjun nodes bought and joined to the node pool, 1–1000 (an ACK node pool's bound; eflo "
        "documents no node-group limit).",
    )
    nodes_per_job: int | None = Field(
        default=None, ge=1, le=NODE_POOL_MAX_SIZE, description="Nodes one training job spans; empty: all nodes."
    )
    zone: str = Field(description="The zone the nodes are in (eflo Node zone, node group az).")
    hpn_zone: str = Field(description="The HPN zone (the RDMA fabric's cluster number, e.g. A1) of the nodes.")
    node_spec: LingjunNodeSpec = Field(
        description="The node as ListMachineTypes reports it (Alibaba publishes no spec)."
    )
    node_image_id: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
        description="Lingjun image id of the node group (eflo NodeGroup image_id, required by the API; e.g. "
        "i198448731735114628708 in the provider's example).",
    )
    payment_type: Literal["PayAsYouGo", "Subscription"] = Field(
        default="PayAsYouGo",
        description="eflo Node payment_type: PayAsYouGo (removed by `pulumi destroy`) or Subscription (a term).",
    )
    period_months: int | None = Field(
        default=None,
        ge=1,
        le=MAX_PERIOD_MONTHS,
        description="Subscription term in months (eflo Node period); required with Subscription only.",
    )

    # The node's catalog: ``lingjun_node_types.csv``, not ``instance_types.csv`` (no alias resolves to it).
    node_catalog: ClassVar[str] = "lingjun"

    @model_validator(mode="after")
    def _counts(self) -> "LingjunCompute":
        if self.nodes_per_job is not None and self.nodes_per_job > self.nodes:
            raise FieldError(
                "nodes_per_job", self.nodes_per_job, f"is greater than nodes ({self.nodes}); allowed: 1–{self.nodes}"
            )
        if (self.payment_type == "Subscription") != (self.period_months is not None):
            raise FieldError(
                "period_months",
                self.period_months,
                "is the term of a Subscription node and only of one: set it (1–36) with payment_type Subscription, "
                "leave it empty with PayAsYouGo",
            )
        for field in ("image_id", "install_pytorch", "scratch_gib", "bake_image", "gpu_stack_in_image"):
            if field in self.model_fields_set:
                raise FieldError(
                    field,
                    getattr(self, field),
                    "does not apply to lingjun-cluster: Lingjun nodes boot node_image_id with their own drivers, "
                    "and PyTorch comes from each job's container image; remove the field",
                )
        return self

    def scratch(self, catalog: object) -> Scratch:
        """None from aitrain: a Lingjun node pool takes no data disk (the nodes' own disks are the machine type's)."""
        return Scratch(gib=0, local_nvme=False, performance_level=self.scratch_performance_level)

    @property
    def min_nodes(self) -> int:
        """Lingjun nodes are bought, not autoscaled: the pool always holds them all."""
        return self.nodes

    @property
    def scale_in_gpu_percent(self) -> float:
        """The cluster autoscaler's GPU threshold: it never removes a Lingjun node (its pool does not scale)."""
        return 50.0

    @property
    def max_nodes(self) -> int:
        """As min_nodes."""
        return self.nodes

    @property
    def job_nodes(self) -> int:
        """Nodes one job spans."""
        return self.nodes_per_job if self.nodes_per_job is not None else self.nodes


def lingjun_row(catalog: object, machine_type: str) -> LingjunNodeType | None:
    """The catalog's row of a Lingjun machine type, or None."""
    return getattr(catalog, "lingjun", {}).get(machine_type)


class LingjunProfile(AckProfile):
    """Profile of the ``lingjun-cluster`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ()

    blueprint: Literal["lingjun-cluster"] = Field(description="Which blueprint builds this profile.")
    compute: LingjunCompute = Field(description="Lingjun machine type, node count, zone and HPN zone.")
    cpfs: CpfsForLingjun | None = Field(
        default=None, description="An existing CPFS for Lingjun file system the jobs mount (optional)."
    )

    def gpu_pool(self) -> LingjunCompute:
        """The Lingjun node pool."""
        return self.compute

    @model_validator(mode="after")
    def _lingjun_fits(self, info: ValidationInfo) -> "LingjunProfile":
        catalog = context_of(info).catalog
        compute = self.compute
        row = lingjun_row(catalog, compute.instance_type)
        if row is None:
            known = sorted(getattr(catalog, "lingjun", {}))
            hint = did_you_mean(compute.instance_type, known)
            raise FieldError(
                "compute.instance_type",
                compute.instance_type,
                "is not a Lingjun machine type in the catalog (lingjun_node_types.csv); allowed: "
                f"{join_allowed(known)}" + (f"; {hint}" if hint else ""),
            )
        if self.region not in row.regions:
            raise FieldError(
                "region",
                self.region,
                f"does not sell {row.machine_type} as far as the catalog knows: its sources show it only in "
                f"{join_allowed(list(row.regions))} (add the zone your account lists, from eflo-controller "
                "DescribeZones, to a catalog copy: AITRAIN_CATALOG_DIR)",
            )
        zones = [z for z, _ in row.zones if z.startswith(self.region)]
        if compute.zone not in zones:
            raise FieldError(
                "compute.zone",
                compute.zone,
                f"has no {row.machine_type} in the catalog; allowed: {join_allowed(zones)}",
            )
        if list(self.network.zones) != [compute.zone]:
            raise FieldError(
                "network.zones",
                list(self.network.zones),
                f"must be exactly [{compute.zone}] (compute.zone): the Lingjun nodes, the ACK cluster's vSwitch and "
                "its pods share that zone (ACK: a Lingjun node pool's pod vSwitches must include the Lingjun "
                f"cluster's zone); allowed: [{compute.zone}]",
            )
        hpn = row.hpn_zones(compute.zone)
        if compute.hpn_zone not in hpn:
            raise FieldError(
                "compute.hpn_zone",
                compute.hpn_zone,
                f"is not an HPN zone of {row.machine_type} in {compute.zone} in the catalog; "
                f"allowed: {join_allowed(list(hpn))}",
            )
        model = compute.node_spec.gpu_model
        if model is not None and model not in catalog.gpus:
            raise FieldError(
                "compute.node_spec.gpu_model",
                model,
                f"is not in the catalog's gpus.csv; allowed: {join_allowed(sorted(catalog.gpus))}",
            )
        self._cpfs_fits(catalog)
        self._kubernetes_fits(catalog)
        check_queues(
            self.queues, max_nodes=compute.nodes, job_nodes=compute.job_nodes, gpus_per_node=compute.node_spec.gpus
        )
        return self

    def _cpfs_fits(self, catalog: "Catalog") -> None:
        cpfs = self.cpfs
        if cpfs is None:
            return
        if not BMCPFS_ID.match(cpfs.file_system_id):
            raise FieldError(
                "cpfs.file_system_id",
                cpfs.file_system_id,
                "is not a CPFS for Lingjun id; allowed: bmcpfs- followed by 6–32 lowercase letters or digits",
            )
        for field in ("vpc_mount_target", "vsc_mount_target"):
            target = getattr(cpfs, field)
            elsewhere = sorted(r for r in catalog.regions if r != self.region and f".{r}." in f".{target}.")
            if elsewhere:
                raise FieldError(
                    f"cpfs.{field}",
                    target,
                    f"is a mount target in {elsewhere[0]}, not in the profile's region {self.region}; allowed: the "
                    f"file system's mount target in {self.region}",
                )
        if cpfs.region != self.region:
            raise FieldError(
                "cpfs.region",
                cpfs.region,
                f"is not the profile's region {self.region}: a CPFS for Lingjun file system mounts only in its own "
                f"region; allowed: {self.region} (a file system created there)",
            )
        if cpfs.hpn_zone != self.compute.hpn_zone:
            raise FieldError(
                "cpfs.hpn_zone",
                cpfs.hpn_zone,
                f"differs from compute.hpn_zone {self.compute.hpn_zone}: 'The node running the pod must be in the "
                "same hpn-zone as the CPFS for Lingjun file system' (ACK, CPFS for Lingjun volumes); allowed: "
                f"{self.compute.hpn_zone}",
            )

    def _kubernetes_fits(self, catalog: "Catalog") -> None:
        # The checks every ACK cluster needs are AckProfile's; these are Lingjun node pools' own.
        k8s = self.kubernetes
        version = k8s.version or catalog.kubernetes.default_version or ""
        if tuple(int(p) for p in re.findall(r"\d+", version)[:2]) < MIN_KUBERNETES:
            raise FieldError(
                "kubernetes.version",
                version,
                "is older than ACK's Lingjun node pools need; allowed: 1.31 or later",
            )
        if not k8s.cluster_spec.startswith("ack.pro."):
            raise FieldError(
                "kubernetes.cluster_spec", k8s.cluster_spec, "must be an ACK managed Pro spec (ack.pro.*) for Lingjun"
            )
        if self.cost.off_hours.enabled or self.cost.spot:
            raise FieldError(
                "cost",
                {"spot": self.cost.spot, "off_hours.enabled": self.cost.off_hours.enabled},
                "does not apply to lingjun-cluster: Lingjun nodes are bought whole (no spot, no schedule); set both "
                "false",
            )
