"""Operating mode and yearly cost: compute for the runs (or for the whole year) plus what stays up, in CNY.

Three modes: a fixed cluster kept up all year (``always on``); a fixed cluster parked between runs (compute removed,
file system, bucket and network kept: ``compute.nodes: 0`` / ``aitrain park``); the autoscaling pool that scales to
zero between runs. Every price is read in CNY through ``blueprints.catalog.price_cny`` — the plan's cost lines use the
same rows — so the year has one total that is held against the CNY budget. A price quoted in USD is converted through
the catalog's cited exchange rate and marked ``converted``; an unknown price stays unknown (None), never 0.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Iterable

from blueprints.advisor import cost as costs
from blueprints.advisor.budget import StandingCost
from blueprints.advisor.data import limits
from blueprints.advisor.held import HeldCapacity, held_capacity
from blueprints.advisor.job import Job
from blueprints.advisor.options import Option
from blueprints.advisor.sizing import GIB, TB
from blueprints.advisor.storage import StorageChoice
from blueprints.advisor.teams import TeamSplit, split_by_team
from blueprints.catalog import CnyPrice, instance_price, price_cny

ALWAYS_ON = "always on"
PARKED = "parked between runs"
POOL = "autoscaled"
FIXED = "fixed cluster"
POOL_SHAPE = "autoscaling pool"


@dataclass(frozen=True)
class CostItem:
    """One part of a yearly cost: ``amount`` CNY per year (None
    = unknown), how sure (status), and how it was computed."""

    what: str
    amount: float | None
    status: str  # "list", "third-party", "converted", "estimate" or "unknown"
    basis: str


def total_cny(items: Iterable[CostItem]) -> float:
    """Known amounts summed, CNY; unknown amounts are left out (never counted as 0) and listed by the caller."""
    return sum(item.amount for item in items if item.amount is not None)


@dataclass(frozen=True)
class Mode:
    """An operating mode: the cluster shape, its compute cost a year (CNY) and the node-hours it bills a year."""

    name: str
    shape: str
    compute: CostItem
    node_hours: float | None


@dataclass(frozen=True)
class YearlyCost:
    """The chosen operating mode, why, the alternatives, and what stays up all year in every mode."""

    mode: Mode
    why: str
    alternatives: tuple[Mode, ...]
    standing: tuple[CostItem, ...]
    budget_cny_per_year: float | None
    notes: tuple[str, ...]
    # What the chosen mode's blueprint keeps up on top (a cluster fee, a system pool): not part of the alternatives,
    # which are fixed clusters without it.
    own: tuple[CostItem, ...] = ()
    # The teams sharing the pool, each with its GPUs (the job's ``teams``, in its order), and the GPUs the pool has.
    teams: tuple[tuple[str, int], ...] = ()
    pool_gpus: int = 0

    def items(self, mode: Mode | None = None) -> tuple[CostItem, ...]:
        """The mode's compute plus the standing items (default: the chosen mode, with its blueprint's own items)."""
        m = mode or self.mode
        return (m.compute,) + self.standing + (self.own if m == self.mode else ())

    def total(self, mode: Mode | None = None) -> float:
        """Known amounts of the mode, CNY a year."""
        return total_cny(self.items(mode))

    def unknown(self, mode: Mode | None = None) -> tuple[CostItem, ...]:
        """Items whose price is unknown (the same in every mode, except an unpriced compute)."""
        return tuple(i for i in self.items(mode) if i.amount is None)

    def held(self) -> HeldCapacity:
        """What a capacity reservation of the node count, kept all year, adds to the chosen mode."""
        always = next(m for m in (self.mode, *self.alternatives) if m.name == ALWAYS_ON)
        return held_capacity(
            self.mode.name,
            always_on=self.mode.name == ALWAYS_ON,
            mode_cny=self.mode.compute.amount,
            always_on_cny=always.compute.amount,
        )

    def by_team(self) -> TeamSplit | None:
        """The known total split by each team's GPUs ÷ the teams' GPUs (None when the job names no teams)."""
        if not self.teams:
            return None
        return split_by_team(self.teams, self.total(), self.pool_gpus, [i.what for i in self.unknown()])

    def over_by_cny(self, mode: Mode | None = None) -> float | None:
        """Total minus the budget (positive = over); None without a budget or a compute price."""
        if self.budget_cny_per_year is None or (mode or self.mode).compute.amount is None:
            return None
        return self.total(mode) - self.budget_cny_per_year


def money(amount: float) -> str:
    """¥1,234 (whole yuan: these are yearly figures)."""
    return f"¥{amount:,.0f}"


def _priced(what: str, quantity: float, unit: str, price: CnyPrice, note: str = "") -> CostItem:
    """``quantity`` × the CNY unit price a year, with the price's status and source in the basis."""
    if price.cny is None:
        return CostItem(what, None, "unknown", f"no known price ({price.source})")
    basis = f"{quantity:,.0f} {unit} × ¥{price.cny:.4g} ({price.status}: {price.source}){note}"
    return CostItem(what, quantity * price.cny, price.status, basis)


