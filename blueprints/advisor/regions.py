"""`aitrain recommend --regions`: the same job in several regions, each region's own recommendation, and where the job
is cheapest among the regions whose stock was checked and found (or, unchecked, among all, saying so).

Pure: each region's recommendation is the advisor's own (the catalog's prices for that region, or another region's
in the same market, as the cost lines say); the stock answer per region comes from the caller
(``aitrain recommend --check-stock`` asks ECS DescribeAvailableResource), never from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from blueprints.advisor.choice import Recommendation

UNCHECKED = "not checked"


@dataclass(frozen=True)
class RegionStock:
    """What the cloud said of the chosen type in a region: the zones with stock, or why it could not say."""

    zones: tuple[str, ...] = ()
    unanswered: str | None = None

    @property
    def has_stock(self) -> bool:
        """At least one zone has the type in stock."""
        return bool(self.zones)

    def text(self) -> str:
        """``in stock in cn-shanghai-b, cn-shanghai-c`` / ``none in stock`` / ``unanswered: …``."""
        if self.unanswered is not None:
            return f"unanswered: {self.unanswered}"
        return f"in stock in {', '.join(self.zones)}" if self.zones else "none in stock in any zone"


@dataclass(frozen=True)
class RegionResult:
    """One region's recommendation and (when checked) its stock."""

    region: str
    recommendation: Recommendation
    stock: RegionStock | None = None

    @property
    def cost_per_run(self) -> float | None:
        """The chosen option's CNY per run (None: nothing feasible, or its price unknown)."""
        chosen = self.recommendation.chosen
        return None if chosen is None else chosen.cost_cny_per_run

    def row(self) -> dict[str, Any]:
        """The JSON form (one entry of ``regions``)."""
        chosen = self.recommendation.chosen
        yearly = self.recommendation.yearly
        return {
            "region": self.region,
            "chosen": None if chosen is None else f"{chosen.nodes} × {chosen.instance_type}",
            "cny_per_run": None if self.cost_per_run is None else round(self.cost_per_run, 2),
            "cny_per_year": None if yearly is None else round(yearly.total(), 2),
            "price_basis": None if chosen is None else chosen.price_basis,
            "stock": UNCHECKED if self.stock is None else self.stock.text(),
        }


def compare(
    regions: Sequence[str],
    recommend_in: Callable[[str], Recommendation],
    stock_of: Callable[[str, str], RegionStock] | None = None,
) -> list[RegionResult]:
    """Each region's recommendation, and with ``stock_of`` (region, instance type) its chosen type's stock."""
    out = []
    for region in regions:
        rec = recommend_in(region)
        stock = None if stock_of is None or rec.chosen is None else stock_of(region, rec.chosen.instance_type)
        out.append(RegionResult(region, rec, stock))
    return out


def cheapest(results: Sequence[RegionResult]) -> tuple[RegionResult | None, str]:
    """The region to recommend and why: the cheapest per run among those found in stock (when stock was checked),
    else among all priced ones; None (with why) when no region has a priced, feasible choice in stock."""
    priced = [r for r in results if r.cost_per_run is not None]
    checked = any(r.stock is not None for r in results)
    pool = [r for r in priced if r.stock is not None and r.stock.has_stock] if checked else priced
    if not pool:
        why = (
            "no region has a feasible, priced choice found in stock"
            if checked
            else "no region has a feasible, priced choice"
        )
        return None, why
    best = min(pool, key=lambda r: (r.cost_per_run, _year(r), results.index(r)))
    among = "the regions found in stock" if checked else "all regions (stock not checked: add --check-stock)"
    return best, f"cheapest per run among {among}"


def _year(result: RegionResult) -> float:
    """The year's known total (a tie on the run's cost goes to the cheaper year); unknown sorts last."""
    yearly = result.recommendation.yearly
    return float("inf") if yearly is None else yearly.total()


def regions_text(results: Sequence[RegionResult], best: RegionResult | None, why: str) -> str:
    """The regions table for the terminal, the chosen region marked."""
    lines = ["", "Regions compared:"]
    for r in results:
        row = r.row()
        mark = "CHOSEN" if best is not None and r.region == best.region else "      "
        cost = "—" if row["cny_per_run"] is None else f"¥{row['cny_per_run']:,.0f}/run"
        year = "" if row["cny_per_year"] is None else f", ¥{row['cny_per_year']:,.0f}/year"
        applied = " (another region's price)" if "applied to" in (row["price_basis"] or "") else ""
        lines.append(
            f"  {mark} {r.region:<16} {row['chosen'] or 'nothing feasible':<34} {cost}{year}{applied}; {row['stock']}"
        )
    lines.append(f"  {why}" + ("" if best is None else f": {best.region}"))
    return "\n".join(lines)
