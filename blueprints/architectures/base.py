"""What every blueprint shares: network, storage, node image and spec; a subclass adds its compute unit and meaning."""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from blueprints.core.layout import LayoutError
from blueprints.launch.torchrun import OUTPUTS_VERSION
from blueprints.profile.model import ProfileBase

# The Pulumi SDK and the components are imported where resources are built (build, build_login_node, image), not
# here: what a blueprint means — its profile, budget tiers, summary — is read without them by `aitrain recommend`,
# and the SDK alone takes about 0.3 s to import.
if TYPE_CHECKING:
    from blueprints.advisor.budget import BudgetTier
    from blueprints.catalog import Catalog, InstanceType
    from blueprints.components.access import LoginNode
    from blueprints.components.bucket import DataBucket
    from blueprints.components.network import TrainingNetwork
    from blueprints.components.storage import SharedStorage
    from blueprints.review.costing import CostContext


# What the plan says about the link NCCL uses between nodes (the catalog's ``InstanceType.fabric_link``).
FABRIC_SUMMARY = {
    "erdma": "eRDMA: every node's primary NIC is an ERI (HighPerformance mode); NCCL uses erdma_0 with the MTU at 1400 (no jumbo frames)",
    "roce": "RoCE: NCCL uses the type's RDMA NICs (mlx5) with Alibaba's PAI defaults",
    "tcp": "TCP: this type has no eRDMA or RoCE in the catalog, so NCCL runs over sockets on the VPC network",
}


class Foundation(NamedTuple):
    """What every blueprint's compute is built on: the network, the shared file system and the bucket."""

    network: "TrainingNetwork"
    storage: "SharedStorage"
    bucket: "DataBucket"


class ResolvedImage(NamedTuple):
    """The image ID and the NFS client package its OS names."""

    image_id: str
    nfs_package: str