def standing_items(job: Job, catalog: Any, storage: StorageChoice | None) -> tuple[CostItem, ...]:
    """What stays up all year in every mode: the file system, the bucket, the NAT gateway and its EIP (as the plan)."""
    hours = limits()["hours_per_year"]
    items: list[CostItem] = []
    if storage is not None:
        label = f"{storage.kind} {storage.profile_tier} file system ({storage.capacity_gib:,} GiB)"
        items.append(_priced(label, storage.capacity_gib * 12, "GiB-months", storage.price))
    items.append(_bucket_item(job, catalog))
    region = job.region
    items.append(_priced("NAT gateway instance fee", hours, "h", price_cny(catalog, "nat_instance", None, region)))
    # Usage-billed: even a known unit price gives no amount without the traffic, so it is listed as unknown.
    items.append(
        CostItem(
            "NAT gateway CU fee (usage)",
            None,
            "unknown",
            "billed on connections and traffic, which the job does not state",
        )
    )
    items.append(_priced("EIP configuration fee", hours, "h", price_cny(catalog, "eip_config", None, region)))
    items.append(
        _priced(
            "EIP association fee (bound to the NAT gateway)",
            hours,
            "h",
            price_cny(catalog, "eip_association", None, region),
        )
    )
    return tuple(items)


def tier_standing_items(job: Job, catalog: Any, declared: Iterable[StandingCost]) -> tuple[CostItem, ...]:
    """What the tier's blueprint declares it keeps up all year
    (a cluster fee, a system node pool), priced for the region.

    A ``prices.csv`` item goes through ``price_cny`` (unknown stays unknown); ECS nodes use the catalog's price of
    their instance type, with its source. Shared by all ``jobs_in_parallel`` jobs: one pool, one cluster.
    """
    hours = limits()["hours_per_year"]
    items: list[CostItem] = []
    for cost in declared:
        quantity = cost.quantity * hours
        if cost.instance_type is not None:
            price = instance_price(catalog, cost.instance_type, job.region)
            if price.cny is None:
                items.append(CostItem(cost.what, None, "unknown", price.source))
                continue
            source = f"catalog instance_prices.csv ({price.region}): {price.source}"
            items.append(_priced(cost.what, quantity, cost.unit, dataclasses.replace(price, source=source)))
        else:
            assert cost.item is not None, f"standing cost {cost.what!r} names neither a price item nor an instance type"
            items.append(
                _priced(cost.what, quantity, cost.unit, price_cny(catalog, cost.item, cost.price_tier, job.region))
            )
    return tuple(items)


def _bucket_item(job: Job, catalog: Any) -> CostItem:
    """The OSS bucket: at least the dataset at the catalog's Standard price; checkpoints add to it."""
    if job.dataset_tb is None:
        return CostItem(
            "OSS bucket", None, "unknown", "the job gives no dataset size, so what the bucket holds is unknown"
        )
    gib = math.ceil(job.dataset_tb * TB / GIB)
    item = _priced(
        "OSS bucket (estimate)",
        gib * 12,
        "GiB-months",
        price_cny(catalog, "oss", "Standard", job.region),
        "; the dataset alone, checkpoints add to it",
    )
    return item if item.amount is None else CostItem(item.what, item.amount, "estimate", item.basis)


