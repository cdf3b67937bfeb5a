"""What holding a configuration's capacity costs a year in its operating mode: an ECS capacity reservation of the
node count (``capacity.reservation`` on a fixed cluster), kept all year.

A reservation "is billed at the pay-as-you-go rate of the specified instance type regardless of whether you create
pay-as-you-go instances in the reserved capacity" (https://www.alibabacloud.com/help/en/elastic-compute-service/latest/
resource-assurance-bill), and a node that draws from it bills as a node instead: so a year of holding costs the
reserved node-hours no run uses. Kept up all year, every reserved node runs (¥0 more); parked or autoscaled between
runs, the reservation bills the hours parking saves. Pure: numbers in, a CostItem out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeldCapacity:
    """What holding the capacity adds a year (CNY; None = unknown) and the sentence that says so."""

    cny_per_year: float | None
    text: str


def held_capacity(mode: str, *, always_on: bool, mode_cny: float | None, always_on_cny: float | None) -> HeldCapacity:
    """Holding the nodes' capacity all year in ``mode`` (``always_on``: the mode keeps every node up all year)."""
    if always_on:
        return HeldCapacity(
            0.0,
            "a capacity reservation of the node count (capacity.reservation) adds ¥0 a year here: every reserved node "
            "runs all year",
        )
    if mode_cny is None or always_on_cny is None:
        return HeldCapacity(None, "unknown: the nodes' price is unknown, so the reserved idle hours cannot be priced")
    idle = max(always_on_cny - mode_cny, 0.0)
    return HeldCapacity(
        idle,
        f"a capacity reservation of the node count kept all year would bill the node-hours no run uses: ¥{idle:,.0f} "
        f"a year on top, what '{mode}' saves (the year becomes the always-on cluster's); without one, each run's "
        "nodes are created anew and may find none in stock: run `aitrain preflight --choose` before each (an "
        "elasticity assurance instead costs a fee the catalog has no price for)",
    )
