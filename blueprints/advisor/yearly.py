"""Yearly cost by operating mode: compute for the runs (or for the whole year) plus what stays up, per currency.

Three modes: a fixed cluster kept up all year (``always on``); a fixed cluster parked between runs (compute removed,
file system, bucket and network kept: ``compute.nodes: 0`` / ``aitrain park``); the autoscaling pool that scales to
zero between runs. Compute is priced in CNY (catalog list prices), the file system and the NAT gateway in USD. No
exchange rate is cited, so amounts in different currencies are never added: ``totals_by_currency`` keeps one total per
currency and only the CNY total is held against the CNY budget. Unknown prices stay unknown (None), never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from blueprints.advisor import cost as costs
from blueprints.advisor.data import limits, standing_row
from blueprints.advisor.job import Job
from blueprints.advisor.options import Option
from blueprints.advisor.sizing import GIB, TB
from blueprints.advisor.storage import StorageChoice

ALWAYS_ON = "always on"
PARKED = "parked between runs"
POOL = "scales to zero between runs"
FIXED = "fixed cluster"
POOL_SHAPE = "autoscaling pool"


@dataclass(frozen=True)
class CostItem:
    """One part of a yearly cost: ``amount`` per year in ``currency`` (None = unknown), how sure, and how it was computed."""

    what: str
    amount: float | None
    currency: str | None
    status: str  # "list price", "official", "estimate" or "unknown"
    basis: str


def totals_by_currency(items: Iterable[CostItem]) -> dict[str, float]:
    """Known amounts summed per currency, CNY first; unknown amounts are left out (never counted as 0).

    The one place amounts are totalled: a sourced exchange rate (issue 10) would convert here, nowhere else.
    """
    totals: dict[str, float] = {}
    for item in items:
        if item.amount is not None and item.currency is not None:
            totals[item.currency] = totals.get(item.currency, 0.0) + item.amount
    return dict(sorted(totals.items(), key=lambda kv: (kv[0] != "CNY", kv[0])))


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

    def items(self, mode: Mode | None = None) -> tuple[CostItem, ...]:
        """The mode's compute plus the standing items (default: the chosen mode)."""
        return ((mode or self.mode).compute,) + self.standing

    def totals(self, mode: Mode | None = None) -> dict[str, float]:
        """Known amounts per currency for the mode."""
        return totals_by_currency(self.items(mode))

    def unknown(self) -> tuple[CostItem, ...]:
        """Items whose price is unknown (the same in every mode, except an unpriced compute)."""
        return tuple(i for i in self.items() if i.amount is None)

    def over_by_cny(self, mode: Mode | None = None) -> float | None:
        """CNY total minus the CNY budget (positive = over); None without a budget or a compute price."""
        if self.budget_cny_per_year is None or (mode or self.mode).compute.amount is None:
            return None
        return self.totals(mode).get("CNY", 0.0) - self.budget_cny_per_year


def money(amount: float, currency: str | None) -> str:
    """¥1,234 for CNY, ``USD 1,234`` for anything else (whole units: these are yearly figures)."""
    return f"¥{amount:,.0f}" if currency == "CNY" else f"{currency} {amount:,.0f}"


def standing_items(job: Job, catalog: Any, storage: StorageChoice | None) -> tuple[CostItem, ...]:
    """What stays up all year in every mode: the file system, the bucket, the NAT gateway and its EIP."""
    hours = limits()["hours_per_year"]
    items: list[CostItem] = []
    if storage is not None:
        label = f"{storage.kind} {storage.profile_tier} file system ({storage.capacity_gib:,} GiB)"
        if storage.price_per_month is None or storage.price_per_gib_month is None:
            items.append(CostItem(label, None, None, "unknown", "no price for this tier in the catalog"))
        else:
            basis = f"{storage.capacity_gib:,} GiB × {storage.price_currency} {storage.price_per_gib_month:g}/GiB-month × 12 (catalog list price)"
            items.append(CostItem(label, storage.price_per_month * 12, storage.price_currency, "list price", basis))
    items.append(_bucket_item(job, catalog))
    nat = standing_row("nat_gateway_instance", job.region)
    if nat is not None and nat.amount is not None:
        basis = f"{nat.currency} {nat.amount:g}/h × {hours:,.0f} h, official list price for {job.region}"
        items.append(CostItem(nat.what, nat.amount * hours, nat.currency, nat.status, basis))
    else:
        items.append(CostItem("NAT gateway instance fee", None, None, "unknown", f"no recorded price for {job.region} (data/standing.csv)"))
    # Rows without a price (the NAT gateway's traffic/CU fee, the EIP) are listed as unknown, never as 0.
    for key, basis in (("nat_gateway_cu", "the CU unit price is unverified"), ("eip", "unit prices unverified")):
        row = standing_row(key, job.region)
        if row is not None:
            amount = None if row.amount is None else row.amount * hours
            items.append(CostItem(row.what, amount, row.currency if amount is not None else None, row.status, basis))
    return tuple(items)


