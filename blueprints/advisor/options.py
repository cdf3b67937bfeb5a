"""Options: every (instance type, node count) for a job, with
its time, cost, memory and the reasons it is infeasible."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from blueprints.advisor import cost as costs
from blueprints.advisor import sizing
from blueprints.advisor.job import Job
from blueprints.catalog.pricing import CnyPrice, instance_price

Objective = Literal["cost", "time"]
OBJECTIVES = ("cost", "time")
INF = math.inf

# Reasons no setting of the job can lift (the nearest-infeasible pick counts them first). The others — no_anchor,
# unpriced, deadline, budget_run, budget_year — can be: "unpriced" options are kept in the table, as they can be
# planned (aitrain plan accepts them) but not priced, so they can never be chosen against a budget.
HARD = ("region", "gpu_unknown", "precision", "memory")
# How a budget_year reason names the standing costs (blueprints.advisor.choice writes it, explanations finds it).
# Left open: a tier that keeps a cluster up names it before the closing parenthesis.
STANDING_COSTS = "for what stays up all year (file system, bucket, NAT gateway"


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
    # The range: the same configuration at the tuned and the conservative MFU anchor (equal to the typical one
    # when the job gives its own mfu). ``mfu`` above is the typical anchor normalised to one NVLink node.
    mfu_tuned: float | None = None
    mfu_conservative: float | None = None
    hours_tuned: float | None = None
    hours_conservative: float | None = None
    cost_cny_per_run_tuned: float | None = None
    cost_cny_per_run_conservative: float | None = None
    gpu_model_confidence: str | None = None
    mfu_anchor: str | None = None
    # Where the price comes from (instance_prices.csv, chosen for the job's region), or why there is none.
    price_basis: str | None = None

    @property
    def feasible(self) -> bool:
        """True when nothing rules the option out."""
        return not self.reasons

    @property
    def gpu_label(self) -> str:
        """The GPU model as shown to the user: "(inferred)" appended when the catalog infers it from the specs."""
        if self.gpu_model is None:
            return "(unnamed)"
        return f"{self.gpu_model} (inferred)" if self.gpu_model_confidence == "inferred" else self.gpu_model

    @property
    def hours_range(self) -> tuple[float, float] | None:
        """(tuned, conservative) hours, or None when the time is unknown."""
        if self.hours_tuned is None or self.hours_conservative is None:
            return None
        return (self.hours_tuned, self.hours_conservative)

    @property
    def gpu_hours(self) -> float | None:
        """GPUs × hours."""
        return None if self.estimated_hours is None else self.gpus * self.estimated_hours

    def has(self, *codes: str) -> bool:
        """True when the option has any of these reason codes."""
        return any(r.code in codes for r in self.reasons)

    def key(self, objective: str) -> tuple[Any, ...]:
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
    mfu_range: sizing.MfuRange | None
    mfu: tuple[float, float, float] | None
    price: float | None
    has_fp16: bool
    region_reason: Reason | None = None
    mfu_anchor: str | None = None
    price_basis: str | None = None


def type_context(job: Job, catalog: Any, instance: Any) -> TypeContext:
    """The per-type constants of ``instance`` for this job: GPU,
    peak at the job's precision, MFU range, price, region."""
    gpu = catalog.gpu(instance)
    peak = gpu.peak_tflops(job.precision) if gpu is not None else None
    mfu_range = sizing.default_mfu(instance.gpu_model, job.model_kind, job.precision) if gpu is not None else None
    mfu: tuple[float, float, float] | None = None
    anchor = None
    if job.mfu is not None:
        mfu = (job.mfu, job.mfu, job.mfu)
    elif mfu_range is not None:
        tuned, typical, conservative = (sizing.node_mfu(r) for r in mfu_range.levels())
        mfu = (tuned, typical, conservative)
        row = mfu_range.typical
        anchor = (
            f"typical MFU {row.mfu:g} was measured on {row.anchor_setup}, where the scaling model gives "
            f"{sizing.anchor_scaling(row).efficiency:.3f}: {typical:.3f} on one NVLink node"
        )
    gpu_mem = (
        instance.gpu_memory_gib
        if instance.gpu_memory_gib is not None
        else (gpu.memory_gib if gpu is not None else None)
    )
    has_fp16 = gpu is not None and gpu.peak_tflops("fp16") is not None
    price = instance_price(catalog, instance.instance_type, job.region)
    # Only a complete region list rules a region out; a source naming another region does not.
    only = catalog.sold_only_in(instance)
    region_reason = None
    if only and job.region not in only:
        region_reason = Reason("region", f"not offered in {job.region}; sold in {', '.join(sorted(only))}")
    return TypeContext(
        instance,
        instance.gpu_model,
        int(instance.gpu_count or 0),
        gpu_mem,
        peak,
        mfu_range,
        mfu,
        price.cny,
        has_fp16,
        region_reason,
        anchor,
        _price_basis(price, job.region),
    )


