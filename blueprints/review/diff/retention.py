"""Diff risks for recovery windows: a cut of how long deleted or overwritten data stays recoverable (pure).

The windows are each kind's ``recovery_windows`` (blueprints/kinds/oss.py and nas.py): OSS noncurrent object
versions (``lifecycleRules[].noncurrentVersionExpirations[].days``), Extreme NAS auto-snapshots
(``nas.AutoSnapshotPolicy.retentionDays``, -1 keeps them for ever) and the general-purpose NAS recycle bin
(``nas.FileSystem.recycleBin`` or ``nas.RecycleBin.reservedDays``). A cut below the floor is a data risk: the floor
is AIT016's ``MIN_RECOVERY_DAYS`` (7, the infraguard ecs-snapshot-retention-days default), so a weekend plus the
days before someone notices a deleted dataset stay covered.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from blueprints.kinds import kind_of
from blueprints.review.guardrails.storage import MIN_RECOVERY_DAYS


def retention_windows(resource: Mapping[str, Any]) -> dict[str, float]:
    """Each recovery window a resource sets, in days (``math.inf`` for ever, 0 for switched off), by a label a reviewer
    reads: its kind's ``recovery_windows`` (``blueprints.kinds``), none for a kind without one."""
    kind = kind_of(str(resource["type"]))
    if kind is None or kind.recovery_windows is None:
        return {}
    return kind.recovery_windows(resource.get("inputs") or {})


def retention_cuts(old: Mapping[str, Any], new: Mapping[str, Any], floor: int = MIN_RECOVERY_DAYS) -> list[str]:
    """A risk for each window the change shortens to below ``floor`` days (a window that disappears is not a cut)."""
    before, after = retention_windows(old), retention_windows(new)
    risks = []
    for label, was in before.items():
        now = after.get(label)
        if now is not None and now < was and now < floor:
            risks.append(
                f"{label} cut from {_days(was)} to {_days(now)} (below "
                f"the {floor}-day floor): deleted or overwritten data "
                "becomes unrecoverable sooner than anyone may notice it is gone"
            )
    return risks


def _days(value: float) -> str:
    if value == math.inf:
        return "for ever"
    return "off" if value == 0 else f"{value:g} day{'' if value == 1 else 's'}"
