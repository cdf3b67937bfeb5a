"""Explanations: why an option was not chosen, what to relax when nothing fits, the data-path check and caveats."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from blueprints.advisor import sizing
from blueprints.advisor.job import Job
from blueprints.advisor.options import HARD, INF, STANDING_COSTS, Option, scaling_for
from blueprints.advisor.storage import StorageChoice
from blueprints.catalog.availability import region_availability

if TYPE_CHECKING:
    from blueprints.advisor.budget import BudgetTier
    from blueprints.advisor.tiers import Tier
    from blueprints.advisor.yearly import YearlyCost


def why_not(option: Option, chosen: Option | None, objective: str) -> str:
    """Why ``option`` was not chosen: its reasons, or how much slower or dearer than the chosen one it is."""
    if option.reasons:
        return "; ".join(r.message for r in option.reasons)
    if chosen is None:
        return "feasible"
    if objective == "time":
        extra = (option.estimated_hours or 0) - (chosen.estimated_hours or 0)
        return f"feasible, {extra:,.1f} h slower than the chosen option"
    extra = (option.cost_cny_per_run or 0) - (chosen.cost_cny_per_run or 0)
    pct = extra / chosen.cost_cny_per_run * 100 if chosen.cost_cny_per_run else 0.0
    return f"feasible, ¥{extra:,.0f} more per run (+{pct:.0f}%) than the chosen option"


def _days(hours: float) -> str:
    return f"{hours / 24:,.1f} days"


def _cfg(option: Option) -> str:
    return f"{option.nodes} × {option.instance_type} ({option.gpus} × {option.gpu_label})"


def what_to_relax(job: Job, options: list[Option], objective: str) -> list[str]:
    """When nothing is feasible: which constraint to relax and by how much, with numbers."""
    out: list[str] = []
    runnable = [o for o in options if not o.has(*HARD)]
    if not runnable:
        mem = [o for o in options if o.has("memory") and not o.has("gpu_unknown", "precision")]
        if mem:
            biggest = max(mem, key=lambda o: (o.gpu_memory_gib or 0, o.gpus))
            need = biggest.memory_gib_per_gpu
            if not job.sharding:
                sharded = sizing.model_state_gib_per_gpu(job.model_copy(update={"sharding": True}), biggest.gpus)
                out.append(
                    f"model state needs {need:,.1f} GiB per GPU unsharded and the largest GPU has "
                    f"{biggest.gpu_memory_gib:g} GiB: "
                    f"set sharding: true (ZeRO-3/FSDP), which needs {sharded:,.1f} GiB per GPU on {biggest.gpus} GPUs"
                )
            else:
                total = job.params * sizing.bytes_per_param(job.precision, job.optimizer) / sizing.GIB
                gpus_needed = math.ceil(total / (biggest.gpu_memory_gib or 1))
                out.append(
                    f"model state is {total:,.0f} GiB; even {biggest.gpus} × {biggest.gpu_label} "
                    f"({biggest.gpu_memory_gib:g} GiB each) is too small: "
                    f"raise max_nodes from {job.max_nodes} so that at least {gpus_needed} such GPUs are allowed"
                )
        if any(o.has("precision") for o in options):
            out.append(
                f"no GPU in the region has a published {job.precision} peak among the types that fit: choose another "
                "precision (bf16 is the common one)"
            )
        return out or ["no instance type in the catalog can run this job"]
    priced = [o for o in runnable if not o.has("unpriced", "no_anchor")]
    if not priced:
        names = sorted({o.instance_type for o in runnable if not o.has("no_anchor")})[:5]
        guessed = sorted({o.gpu_model or "" for o in runnable if o.has("no_anchor")})
        out = []
        if names:
            out.append(
                "no type that fits this job has a list price in the catalog; "
                f"these can be planned but not priced: {', '.join(names)}"
            )
        if guessed:
            out.append(
                f"{', '.join(guessed)} have no published MFU anchor for {job.model_kind}: measure one and pass mfu: (a "
                "fraction 0 < mfu ≤ 1, e.g. 0.3) to consider them"
            )
        return out
    fastest = min(priced, key=lambda o: o.key("time"))
    if job.deadline_hours is not None and (fastest.estimated_hours or INF) > job.deadline_hours:
        ratio = job.deadline_hours / (fastest.estimated_hours or INF)
        # Fewer than max_nodes were tried when the pool shared by the parallel jobs caps each job (enumerate_options).
        top = max(o.nodes for o in options)
        within, more = (
            (f"{job.max_nodes} nodes", f"raise max_nodes above {job.max_nodes}")
            if top >= job.max_nodes
            else (
                f"{top} node{'' if top == 1 else 's'} per job ({job.jobs_in_parallel} parallel jobs share one pool)",
                "run fewer jobs in parallel",
            )
        )
        out.append(
            f"the {job.deadline_days:g}-day deadline cannot be met by any "
            f"priced option within {within}: the fastest, {_cfg(fastest)}, "
            f"takes {_days(fastest.estimated_hours or 0)}: extend the deadline to "
            f"{math.ceil((fastest.estimated_hours or 0) / 24 * 10) / 10:g} days, "
            f"cut the training work to {ratio:.0%} of the current value, or {more}"
        )
    on_time = [o for o in priced if not o.has("deadline")]
    if on_time:
        cheapest = min(on_time, key=lambda o: o.key("cost"))
        per_run = cheapest.cost_cny_per_run or 0.0
        per_year = cheapest.cost_cny_per_year or 0.0
        what = (
            f"meeting the {job.deadline_days:g}-day deadline"
            if job.deadline_days is not None
            else "the cheapest option"
        )
        if job.budget_cny_per_run is not None and per_run > job.budget_cny_per_run:
            afford = _gpus_affordable(job.budget_cny_per_run, cheapest, job.deadline_hours)
            out.append(
                f"{what} needs ≥ {cheapest.gpus} {cheapest.gpu_label} "
                f"({_cfg(cheapest)}) at ¥{per_run:,.0f} per run{afford}: "
                f"raise the per-run budget from ¥{job.budget_cny_per_run:,.0f} to ¥{math.ceil(per_run):,}"
            )
        if job.budget_cny_per_year is not None and per_year > job.budget_cny_per_year:
            jobs = job.jobs_in_parallel
            afford = _gpus_affordable(
                job.budget_cny_per_year / (job.runs_per_year * jobs), cheapest, job.deadline_hours
            )
            runs = f"{job.runs_per_year:g} runs" if jobs == 1 else f"{jobs} parallel jobs × {job.runs_per_year:g} runs"
            out.append(
                f"{what} needs ≥ {cheapest.gpus} {cheapest.gpu_label} ({_cfg(cheapest)}) at ¥{per_year:,.0f} a year "
                f"({runs}){afford}: raise the yearly budget from "
                f"¥{job.budget_cny_per_year:,.0f} to ¥{math.ceil(per_year):,}, "
                f"or run {max(math.floor(job.budget_cny_per_year / per_run / jobs * 100) / 100, 0):g} times a year "
                f"instead of {job.runs_per_year:g}" + ("" if jobs == 1 else " (each job)")
            )
        standing = _standing_reason(cheapest)
        if job.budget_cny_per_year is not None and standing is not None and per_year <= job.budget_cny_per_year:
            out.append(
                f"{what} ({_cfg(cheapest)}) {standing}: raise the "
                "yearly budget, or size the job's data (dataset_tb) down"
            )
    in_budget = [o for o in priced if not o.has("budget_run", "budget_year")]
    has_budget = job.budget_cny_per_run is not None or job.budget_cny_per_year is not None
    if in_budget and has_budget and job.deadline_hours is not None:
        quickest = min(in_budget, key=lambda o: o.key("time"))
        if (quickest.estimated_hours or INF) > job.deadline_hours:
            out.append(
                f"within the budget the fastest option is {_cfg(quickest)}, {_days(quickest.estimated_hours or 0)} at "
                f"¥{quickest.cost_cny_per_run or 0:,.0f} per run: "
                f"extend the deadline from {job.deadline_days:g} to "
                f"{math.ceil((quickest.estimated_hours or 0) / 24 * 10) / 10:g} days"
            )
    if not in_budget and on_time and has_budget:
        cheapest = min(priced, key=lambda o: o.key("cost"))
        standing = _standing_reason(cheapest)
        out.append(
            f"no option fits the budget at any deadline: the cheapest, {_cfg(cheapest)}, costs "
            f"¥{cheapest.cost_cny_per_run or 0:,.0f} per run "
            f"(¥{cheapest.cost_cny_per_year or 0:,.0f} a year) and takes {_days(cheapest.estimated_hours or 0)}"
            + ("" if standing is None else f"; it {standing}")
        )
    if not in_budget and not on_time:
        cheapest = min(priced, key=lambda o: o.key("cost"))
        out.append(
            f"even the cheapest option, {_cfg(cheapest)}, costs ¥{cheapest.cost_cny_per_run or 0:,.0f} per run "
            f"(¥{cheapest.cost_cny_per_year or 0:,.0f} a year) "
            f"and takes {_days(cheapest.estimated_hours or 0)}: raise the budget to at least that, and the deadline too"
        )
    return out or ["no option meets every constraint; see the considered options for each one's reason"]


def _standing_reason(option: Option) -> str | None:
    """The ``budget_year`` sentence when what stays up all year is what breaks the budget (``choice``), else None."""
    return next((r.message for r in option.reasons if r.code == "budget_year" and STANDING_COSTS in r.message), None)


def _gpus_affordable(budget_per_run: float, option: Option, deadline_hours: float | None) -> str:
    """ "; the budget pays for N GPUs for the deadline" — budget ÷ (price per GPU-hour × deadline hours)."""
    if deadline_hours is None or not option.price_cny_per_hour or not option.gpus:
        return ""
    per_gpu_hour = option.price_cny_per_hour * option.nodes / option.gpus
    gpus = math.floor(budget_per_run / (per_gpu_hour * deadline_hours))
    return f"; the budget pays for {gpus} of them for {deadline_hours / 24:g} days (¥{per_gpu_hour:,.2f} per GPU-hour)"


def data_path_findings(job: Job, option: Option, storage: StorageChoice | None) -> list[str]:
    """The data-path check: the rate the GPUs consume against what the chosen storage delivers."""
    if option.estimated_hours is None:
        return []
    rate, unit = sizing.sample_rate(job, option.estimated_hours)
    read = sizing.read_rate_mb_s(job, option.estimated_hours)
    ingest = sizing.ingest_rate_mb_s(job)
    out = []
    if read is None and ingest is None:
        out.append(
            f"data path not checked: the job consumes {rate:,.0f} {unit} "
            "but gives no dataset_tb, so the bytes per second are unknown"
        )
        return out
    parts = []
    if read is not None:
        one = (
            f"{job.dataset_tb:g} TB × {job.epochs:g} epoch{'' if job.epochs == 1 else 's'} over "
            f"{option.estimated_hours:,.1f} h, {rate:,.0f} {unit}"
        )
        jobs = job.jobs_in_parallel
        # Parallel jobs share the file system and read it at the same time.
        parts.append(
            f"read {read:,.0f} MB/s ({one})"
            if jobs == 1
            else f"read {read * jobs:,.0f} MB/s ({jobs} parallel jobs × {read:,.0f} MB/s: {one})"
        )
    if ingest is not None:
        parts.append(f"write {ingest:,.0f} MB/s ({job.ingest_tb_per_day:g} TB/day ingest)")
    if storage is not None:
        gives = "unknown" if storage.throughput_mb_s is None else f"{storage.throughput_mb_s:,.0f} MB/s"
        head = (
            f"data path: needs {' + '.join(parts)}; {storage.kind} "
            f"{storage.profile_tier} at {storage.capacity_gib:,} GiB gives {gives}"
        )
        if storage.shortfall_mb_s is not None and storage.shortfall_mb_s > 0:
            head += (
                f": SHORTFALL of {storage.shortfall_mb_s:,.0f} MB/s; the "
                "GPUs would wait on storage. Stage data on local disks, "
                "split it across file systems, or ask for a raised CPFS limit (up to 100,000 MB/s by ticket)"
            )
        out.append(head)
    return out


def _deadline_margin_note(job: Job, option: Option) -> str | None:
    """A warning when the typical estimate meets the deadline but the range's conservative end does not: the
    selection ranks on the typical hours, and a run at the conservative anchor's MFU would finish late."""
    deadline, span = job.deadline_hours, option.hours_range
    if deadline is None or span is None or option.estimated_hours is None or option.estimated_hours > deadline:
        return None
    if span[1] <= deadline:
        return None
    return (
        f"deadline: the typical estimate ({_days(option.estimated_hours)}) meets the {job.deadline_days:g}-day "
        f"deadline, but the conservative end of the range ({_days(span[1])}) does not: a run at the conservative "
        "anchor's MFU finishes late, so leave that margin or choose a larger configuration "
        "(`aitrain estimate --nodes N` shows the range of another size)"
    )