def _bucket_item(job: Job, catalog: Any) -> CostItem:
    """The OSS bucket: at least the dataset at the catalog's (third-party) Standard price; checkpoints add to it."""
    try:
        tier = catalog.storage_tier("oss", "standard")
    except KeyError:
        tier = None
    price = None if tier is None else tier.price_per_gib_month
    if price is None or tier is None:
        return CostItem("OSS bucket", None, None, "unknown", "no OSS price in the catalog")
    if job.dataset_tb is None:
        return CostItem("OSS bucket", None, None, "unknown", "the job gives no dataset size, so what the bucket holds is unknown")
    gib = math.ceil(job.dataset_tb * TB / GIB)
    basis = f"the dataset alone ({gib:,} GiB) × {tier.price_currency} {price:g}/GiB-month × 12; third-party price, unverified; checkpoints add to it"
    return CostItem("OSS bucket (estimate)", gib * price * 12, tier.price_currency, "estimate", basis)


def _modes(job: Job, option: Option) -> dict[str, Mode]:
    year = limits()["hours_per_year"]
    runs = job.runs_per_year
    hours = option.estimated_hours
    run_node_hours = None if hours is None else hours * runs * option.nodes
    priced = option.price_cny_per_hour is not None
    status = "list price" if priced else "unknown"
    per_run = "unknown" if option.cost_cny_per_run is None else f"¥{option.cost_cny_per_run:,.0f}"
    runs_basis = f"{runs:g} runs × {per_run} per run (nodes only during runs)"
    label = f"compute ({runs:g} runs)"
    always = costs.always_on_cny_per_year(option.price_cny_per_hour, option.nodes)
    price = "unknown" if option.price_cny_per_hour is None else f"¥{option.price_cny_per_hour:g}"
    always_basis = f"{option.nodes} nodes × {price}/node-hour × {year:,.0f} h"
    return {
        PARKED: Mode(PARKED, FIXED, CostItem(label, option.cost_cny_per_year, "CNY", status, runs_basis), run_node_hours),
        POOL: Mode(POOL, POOL_SHAPE, CostItem(label, option.cost_cny_per_year, "CNY", status, runs_basis), run_node_hours),
        ALWAYS_ON: Mode(ALWAYS_ON, FIXED, CostItem("compute (all year)", always, "CNY", status, always_basis), year * option.nodes),
    }


def yearly_cost(job: Job, catalog: Any, option: Option, storage: StorageChoice | None, *, scales_to_zero: bool = False) -> YearlyCost:
    """Pick the operating mode and count a year: compute for that mode + what stays up, per currency.

    ``scales_to_zero``: the tier's blueprint declares that its nodes exist only during runs (a pool at min 0). Otherwise
    (and for ``aitrain estimate``) it is a fixed cluster, which is parked between runs unless the runs fill the year. Modes are compared by billed node-hours (same nodes, same price per node-hour), so
    the choice holds even when the price is unknown; ties go to ``always on`` (nothing to park).
    """
    modes = _modes(job, option)
    year_node_hours = limits()["hours_per_year"] * option.nodes
    if scales_to_zero:
        chosen = modes[POOL]
        why = "the blueprint for this budget tier is the autoscaling pool (min_nodes 0): nodes exist only while a run scales it out"
    elif chosen_parked(modes[PARKED], year_node_hours):
        chosen = modes[PARKED]
        used = modes[PARKED].node_hours
        share = "" if used is None else (
            f"the runs need {used:,.0f} node-hours a year ({job.runs_per_year:g} × {option.estimated_hours or 0:,.1f} h × {option.nodes} node{'' if option.nodes == 1 else 's'}), "
            f"{used / year_node_hours:.0%} of the {year_node_hours:,.0f} an always-on cluster bills; "
        )
        why = share + "parking between runs (compute.nodes: 0 / aitrain park) removes the nodes and keeps the file system, bucket and network"
    else:
        chosen = modes[ALWAYS_ON]
        why = f"the runs fill the year ({modes[PARKED].node_hours or 0:,.0f} of {year_node_hours:,.0f} node-hours), so there is nothing to park"
    notes = (
        "node boot and data staging around each run are not counted (nodes bill from creation to release)",
        "a login node (access.login_node), if enabled, also stays up while parked and is not counted",
    )
    alternatives = tuple(m for name, m in modes.items() if name != chosen.name)
    return YearlyCost(chosen, why, alternatives, standing_items(job, catalog, storage), job.budget_cny_per_year, notes)


def chosen_parked(parked: Mode, year_node_hours: float) -> bool:
    """Parking pays when the runs bill fewer node-hours than a whole year (unknown run time: park, it cannot cost more)."""
    return parked.node_hours is None or parked.node_hours < year_node_hours