def _price_basis(price: CnyPrice, region: str) -> str:
    """How the option's price was found, in a few words: "pay-as-you-go list price (cn-shanghai, 2023-06)" (plus
    "applied to <region>" when quoted for another one), or why there is none (the plan's cost lines cite the source).
    """
    if price.cny is None:
        return f"price unknown: {price.source}"
    where = "" if price.region == region else f", applied to {region}: prices may differ by region"
    return f"pay-as-you-go {price.status} price ({price.region}, {price.date}{where})"


def _deadline_reason(job: Job, hours: float, tuned: float | None) -> Reason:
    """The deadline miss in days, saying when the tuned end of the range would still meet it."""
    assert job.deadline_days is not None and job.deadline_hours is not None
    if tuned is not None and tuned <= job.deadline_hours:
        return Reason(
            "deadline",
            f"typical {hours / 24:,.1f} days misses the {job.deadline_days:g}-day deadline; only the tuned end "
            f"({tuned / 24:,.1f} days) meets it",
        )
    tuned_text = "" if tuned is None or tuned == hours else f" (tuned end {tuned / 24:,.1f} days)"
    return Reason("deadline", f"takes {hours / 24:,.1f} days{tuned_text}; the deadline is {job.deadline_days:g} days")


def evaluate(job: Job, ctx: TypeContext, nodes: int, flops: float | None = None) -> Option:
    """Time, cost, memory and feasibility of ``nodes`` × one instance type for the job."""
    inst = ctx.instance
    flops = sizing.training_flops(job) if flops is None else flops
    gpus = nodes * ctx.gpu_count
    reasons: list[Reason] = [ctx.region_reason] if ctx.region_reason is not None else []
    if ctx.gpu_model is None:
        reasons.append(Reason("gpu_unknown", "GPU model not named in the catalog, so its peak TFLOPS is unknown"))
    elif ctx.peak_tflops is None:
        hint = "; it can train in fp16 (precision: fp16)" if job.precision == "bf16" and ctx.has_fp16 else ""
        reasons.append(Reason("precision", f"{ctx.gpu_model} has no published {job.precision} peak{hint}"))
    scaling = scaling_for(job, inst, nodes)
    hours = tuned = conservative = None
    if ctx.peak_tflops is not None and ctx.mfu is not None:
        tuned, hours, conservative = (
            sizing.training_hours(flops, gpus, ctx.peak_tflops, m, scaling.efficiency) for m in ctx.mfu
        )
    mem = sizing.model_state_gib_per_gpu(job, gpus)
    if ctx.gpu_memory_gib is not None and mem > ctx.gpu_memory_gib:
        how = f"sharded over {gpus} GPUs" if job.sharding else "unsharded (sharding: false)"
        reasons.append(
            Reason(
                "memory",
                f"model state needs {mem:,.1f} GiB per GPU ({how}); {ctx.gpu_model} has {ctx.gpu_memory_gib:g} GiB",
            )
        )
    per_run = costs.cost_cny_per_run(ctx.price, nodes, hours) if hours is not None else None
    # The year counts every parallel job's runs: they share one budget (Job.jobs_in_parallel).
    per_year = costs.cost_cny_per_year(per_run, job.runs_per_year * job.jobs_in_parallel)
    if ctx.peak_tflops is not None and ctx.mfu is None:
        # Unknown stays unknown: with no published anchor there is no time to rank on, and no guess stands in.
        reasons.append(
            Reason(
                "no_anchor",
                f"not chosen: no anchor: no published {job.model_kind} "
                f"{sizing.precision_group(job.precision)} MFU for {ctx.gpu_model} (data/mfu.csv); "
                "set mfu: to a measured fraction (0 < mfu ≤ 1, e.g. 0.3) to consider it",
            )
        )
    if ctx.price is None:
        reasons.append(Reason("unpriced", "can be planned but not priced (no list price in the catalog)"))
    if hours is not None and job.deadline_hours is not None and hours > job.deadline_hours:
        reasons.append(_deadline_reason(job, hours, tuned))
    if per_run is not None and job.budget_cny_per_run is not None and per_run > job.budget_cny_per_run:
        reasons.append(
            Reason("budget_run", f"costs ¥{per_run:,.0f} per run; the budget is ¥{job.budget_cny_per_run:,.0f}")
        )
    if per_year is not None and job.budget_cny_per_year is not None and per_year > job.budget_cny_per_year:
        plural = "" if job.runs_per_year == 1 else "s"
        runs = (
            ""
            if job.jobs_in_parallel == 1
            else f" ({job.jobs_in_parallel} parallel jobs × {job.runs_per_year:g} run{plural})"
        )
        reasons.append(
            Reason("budget_year", f"costs ¥{per_year:,.0f} a year{runs}; the budget is ¥{job.budget_cny_per_year:,.0f}")
        )
    return Option(
        instance_type=inst.instance_type,
        gpu_model=ctx.gpu_model,
        nodes=nodes,
        gpus=gpus,
        gpu_memory_gib=ctx.gpu_memory_gib,
        peak_tflops=ctx.peak_tflops,
        mfu=ctx.mfu[1] if ctx.mfu else None,
        mfu_confidence=(
            "from the job" if job.mfu is not None else (ctx.mfu_range.typical.confidence if ctx.mfu_range else None)
        ),
        scaling_efficiency=scaling.efficiency,
        estimated_hours=hours,
        price_cny_per_hour=ctx.price,
        cost_cny_per_run=per_run,
        cost_cny_per_year=per_year,
        memory_gib_per_gpu=mem,
        reasons=tuple(reasons),
        mfu_tuned=ctx.mfu[0] if ctx.mfu else None,
        mfu_conservative=ctx.mfu[2] if ctx.mfu else None,
        hours_tuned=tuned,
        hours_conservative=conservative,
        cost_cny_per_run_tuned=costs.cost_cny_per_run(ctx.price, nodes, tuned) if tuned is not None else None,
        cost_cny_per_run_conservative=costs.cost_cny_per_run(ctx.price, nodes, conservative)
        if conservative is not None
        else None,
        gpu_model_confidence=getattr(inst, "gpu_model_confidence", None),
        mfu_anchor=ctx.mfu_anchor,
        price_basis=ctx.price_basis,
    )