def runs_text(job: Job) -> str:
    """ "12 runs", or "3 parallel jobs × 12 runs" when jobs share a pool."""
    runs = f"{job.runs_per_year:g} run{'' if job.runs_per_year == 1 else 's'}"
    return runs if job.jobs_in_parallel == 1 else f"{job.jobs_in_parallel} parallel jobs × {runs}"


def _modes(job: Job, option: Option, pool_shape: str) -> dict[str, Mode]:
    year = limits()["hours_per_year"]
    jobs = job.jobs_in_parallel
    hours = option.estimated_hours
    # Every parallel job runs its own runs on its own nodes: the year bills jobs × runs × hours × nodes.
    run_node_hours = None if hours is None else hours * job.runs_per_year * jobs * option.nodes
    status = "list" if option.price_cny_per_hour is not None else "unknown"
    per_run = "unknown" if option.cost_cny_per_run is None else money(option.cost_cny_per_run)
    runs_basis = f"{runs_text(job)} × {per_run} per run (nodes only during runs)"
    label = f"compute ({runs_text(job)})"
    # Kept up all year, a cluster that holds every parallel job at once has jobs × nodes nodes.
    always = costs.always_on_cny_per_year(option.price_cny_per_hour, option.nodes * jobs)
    price = "unknown" if option.price_cny_per_hour is None else f"¥{option.price_cny_per_hour:g}"
    nodes = f"{option.nodes} nodes" if jobs == 1 else f"{jobs} jobs × {option.nodes} nodes"
    always_basis = f"{nodes} × {price}/node-hour × {year:,.0f} h"
    return {
        PARKED: Mode(PARKED, FIXED, CostItem(label, option.cost_cny_per_year, status, runs_basis), run_node_hours),
        POOL: Mode(POOL, pool_shape, CostItem(label, option.cost_cny_per_year, status, runs_basis), run_node_hours),
        ALWAYS_ON: Mode(
            ALWAYS_ON, FIXED, CostItem("compute (all year)", always, status, always_basis), year * option.nodes * jobs
        ),
    }


def yearly_cost(
    job: Job,
    catalog: Any,
    option: Option,
    storage: StorageChoice | None,
    *,
    scales_to_zero: bool = False,
    pool_shape: str = POOL_SHAPE,
    tier_standing: tuple[StandingCost, ...] = (),
) -> YearlyCost:
    """Pick the operating mode and count a year: compute for that mode + what stays up, CNY.

    ``tier_standing``: what the tier's blueprint keeps up on top of the shared foundation (``tier_standing_items``).
    ``scales_to_zero``: the tier's blueprint (``pool_shape``) declares that its nodes exist only during
    runs (a pool at min 0). Otherwise (and for ``aitrain estimate``) it is a fixed cluster, which is
    parked between runs unless the runs fill the year. Modes are compared by billed node-hours (same
    nodes, same price per node-hour), so the choice holds even when the price is unknown; ties go to
    ``always on`` (nothing to park). Parked and autoscaled bill the same node-hours, so the year a
    budget tier is chosen on (``blueprints.advisor.tiers``) is the same whichever of the two follows.
    """
    modes = _modes(job, option, pool_shape)
    year_node_hours = limits()["hours_per_year"] * option.nodes * job.jobs_in_parallel
    if scales_to_zero:
        chosen = modes[POOL]
        why = (
            "the blueprint for this budget tier is a pool at min_nodes 0 "
            f"({pool_shape}): nodes exist only while a run scales it out"
        )
    elif chosen_parked(modes[PARKED], year_node_hours):
        chosen = modes[PARKED]
        used = modes[PARKED].node_hours
        share = (
            ""
            if used is None
            else (
                f"the runs need {used:,.0f} node-hours a year ({_runs_factor(job)}{option.estimated_hours or 0:,.1f} h "
                f"× {option.nodes} node{'' if option.nodes == 1 else 's'}), "
                f"{used / year_node_hours:.0%} of the {year_node_hours:,.0f} an always-on cluster bills; "
            )
        )
        why = share + (
            "parking between runs (compute.nodes: 0 / aitrain park) removes "
            "the nodes and keeps the file system, bucket and network; "
            "the nodes are created again for each run, so run aitrain "
            "preflight first to check the zone still has them in stock"
        )
    else:
        chosen = modes[ALWAYS_ON]
        why = (
            f"the runs fill the year ({modes[PARKED].node_hours or 0:,.0f} of "
            f"{year_node_hours:,.0f} node-hours), so there is nothing to park"
        )
    notes = (
        "node boot and data staging around each run are not counted (nodes bill from creation to release)",
        "a login node (access.login_node), if enabled, also stays up while parked and is not counted",
    )
    alternatives = tuple(m for name, m in modes.items() if name != chosen.name)
    own = tier_standing_items(job, catalog, tier_standing)
    return YearlyCost(
        chosen,
        why,
        alternatives,
        standing_items(job, catalog, storage),
        job.budget_cny_per_year,
        notes,
        own,
        tuple((job.teams or {}).items()),
        pool_gpus(job, option),
    )


