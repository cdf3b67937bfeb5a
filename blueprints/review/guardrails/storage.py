"""Data-safety rules for shared storage and what guards it
from deletion: protected, encrypted, VPC-only, recoverable."""

from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from blueprints.kinds import Role, kind_of
from blueprints.review.guardrails.inputs import of_role, of_types, private, referenced
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan


def storage_protected(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT004: stateful resources are protected and retained, never replaced delete-first."""
    for r in of_role(plan, Role.STATEFUL):
        if not (r.protect and r.retain_on_delete):
            yield r.name, "stateful resource must have protect and retain_on_delete from its first deployment"
        if r.delete_before_replace:
            yield r.name, "delete_before_replace on stateful data can lose it on a failed replace"


NAS_ENCRYPTABLE = ("standard", "extreme")  # the NAS API's encrypt_type applies to these file system types only
CPFS_TYPES = ("cpfs", "cpfsse")  # nas.FileSystem file_system_type values for CPFS (SDK 4.0.0 file_system.py docstring)


def storage_encrypted(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT005: NAS standard and extreme file systems are encrypted."""
    for r in of_types(plan, ("nas.FileSystem",)):
        if r.inputs.get("fileSystemType") in NAS_ENCRYPTABLE and not r.inputs.get("encryptType"):
            yield r.name, "NAS file system is not encrypted (encryptType 0)"


def unencrypted_storage(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT009: stored data that is not encrypted at rest, including
    what the API cannot encrypt (so AIT005 does not fire)."""
    for r in of_types(plan, ("nas.FileSystem",)):
        kind = r.inputs.get("fileSystemType")
        if kind not in NAS_ENCRYPTABLE and not r.inputs.get("encryptType"):
            yield (
                r.name,
                (
                    f"{kind or 'NAS'} file system is not encrypted at rest: "
                    "the NAS API encrypts only standard and extreme file"
                    " systems, and the profile accepts this with "
                    "storage.allow_unencrypted_cpfs; keep regulated data off it"
                    " or use NAS extreme"
                ),
            )
    # OSS buckets are not here: OSS can always encrypt, so a bucket without SSE is AIT010's error.
    for r in of_types(plan, ("ecs.EcsDisk",)):
        if not r.inputs.get("encrypted"):
            yield r.name, "data disk is not encrypted"


_LOGIN_TAG = "login"  # the login node's ``aitrain-component`` tag (components/access.py)


def _vswitch_nets(plan: Plan) -> tuple[list[Any], list[Any]]:
    """(the other vSwitches' CIDRs, the login node's vSwitch CIDRs) of the plan.

    The login node's vSwitch is the one its instance names; every other vSwitch of the plan holds nodes, or only the
    NAT gateway and mount target (no host that could mount the share).
    """
    switches = {r.name: r.inputs.get("cidrBlock") for r in of_types(plan, ("vpc.Switch",))}
    login_names = {
        referenced(r.inputs.get("vswitchId"))
        for r in of_types(plan, ("ecs.Instance",))
        if (r.inputs.get("tags") or {}).get("aitrain-component") == _LOGIN_TAG
    }
    nets: tuple[list[Any], list[Any]] = ([], [])
    for name, cidr in switches.items():
        if isinstance(cidr, str):
            nets[name in login_names].append(ipaddress.ip_network(cidr, strict=False))
    return nets


def nas_access_vpc_only(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT006: each rule admits compute vSwitches only: never the login node's vSwitch, nor the rest of the VPC.

    The login node is the one host with a public address; a rule admitting the VPC admits it, and through it anyone
    who takes it may rewrite the host registry that picks the rendezvous endpoint. Without nodes in the plan (a
    component tested alone) a rule is held to a VPC of the plan, and without a VPC to private ranges; without vSwitches
    in the plan, only to the VPC.
    """
    vpcs = [
        ipaddress.ip_network(r.inputs["cidrBlock"]) for r in of_types(plan, ("vpc.Network",)) if "cidrBlock" in r.inputs
    ]
    compute, login = _vswitch_nets(plan)
    for r in of_types(plan, ("nas.AccessRule",)):
        source = r.inputs.get("sourceCidrIp", "")
        try:
            net = ipaddress.ip_network(source)
        except ValueError:
            yield r.name, f"access rule source {source!r} is not a CIDR"
            continue
        if vpcs:
            if not any(net.version == v.version and net.subnet_of(v) for v in vpcs):  # type: ignore[arg-type]
                yield r.name, f"access rule admits {source}, outside the VPC"
                continue
        elif not private(net):
            yield (
                r.name,
                f"access rule admits {source}, which is not a private range (no VPC in this plan to compare with)",
            )
            continue
        hit = [str(n) for n in login if n.version == net.version and net.overlaps(n)]
        if hit:
            yield (
                r.name,
                f"access rule admits {source}, which includes the login node's vSwitch {', '.join(hit)} (the one host "
                "with a public address); admit the compute vSwitches only",
            )
        elif compute and not any(net.version == c.version and net.subnet_of(c) for c in compute):
            yield (
                r.name,
                f"access rule admits {source}, wider than any compute vSwitch ({', '.join(map(str, compute))}); give "
                "each compute vSwitch its own rule",
            )
    for r in of_types(plan, ("nas.MountTarget",)):
        if r.inputs.get("accessGroupName") in (None, "DEFAULT_VPC_GROUP_NAME"):
            yield r.name, "mount target uses the default access group"


# ---- deletion protection where the API has it (AIT015) ----


def deletion_protection(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT015: scaling groups, NAT gateways and EIPs have the cloud's own deletion protection on.

    The switch and the value that means protected are each kind's ``deletion_protection`` (NAS and OSS have none).
    """
    for r in plan.resources:
        kind = kind_of(r.type)
        if kind is None or kind.deletion_protection is None:
            continue
        field, protected = kind.deletion_protection
        if r.inputs.get(field) is not protected:
            yield (
                r.name,
                f"{r.short_type} has no deletion protection ({field}={r.inputs.get(field)!r}, wanted {protected!r}); "
                "the console or API can release it",
            )


# ---- deleted data stays recoverable (AIT016) ----

MIN_RECOVERY_DAYS = 7  # infraguard ecs-snapshot-retention-days default; NAS recycle bin reserved_days is 1–180


def recoverable(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT016: general-purpose NAS keeps deletes in its recycle bin, Extreme
    NAS has an auto-snapshot policy, CPFS is said to have neither."""
    bins = {
        referenced(r.inputs.get("fileSystemId")): r.inputs.get("reservedDays")
        for r in of_types(plan, ("nas.RecycleBin",))
    }
    snapshot_days = [
        r.inputs.get("retentionDays", -1)
        for r in of_types(plan, ("nas.AutoSnapshotPolicy",))
        if r.inputs.get("fileSystemType") == "extreme"
    ]
    for r in of_types(plan, ("nas.FileSystem",)):
        kind = r.inputs.get("fileSystemType", "standard")  # the API's default type
        if kind == "standard":
            inline = r.inputs.get("recycleBin") or {}
            days = bins.get(r.name, inline.get("reservedDays") if inline.get("status") == "Enable" else None)
            if not _days_at_least(days, MIN_RECOVERY_DAYS):
                yield (
                    r.name,
                    (
                        "recycle bin is off or keeps deleted files under "
                        f"{MIN_RECOVERY_DAYS} days (recycleBin status Enable,"
                        f" reservedDays {MIN_RECOVERY_DAYS}-180, or a nas.RecycleBin); a deleted file is gone at once"
                    ),
                )
        elif kind == "extreme":
            if not any(d == -1 or _days_at_least(d, MIN_RECOVERY_DAYS) for d in snapshot_days):
                yield (
                    r.name,
                    (
                        f"no Extreme NAS auto-snapshot policy keeps snapshots {MIN_RECOVERY_DAYS} days or more"
                        f" (nas.AutoSnapshotPolicy fileSystemType extreme, retentionDays >= {MIN_RECOVERY_DAYS} or -1)"
                    ),
                )
            else:
                # A policy alone takes no snapshot: pulumi-alicloud 4.0.0 has no resource that applies one (nas/ holds
                # AutoSnapshotPolicy with no file-system argument, no attachment resource;
                # nas.FileSystem's only snapshot input is snapshot_id, to create FROM a
                # snapshot; ecs.EcsAutoSnapshotPolicyAttachment is for ECS disks).
                yield (
                    r.name,
                    (
                        "the auto-snapshot policy is created but nothing in the "
                        "plan applies it to this file system (pulumi-alicloud"
                        " 4.0.0 has no NAS policy attachment): until `aliyun "
                        "nas ApplyAutoSnapshotPolicy` runs after `pulumi up`"
                        " (the command in the plan's notes; check with "
                        "DescribeAutoSnapshotPolicies, FileSystemNums 1), no snapshot"
                        " is taken; once applied, skip AIT016 with that reason"
                    ),
                )
        elif kind in CPFS_TYPES:
            yield (
                r.name,
                (
                    f"{kind} file system has no snapshot or recycle-bin API "
                    "in the provider (nas.Snapshot and AutoSnapshotPolicy are"
                    " Extreme-only, the recycle bin general-purpose-only): a "
                    "deleted or overwritten file cannot be recovered; keep the"
                    " only copy of data in OSS (versioned) and treat CPFS as a cache"
                ),
            )


def _days_at_least(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


# ---- NAS access rules squash root (AIT024) and CPFS's missing controls (AIT025) ----

SQUASHING = ("root_squash", "all_squash")


def root_squash(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT024: NAS access rules map a client's root to an unprivileged user."""
    for r in of_types(plan, ("nas.AccessRule",)):
        access = r.inputs.get("userAccessType", "no_squash")  # the API's default is no_squash
        if access not in SQUASHING:
            yield (
                r.name,
                (
                    f"access rule userAccessType {access}: root on any host "
                    f"in {r.inputs.get('sourceCidrIp')} is root on the share;"
                    " use root_squash (storage.nfs_squash), or skip AIT024 with a reason"
                ),
            )


def cpfs_controls(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT025: CPFS has no access group and no encryption through
    the NAS API, so the reviewer accepts that explicitly."""
    for r in of_types(plan, ("nas.FileSystem",)):
        kind = r.inputs.get("fileSystemType")
        if kind in CPFS_TYPES:
            yield (
                r.name,
                (
                    f"{kind} is reached without a NAS access group and is not "
                    "encrypted at rest (the NAS API offers neither for CPFS):"
                    " any host in its vSwitch can mount it; accept this "
                    "only for data that may sit unencrypted in the VPC"
                    " (storage.allow_unencrypted_cpfs), or use NAS extreme"
                ),
            )


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT004",
        "error",
        "stateful storage is protected and retained",
        storage_protected,
        rationale=(
            "retain_on_delete only counts when set before a replace, and delete-first replaces lose data; "
            "https://github.com/pulumi/pulumi/issues/13428, https://github.com/pulumi/pulumi/issues/16179, "
            "https://github.com/pulumi/pulumi/issues/16629"
        ),
        fix=(
            "create NAS, OSS, EcsDisk, KMS keys and the ActionTrail trail with "
            "protect=True and retain_on_delete=True; never delete_before_replace"
        ),
        references=(1, 7),
    ),
    Rule(
        "AIT005",
        "error",
        "NAS standard and extreme file systems are encrypted",
        storage_encrypted,
        rationale=(
            "an unencrypted file system exposes training data on the provider's "
            "media; KICS 67bfdff1; infraguard nas-filesystem-encrypt-type-check"
        ),
        fix="set encryptType 1 (NAS-managed key) or 2 with kmsKeyId (Extreme NAS) at creation: it is ForceNew",
        references=(20,),
    ),
    Rule(
        "AIT006",
        "error",
        "NAS access is limited to the compute vSwitches",
        nas_access_vpc_only,
        rationale=(
            "a default or public access group lets any network reach the "
            "share, and a VPC-wide rule admits the login node (the one"
            " host with a public address) to the host registry; infraguard "
            "nas-filesystem-mount-target-access-group-check, nas-access-group-public-access-check"
        ),
        fix=(
            "use a dedicated access group with one rule per compute "
            "vSwitch CIDR; keep the login node in its own vSwitch"
        ),
        references=(20,),
    ),
    Rule(
        "AIT009",
        "warning",
        "all stored data is encrypted at rest",
        unencrypted_storage,
        rationale=(
            "data the API cannot encrypt (CPFS) or left unencrypted (EcsDisk) "
            "must be a visible choice; CKV_ALI_7; KICS 39750e32; CIS 4.1"
        ),
        fix="set encrypted=true on disks; keep regulated data off CPFS or use NAS extreme",
        references=(11, 20),
    ),
    Rule(
        "AIT015",
        "error",
        "deletion protection is on where the API has it",
        deletion_protection,
        rationale=(
            "protect/retain_on_delete stop only Pulumi; the console and API can still release a group, NAT or EIP;"
            " infraguard ecs-instance-deletion-protection-enabled; "
            "provider docs group_deletion_protection, deletion_protection"
        ),
        fix=(
            "set groupDeletionProtection on ess.ScalingGroup and "
            "deletionProtection on vpc.NatGateway and ecs.EipAddress"
        ),
        references=(3,),
    ),
    Rule(
        "AIT016",
        "warning",
        "shared file systems have a recycle bin or an auto-snapshot policy",
        recoverable,
        rationale=(
            "a deleted or overwritten dataset has no undo without a "
            "recycle bin or snapshots; NAS recycle bin (general-purpose,"
            " 1-180 days) and snapshots (Extreme only) per SDK 4.0.0 "
            "nas.RecycleBin, nas.Snapshot; infraguard ecs-snapshot-retention-days"
        ),
        fix=(
            "general-purpose NAS: recycleBin {status: Enable, reservedDays: "
            "7+}; Extreme: a nas.AutoSnapshotPolicy (retentionDays 7+),"
            " applied with aliyun nas ApplyAutoSnapshotPolicy after `pulumi "
            "up` (no resource can apply it), then skip AIT016 with that reason"
        ),
        references=(5, 6),
    ),
    Rule(
        "AIT024",
        "error",
        "NAS access rules squash root",
        root_squash,
        rationale=(
            "with no_squash, root on any VPC host is root on the share (the security review); infraguard NAS rules; "
            "docs/sources/security-and-data-safety.md §7 rule 20"
        ),
        fix="set userAccessType root_squash (the default of storage.nfs_squash), or skip AIT024 with a reason",
        references=(20,),
    ),
    Rule(
        "AIT025",
        "warning",
        "CPFS is reached through an access group and is encrypted",
        cpfs_controls,
        rationale=(
            "the NAS API has neither access rules nor encrypt_type for "
            "CPFS (SDK 4.0.0 nas.AccessRule file_system_type: standard,"
            " extreme; nas.FileSystem encrypt_type: standard, extreme); KICS 67bfdff1"
        ),
        fix=(
            "use NAS extreme for regulated data; keep CPFS for data that may sit unencrypted in the VPC, and say so "
            "with storage.allow_unencrypted_cpfs"
        ),
        references=(20,),
    ),
)
