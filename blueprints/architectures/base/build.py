"""What every blueprint builds: the region's provider, network, storage, bucket (and trail), then its own compute.

A builder turns a spec (``blueprints.architectures.base.spec``) into resources by calling the components, as
pulumi-eks's ``Cluster`` calls ``createCore``. Each blueprint package's ``build`` module exports its builder as
``BUILDER``; ``builder_for`` finds it next to the spec, so the pure core never imports a builder.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any, Generic, NamedTuple, TypeVar

import pulumi
import pulumi_alicloud as alicloud

from blueprints.architectures.base.spec import BlueprintSpec
from blueprints.bootstrap import DEFAULT_MAX_RESTARTS
from blueprints.catalog import Image
from blueprints.components.access import LoginNode, LoginNodeArgs
from blueprints.components.audit import AccountTrail, AccountTrailArgs
from blueprints.components.base import SHARED_MOUNT_PATH
from blueprints.components.bucket import DataBucket, DataBucketArgs
from blueprints.components.errors import ResourceError
from blueprints.components.network import EgressAllow, TrainingNetwork, TrainingNetworkArgs
from blueprints.components.storage import SharedStorage, SharedStorageArgs
from blueprints.health.gate import health_gate_output
from blueprints.launch.torchrun import OUTPUTS_VERSION
from blueprints.profile.capacity import next_step
from blueprints.profile.image import node_image_output
from blueprints.profile.model import ProfileBase


def login_node_outputs(login: LoginNode | None) -> dict[str, object]:
    """The login node's stack outputs (how `aitrain launch --via ssh` reaches the nodes); none without one."""
    if login is None:
        return {}
    return {
        "login_node_public_ip": login.public_ip,
        "login_node_private_ip": login.private_ip,
        "login_node_instance_id": login.instance_id,
    }


def resume_outputs() -> dict[str, object]:
    """Where a run's checkpoints go (``AITRAIN_CHECKPOINT_DIR``, per run id) and torchrun's default --max-restarts:
    what the plan's run-time section shows about resuming."""
    return {
        "checkpoint_dir": f"{SHARED_MOUNT_PATH}/.aitrain/checkpoints/<run-id>",
        "max_restarts": DEFAULT_MAX_RESTARTS,
    }


class Foundation(NamedTuple):
    """What every blueprint's compute is built on: the network, the shared file system and the bucket."""

    network: TrainingNetwork
    storage: SharedStorage
    bucket: DataBucket


class ResolvedImage(NamedTuple):
    """The image ID, the NFS client package its OS names, and whether the profile pins it (``compute.image_id``)."""

    image_id: str
    nfs_package: str
    pinned: bool = False

    def output(self) -> dict[str, object]:
        """The ``node_image`` stack output: which image the nodes boot, and whether a later deploy may change it."""
        return node_image_output(self.image_id, self.pinned)


# The spec a builder builds: ``FixedClusterBuilder(EcsBuilder[FixedClusterSpec])`` reads ``self.spec.profile`` as a
# FixedClusterProfile.
S = TypeVar("S", bound=BlueprintSpec[Any])


class BlueprintBuilder(ABC, Generic[S]):
    """Builds one spec: the shared foundation here, the compute unit in ``build_nodes`` (the subclass's)."""

    def __init__(self, spec: S):
        self.spec = spec
        self.catalog = spec.catalog
        self.today = spec.today
        self.instance = spec.instance

    def build(self) -> dict[str, object]:
        """Create every resource; return the stack outputs."""
        spec = self.spec
        p: ProfileBase = spec.profile
        # An explicit provider pins every resource to the profile's region, whatever the shell's defaults.
        self.provider = alicloud.Provider(f"{p.name}-{p.region}", region=p.region)
        self.opts = pulumi.ResourceOptions(providers=[self.provider])
        self.invoke_opts = pulumi.InvokeOptions(provider=self.provider)
        network = TrainingNetwork(
            f"{p.name}-network",
            TrainingNetworkArgs(
                region=p.region,
                vpc_cidr=p.network.vpc_cidr,
                region_zones=self.catalog.zones(p.region),
                storage_zone=p.storage_zone,
                instance_type=spec.network_instance_type,
                compute_zone_count=spec.compute_zone_count,
                preferred_zones=p.network.zones,
                # With a login node, SSH reaches training nodes only from it (rule added below), never from a range.
                admin_cidr=None if p.access.login_node else p.network.admin_cidr,
                tags=p.tags,
                flow_log=(p.security.flow_log.project, p.security.flow_log.logstore) if p.security.flow_log else None,
                egress_allow=tuple(EgressAllow(r.cidr, r.ports, r.description) for r in p.security.egress.allow)
                if p.security.egress
                else None,
                login_vswitch=spec.wants_login_node,
                zone_next_step=next_step(p.capacity),
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
            "blueprint": spec.name,
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
        outputs["health_gate"] = health_gate_output(self.catalog, self.instance, spec.fabric_link, spec.job_engine)
        outputs.update(resume_outputs())
        outputs.update(self.build_nodes(Foundation(network, storage, bucket)))
        return outputs

    @abstractmethod
    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """Create the login node (if any) and the compute unit on the shared foundation; return their outputs."""

    def build_login_node(self, network: TrainingNetwork, image_id: str) -> LoginNode | None:
        """The optional SSH login node in the storage zone, and the rule letting it (only it) SSH into the nodes."""
        p: ProfileBase = self.spec.profile
        if not self.spec.wants_login_node or p.network.admin_cidr is None:
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

    def image(self, gpu_image: Image | None = None, pinned_ok: bool = True) -> ResolvedImage:
        """The node image: the profile's (pinned), or the newest system image matching the catalog's pattern (not
        pinned: a later `pulumi up` may resolve a newer one and re-image every node; `aitrain image pin` records it).
        ``gpu_image``: the catalog's image with the GPU stack to look up instead of the plain OS pattern;
        ``pinned_ok`` False: the plain OS image even when the profile pins one (a login node beside GPU nodes).

        Without one, the error names the region's provider: the lookup runs through it, and its region has no image.
        """
        p: ProfileBase = self.spec.profile
        image_id = p.compute.image_id if pinned_ok else None
        row = gpu_image or self.catalog.image_for(p.region)
        package = "nfs-common" if row is not None and "ubuntu" in row.os.lower() else "nfs-utils"
        if image_id:
            return ResolvedImage(image_id, package, pinned=True)
        if row is None:
            raise ResourceError(f"the catalog has no image pattern for {p.region}; set compute.image_id", self.provider)
        found = alicloud.ecs.get_images(
            name_regex=row.name_regex,
            owners="system",
            most_recent=True,
            instance_type=self.instance.instance_type,
            opts=self.invoke_opts,
        )
        if not found.ids:
            raise ResourceError(
                f"no system image matching {row.name_regex!r} in {p.region}; set compute.image_id", self.provider
            )
        return ResolvedImage(found.ids[0], package)


def builder_for(spec: BlueprintSpec[Any]) -> BlueprintBuilder[Any]:
    """The builder of ``spec``: ``BUILDER`` in the ``build`` module beside the module that defines the spec."""
    package = type(spec).__module__.rpartition(".")[0]
    module = importlib.import_module(f"{package}.build")
    builder = getattr(module, "BUILDER", None)
    if not (isinstance(builder, type) and issubclass(builder, BlueprintBuilder)):
        raise TypeError(f"{module.__name__} must export BUILDER, the BlueprintBuilder of blueprint {spec.name!r}")
    return builder(spec)
