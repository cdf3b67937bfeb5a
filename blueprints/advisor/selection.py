"""Selection: evaluate every (instance type, node count), drop infeasible ones with reasons, choose by objective, explain."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from blueprints.advisor import cost as costs
from blueprints.advisor import sizing
from blueprints.advisor.data import limits, rdma_gbps_per_node
from blueprints.advisor.job import Job
from blueprints.advisor.storage import StorageChoice, choose_storage
from blueprints.advisor.tiers import Tier, tier_for

Objective = Literal["cost", "time"]
OBJECTIVES = ("cost", "time")
INF = math.inf

# Reason codes, in the order they are reported. "unpriced" options are kept in the table: they can be planned
# (aitrain plan accepts them) but not priced, so they can never be chosen against a budget.
HARD = ("gpu_unknown", "precision", "memory")
SOFT = ("mfu_assumed", "unpriced", "deadline", "budget_run", "budget_year")


@dataclass(frozen=True)
class Reason:
    """Why an option is infeasible: a code and a sentence with the numbers."""

    code: str
    message: str


@dataclass(frozen=True)
class Option:
    """One (instance type, node count) with its time, cost, memory and, if infeasible, the reasons."""

    instance_type: str
    gpu_model: str | None
    nodes: int
    gpus: int
    gpu_memory_gib: float | None
    peak_tflops: float | None
    mfu: float | None
    mfu_confidence: str | None
    scaling_efficiency: float
    estimated_hours: float | None
    price_cny_per_hour: float | None
    cost_cny_per_run: float | None
    cost_cny_per_year: float | None
    memory_gib_per_gpu: float
    reasons: tuple[Reason, ...] = ()

    @property
    def feasible(self) -> bool:
        """True when nothing rules the option out."""
        return not self.reasons

    @property
    def gpu_hours(self) -> float | None:
        """GPUs × hours."""
        return None if self.estimated_hours is None else self.gpus * self.estimated_hours

    def has(self, *codes: str) -> bool:
        """True when the option has any of these reason codes."""
        return any(r.code in codes for r in self.reasons)

    def key(self, objective: str) -> tuple:
        """Sort key: lowest cost (unknown last, then GPU-hours) or shortest time; ties by fewer nodes, then name."""
        cost = self.cost_cny_per_run if self.cost_cny_per_run is not None else INF
        hours = self.estimated_hours if self.estimated_hours is not None else INF
        gpu_hours = self.gpu_hours if self.gpu_hours is not None else INF
        if objective == "time":
            return (hours, cost, gpu_hours, self.nodes, self.instance_type)
        return (cost, gpu_hours, hours, self.nodes, self.instance_type)


@dataclass(frozen=True)
class TypeContext:
    """Per-instance-type constants, computed once and reused for every node count."""

    instance: Any
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gib: float | None
    peak_tflops: float | None
    mfu_row: Any | None
    mfu: float | None
    price: float | None
    has_fp16: bool


def _type_context(job: Job, catalog: Any, instance: Any) -> TypeContext:
    gpu = catalog.gpu(instance)
    peak = gpu.peak_tflops(job.precision) if gpu is not None else None
    mfu_row = sizing.default_mfu(instance.gpu_model, job.model_kind, job.precision) if gpu is not None else None
    mfu = job.mfu if job.mfu is not None else (mfu_row.mfu if mfu_row is not None else None)
    gpu_mem = instance.gpu_memory_gib if instance.gpu_memory_gib is not None else (gpu.memory_gib if gpu is not None else None)
    has_fp16 = gpu is not None and gpu.peak_tflops("fp16") is not None
    return TypeContext(instance, instance.gpu_model, int(instance.gpu_count or 0), gpu_mem, peak, mfu_row, mfu, instance.price_cny_per_hour, has_fp16)


def evaluate(job: Job, ctx: TypeContext, nodes: int, flops: float | None = None) -> Option:
    """Time, cost, memory and feasibility of ``nodes`` × one instance type for the job."""
    inst = ctx.instance
    flops = sizing.training_flops(job) if flops is None else flops
    gpus = nodes * ctx.gpu_count
    reasons: list[Reason] = []
    if ctx.gpu_model is None:
        reasons.append(Reason("gpu_unknown", "GPU model not named in the catalog, so its peak TFLOPS is unknown"))
    elif ctx.peak_tflops is None:
        hint = "; it can train in fp16 (precision: fp16)" if job.precision == "bf16" and ctx.has_fp16 else ""
        reasons.append(Reason("precision", f"{ctx.gpu_model} has no published {job.precision} peak{hint}"))
    scaling = scaling_for(job, inst, nodes)
    hours = None
    if ctx.peak_tflops is not None and ctx.mfu is not None:
        hours = sizing.training_hours(flops, gpus, ctx.peak_tflops, ctx.mfu, scaling.efficiency)
    mem = sizing.model_state_gib_per_gpu(job, gpus)
    if ctx.gpu_memory_gib is not None and mem > ctx.gpu_memory_gib:
        how = f"sharded over {gpus} GPUs" if job.sharding else "unsharded (sharding: false)"
        reasons.append(Reason("memory", f"model state needs {mem:,.1f} GiB per GPU ({how}); {ctx.gpu_model} has {ctx.gpu_memory_gib:g} GiB"))
    per_run = costs.cost_cny_per_run(ctx.price, nodes, hours) if hours is not None else None
    per_year = costs.cost_cny_per_year(per_run, job.runs_per_year)
    if job.mfu is None and ctx.mfu_row is not None and ctx.mfu_row.confidence == "assumed":
        # Unknown stays unknown: an MFU with no published anchor is not good enough to choose hardware on.
        reasons.append(Reason("mfu_assumed", f"no published {job.model_kind} MFU anchor for {ctx.gpu_model} (the {ctx.mfu_row.mfu:g} shown is assumed); set mfu: to a measured value to consider it"))
    if ctx.price is None:
        reasons.append(Reason("unpriced", "can be planned but not priced (no list price in the catalog)"))
    if hours is not None and job.deadline_hours is not None and hours > job.deadline_hours:
        reasons.append(Reason("deadline", f"takes {hours / 24:,.1f} days; the deadline is {job.deadline_days:g} days"))
    if per_run is not None and job.budget_cny_per_run is not None and per_run > job.budget_cny_per_run:
        reasons.append(Reason("budget_run", f"costs ¥{per_run:,.0f} per run; the budget is ¥{job.budget_cny_per_run:,.0f}"))
    if per_year is not None and job.budget_cny_per_year is not None and per_year > job.budget_cny_per_year:
        reasons.append(Reason("budget_year", f"costs ¥{per_year:,.0f} a year; the budget is ¥{job.budget_cny_per_year:,.0f}"))
    return Option(
        instance_type=inst.instance_type,
        gpu_model=ctx.gpu_model,
        nodes=nodes,
        gpus=gpus,
        gpu_memory_gib=ctx.gpu_memory_gib,
        peak_tflops=ctx.peak_tflops,
        mfu=ctx.mfu,
        mfu_confidence=("from the job" if job.mfu is not None else (ctx.mfu_row.confidence if ctx.mfu_row else None)),
        scaling_efficiency=scaling.efficiency,
        estimated_hours=hours,
        price_cny_per_hour=ctx.price,
        cost_cny_per_run=per_run,
        cost_cny_per_year=per_year,
        memory_gib_per_gpu=mem,
        reasons=tuple(reasons),
    )


def candidate_types(job: Job, catalog: Any) -> list[Any]:
    """GPU instance types offered in the job's region (types with no recorded regions are kept: unknown is not "no")."""
    return catalog.query(min_gpus=1, region=job.region)


