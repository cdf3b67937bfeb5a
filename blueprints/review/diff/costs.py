"""The monthly cost change of a diff, in CNY, from the plans' ``costs`` blocks (see blueprints.review.plan.Plan.costs).

Unknown prices stay unknown (None), never 0: a resource with an unpriced line has no monthly amount, and a total
is incomplete when either plan's total is. Pure: no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class CostLine:
    """One resource's monthly CNY before and after: the priced part (None: nothing of it is priced) and whether
    some of its items are unpriced (``*_partial``), so a known part is never shown as the whole."""

    resource: str
    old: float | None
    new: float | None
    old_partial: bool = False
    new_partial: bool = False

    @property
    def delta(self) -> float | None:
        """New minus old of the priced parts (None when a side has no priced part)."""
        if self.old is None or self.new is None:
            return None
        return round(self.new - self.old, 2)

    @property
    def partial(self) -> bool:
        """Whether an unpriced item on either side makes the change incomplete."""
        return self.old_partial or self.new_partial


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
            "lines": [
                {
                    "resource": c.resource,
                    "old_cny_per_month": c.old,
                    "new_cny_per_month": c.new,
                    "delta_cny_per_month": c.delta,
                    "complete": not c.partial,
                }
                for c in self.lines
            ],
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
    was, now = _priced_items(old), _priced_items(new)
    names = list(before) + [n for n in after if n not in before]
    lines = []
    for name in names:
        # A resource only on one side costs nothing on the other (it does not exist there).
        a, a_partial = before.get(name, (0.0, False))
        b, b_partial = after.get(name, (0.0, False))
        # With an unpriced item, equal priced parts still hide a change when what is priced changed (a disk grew).
        if (a, a_partial) != (b, b_partial) or ((a_partial or b_partial) and was.get(name) != now.get(name)):
            lines.append(CostLine(name, a, b, a_partial, b_partial))
    old_totals, new_totals = old.get("totals") or {}, new.get("totals") or {}
    complete = bool(old_totals.get("complete")) and bool(new_totals.get("complete"))
    after_unknown = tuple(str(u) for u in new_totals.get("unknown") or ())
    unknown = after_unknown + tuple(
        f"{u} (before the change)" for u in old_totals.get("unknown") or () if str(u) not in after_unknown
    )
    return CostDiff(
        tuple(lines),
        _number(old_totals.get("cny_per_month")),
        _number(new_totals.get("cny_per_month")),
        complete,
        unknown,
    )


def _per_resource(costs: Mapping[str, Any]) -> dict[str, tuple[float | None, bool]]:
    """Per resource: the sum of its priced monthly lines (None when none is priced) and whether one is unpriced."""
    sums: dict[str, tuple[float | None, bool]] = {}
    for line in costs.get("lines") or ():
        name = str(line.get("resource"))
        amount = _number(line.get("cny_per_month"))
        known, partial = sums.get(name, (None, False))
        if amount is None:
            sums[name] = (known, True)
        else:
            sums[name] = (round((known or 0.0) + amount, 2), partial)
    return sums


def _priced_items(costs: Mapping[str, Any]) -> dict[str, list[tuple[Any, ...]]]:
    """Per resource, what its lines price (item, quantity, unit, unit
    price): tells an unknown that changed from one that did not."""
    items: dict[str, list[tuple[Any, ...]]] = {}
    for line in costs.get("lines") or ():
        items.setdefault(str(line.get("resource")), []).append(
            tuple(line.get(k) for k in ("item", "quantity", "unit", "unit_price_cny"))
        )
    return items


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