def option_notes(job: Job, catalog: Any, option: Option) -> list[str]:
    """Caveats that travel with an option: the MFU anchor and its fabric, slow scaling, inferred GPU, regions, price."""
    inst = catalog.instance_types[option.instance_type]
    out = []
    if option.gpu_model_confidence == "inferred":
        # Every estimate and recommendation that rests on an inferred model carries this line (README "Inferred GPU
        # models"): the figures below are only as good as the inference.
        out.append(
            f"GPU: {option.gpu_model} is inferred from the published figures (the source does not name the model), "
            f"so the GPU class is inferred: the peak TFLOPS and MFU anchor used here are those of {option.gpu_model}"
        )
    scaling = scaling_for(job, inst, option.nodes)
    if option.mfu_anchor is not None and option.mfu is not None:
        speed = "" if scaling.gbps_per_gpu is None else f" at {scaling.gbps_per_gpu:g} Gbit/s per GPU"
        out.append(
            f"MFU: {option.mfu_anchor}; this configuration ({option.nodes:,} × {option.instance_type}, "
            f"{scaling.link}{speed}) scales at "
            f"{scaling.efficiency:.3f}, so it runs at {option.mfu:.3f} × {scaling.efficiency:.3f} = "
            f"{option.mfu * scaling.efficiency:.3f} of peak"
        )
    out += [f"scaling: {n}" for n in scaling.notes]
    mfu_range = None if job.mfu is not None else sizing.default_mfu(option.gpu_model, job.model_kind, job.precision)
    size_note = None if mfu_range is None else sizing.model_size_note(job, mfu_range)
    out += [size_note] if size_note is not None else []
    deadline_note = _deadline_margin_note(job, option)
    out += [deadline_note] if deadline_note is not None else []
    availability = region_availability(catalog, inst, job.region)
    if availability:
        out.append(availability)
    if option.price_cny_per_hour is not None:
        basis = option.price_basis or "pay-as-you-go price (source unknown)"
        out.append(f"price: ¥{option.price_cny_per_hour:,.2f} per node-hour, {basis}; spot is cheaper but varies")
    elif option.price_basis:
        out.append(option.price_basis)
    return out