def scaling_for(job: Job, inst: Any, nodes: int) -> sizing.Scaling:
    """Scaling efficiency (and its caveats) of ``nodes`` × ``inst`` for this job's communication class."""
    return sizing.scaling_efficiency(
        nodes=nodes,
        gpus_per_node=int(inst.gpu_count or 0),
        nvlink=inst.nvlink,
        rdma=inst.rdma,
        rdma_gbps_per_node=rdma_gbps_per_node().get(inst.instance_type),
        network_gbps=inst.network_gbps,
        comm=sizing.comm_class(job),
    )


def enumerate_options(job: Job, catalog: Any) -> list[Option]:
    """Every (type, nodes) for nodes 1..job.max_nodes, in a stable order."""
    flops = sizing.training_flops(job)
    options = []
    for inst in candidate_types(job, catalog):
        ctx = _type_context(job, catalog, inst)
        for nodes in range(1, job.max_nodes + 1):
            options.append(evaluate(job, ctx, nodes, flops))
    return options


@dataclass(frozen=True)
class Considered:
    """The best option of one GPU model and why it was or was not chosen."""

    option: Option
    chosen: bool
    why: str


@dataclass(frozen=True)
class Recommendation:
    """The chosen option (or None), the considered ones, what to relax, the tier/blueprint and storage."""

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


