"""Diff risks for recovery windows: a cut of how long deleted or overwritten data stays recoverable (pure).

The windows: OSS noncurrent object versions (``lifecycleRules[].noncurrentVersionExpirations[].days``), Extreme NAS
auto-snapshots (``nas.AutoSnapshotPolicy.retentionDays``, -1 keeps them for ever) and the general-purpose NAS recycle
bin (``nas.FileSystem.recycleBin`` or ``nas.RecycleBin.reservedDays``). A cut below the floor is a data risk: the
floor is AIT016's ``MIN_RECOVERY_DAYS`` (7, the infraguard ecs-snapshot-retention-days default), so a weekend plus
the days before someone notices a deleted dataset stay covered.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from blueprints.review.guardrails.storage import MIN_RECOVERY_DAYS
from blueprints.review.plan import short_type


def retention_windows(resource: Mapping[str, Any]) -> dict[str, float]:
    """Each recovery window a resource sets, in days (``math.inf`` for ever, 0 for switched off), by a label a reviewer reads."""
    kind, inputs = short_type(resource["type"]), resource.get("inputs") or {}
    windows: dict[str, float] = {}
    if kind == "oss.Bucket":
        for index, rule in enumerate(inputs.get("lifecycleRules") or ()):
            if not isinstance(rule, dict) or rule.get("enabled") is False:
                continue
            for expiry in rule.get("noncurrentVersionExpirations") or ():
                days = expiry.get("days") if isinstance(expiry, dict) else None
                if isinstance(days, (int, float)) and not isinstance(days, bool):
                    windows[f"noncurrent object versions (lifecycle rule {rule.get('id') or index})"] = days
    elif kind == "nas.AutoSnapshotPolicy" and _is_days(inputs.get("retentionDays")):
        days = inputs["retentionDays"]
        windows["auto-snapshot retention (retentionDays)"] = math.inf if days == -1 else days
    elif kind == "nas.FileSystem" and isinstance(inputs.get("recycleBin"), dict):
        bin_ = inputs["recycleBin"]
        days = bin_.get("reservedDays") if bin_.get("status") == "Enable" else 0
        if _is_days(days):
            windows["recycle bin (recycleBin.reservedDays)"] = days
    elif kind == "nas.RecycleBin" and _is_days(inputs.get("reservedDays")):
        windows["recycle bin (reservedDays)"] = inputs["reservedDays"]
    return windows


def retention_cuts(old: Mapping[str, Any], new: Mapping[str, Any], floor: int = MIN_RECOVERY_DAYS) -> list[str]:
    """A risk for each window the change shortens to below ``floor`` days (a window that disappears is not a cut)."""
    before, after = retention_windows(old), retention_windows(new)
    risks = []
    for label, was in before.items():
        now = after.get(label)
        if now is not None and now < was and now < floor:
            risks.append(
                f"{label} cut from {_days(was)} to {_days(now)} (below the {floor}-day floor): deleted or overwritten data "
                "becomes unrecoverable sooner than anyone may notice it is gone"
            )
    return risks


def _is_days(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _days(value: float) -> str:
    if value == math.inf:
        return "for ever"
    return "off" if value == 0 else f"{value:g} day{'' if value == 1 else 's'}"
