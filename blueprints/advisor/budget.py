"""Budget tiers as data each blueprint declares: which yearly budget a blueprint serves and how a choice becomes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class StandingCost:
    """Something a tier's blueprint keeps up every hour of the year, whatever the jobs do (a cluster fee, a node pool).

    Priced either from the catalog's ``prices.csv`` (``item``/``price_tier``, through ``blueprints.catalog.price_cny``)
    or, for ECS nodes, from the catalog's price of ``instance_type``; ``quantity`` units are billed each hour.
    """

    what: str
    quantity: float
    unit: str
    item: str | None = None
    price_tier: str | None = None
    instance_type: str | None = None


@dataclass(frozen=True)
class BudgetTier:
    """One of the article's budget tiers, declared by the blueprint that serves it.

    ``min_cny_per_year`` is inclusive; the tier with the highest minimum also serves an unpriced choice.
    ``compute`` turns the chosen (instance type, node count per job, jobs in parallel) into the blueprint's ``compute``
    profile section.
    """

    name: str
    blueprint: str
    min_cny_per_year: float
    note: str
    compute: Callable[[str, int, int], dict[str, Any]]
    spot_when_allowed: bool = False
    single_node: bool = False
    # The blueprint's nodes exist only while work keeps them busy (a pool at min 0): its yearly cost is the runs alone.
    scales_to_zero: bool = False
    # The tier serves only jobs that share one pool with at least
    # this many others running at once (Job.jobs_in_parallel).
    min_jobs_in_parallel: int = 1
    # What the blueprint keeps up all year on top of the shared
    # foundation (file system, bucket, NAT), priced by the advisor.
    standing: tuple[StandingCost, ...] = ()
    # The most nodes the tier's pool holds, all parallel jobs together (None: no limit beyond the job's max_nodes).
    pool_max_nodes: int | None = None
    # Why the blueprint suits parallel jobs (what it does for them), shown with the numbers when the tier is chosen.
    why_parallel: str = ""
    # The blueprint's profile takes a ``preprocess:`` CPU group (blueprints/profile/preprocess.py), so a recommendation
    # whose CPUs cannot feed its GPUs writes the group the advisor sized (blueprints/advisor/feed.py).
    cpu_preprocess: bool = False
