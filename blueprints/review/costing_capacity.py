"""What held capacity adds to a plan's year: the reservation's own lines, and the yearly cost with and without them.

Read from the plan's cost lines (``blueprints.review.costing``), so the summary and the cost block always agree.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from blueprints.core.tokens import short_type
from blueprints.kinds import Role, with_role
from blueprints.review.costing import cents, exact

MONTHS_PER_YEAR = 12


def reservation_summary(costs: dict[str, Any]) -> dict[str, Any]:
    """The plan summary's reservation cost a year and the priced lines' yearly total with and without it; empty when
    the plan holds no capacity, and unknown (with why) when a reservation's price is."""
    held = {short_type(kind.token) for kind in with_role(Role.CAPACITY_HOLD)}
    lines = [line for line in costs.get("lines", []) if line["type"] in held]
    if not lines:
        return {}
    unknown = [line for line in lines if line["cny_per_month"] is None]
    if unknown:
        why = "; ".join(f"{line['item']}: {line['source']}" for line in unknown)
        return {"reservation_cny_per_year": f"unknown: {why}"}
    holding = sum((exact(line["cny_per_month"]) for line in lines), Decimal(0)) * MONTHS_PER_YEAR
    year = exact(costs["totals"]["cny_per_month"]) * MONTHS_PER_YEAR
    scope = "" if costs["totals"].get("complete") else " (of the priced lines; the plan names the unpriced ones)"
    return {
        "reservation_cny_per_year": cents(holding),
        "yearly_cny_with_reservation": cents(year),
        "yearly_cny_without_reservation": cents(year - holding),
        "reservation_cost_basis": (
            "; ".join(str(line["item"]) for line in lines)
            + f", × 12 months{scope}: the reservation bills only for reserved nodes no instance uses"
        ),
    }
