"""Budget tiers: map a job's yearly budget (or the chosen option's yearly cost) to a blueprint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from blueprints.advisor import cost as costs
from blueprints.advisor.data import limits
from blueprints.advisor.job import Job

if TYPE_CHECKING:
    from blueprints.advisor.options import Option


@dataclass(frozen=True)
class Tier:
    """The article's budget tier and the blueprint it maps to."""

    name: str
    blueprint: str
    spot: bool
    basis_cny_per_year: float | None
    basis: str
    note: str


def tier_for(job: Job, chosen: Option | None) -> Tier | None:
    """Map the article's budget tiers to a blueprint (boundaries in data/limits.csv, choices in data/README.md).

    Basis: the job's yearly budget, else the chosen option's yearly cost.
      ≥ ¥500k/yr        → dedicated training cluster: ``fixed-cluster``, on-demand.
      ¥100k – < ¥500k   → ``autoscaling-pool`` (the article's ¥100k–300k mixed pool, extended over its ¥300k–500k gap:
                          a pool that scales to zero between runs costs less than a dedicated cluster the article
                          reserves for ≥ ¥500k); spot when the job allows it.
      < ¥100k           → single node: ``fixed-cluster`` with nodes 1, spot when the job allows it.
    """
    if chosen is None:
        return None
    basis_value = job.budget_cny_per_year if job.budget_cny_per_year is not None else chosen.cost_cny_per_year
    basis = "the job's yearly budget" if job.budget_cny_per_year is not None else "the chosen option's yearly cost"
    dedicated = limits()["tier_dedicated_min_cny_per_year"]
    pool = limits()["tier_pool_min_cny_per_year"]
    if basis_value is None or basis_value >= dedicated:
        always_on = costs.always_on_cny_per_year(chosen.price_cny_per_hour, chosen.nodes)
        note = "dedicated training cluster"
        if always_on is not None:
            note += f"; kept up all year it would cost ¥{always_on:,.0f} (destroy it between runs to pay only per run)"
        return Tier("dedicated", "fixed-cluster", False, basis_value, basis, note)
    if basis_value >= pool:
        return Tier("pool", "autoscaling-pool", job.spot_allowed, basis_value, basis, "autoscaling pool that scales to zero between runs")
    note = "single node" + (", spot (preemptible, price capped at pay-as-you-go)" if job.spot_allowed else ", on-demand (the job does not allow spot)")
    if chosen.nodes > 1:
        note += f"; the article's under-¥100k tier is one node, but this job needs {chosen.nodes} nodes to meet its constraints"
    return Tier("single-node", "fixed-cluster", job.spot_allowed, basis_value, basis, note)