def _group(option: Option, family: str) -> str:
    return option.gpu_model or f"unnamed GPU ({family})"


def _best(options: Iterable[Option], objective: str) -> Option | None:
    pool = list(options)
    return min(pool, key=lambda o: o.key(objective)) if pool else None


def _nearest_infeasible(options: list[Option], objective: str) -> Option:
    """For a GPU model with no feasible option: fewest hard problems, then fewest reasons; then the fastest when
    the deadline is what fails (shows how close the model gets), else by objective."""
    def rank(o: Option) -> tuple:
        return (sum(r.code in HARD for r in o.reasons), len(o.reasons))

    top = min(rank(o) for o in options)
    nearest = [o for o in options if rank(o) == top]
    order = "time" if any(o.has("deadline") for o in nearest) else objective
    return min(nearest, key=lambda o: o.key(order))


def _why_not(option: Option, chosen: Option | None, objective: str) -> str:
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
    return f"{option.nodes} × {option.instance_type} ({option.gpus} × {option.gpu_model})"


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
                    f"model state needs {need:,.1f} GiB per GPU unsharded and the largest GPU has {biggest.gpu_memory_gib:g} GiB: "
                    f"set sharding: true (ZeRO-3/FSDP), which needs {sharded:,.1f} GiB per GPU on {biggest.gpus} GPUs"
                )
            else:
                total = job.params * sizing.bytes_per_param(job.precision, job.optimizer) / sizing.GIB
                gpus_needed = math.ceil(total / (biggest.gpu_memory_gib or 1))
                out.append(
                    f"model state is {total:,.0f} GiB; even {biggest.gpus} × {biggest.gpu_model} ({biggest.gpu_memory_gib:g} GiB each) is too small: "
                    f"raise max_nodes from {job.max_nodes} so that at least {gpus_needed} such GPUs are allowed"
                )
        if any(o.has("precision") for o in options):
            out.append(f"no GPU in the region has a published {job.precision} peak among the types that fit: choose another precision (bf16 is the common one)")
        return out or ["no instance type in the catalog can run this job"]
    priced = [o for o in runnable if not o.has("unpriced", "mfu_assumed")]
    if not priced:
        names = sorted({o.instance_type for o in runnable if not o.has("mfu_assumed")})[:5]
        guessed = sorted({o.gpu_model or "" for o in runnable if o.has("mfu_assumed")})
        out = []
        if names:
            out.append(f"no type that fits this job has a list price in the catalog; these can be planned but not priced: {', '.join(names)}")
        if guessed:
            out.append(f"{', '.join(guessed)} have no published MFU anchor for {job.model_kind}: measure one and pass mfu: (e.g. 0.3) to consider them")
        return out
    fastest = min(priced, key=lambda o: o.key("time"))
    if job.deadline_hours is not None and (fastest.estimated_hours or INF) > job.deadline_hours:
        ratio = job.deadline_hours / (fastest.estimated_hours or INF)
        out.append(
            f"the {job.deadline_days:g}-day deadline cannot be met by any priced option within {job.max_nodes} nodes: the fastest, {_cfg(fastest)}, "
            f"takes {_days(fastest.estimated_hours or 0)}: extend the deadline to {math.ceil((fastest.estimated_hours or 0) / 24 * 10) / 10:g} days, "
            f"cut the training work to {ratio:.0%} of the current value, or raise max_nodes above {job.max_nodes}"
        )
    on_time = [o for o in priced if not o.has("deadline")]
    if on_time:
        cheapest = min(on_time, key=lambda o: o.key("cost"))
        per_run = cheapest.cost_cny_per_run or 0.0
        per_year = cheapest.cost_cny_per_year or 0.0
        what = f"meeting the {job.deadline_days:g}-day deadline" if job.deadline_days is not None else "the cheapest option"
        if job.budget_cny_per_run is not None and per_run > job.budget_cny_per_run:
            afford = _gpus_affordable(job.budget_cny_per_run, cheapest, job.deadline_hours)
            out.append(
                f"{what} needs ≥ {cheapest.gpus} {cheapest.gpu_model} ({_cfg(cheapest)}) at ¥{per_run:,.0f} per run{afford}: "
                f"raise the per-run budget from ¥{job.budget_cny_per_run:,.0f} to ¥{math.ceil(per_run):,}"
            )
        if job.budget_cny_per_year is not None and per_year > job.budget_cny_per_year:
            afford = _gpus_affordable(job.budget_cny_per_year / job.runs_per_year, cheapest, job.deadline_hours)
            out.append(
                f"{what} needs ≥ {cheapest.gpus} {cheapest.gpu_model} ({_cfg(cheapest)}) at ¥{per_year:,.0f} a year "
                f"({job.runs_per_year:g} runs){afford}: raise the yearly budget from ¥{job.budget_cny_per_year:,.0f} to ¥{math.ceil(per_year):,}, "
                f"or run {max(math.floor(job.budget_cny_per_year / per_run * 100) / 100, 0):g} times a year instead of {job.runs_per_year:g}"
            )
    in_budget = [o for o in priced if not o.has("budget_run", "budget_year")]
    has_budget = job.budget_cny_per_run is not None or job.budget_cny_per_year is not None
    if in_budget and has_budget and job.deadline_hours is not None:
        quickest = min(in_budget, key=lambda o: o.key("time"))
        if (quickest.estimated_hours or INF) > job.deadline_hours:
            out.append(
                f"within the budget the fastest option is {_cfg(quickest)}, {_days(quickest.estimated_hours or 0)} at ¥{quickest.cost_cny_per_run or 0:,.0f} per run: "
                f"extend the deadline from {job.deadline_days:g} to {math.ceil((quickest.estimated_hours or 0) / 24 * 10) / 10:g} days"
            )
    if not in_budget and on_time and has_budget:
        cheapest = min(priced, key=lambda o: o.key("cost"))
        out.append(
            f"no option fits the budget at any deadline: the cheapest, {_cfg(cheapest)}, costs ¥{cheapest.cost_cny_per_run or 0:,.0f} per run "
            f"(¥{cheapest.cost_cny_per_year or 0:,.0f} a year) and takes {_days(cheapest.estimated_hours or 0)}"
        )
    if not in_budget and not on_time:
        cheapest = min(priced, key=lambda o: o.key("cost"))
        out.append(
            f"even the cheapest option, {_cfg(cheapest)}, costs ¥{cheapest.cost_cny_per_run or 0:,.0f} per run (¥{cheapest.cost_cny_per_year or 0:,.0f} a year) "
            f"and takes {_days(cheapest.estimated_hours or 0)}: raise the budget to at least that, and the deadline too"
        )
    return out or ["no option meets every constraint; see the considered options for each one's reason"]


