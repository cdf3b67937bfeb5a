"""Budget tiers as data each blueprint declares: which yearly budget a blueprint serves and how a choice becomes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class BudgetTier:
    """One of the article's budget tiers, declared by the blueprint that serves it.

    ``min_cny_per_year`` is inclusive; the tier with the highest minimum also serves an unpriced choice.
    ``compute`` turns the chosen (instance type, node count) into the blueprint's ``compute`` profile section.
    """

    name: str
    blueprint: str
    min_cny_per_year: float
    note: str
    compute: Callable[[str, int], dict[str, Any]]
    spot_when_allowed: bool = False
    single_node: bool = False
    # The blueprint's nodes exist only while work keeps them busy (a pool at min 0): its yearly cost is the runs alone.
    scales_to_zero: bool = False
    # The tier serves only jobs that share one pool with at least this many others running at once (Job.jobs_in_parallel).
    min_jobs_in_parallel: int = 1
