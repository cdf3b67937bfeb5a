"""The blueprints: recommended training architectures, each built from a validated profile."""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

import pulumi
import pulumi_alicloud as alicloud

from blueprints.catalog import load_catalog
from blueprints.components.base import SHARED_MOUNT_PATH, render_user_data
from blueprints.components.compute import AutoscalingGpuPool, AutoscalingGpuPoolArgs, GpuCluster, GpuClusterArgs, NodeSpec
from blueprints.components.network import TrainingNetwork, TrainingNetworkArgs
from blueprints.components.storage import SharedStorage, SharedStorageArgs
from blueprints.layout import LayoutError, off_hours_tasks
from blueprints.profile import AutoscalingProfile, FixedClusterProfile, ProfileModel

# An autoscaling pool spreads over up to this many zones that offer its type (ESS balances across them).
AUTOSCALING_ZONES = 3


class Blueprint(ABC):
    """A training architecture: turns one validated profile into Pulumi resources."""

    name: ClassVar[str]

    def __init__(self, profile: ProfileModel):
        self.profile = profile
        self.catalog = load_catalog()
        self.instance = self.catalog.instance_type(profile.compute.instance_type)

    def build(self) -> dict[str, object]:
        """Create every resource; return the stack outputs."""
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
                instance_type=self.instance.instance_type,
                zone_count=self.zone_count,
                preferred_zones=p.network.zones,
                admin_cidr=p.network.admin_cidr,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        # Storage takes its name from the profile alone, so changing compute never renames (replaces) it.
        storage = SharedStorage(
            f"{p.name}-storage",
            SharedStorageArgs(
                kind=p.storage.kind,
                region=p.region,
                throughput_tier=p.storage.throughput_tier,
                capacity_gib=p.storage.capacity_gib,
                zone_id=network.zone_ids[0],
                vpc_id=network.vpc_id,
                vswitch_id=network.vswitch_ids[0],
                vpc_cidr=p.network.vpc_cidr,
                recycle_bin_days=p.storage.recycle_bin_days,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        image = self.image()
        user_data = storage.mount_source.apply(
            lambda source: render_user_data(
                storage_kind=p.storage.kind,
                mount_source=source,
                mount_options=storage.mount_options,
                nfs_package=image.nfs_package,
            )
        )
        node = NodeSpec(
            instance_type=self.instance.instance_type,
            image_id=image.image_id,
            security_group_id=network.security_group_id,
            user_data=user_data,
            system_disk_gib=p.compute.system_disk_gib,
            system_disk_performance_level=p.compute.system_disk_performance_level,
            spot=p.cost.spot,
            tags=p.tags,
        )
        outputs = {
            "blueprint": self.name,
            "region": p.region,
            "instance_type": self.instance.instance_type,
            "vpc_id": network.vpc_id,
            "zone_ids": network.zone_ids,
            "security_group_id": network.security_group_id,
            "file_system_id": storage.file_system_id,
            "shared_mount_path": SHARED_MOUNT_PATH,
        }
        outputs.update(self.build_compute(network, node))
        return outputs

    @property
    @abstractmethod
    def zone_count(self) -> int:
        """How many zones the compute spans."""

    @abstractmethod
    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        """Create the compute unit; return its outputs."""

    def image(self) -> "ResolvedImage":
        """The node image: the profile's, or the newest system image matching the catalog's pattern."""
        image_id = self.profile.compute.image_id
        row = self.catalog.image_for(self.profile.region)
        package = "nfs-common" if row is not None and "ubuntu" in row.os.lower() else "nfs-utils"
        if image_id:
            return ResolvedImage(image_id, package)
        if row is None:
            raise LayoutError(f"the catalog has no image pattern for {self.profile.region}; set compute.image_id")
        found = alicloud.ecs.get_images(
            name_regex=row.name_regex,
            owners="system",
            most_recent=True,
            instance_type=self.instance.instance_type,
            opts=self.invoke_opts,
        )
        if not found.ids:
            raise LayoutError(f"no system image matching {row.name_regex!r} in {self.profile.region}; set compute.image_id")
        return ResolvedImage(found.ids[0], package)


class ResolvedImage(NamedTuple):
    """The image ID and the NFS client package its OS names."""

    image_id: str
    nfs_package: str


class FixedClusterBlueprint(Blueprint):
    """Fixed cluster: N multi-GPU nodes on one low-latency fabric with a shared elastic storage pool.

    Recommended for steady, long data-parallel or sharded training (the article's 96 × A100 medical-imaging
    case): every node sits in one zone under a ``LowLatency`` deployment set so collective operations take the
    shortest network path, and all nodes mount one NAS/CPFS pool, so data and checkpoints outlive the compute.
    """

    name = "fixed-cluster"
    zone_count = 1

    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        p: FixedClusterProfile = self.profile  # type: ignore[assignment]
        cluster = GpuCluster(
            f"{p.name}-cluster",
            GpuClusterArgs(node=node, nodes=p.compute.nodes, zone_id=network.zone_ids[0], vswitch_id=network.vswitch_ids[0]),
            opts=self.opts,
        )
        return {"nodes": p.compute.nodes, "gpus": p.compute.nodes * self.instance.gpu_count, "deployment_set_id": cluster.deployment_set.id}


class AutoscalingPoolBlueprint(Blueprint):
    """Autoscaling pool: one GPU node type in an ESS group that grows with load and sleeps off-hours.

    Recommended for bursty or shared experimentation (the article's autoscaling node group and mid budget
    tier): you pay for nodes while jobs keep them busy — out at 65–75 % CPU, in below 40 % GPU use, to zero
    outside working hours — and the shared storage pool keeps data while no node runs.
    """

    name = "autoscaling-pool"
    zone_count = AUTOSCALING_ZONES

    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        p: AutoscalingProfile = self.profile  # type: ignore[assignment]
        off = p.cost.off_hours
        schedule = None
        if off.enabled:
            schedule = off_hours_tasks(dt.date.fromisoformat(off.start_date), off.timezone, off.work_start, off.work_end, off.weekdays_only)
        pool = AutoscalingGpuPool(
            f"{p.name}-pool",
            AutoscalingGpuPoolArgs(
                node=node,
                min_nodes=p.compute.min_nodes,
                max_nodes=p.compute.max_nodes,
                working_hours_nodes=p.compute.working_hours_nodes,
                vswitch_ids=network.vswitch_ids,
                scale_out_cpu_percent=p.compute.scale_out_cpu_percent,
                scale_in_gpu_percent=p.compute.scale_in_gpu_percent,
                off_hours=schedule,
            ),
            opts=self.opts,
        )
        return {
            "min_nodes": p.compute.min_nodes,
            "max_nodes": p.compute.max_nodes,
            "max_gpus": p.compute.max_nodes * self.instance.gpu_count,
            "scaling_group_id": pool.group.id,
        }


BLUEPRINTS: dict[str, type[Blueprint]] = {cls.name: cls for cls in (FixedClusterBlueprint, AutoscalingPoolBlueprint)}


def blueprint_for(profile: ProfileModel) -> Blueprint:
    """The blueprint instance that builds this profile."""
    return BLUEPRINTS[profile.blueprint](profile)