def _gpus_affordable(budget_per_run: float, option: Option, deadline_hours: float | None) -> str:
    """"; the budget pays for N GPUs for the deadline" — budget ÷ (price per GPU-hour × deadline hours)."""
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
        out.append(f"data path not checked: the job consumes {rate:,.0f} {unit} but gives no dataset_tb, so the bytes per second are unknown")
        return out
    parts = []
    if read is not None:
        parts.append(f"read {read:,.0f} MB/s ({job.dataset_tb:g} TB × {job.epochs:g} epoch{'' if job.epochs == 1 else 's'} over {option.estimated_hours:,.1f} h, {rate:,.0f} {unit})")
    if ingest is not None:
        parts.append(f"write {ingest:,.0f} MB/s ({job.ingest_tb_per_day:g} TB/day ingest)")
    if storage is not None:
        gives = "unknown" if storage.throughput_mb_s is None else f"{storage.throughput_mb_s:,.0f} MB/s"
        head = f"data path: needs {' + '.join(parts)}; {storage.kind} {storage.profile_tier} at {storage.capacity_gib:,} GiB gives {gives}"
        if storage.shortfall_mb_s is not None and storage.shortfall_mb_s > 0:
            head += (
                f": SHORTFALL of {storage.shortfall_mb_s:,.0f} MB/s; the GPUs would wait on storage. Stage data on local disks, "
                "split it across file systems, or ask for a raised CPFS limit (up to 100,000 MB/s by ticket)"
            )
        out.append(head)
    return out