# --- why this blueprint ------------------------------------------------------------------------


def tier_reasons(
    job: Job,
    catalog: Any,
    chosen: Option,
    tier: Tier,
    yearly: YearlyCost,
    tiers: Sequence[BudgetTier],
    alone: tuple[Tier, YearlyCost] | None = None,
) -> list[str]:
    """Why the tier's blueprint serves this job and the others do not, each reason with its numbers.

    For a tier that needs parallel jobs: one pool sized for all of them that bills only while they run (against a
    cluster holding them all always on), what the blueprint does for them (its own words), what it keeps up all year
    and its share per job, and ``alone``: the tier each job would get on its own, N times over. For a lone job: each
    tier it does not reach (it needs parallel jobs) and what that blueprint would add a year for nothing to share.
    """
    from blueprints.advisor.yearly import ALWAYS_ON, money, tier_standing_items, total_cny

    jobs = job.jobs_in_parallel
    out: list[str] = []
    if tier.min_jobs_in_parallel > 1:
        gpus = chosen.gpus * jobs
        used = yearly.mode.node_hours
        line = (
            f"one pool for all {jobs} parallel jobs: up to {chosen.nodes * jobs} "
            f"nodes ({gpus} GPUs), {chosen.nodes} per job, "
            "none while no job runs (min_nodes 0)"
        )
        always = next((m for m in yearly.alternatives if m.name == ALWAYS_ON), None)
        if used is not None and always is not None and always.node_hours:
            line += (
                f": the runs bill {used:,.0f} node-hours a year "
                f"({used / always.node_hours:.0%} of the {always.node_hours:,.0f} "
                f"a cluster holding all {jobs} jobs always on bills)"
            )
            if yearly.mode.compute.amount is not None and always.compute.amount is not None:
                line += f", {money(yearly.mode.compute.amount)} against {money(always.compute.amount)} compute"
        out.append(line)
        if tier.why_parallel:
            out.append(tier.why_parallel)
        out.append(_kept_up(tier_standing_items(job, catalog, tier.standing), jobs))
        if alone is not None:
            out.append(_against_alone(job, yearly, *alone))
        return out
    for other in tiers:
        if other.min_jobs_in_parallel <= jobs:
            continue
        items = tier_standing_items(job, catalog, other.standing)
        known = " + ".join(f"{money(i.amount)} {i.what}" for i in items if i.amount is not None)
        unknown = [i.what for i in items if i.amount is None]
        out.append(
            f"not {other.blueprint} (tier '{other.name}'): it is for "
            f"{other.min_jobs_in_parallel} or more jobs sharing one pool and this job "
            f"runs alone (jobs_in_parallel {jobs}), so its scheduler has nothing to share, and it would keep up "
            + (f"{money(total_cny(items))} a year more ({known})" if known else "more, unpriced")
            + (f"; unknown, not counted: {', '.join(unknown)}" if unknown else "")
        )
    return out