# --- text and JSON ------------------------------------------------------------------------------


def breakdown(yc: YearlyCost, mode: Mode | None = None) -> str:
    """``¥1,330,011 compute (12 runs) + USD 298 NAT …, not converted; unknown: …`` for the mode."""
    items = yc.items(mode)
    known = [i for i in items if i.amount is not None]
    text = " + ".join(f"{money(i.amount or 0.0, i.currency)} {i.what}" for i in known) or "nothing priced"
    if len({i.currency for i in known}) > 1:
        text += ", not converted (no cited exchange rate)"
    unknown = [i.what for i in items if i.amount is None]
    if unknown:
        text += "; unknown: " + ", ".join(unknown)
    return text


def verdict(yc: YearlyCost, mode: Mode | None = None) -> str:
    """Budget verdict on the CNY part, naming the parts in other currencies and the unknown ones."""
    m = mode or yc.mode
    totals = yc.totals(m)
    budget = yc.budget_cny_per_year
    others = [f"{money(v, c)} ({', '.join(i.what for i in yc.items(m) if i.currency == c and i.amount is not None)})" for c, v in totals.items() if c != "CNY"]
    tail = f"; not counted against it, not converted: {' + '.join(others)}" if others else ""
    unknown = [i.what for i in yc.items(m) if i.amount is None]
    if unknown:
        tail += f"; unknown: {', '.join(unknown)}"
    if budget is None:
        return "no yearly budget given" + ("" if "CNY" not in totals else f"; the CNY part is {money(totals['CNY'], 'CNY')}") + tail
    over = yc.over_by_cny(m)
    if over is None:
        return f"compute price unknown, so no verdict against the {money(budget, 'CNY')} budget" + tail
    cny = totals.get("CNY", 0.0)
    estimated = sum(i.amount or 0.0 for i in yc.items(m) if i.currency == "CNY" and i.status == "estimate")
    est = f", of which {money(estimated, 'CNY')} is an estimate" if estimated else ""
    if over <= 0:
        return f"within the {money(budget, 'CNY')} budget on what is priced in CNY: {money(cny, 'CNY')}{est} ({money(-over, 'CNY')} to spare)" + tail
    return f"over the {money(budget, 'CNY')} budget by {money(over, 'CNY')} on what is priced in CNY alone: {money(cny, 'CNY')}{est}" + tail


def rows(yc: YearlyCost) -> list[tuple[str, str]]:
    """(label, text) pairs: the mode and why, the breakdown, the verdict, one per alternative."""
    out = [("operating mode", f"{yc.mode.name} ({yc.mode.shape}): {yc.why}"), ("yearly cost", breakdown(yc)), ("budget", verdict(yc))]
    for alt in yc.alternatives:
        compute = "unknown" if alt.compute.amount is None else money(alt.compute.amount, "CNY")
        over = yc.over_by_cny(alt)
        fit = "" if over is None else (f", over the budget by {money(over, 'CNY')}" if over > 0 else f", within the budget ({money(-over, 'CNY')} to spare)")
        out.append(("alternative", f"{alt.name} ({alt.shape}): {compute} compute a year + the same standing costs{fit}"))
    return out


def lines(yc: YearlyCost) -> list[str]:
    """Summary lines for the terminal and Markdown (``Operating mode: …``, ``Yearly cost: …``, …)."""
    return [f"{label[0].upper()}{label[1:]}: {text}" for label, text in rows(yc)]


def _item_dict(item: CostItem) -> dict[str, Any]:
    return {"what": item.what, "amount": None if item.amount is None else round(item.amount, 2), "currency": item.currency, "status": item.status, "basis": item.basis}


def _mode_dict(yc: YearlyCost, mode: Mode) -> dict[str, Any]:
    over = yc.over_by_cny(mode)
    return {
        "mode": mode.name,
        "shape": mode.shape,
        "node_hours_per_year": None if mode.node_hours is None else round(mode.node_hours, 1),
        "compute": _item_dict(mode.compute),
        "totals_by_currency": {c: round(v, 2) for c, v in yc.totals(mode).items()},
        "over_budget_cny": None if over is None else round(over, 2),
        "verdict": verdict(yc, mode),
    }


def yearly_dict(yc: YearlyCost | None) -> dict[str, Any] | None:
    """JSON form: the chosen mode with every item, the per-currency totals, the verdict, and the alternatives."""
    if yc is None:
        return None
    return dict(
        _mode_dict(yc, yc.mode),
        why=yc.why,
        budget_cny_per_year=yc.budget_cny_per_year,
        items=[_item_dict(i) for i in yc.items()],
        unknown=[i.what for i in yc.unknown()],
        notes=list(yc.notes),
        alternatives=[_mode_dict(yc, m) for m in yc.alternatives],
    )