def pool_gpus(job: Job, option: Option) -> int:
    """The GPUs of the pool ``option`` makes: its nodes × GPUs per node for every parallel job at once."""
    return option.gpus * job.jobs_in_parallel


def pool_text(job: Job, option: Option) -> str:
    """How the pool's GPUs are counted: ``6 nodes × 8 GPUs of ecs.…, 2 per job × 3 jobs_in_parallel``."""
    nodes = option.nodes * job.jobs_in_parallel
    per_node = option.gpus // option.nodes if option.nodes else 0
    text = f"{nodes:,} node{'' if nodes == 1 else 's'} × {per_node} GPUs of {option.instance_type}"
    if job.jobs_in_parallel > 1:
        text += f", {option.nodes} per job × {job.jobs_in_parallel} jobs_in_parallel"
    return text


def _runs_factor(job: Job) -> str:
    """ "12 × " or "3 jobs × 12 × " (the factors of the runs' node-hours)."""
    return (
        f"{job.runs_per_year:g} × "
        if job.jobs_in_parallel == 1
        else f"{job.jobs_in_parallel} jobs × {job.runs_per_year:g} × "
    )


def chosen_parked(parked: Mode, year_node_hours: float) -> bool:
    """Parking pays when the runs bill fewer node-hours than a
    whole year (unknown run time: park, it cannot cost more)."""
    return parked.node_hours is None or parked.node_hours < year_node_hours


# --- text and JSON ------------------------------------------------------------------------------


def breakdown(yc: YearlyCost, mode: Mode | None = None) -> str:
    """``¥1,464,123 a year = ¥1,330,011 compute (12 runs) + ¥134,112 OSS bucket (estimate) + …; unknown: …``."""
    items = yc.items(mode)
    known = [i for i in items if i.amount is not None]
    text = f"{money(yc.total(mode))} a year = " + (
        " + ".join(f"{money(i.amount or 0.0)} {i.what}" for i in known) or "nothing priced"
    )
    converted = [i.what for i in known if i.status == "converted"]
    if converted:
        text += f"; converted from a USD list price at the catalog's cited rate: {', '.join(converted)}"
    unknown = [i.what for i in items if i.amount is None]
    if unknown:
        text += "; unknown, not counted: " + ", ".join(unknown)
    return text


