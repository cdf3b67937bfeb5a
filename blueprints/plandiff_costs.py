"""The monthly cost change of a diff, in CNY, from the plans' ``costs`` blocks (see blueprints.plan.Plan.costs).

Unknown prices stay unknown (None), never 0: a resource with an unpriced line has no monthly amount, and a total
is incomplete when either plan's total is. Pure: no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class CostLine:
    """One resource's monthly CNY before and after (None: unknown or absent on that side)."""

    resource: str
    old: float | None
    new: float | None

    @property
    def delta(self) -> float | None:
        """New minus old; a missing side counts as 0 only when the resource does not exist there."""
        if self.old is None or self.new is None:
            return None
        return round(self.new - self.old, 2)


@dataclass(frozen=True)
class CostDiff:
    """Per-resource lines that changed, and the totals in ¥/month with the change in %."""

    lines: tuple[CostLine, ...]
    old_total: float | None
    new_total: float | None
    complete: bool
    unknown: tuple[str, ...]

    @property
    def delta(self) -> float | None:
        """Total change in ¥/month (None when a total is unknown)."""
        if self.old_total is None or self.new_total is None:
            return None
        return round(self.new_total - self.old_total, 2)

    @property
    def percent(self) -> float | None:
        """Total change in % of the old total (None when unknown or the old total is 0)."""
        delta = self.delta
        if delta is None or not self.old_total:
            return None
        return round(100.0 * delta / self.old_total, 1)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form inside the diff's ``costs``."""
        return {
            "currency": "CNY",
            "lines": [{"resource": c.resource, "old_cny_per_month": c.old, "new_cny_per_month": c.new, "delta_cny_per_month": c.delta} for c in self.lines],
            "totals": {
                "old_cny_per_month": self.old_total,
                "new_cny_per_month": self.new_total,
                "delta_cny_per_month": self.delta,
                "delta_percent": self.percent,
                "complete": self.complete,
                "unknown": list(self.unknown),
            },
        }


def cost_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> CostDiff | None:
    """The cost change between two plans' ``costs`` blocks; None when either plan is not priced (no lines)."""
    if not old.get("lines") and not old.get("totals") or not new.get("lines") and not new.get("totals"):
        return None
    before, after = _per_resource(old), _per_resource(new)
    names = list(before) + [n for n in after if n not in before]
    lines = []
    for name in names:
        # A resource only on one side costs nothing on the other (it does not exist there).
        a = before[name] if name in before else 0.0
        b = after[name] if name in after else 0.0
        if a != b or a is None:
            lines.append(CostLine(name, a, b))
    old_totals, new_totals = old.get("totals") or {}, new.get("totals") or {}
    complete = bool(old_totals.get("complete")) and bool(new_totals.get("complete"))
    unknown = tuple(f"old: {u}" for u in old_totals.get("unknown") or ()) + tuple(f"new: {u}" for u in new_totals.get("unknown") or ())
    return CostDiff(tuple(lines), _number(old_totals.get("cny_per_month")), _number(new_totals.get("cny_per_month")), complete, unknown)


def _per_resource(costs: Mapping[str, Any]) -> dict[str, float | None]:
    """Sum of a plan's monthly lines per resource; one unknown line makes the resource's amount unknown."""
    sums: dict[str, float | None] = {}
    for line in costs.get("lines") or ():
        name = str(line.get("resource"))
        amount = _number(line.get("cny_per_month"))
        current = sums.get(name, 0.0)
        sums[name] = None if amount is None or current is None else round(current + amount, 2)
    return sums


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
