"""SharedStorage: the article's "elastic storage pool" — one NAS or CPFS file system every node mounts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, stateful, with_tags
from blueprints.components.errors import ResourceError

# NFSv3 options Alibaba Cloud recommends for NAS on Linux ("Mount an NFS file system", NAS docs).
NFS_MOUNT_OPTIONS = "vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev"

# encrypt_type 1 = NAS-managed key (standard and extreme); 2 = a customer-managed KMS key, extreme only
# (pulumi_alicloud 4.0.0 nas.FileSystem docstring, `encrypt_type`): general-purpose NAS cannot use your own key.
NAS_MANAGED_KEY = 1
CUSTOMER_MANAGED_KEY = 2

# Extreme NAS automatic snapshots: every day at 02:00 (weekdays "1"–"7", hours "0"–"23" in the
# nas.AutoSnapshotPolicy docstring; the time zone is the region's, as the NAS console shows it — UNVERIFIED).
SNAPSHOT_WEEKDAYS = ("1", "2", "3", "4", "5", "6", "7")
SNAPSHOT_TIME_POINTS = ("2",)

# (file_system_type, protocol_type, export path of the mount target) per storage kind.
_KINDS = {
    "nas": ("standard", "NFS", "/"),
    "extreme_nas": ("extreme", "NFS", "/share"),
    "cpfs": ("cpfs", "cpfs", None),
}


@dataclass(frozen=True)
class SharedStorageArgs:
    """What the storage pool needs to know."""

    kind: str
    region: str
    throughput_tier: str
    capacity_gib: int
    zone_id: str
    vpc_id: pulumi.Input[str]
    vswitch_id: pulumi.Input[str]
    # The hosts the share admits: the compute vSwitches' CIDRs
    # by zone (never the whole VPC, which holds the login node).
    client_cidrs: Mapping[str, str]
    recycle_bin_days: int = 7
    # NAS access rule user mapping: root_squash (default), all_squash or no_squash.
    nfs_squash: str = "root_squash"
    # Extreme NAS automatic snapshots: days kept (1–65535, or -1).
    snapshot_retention_days: int = 7
    # Customer-managed KMS key (Extreme NAS only; general-purpose NAS keeps the NAS-managed key).
    kms_key_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


class SharedStorage(pulumi.ComponentResource):
    """A NAS, Extreme NAS or CPFS file system with a mount point in the cluster's vSwitch.

    The file system is created with ``protect`` and ``retain_on_delete`` from its first deployment, so no
    change to compute (node count, instance type, even deleting the stack) can delete or replace the data.
    NAS kinds are encrypted with a NAS-managed key and reached only through a dedicated access group with one rule
    per compute vSwitch; CPFS (which takes neither) is bound to the cluster's VPC and vSwitch.
    """

    def __init__(self, name: str, args: SharedStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:storage:SharedStorage", name, None, opts)
        tags = with_tags(args.tags, "storage")
        fs_type, protocol, export_path = _KINDS[args.kind]

        fs_args: dict[str, Any] = dict(
            file_system_type=fs_type,
            protocol_type=protocol,
            storage_type=args.throughput_tier,
            zone_id=args.zone_id,
            description=f"{name} shared training data ({args.kind})",
            tags=tags,
        )
        if args.kind == "nas":
            # General-purpose NAS grows on demand (no capacity); its recycle bin keeps deleted files.
            fs_args.update(
                encrypt_type=NAS_MANAGED_KEY,
                recycle_bin=alicloud.nas.FileSystemRecycleBinArgs(status="Enable", reserved_days=args.recycle_bin_days),
            )
        elif args.kind == "extreme_nas":
            key = (
                dict(encrypt_type=CUSTOMER_MANAGED_KEY, kms_key_id=args.kms_key_id)
                if args.kms_key_id
                else dict(encrypt_type=NAS_MANAGED_KEY)
            )
            fs_args.update(capacity=args.capacity_gib, **key)
        else:
            fs_args.update(capacity=args.capacity_gib, vpc_id=args.vpc_id, vswitch_id=args.vswitch_id)
        self.file_system = alicloud.nas.FileSystem(f"{name}-fs", **fs_args, opts=stateful(self))
        # Extreme NAS has no recycle bin; automatic snapshots keep deleted data recoverable. pulumi-alicloud 4.0.0 has
        # no resource that applies a policy to a file system, so the plan prints the ApplyAutoSnapshotPolicy call.
        self.snapshot_policy = (
            alicloud.nas.AutoSnapshotPolicy(
                f"{name}-snapshots",
                auto_snapshot_policy_name=f"{name}-daily",
                file_system_type="extreme",
                repeat_weekdays=list(SNAPSHOT_WEEKDAYS),
                time_points=list(SNAPSHOT_TIME_POINTS),
                retention_days=args.snapshot_retention_days,
                opts=child(self),
            )
            if args.kind == "extreme_nas"
            else None
        )

        if export_path is None:
            # CPFS has exactly one mount point, created with the file system in its vSwitch; its domain is
            # <fs-id>.<region>.cpfs.nas.aliyuncs.com (ListCpfsFileSystems response example,
            # help.aliyun.com/document_detail/188692.html).
            self.mount_domain = pulumi.Output.concat(self.file_system.id, f".{args.region}.cpfs.nas.aliyuncs.com")
            self.mount_source = self.mount_domain
            self.mount_options = ""
        else:
            access_group = alicloud.nas.AccessGroup(
                f"{name}-access-group",
                access_group_name=f"{name}-vpc-only",
                access_group_type="Vpc",
                file_system_type=fs_type,
                description="aitrain: only the training VPC",
                opts=child(self),
            )
            if not args.client_cidrs:
                raise ResourceError(
                    "SharedStorageArgs.client_cidrs is empty: the share would "
                    "admit nobody; pass the compute vSwitch CIDRs by zone",
                    self,
                )
            # One rule per compute vSwitch, named by its zone: resizing compute changes none, moving zones adds or drops
            # rules only; the group (and the mount target and file system bound to it) keep their names and inputs.
            for zone, cidr in sorted(args.client_cidrs.items()):
                alicloud.nas.AccessRule(
                    f"{name}-access-rule-{zone}",
                    access_group_name=access_group.access_group_name,
                    file_system_type=fs_type,
                    source_cidr_ip=cidr,
                    rw_access_type="RDWR",
                    # root_squash by default: root on a node is nobody on the share (no_squash needs a reasoned skip).
                    user_access_type=args.nfs_squash,
                    priority=1,
                    opts=child(self),
                )
            mount_target = alicloud.nas.MountTarget(
                f"{name}-mount-target",
                file_system_id=self.file_system.id,
                access_group_name=access_group.access_group_name,
                vswitch_id=args.vswitch_id,
                vpc_id=args.vpc_id,
                network_type="Vpc",
                opts=child(self),
            )
            self.mount_domain = mount_target.mount_target_domain
            self.mount_source = pulumi.Output.concat(mount_target.mount_target_domain, ":", export_path)
            self.mount_options = NFS_MOUNT_OPTIONS

        self.kind = args.kind
        self.file_system_id = self.file_system.id
        self.register_outputs({"file_system_id": self.file_system_id, "mount_source": self.mount_source})