def verdict(yc: YearlyCost, mode: Mode | None = None) -> str:
    """Budget verdict on the year's known total, naming the estimates and the unknown parts."""
    m = mode or yc.mode
    budget = yc.budget_cny_per_year
    unknown = [i.what for i in yc.items(m) if i.amount is None]
    tail = f"; unknown, so not counted: {', '.join(unknown)}" if unknown else ""
    if budget is None:
        return f"no yearly budget given; the known total is {money(yc.total(m))}" + tail
    over = yc.over_by_cny(m)
    if over is None:
        return f"compute price unknown, so no verdict against the {money(budget)} budget" + tail
    estimated = sum(i.amount or 0.0 for i in yc.items(m) if i.status == "estimate")
    est = f", of which {money(estimated)} is an estimate" if estimated else ""
    if over <= 0:
        return f"within the {money(budget)} budget: {money(yc.total(m))}{est} ({money(-over)} to spare)" + tail
    return f"over the {money(budget)} budget by {money(over)}: {money(yc.total(m))}{est}" + tail


def rows(yc: YearlyCost) -> list[tuple[str, str]]:
    """(label, text) pairs: the mode and why, the breakdown, the verdict, one per alternative."""
    out = [
        ("operating mode", f"{yc.mode.name} ({yc.mode.shape}): {yc.why}"),
        ("yearly cost", breakdown(yc)),
        ("budget", verdict(yc)),
        ("held capacity", _held_text(yc)),
    ]
    same = (
        "the same standing costs"
        if not yc.own
        else f"the same standing costs without {', '.join(i.what for i in yc.own)}"
    )
    for alt in yc.alternatives:
        if alt.compute.amount is None:
            out.append(("alternative", f"{alt.name} ({alt.shape}): compute price unknown, plus {same}"))
            continue
        over = yc.over_by_cny(alt)
        fit = (
            ""
            if over is None
            else (
                f", over the budget by {money(over)}" if over > 0 else f", within the budget ({money(-over)} to spare)"
            )
        )
        out.append(
            (
                "alternative",
                f"{alt.name} ({alt.shape}): {money(yc.total(alt))} a year "
                f"({money(alt.compute.amount)} compute + {same}){fit}",
            )
        )
    return out


def _held_text(yc: YearlyCost) -> str:
    """The held-capacity sentence, and where the year lands with it against the budget."""
    held = yc.held()
    if not held.cny_per_year or yc.budget_cny_per_year is None:
        return held.text
    year = yc.total() + held.cny_per_year
    side = "over" if year > yc.budget_cny_per_year else "within"
    return f"{held.text}; with it the year is {money(year)}, {side} the {money(yc.budget_cny_per_year)} budget"


def lines(yc: YearlyCost) -> list[str]:
    """Summary lines for the terminal and Markdown (``Operating mode: …``, ``Yearly cost: …``, …)."""
    return [f"{label[0].upper()}{label[1:]}: {text}" for label, text in rows(yc)]


def _r2(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _item_dict(item: CostItem) -> dict[str, Any]:
    return {
        "what": item.what,
        "cny_per_year": None if item.amount is None else round(item.amount, 2),
        "status": item.status,
        "basis": item.basis,
    }


def _mode_dict(yc: YearlyCost, mode: Mode) -> dict[str, Any]:
    over = yc.over_by_cny(mode)
    return {
        "mode": mode.name,
        "shape": mode.shape,
        "node_hours_per_year": None if mode.node_hours is None else round(mode.node_hours, 1),
        "compute": _item_dict(mode.compute),
        "total_cny_per_year": round(yc.total(mode), 2),
        "over_budget_cny": None if over is None else round(over, 2),
        "verdict": verdict(yc, mode),
    }


def yearly_dict(yc: YearlyCost | None) -> dict[str, Any] | None:
    """JSON form: the chosen mode with every item, the CNY total, the verdict, and the alternatives."""
    if yc is None:
        return None
    held = yc.held()
    split = yc.by_team()
    return dict(
        _mode_dict(yc, yc.mode),
        why=yc.why,
        budget_cny_per_year=yc.budget_cny_per_year,
        items=[_item_dict(i) for i in yc.items()],
        unknown=[i.what for i in yc.unknown()],
        notes=list(yc.notes),
        held_capacity={"cny_per_year": _r2(held.cny_per_year), "text": held.text},
        alternatives=[_mode_dict(yc, m) for m in yc.alternatives],
        # Only when the job names teams, so a job without them prints as it did before.
        **({} if split is None else {"by_team": split.as_dict()}),
    )