def needed_mb_s(job: Job, hours: float | None) -> float | None:
    """Read + ingest rate, MB/s, or None when neither is known."""
    if hours is None:
        return None
    read = sizing.read_rate_mb_s(job, hours)
    ingest = sizing.ingest_rate_mb_s(job)
    if read is None and ingest is None:
        return None
    return (read or 0.0) + (ingest or 0.0)


def recommend(job: Job, catalog: Any, objective: str = "cost", options: list[Option] | None = None) -> Recommendation:
    """Choose the best feasible option by objective (cost: cheapest per run; time: fastest) and explain the rest."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}")
    options = enumerate_options(job, catalog) if options is None else options
    feasible = [o for o in options if o.feasible]
    chosen = _best(feasible, objective)
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
        considered.append(Considered(best, is_chosen, "chosen: " + _chosen_why(chosen, objective) if is_chosen else _why_not(best, chosen, objective)))
    considered.sort(key=lambda c: (not c.chosen, not c.option.feasible, c.option.key(objective)))
    relax = () if chosen is not None else tuple(what_to_relax(job, options, objective))
    tier = tier_for(job, chosen)
    storage = None
    findings: list[str] = []
    if chosen is not None:
        storage = choose_storage(catalog, needed_mb_s(job, chosen.estimated_hours), job.dataset_tb)
        findings += data_path_findings(job, chosen, storage)
        if storage.kind == "cpfs":
            findings.append(
                "storage: only CPFS meets this capacity and throughput, and CPFS cannot be encrypted at rest through the NAS API; "
                "the written profile sets storage.allow_unencrypted_cpfs: true so that choice is explicit in review"
            )
        findings += _option_notes(job, catalog, chosen)
        if job.deadline_days is None and objective == "cost":
            findings.append("no deadline given: the cheapest option is usually the one with the fewest nodes, so it is also slow; add deadline_days")
    return Recommendation(job, objective, chosen, tuple(considered), len(options), len(feasible), relax, tier, storage, tuple(findings))


def _chosen_why(chosen: Option | None, objective: str) -> str:
    if chosen is None:
        return ""
    return "cheapest feasible option per run" if objective == "cost" else "fastest feasible option"


def _option_notes(job: Job, catalog: Any, option: Option) -> list[str]:
    """Caveats that travel with an option: assumed MFU, optimistic scaling, unknown regions, price provenance."""
    inst = catalog.instance_types[option.instance_type]
    out = []
    if option.mfu_confidence == "assumed":
        out.append(f"MFU {option.mfu:.3f} is assumed: no published {job.model_kind} anchor for {option.gpu_model} (data/mfu.csv); pass mfu: to use a measured value")
    scaling = scaling_for(job, inst, option.nodes)
    out += [f"scaling: {n}" for n in scaling.notes]
    if not getattr(inst, "regions", ()):
        out.append(f"{inst.instance_type}: availability in {job.region} is not recorded in the catalog; check the console before applying")
    if option.price_cny_per_hour is not None:
        region = getattr(inst, "price_region", None)
        date = getattr(inst, "price_date", None)
        out.append(f"price: ¥{option.price_cny_per_hour:,.2f} per node-hour, pay-as-you-go list price ({region or 'region unknown'}, {date or 'date unknown'}); spot is cheaper but varies")
    return out


def estimate(job: Job, catalog: Any, instance_type: str, nodes: int) -> tuple[Option, StorageChoice | None, list[str]]:
    """Time and cost of a fixed configuration, with the storage it needs and caveats."""
    inst = catalog.instance_types[instance_type]
    option = evaluate(job, _type_context(job, catalog, inst), nodes)
    storage = None
    findings: list[str] = []
    if option.estimated_hours is not None:
        storage = choose_storage(catalog, needed_mb_s(job, option.estimated_hours), job.dataset_tb)
        findings += data_path_findings(job, option, storage)
    findings += _option_notes(job, catalog, option)
    return option, storage, findings