class Blueprint(ABC):
    """A training architecture: everything one blueprint means, in one class.

    A subclass declares its ``name``, its ``profile_model`` (with the compute fields an article alias scales),
    how many zones its compute spans, its plan summary and price basis, the budget tiers it serves and how a
    recommendation becomes its profile, and builds its compute unit. The registry
    (``blueprints.architectures``) is the only place that maps names to blueprints.
    """

    name: ClassVar[str]
    profile_model: ClassVar[type[ProfileBase]]
    compute_zone_count: ClassVar[int]
    # The compute component's name suffix (``<profile>-<suffix>``); stable, so storage and roles never move.
    compute_unit: ClassVar[str]
    # Parking (compute removed, data kept): the compute fields that park it, and the one a resume sets back.
    # None: this blueprint cannot be parked (it says how it stops costing money in ``park_refusal``).
    parked_compute: ClassVar[dict[str, Any] | None] = None
    resume_field: ClassVar[str | None] = None
    park_refusal: ClassVar[str] = ""
    # How `aitrain launch` starts a run on this blueprint's stack: "torchrun" on the nodes, or "kubernetes" (a PyTorchJob).
    job_engine: ClassVar[str] = "torchrun"

    def __init__(self, profile: ProfileBase, catalog: "Catalog", today: dt.date):
        self.profile = profile
        self.catalog = catalog
        self.today = today
        self.instance: InstanceType = catalog.instance_type(profile.compute.instance_type)

    # --- what the blueprint means (pure; used by plans and the advisor) ---

    @abstractmethod
    def compute_summary(self) -> dict[str, Any]:
        """The blueprint's own lines of the plan summary (node counts, scaling)."""

    @abstractmethod
    def price_basis(self) -> tuple[int, str]:
        """(nodes the hourly compute price is quoted for, what that number means)."""

    @classmethod
    @abstractmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple["BudgetTier", ...]:
        """The article's budget tiers this blueprint serves (boundaries from the advisor's limits.csv)."""

    @classmethod
    @abstractmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """The ``compute`` profile section for a recommended (instance type, node count per job, jobs sharing the nodes)."""

    # --- resources ---

    def build(self) -> dict[str, object]:
        """Create every resource; return the stack outputs."""
        import pulumi
        import pulumi_alicloud as alicloud

        from blueprints.components.audit import AccountTrail, AccountTrailArgs
        from blueprints.components.base import SHARED_MOUNT_PATH
        from blueprints.components.bucket import DataBucket, DataBucketArgs
        from blueprints.components.network import EgressAllow, TrainingNetwork, TrainingNetworkArgs
        from blueprints.components.storage import SharedStorage, SharedStorageArgs

        p = self.profile
        # An explicit provider pins every resource to the profile's region, whatever the shell's defaults.
        provider = alicloud.Provider(f"{p.name}-{p.region}", region=p.region)
        self.opts = pulumi.ResourceOptions(providers=[provider])
        self.invoke_opts = pulumi.InvokeOptions(provider=provider)
        network = TrainingNetwork(
            f"{p.name}-network",
            TrainingNetworkArgs(
                region=p.region,
                vpc_cidr=p.network.vpc_cidr,
                region_zones=self.catalog.zones(p.region),
                storage_zone=p.storage_zone,
                instance_type=self.instance.instance_type,
                compute_zone_count=self.compute_zone_count,
                preferred_zones=p.network.zones,
                # With a login node, SSH reaches training nodes only from it (rule added below), never from a range.
                admin_cidr=None if p.access.login_node else p.network.admin_cidr,
                tags=p.tags,
                flow_log=(p.security.flow_log.project, p.security.flow_log.logstore) if p.security.flow_log else None,
                egress_allow=tuple(EgressAllow(r.cidr, r.ports, r.description) for r in p.security.egress.allow)
                if p.security.egress
                else None,
                login_vswitch=self.wants_login_node,
            ),
            opts=self.opts,
        )
        # Storage inputs come from the profile's storage section and the stable network names alone, so
        # changing compute (type, count, blueprint) never changes, renames or replaces it.
        storage = SharedStorage(
            f"{p.name}-storage",
            SharedStorageArgs(
                kind=p.storage.kind,
                region=p.region,
                throughput_tier=p.storage.throughput_tier,
                capacity_gib=p.storage.capacity_gib,
                zone_id=p.storage_zone,
                vpc_id=network.vpc_id,
                vswitch_id=network.vswitch_id(p.storage_zone),
                client_cidrs=network.compute_cidrs,
                recycle_bin_days=p.storage.recycle_bin_days,
                nfs_squash=p.storage.nfs_squash,
                snapshot_retention_days=p.storage.snapshot_retention_days,
                kms_key_id=p.security.kms_key_id,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        # Like the file system, the bucket depends on the profile's name, region and bucket section only.
        bucket = DataBucket(
            f"{p.name}-data",
            DataBucketArgs(
                name=p.name,
                region=p.region,
                bucket=p.bucket_name,
                noncurrent_days=p.bucket.noncurrent_days,
                existing=p.bucket.existing,
                access_log_bucket=p.access_log_bucket_name,
                access_log_days=p.bucket.access_log_days,
                kms_key_id=p.security.kms_key_id,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        trail = p.security.actiontrail
        if trail is not None:
            AccountTrail(
                f"{p.name}-audit",
                AccountTrailArgs(
                    trail.name,
                    trail.sls_project_arn,
                    trail.sls_write_role_arn,
                    trail.oss_bucket,
                    trail.oss_write_role_arn,
                ),
                opts=self.opts,
            )
        outputs: dict[str, object] = {
            "aitrain_outputs": OUTPUTS_VERSION,
            "blueprint": self.name,
            "profile_name": p.name,
            "region": p.region,
            "instance_type": self.instance.instance_type,
            "vpc_id": network.vpc_id,
            "compute_zone_ids": network.compute_zone_ids,
            "storage_zone_id": p.storage_zone,
            "security_group_id": network.security_group_id,
            "file_system_id": storage.file_system_id,
            "file_system_mount": storage.mount_source,
            "shared_mount_path": SHARED_MOUNT_PATH,
            "bucket": bucket.bucket,
            "bucket_internal_endpoint": bucket.internal_endpoint,
            "nat_eip": network.nat_eip.ip_address,
        }
        if storage.snapshot_policy is not None:
            outputs["snapshot_policy_id"] = storage.snapshot_policy.id
        outputs.update(self.build_nodes(Foundation(network, storage, bucket)))
        return outputs

    @abstractmethod
    def build_nodes(self, foundation: "Foundation") -> dict[str, object]:
        """Create the login node (if any) and the compute unit on the shared foundation; return their outputs."""

    def build_login_node(self, network: TrainingNetwork, image_id: str) -> LoginNode | None:
        """The optional SSH login node in the storage zone, and the rule letting it (only it) SSH into the nodes."""
        from blueprints.components.access import LoginNode, LoginNodeArgs

        p = self.profile
        if not self.wants_login_node or p.network.admin_cidr is None:
            return None
        login = LoginNode(
            f"{p.name}-login",
            LoginNodeArgs(
                name=p.name,
                instance_type=p.access.login_instance_type,
                image_id=image_id,
                vswitch_id=network.login_vswitch_id,
                vpc_id=network.vpc_id,
                admin_cidr=p.network.admin_cidr,
                vpc_cidr=p.network.vpc_cidr,
                key_pair_name=p.access.key_pair_name,
                kms_key_id=p.security.kms_key_id,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        network.admit_ssh_from(login.security_group_id)
        return login

    @property
    def wants_login_node(self) -> bool:
        """Whether ``build_login_node`` creates one (the profile asks for it and names an admin range)."""
        return bool(self.profile.access.login_node and self.profile.network.admin_cidr is not None)

    @property
    def fabric_link(self) -> str:
        """The link NCCL uses between this blueprint's nodes (the catalog's, unless the compute unit cannot build it)."""
        return self.instance.fabric_link

    def security_notes(self) -> list[str]:
        """Plan notes on the safety choices this profile's storage implies (what the reviewer must do or accept)."""
        from blueprints.profile.notes import storage_notes

        return storage_notes(self.profile)

    @property
    def compute_unit_name(self) -> str:
        """Logical name of the compute component (its node role is ``<name>-node``)."""
        return f"{self.profile.name}-{self.compute_unit}"

    @property
    def node_role_name(self) -> str:
        """The RAM role the nodes run as (created by the compute unit; nodes read its credentials from metadata)."""
        return f"{self.compute_unit_name}-node"

    def most_nodes(self) -> int:
        """The most nodes this blueprint can run at once (the count its price is quoted at)."""
        return self.price_basis()[0]

    @abstractmethod
    def expected_nodes(self) -> int | None:
        """How many nodes a training run spans (None: as many as are running, for a pool that scales)."""

    def image(self) -> ResolvedImage:
        """The node image: the profile's, or the newest system image matching the catalog's pattern."""
        image_id = self.profile.compute.image_id
        row = self.catalog.image_for(self.profile.region)
        package = "nfs-common" if row is not None and "ubuntu" in row.os.lower() else "nfs-utils"
        if image_id:
            return ResolvedImage(image_id, package)
        if row is None:
            raise LayoutError(f"the catalog has no image pattern for {self.profile.region}; set compute.image_id")
        import pulumi_alicloud as alicloud

        found = alicloud.ecs.get_images(
            name_regex=row.name_regex,
            owners="system",
            most_recent=True,
            instance_type=self.instance.instance_type,
            opts=self.invoke_opts,
        )
        if not found.ids:
            raise LayoutError(
                f"no system image matching {row.name_regex!r} in {self.profile.region}; set compute.image_id"
            )
        return ResolvedImage(found.ids[0], package)

    # --- cost ---

    def cost_context(self) -> "CostContext":
        """What pricing the plan needs that only the blueprint knows: the profile's run hours (a pool adds its schedule)."""
        from blueprints.review.costing import CostContext

        return CostContext(run_hours=self.profile.cost.run_hours)

    # --- the plan summary ---

    @abstractmethod
    def node_software_summary(self) -> dict[str, Any]:
        """How a node becomes ready to train (GPU software, the inter-node link, scratch): the plan's summary lines."""

    def summary(self) -> dict[str, Any]:
        """What a reviewer reads first: hardware, counts, storage and the compute price, with its source."""
        profile, instance, catalog = self.profile, self.instance, self.catalog
        summary: dict[str, Any] = {
            "blueprint": self.name,
            "region": profile.region,
            "instance_type": instance.instance_type,
            "gpu_model": instance.gpu_model,
            # "inferred": the documentation gives the peak and memory, not the name (catalog README, "Inferred GPU models").
            "gpu_model_confidence": instance.gpu_model_confidence,
            "gpus_per_node": instance.gpu_count,
            "gpu_memory_gib": instance.gpu_memory_gib,
            "vcpus_per_node": instance.vcpus,
            "memory_gib_per_node": instance.memory_gib,
        }
        summary.update(self.compute_summary())
        summary.update(self.node_software_summary())
        storage = profile.storage
        tier = next(t for t in catalog.storage_tiers(storage.kind) if t.storage_type == storage.throughput_tier)
        throughput = tier.throughput_mb_s(storage.capacity_gib)
        summary.update(
            storage_kind=storage.kind,
            storage_tier=storage.throughput_tier,
            storage_zone=profile.storage_zone,
            storage_capacity_gib=storage.capacity_gib,
            storage_encrypted=storage.kind != "cpfs",
            storage_throughput_mb_s=round(throughput) if throughput is not None else "unknown (not in the catalog)",
            bucket=profile.bucket_name,
            bucket_managed=not profile.bucket.existing,
            login_node=f"{profile.access.login_instance_type} with an EIP, SSH from {profile.network.admin_cidr} only"
            if profile.access.login_node
            else "none: reach nodes with Cloud Assistant",
            spot=profile.cost.spot,
            admin_cidr=profile.network.admin_cidr,
        )
        if instance.price_cny_per_hour is None:
            summary["compute_price"] = f"unknown: the catalog has no price for {instance.instance_type}"
        else:
            nodes, basis = self.price_basis()
            summary["compute_cny_per_hour"] = round(instance.price_cny_per_hour * nodes, 2)
            summary["compute_price_basis"] = (
                f"{nodes} × {instance.price_cny_per_hour} CNY/h pay-as-you-go list price"
                f" ({instance.price_region}, {instance.price_date}; {instance.price_source})"
                + (f"; {basis}" if basis else "")
                + ("; spot pays less, by a varying discount" if profile.cost.spot else "")
            )
        return summary
