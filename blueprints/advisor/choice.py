"""Choice: pick the best feasible option by objective, group
the rest by GPU model, and estimate a fixed configuration."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from blueprints.advisor import sizing
from blueprints.advisor.budget import BudgetTier
from blueprints.advisor.cost import cost_cny_per_year
from blueprints.advisor.explanations import data_path_findings, option_notes, tier_reasons, what_to_relax, why_not
from blueprints.advisor.feed import CpuGroup, cpu_group_for, feed_findings
from blueprints.advisor.job import Job
from blueprints.advisor.lingjun import lingjun_lines
from blueprints.advisor.options import (
    HARD,
    OBJECTIVES,
    STANDING_COSTS,
    Option,
    Reason,
    enumerate_options,
    evaluate,
    type_context,
)
from blueprints.advisor.storage import StorageChoice, choose_storage
from blueprints.advisor.teams import check_fits
from blueprints.advisor.tiers import Tier, served, tier_for
from blueprints.advisor.yearly import (
    ALWAYS_ON,
    YearlyCost,
    pool_gpus,
    pool_text,
    standing_items,
    tier_standing_items,
    total_cny,
    yearly_cost,
)


@dataclass(frozen=True)
class Considered:
    """The best option of one GPU model and why it was or was not chosen."""

    option: Option
    chosen: bool
    why: str


@dataclass(frozen=True)
class Recommendation:
    """The chosen option (or None), the considered ones, what to
    relax, the tier/blueprint, storage and the year's cost by mode."""

    job: Job
    objective: str
    chosen: Option | None
    considered: tuple[Considered, ...]
    options_evaluated: int
    feasible_count: int
    relax: tuple[str, ...]
    tier: Tier | None
    storage: StorageChoice | None
    findings: tuple[str, ...] = field(default=())
    yearly: YearlyCost | None = None
    # Why the tier's blueprint and not the others, each reason with its numbers (``explanations.tier_reasons``).
    tier_reasons: tuple[str, ...] = field(default=())
    # The CPU preprocessing group the chosen option needs to feed its GPUs (``feed.check_feed``); None: not needed.
    cpu_group: CpuGroup | None = None
    # The Lingjun (eflo) machine types weighed against the chosen option (``lingjun.lingjun_lines``); () without any.
    lingjun: tuple[str, ...] = ()


def _group(option: Option, family: str) -> str:
    return option.gpu_model or f"unnamed GPU ({family})"


def _best(options: Iterable[Option], objective: str) -> Option | None:
    pool = list(options)
    return min(pool, key=lambda o: o.key(objective)) if pool else None


def _nearest_infeasible(options: list[Option], objective: str) -> Option:
    """For a GPU model with no feasible option: fewest hard problems, then fewest reasons; then the fastest when
    the deadline is what fails (shows how close the model gets), else by objective."""

    def rank(o: Option) -> tuple[int, int]:
        return (sum(r.code in HARD for r in o.reasons), len(o.reasons))

    top = min(rank(o) for o in options)
    nearest = [o for o in options if rank(o) == top]
    order = "time" if any(o.has("deadline") for o in nearest) else objective
    return min(nearest, key=lambda o: o.key(order))


def needed_mb_s(job: Job, hours: float | None) -> float | None:
    """Read + ingest rate, MB/s, or None when neither is known; parallel jobs read the shared storage at once."""
    if hours is None:
        return None
    read = sizing.read_rate_mb_s(job, hours)
    ingest = sizing.ingest_rate_mb_s(job)
    if read is None and ingest is None:
        return None
    return (read or 0.0) * job.jobs_in_parallel + (ingest or 0.0)