def _kept_up(items: Sequence[Any], jobs: int) -> str:
    """ "it keeps up all year: …, ¥X (¥X/N per job); unknown: …"."""
    from blueprints.advisor.yearly import money, total_cny

    known = [i for i in items if i.amount is not None]
    unknown = [i.what for i in items if i.amount is None]
    total = total_cny(items)
    text = "the pool's cluster stays up all year and its cost is shared: " + (
        " + ".join(f"{money(i.amount)} {i.what}" for i in known)
        + f" = {money(total)} a year, {money(total / jobs)} per job"
        if known
        else "nothing priced"
    )
    return text + (f"; unknown, not counted: {', '.join(unknown)}" if unknown else "")


def _against_alone(job: Job, pooled: YearlyCost, tier: Tier, year: YearlyCost) -> str:
    """The shared pool's year against one stack per job, each in the tier it would get alone."""
    from blueprints.advisor.yearly import money

    jobs = job.jobs_in_parallel
    apart = year.total() * jobs
    shared = pooled.total()
    unknown = sorted({i.what for i in pooled.unknown()} | {i.what for i in year.unknown()})
    diff = apart - shared
    verdict = (
        f"the shared pool costs {money(-diff)} a year more"
        if diff < 0
        else f"the shared pool saves {money(diff)} a year"
    )
    return (
        f"against one stack per job: alone, each job gets {tier.blueprint} (tier "
        f"'{tier.name}', {year.mode.name}) at {money(year.total())} a year; "
        f"{jobs} such stacks cost {money(apart)} (file system, bucket and NAT gateway {jobs} times) against "
        f"{money(shared)} for the shared pool: {verdict}"
        + (f"; unknown, not counted: {', '.join(unknown)}" if unknown else "")
    )