def candidate_types(job: Job, catalog: Any) -> list[Any]:
    """Every GPU instance type: one sold elsewhere gets the ``region`` reason instead of silently vanishing."""
    found: list[Any] = catalog.query(min_gpus=1)
    return found


def scaling_for(job: Job, inst: Any, nodes: int) -> sizing.Scaling:
    """Scaling efficiency (and its caveats) of ``nodes`` × ``inst`` for this job's communication class."""
    return sizing.scaling_efficiency(
        nodes=nodes,
        gpus_per_node=int(inst.gpu_count or 0),
        nvlink=inst.nvlink,
        fabric_link=inst.fabric_link,
        rdma_gbps_per_node=inst.rdma_gbps,
        network_gbps=inst.network_gbps,
        comm=sizing.comm_class(job),
    )


def enumerate_options(job: Job, catalog: Any, pool_max_nodes: int | None = None) -> list[Option]:
    """Every (type, nodes) for nodes 1..job.max_nodes, in a stable order.

    ``pool_max_nodes``: the most nodes the pool that holds all ``jobs_in_parallel`` jobs can have (the serving tiers'
    ``BudgetTier.pool_max_nodes``), so one job gets at most ``pool_max_nodes // jobs_in_parallel`` of them.
    """
    flops = sizing.training_flops(job)
    top = job.max_nodes if pool_max_nodes is None else min(job.max_nodes, pool_max_nodes // job.jobs_in_parallel)
    options = []
    for inst in candidate_types(job, catalog):
        ctx = type_context(job, catalog, inst)
        for nodes in range(1, top + 1):
            options.append(evaluate(job, ctx, nodes, flops))
    return options