def recommend(
    job: Job,
    catalog: Any,
    objective: str = "cost",
    options: list[Option] | None = None,
    *,
    tiers: Sequence[BudgetTier],
) -> Recommendation:
    """Choose the best feasible option by objective (cost: cheapest per run; time: fastest) and explain the rest.

    ``tiers`` are the budget tiers the blueprints declare (``blueprints.architectures.budget_tiers``).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}")
    if options is None:
        caps = [t.pool_max_nodes for t in served(job, tiers) if t.pool_max_nodes is not None]
        options = enumerate_options(job, catalog, min(caps) if caps else None)
    options, chosen = _choose_within_yearly_budget(job, catalog, options, objective, tiers)
    feasible = [o for o in options if o.feasible]
    groups: dict[str, list[Option]] = {}
    for o in options:
        groups.setdefault(_group(o, catalog.instance_types[o.instance_type].family), []).append(o)
    considered = []
    for name in sorted(groups):
        members = groups[name]
        ok = [o for o in members if o.feasible]
        best = _best(ok, objective) if ok else _nearest_infeasible(members, objective)
        assert best is not None
        is_chosen = chosen is not None and best == chosen
        considered.append(
            Considered(
                best, is_chosen, "chosen: " + _chosen_why(objective) if is_chosen else why_not(best, chosen, objective)
            )
        )
    considered.sort(key=lambda c: (not c.chosen, not c.option.feasible, c.option.key(objective)))
    relax = () if chosen is not None else tuple(what_to_relax(job, options, objective))
    storage = None
    yearly = None
    tier = None
    findings: list[str] = []
    if chosen is not None:
        # The job is validated before any pool is chosen: only now is there a pool to hold the teams' GPUs against.
        check_fits(
            job.teams,
            pool_gpus(job, chosen),
            pool_text(job, chosen),
            "the pool the recommendation picks",
            "raise jobs_in_parallel (the pool holds every parallel job's nodes at once)",
        )
        storage = choose_storage(catalog, needed_mb_s(job, chosen.estimated_hours), job.dataset_tb, job.region)
        tier, yearly = _tier_and_year(job, catalog, chosen, storage, tiers)
        reasons = (
            []
            if tier is None or yearly is None
            else tier_reasons(job, catalog, chosen, tier, yearly, tiers, _alone(job, catalog, chosen, tier, tiers))
        )
        findings += data_path_findings(job, chosen, storage)
        findings += feed_findings(job, catalog, chosen.instance_type, chosen.nodes, chosen.estimated_hours)
        if storage.kind == "cpfs":
            findings.append(
                "storage: only CPFS meets this capacity and throughput, "
                "and CPFS cannot be encrypted at rest through the NAS API; "
                "the written profile sets storage.allow_unencrypted_cpfs: true so that choice is explicit in review"
            )
        findings += option_notes(job, catalog, chosen)
        if job.deadline_days is None and objective == "cost":
            findings.append(
                "no deadline given: the cheapest option is usually the one "
                "with the fewest nodes, so it is also slow; add deadline_days"
            )
    else:
        reasons = []
    return Recommendation(
        job,
        objective,
        chosen,
        tuple(considered),
        len(options),
        len(feasible),
        relax,
        tier,
        storage,
        tuple(findings),
        yearly,
        tuple(reasons),
        cpu_group=None
        if chosen is None
        else cpu_group_for(job, catalog, chosen.instance_type, chosen.nodes, chosen.estimated_hours),
        lingjun=lingjun_lines(job, catalog, chosen),
    )


def _tier_and_year(
    job: Job, catalog: Any, chosen: Option, storage: StorageChoice | None, tiers: Sequence[BudgetTier]
) -> tuple[Tier | None, YearlyCost]:
    """The tier for ``chosen`` and the year in the mode its blueprint runs in (with what the blueprint keeps up)."""
    # The tier is chosen on the year's cost in the mode the nodes would run in; parked and autoscaled bill the same.
    year = yearly_cost(job, catalog, chosen, storage)
    basis = (
        "its yearly cost always on" if year.mode.name == ALWAYS_ON else "its yearly cost with nodes only during runs"
    )
    tier = tier_for(
        job, chosen, tiers, year.total() if year.mode.compute.amount is not None else None, basis, catalog=catalog
    )
    if tier is not None and (tier.scales_to_zero or tier.standing):
        year = yearly_cost(
            job,
            catalog,
            chosen,
            storage,
            scales_to_zero=tier.scales_to_zero,
            pool_shape=tier.note,
            tier_standing=tier.standing,
        )
    return tier, year


def _alone(
    job: Job, catalog: Any, chosen: Option, tier: Tier, tiers: Sequence[BudgetTier]
) -> tuple[Tier, YearlyCost] | None:
    """For a tier made for parallel jobs: the tier and year one of them would get on its own stack (None otherwise)."""
    if tier.min_jobs_in_parallel <= 1:
        return None
    one = job.model_copy(update={"jobs_in_parallel": 1})
    option = replace(chosen, cost_cny_per_year=cost_cny_per_year(chosen.cost_cny_per_run, one.runs_per_year))
    storage = choose_storage(catalog, needed_mb_s(one, option.estimated_hours), one.dataset_tb, one.region)
    lone, year = _tier_and_year(one, catalog, option, storage, tiers)
    return None if lone is None else (lone, year)


def _standing_cny(job: Job, catalog: Any, option: Option, tiers: Sequence[BudgetTier]) -> tuple[float, str]:
    """Known CNY a year of what stays up whatever the compute does (file system, bucket, NAT gateway) for ``option``,
    plus the least that any tier serving the job keeps up on top (a cluster fee): a lower bound, never an overcount.
    Also the names of those tier items (empty when none)."""
    storage = choose_storage(catalog, needed_mb_s(job, option.estimated_hours), job.dataset_tb, job.region)
    extras = sorted((tier_standing_items(job, catalog, t.standing) for t in served(job, tiers)), key=total_cny)
    extra = extras[0] if extras else ()
    names = ", ".join(i.what for i in extra if i.amount is not None)
    return total_cny(standing_items(job, catalog, storage)) + total_cny(extra), names


def _choose_within_yearly_budget(
    job: Job, catalog: Any, options: list[Option], objective: str, tiers: Sequence[BudgetTier] = ()
) -> tuple[list[Option], Option | None]:
    """The best option once what stays up all year counts against ``budget_cny_per_year`` too, not just compute.

    The standing cost depends on the storage the chosen option needs, so it is priced for the best option and every
    option whose compute plus that standing cost exceeds the budget gets a ``budget_year`` reason; repeated until the
    choice is stable (storage grows only with the data rate, so a few rounds suffice).
    """
    chosen = _best((o for o in options if o.feasible), objective)
    budget = job.budget_cny_per_year
    priced: set[float] = set()
    while budget is not None and chosen is not None:
        standing, names = _standing_cny(job, catalog, chosen, tiers)
        if standing in priced or not standing:
            break
        priced.add(standing)
        options = [_over_yearly_budget(o, standing, budget, names) for o in options]
        chosen = _best((o for o in options if o.feasible), objective)
    return options, chosen


def _over_yearly_budget(option: Option, standing: float, budget: float, tier_items: str = "") -> Option:
    """``option`` with a ``budget_year`` reason when its compute plus ``standing`` exceeds the yearly budget."""
    per_year = option.cost_cny_per_year
    if per_year is None or option.has("budget_year") or per_year + standing <= budget:
        return option
    what = STANDING_COSTS + (f", {tier_items})" if tier_items else ")")
    message = (
        f"costs ¥{per_year:,.0f} a year in compute + ¥{standing:,.0f} {what} = ¥{per_year + standing:,.0f}; "
        f"the budget is ¥{budget:,.0f}"
    )
    return replace(option, reasons=option.reasons + (Reason("budget_year", message),))


def _chosen_why(objective: str) -> str:
    return "cheapest feasible option per run" if objective == "cost" else "fastest feasible option"


def estimate_yearly(job: Job, catalog: Any, option: Option, storage: StorageChoice | None) -> YearlyCost:
    """The year of a fixed configuration (``aitrain estimate``): a fixed cluster, parked between runs or always on.

    ``UserInputError`` when the job's teams hold more GPUs than the configuration has."""
    check_fits(
        job.teams, pool_gpus(job, option), pool_text(job, option), "the configuration estimated", "give more --nodes"
    )
    return yearly_cost(job, catalog, option, storage)


def estimate(job: Job, catalog: Any, instance_type: str, nodes: int) -> tuple[Option, StorageChoice | None, list[str]]:
    """Time and cost of a fixed configuration, with the storage it needs and caveats."""
    inst = catalog.instance_types[instance_type]
    option = evaluate(job, type_context(job, catalog, inst), nodes)
    storage = None
    findings: list[str] = []
    if option.estimated_hours is not None:
        storage = choose_storage(catalog, needed_mb_s(job, option.estimated_hours), job.dataset_tb, job.region)
        findings += data_path_findings(job, option, storage)
        findings += feed_findings(job, catalog, option.instance_type, option.nodes, option.estimated_hours)
    findings += option_notes(job, catalog, option)
    return option, storage, findings
