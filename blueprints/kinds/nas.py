"""File Storage NAS kinds: file systems (NAS, Extreme NAS, CPFS), access groups and rules, mount targets, and what
keeps deleted files recoverable (recycle bin, auto-snapshot policies, snapshots)."""

from __future__ import annotations

import math
from typing import Any, Mapping, TypeGuard

from blueprints.kinds.model import Costs, Free, Kind, Priced, ReplacingInputs, Resource, Role, Terraform, Unpriced

SERVICES = ("nas",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS


def _is_days(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _file_system_cost(costs: Costs, r: Resource) -> None:
    """Provisioned capacity × the tier's price; general-purpose NAS bills what is used."""
    fs_type, storage_type = r.inputs.get("fileSystemType", "standard"), r.inputs.get("storageType")
    price = costs.price("nas", f"{fs_type}/{storage_type}")
    capacity = r.inputs.get("capacity")
    if capacity:
        item = f"{fs_type} {storage_type} {float(capacity):g} GiB provisioned"
        costs.add(r, item, float(capacity), "GiB-month", price, "monthly")
    else:
        item = f"{fs_type} {storage_type} per GiB used (usage; not in the plan)"
        costs.add(r, item, 0, "GiB-month", price, "usage")


def _file_system_windows(inputs: Mapping[str, Any]) -> dict[str, float]:
    """The general-purpose NAS recycle bin set inline (``recycleBin``; 0 when switched off)."""
    bin_ = inputs.get("recycleBin")
    if not isinstance(bin_, dict):
        return {}
    days = bin_.get("reservedDays") if bin_.get("status") == "Enable" else 0
    return {"recycle bin (recycleBin.reservedDays)": days} if _is_days(days) else {}


def _snapshot_policy_windows(inputs: Mapping[str, Any]) -> dict[str, float]:
    """Extreme NAS auto-snapshot retention (``retentionDays``; -1 keeps them for ever)."""
    days = inputs.get("retentionDays")
    if not _is_days(days):
        return {}
    return {"auto-snapshot retention (retentionDays)": math.inf if days == -1 else days}


def _recycle_bin_windows(inputs: Mapping[str, Any]) -> dict[str, float]:
    days = inputs.get("reservedDays")
    return {"recycle bin (reservedDays)": days} if _is_days(days) else {}


KINDS = (
    Kind(
        token="alicloud:nas/fileSystem:FileSystem",
        key_properties=("fileSystemType", "storageType", "capacity", "encryptType", "zoneId"),
        pricing=Priced(_file_system_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.STATEFUL}),
        recovery_windows=_file_system_windows,
    ),
    Kind(
        token="alicloud:nas/accessGroup:AccessGroup",
        key_properties=("accessGroupName", "accessGroupType"),
        pricing=Free("access groups have no charge of their own"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:nas/accessRule:AccessRule",
        key_properties=("sourceCidrIp", "rwAccessType", "userAccessType"),
        pricing=Free("access rules have no charge of their own"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:nas/mountTarget:MountTarget",
        key_properties=("networkType", "vswitchId"),
        pricing=Free("a mount target has no charge of its own: the file system it serves is priced"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.IN_VSWITCH, Role.STORAGE_ACCESS}),
        computed_outputs=("mountTargetDomain",),
    ),
    Kind(
        token="alicloud:nas/autoSnapshotPolicy:AutoSnapshotPolicy",
        key_properties=("fileSystemType", "retentionDays", "repeatWeekdays", "timePoints"),
        pricing=Unpriced("Extreme NAS snapshots bill per GiB-month of snapshot data, which the plan does not know"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        recovery_windows=_snapshot_policy_windows,
    ),
    Kind(
        token="alicloud:nas/recycleBin:RecycleBin",
        key_properties=("reservedDays",),
        pricing=Free("files kept in the recycle bin count as the file system's usage, priced on its line"),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
        recovery_windows=_recycle_bin_windows,
    ),
    Kind(
        token="alicloud:nas/snapshot:Snapshot",
        key_properties=("snapshotName", "retentionDays"),
        pricing=Unpriced("a snapshot bills per GiB-month of snapshot data, which the plan does not know"),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
)
