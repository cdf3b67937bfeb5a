"""What a plan costs, in CNY: one line per priced item of a resource, totals, and a pool's scenarios.

Pure (no pulumi): it reads only the plan's resources and their inputs, so a user's own stack plan is priced the
same way as a preset's. Each resource's kind (``blueprints.kinds``) says how it is priced: its pricer adds the
lines, or it is declared free or unpriced; a type with no kind gets an unpriced line (and AIT039 an error). Prices
come from the catalog (``instance_prices.csv`` for compute, chosen for the plan's region; ``prices.csv`` for disks,
file systems, the bucket, the NAT gateway and EIPs). An unknown price stays ``None`` and keeps the total incomplete;
it is never counted as 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Iterable, Mapping, Protocol

from blueprints.advisor.data import limits
from blueprints.catalog import Catalog, CnyPrice, instance_price, price_cny
from blueprints.kinds import Priced, kind_of, module_for
from blueprints.review import costing_audit as audit

# 8,760 hours a year (advisor limits.csv ``hours_per_year``) / 12: the month every monthly figure uses.
HOURS_PER_MONTH = round(limits()["hours_per_year"] / 12)

_REF = re.compile(r"^\$\{(.+)\.id\}$")
_CENT = Decimal("0.01")


def exact(value: float | int | Decimal) -> Decimal:
    """A number as the decimal it prints as: money is summed in decimals so every Python adds it up alike (3.12's
    ``sum()`` of floats compensates rounding, 3.11's does not)."""
    return value if isinstance(value, Decimal) else Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def cents(value: Decimal) -> float:
    """An amount rounded half-up to the cent, as the JSON number the plan carries."""
    return float(value.quantize(_CENT, rounding=ROUND_HALF_UP))


class Named(Protocol):
    """What a cost line names of its resource."""

    @property
    def name(self) -> str:
        """Logical name."""

    @property
    def short_type(self) -> str:
        """``vpc.NatGateway`` style type."""


class Resource(Named, Protocol):
    """What costing reads of a planned resource (``blueprints.review.plan.PlannedResource`` fits)."""

    @property
    def type(self) -> str:
        """Pulumi type token: its kind (``blueprints.kinds``) prices it."""

    @property
    def custom(self) -> bool:
        """A custom resource (components are not priced)."""

    @property
    def inputs(self) -> dict[str, Any]:
        """Engine-name inputs."""


@dataclass(frozen=True)
class CostContext:
    """What only the blueprint knows: hours of one training run, and the hours a month a pool is awake.

    ``working_hours_per_month`` is set for a pool with an off-hours schedule (max nodes while awake, none
    outside); ``dataset_gib`` prices the bucket when the profile states how much it holds.
    """

    run_hours: float | None = None
    working_hours_per_month: float | None = None
    schedule: str = ""
    dataset_gib: float | None = None


def _ref(value: Any) -> str | None:
    """``${name.id}`` → ``name`` (how the offline plan records a reference to another resource)."""
    match = _REF.match(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def _compute_price(catalog: Catalog, instance_type: str, region: str) -> CnyPrice:
    """Pay-as-you-go CNY per node-hour from ``instance_prices.csv``, chosen for the plan's region."""
    return instance_price(catalog, instance_type, region)


@dataclass(frozen=True)
class _Node:
    """What one node of a group costs per hour from its known prices, and the items of it that have no price."""

    per_hour: Decimal
    unpriced: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Pool:
    """A scaling pool: one node's cost (known prices and what is unpriced) and its size range."""

    resource: Named
    node: _Node
    min_nodes: int
    max_nodes: int

    def unknown_at(self, nodes: int) -> list[str]:
        """ "<pool>: <n> × <item>" for each unpriced item of ``nodes`` nodes (none for 0 nodes)."""
        return [f"{self.resource.name}: {nodes} × {item}" for item in self.node.unpriced] if nodes > 0 else []


class _Lines:
    """Collects cost lines in the Plan.costs shape."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def add(self, resource: Named, item: str, quantity: float, unit: str, price: CnyPrice, billing: str) -> None:
        """One line; ``billing`` hourly (per unit-hour), monthly (per unit-month), usage (no amount from the plan) or
        upfront (a one-off fee per order: no hourly or monthly amount)."""
        hour = month = None
        # No units of an unpriced item cost nothing: a pool at 0 nodes is ¥0 at min whatever a node costs (its
        # scenarios at max still name the missing price).
        unit_price = exact(price.cny) if price.cny is not None else Decimal(0) if quantity == 0 else None
        if unit_price is not None and billing == "hourly":
            hour = exact(quantity) * unit_price
            month = hour * HOURS_PER_MONTH
        elif unit_price is not None and billing == "monthly":
            month = exact(quantity) * unit_price
            hour = month / HOURS_PER_MONTH
        self.lines.append(
            {
                "resource": resource.name,
                "type": resource.short_type,
                "item": item,
                "quantity": quantity,
                "unit": unit,
                "unit_price_cny": None if price.cny is None else round(price.cny, 6),
                "cny_per_hour": None if hour is None else cents(hour),
                "cny_per_month": None if month is None else cents(month),
                "billing": billing,
                "status": price.status,
                "source": price.source,
                "date": price.date,
            }
        )


def _disks(system: Mapping[str, Any] | None, data: Iterable[Mapping[str, Any]]) -> list[tuple[str, float, str]]:
    """(label, GiB, performance level) of a node's system disk and data disks (both input spellings)."""
    out = []
    if system and system.get("size"):
        out.append(("system disk", float(system["size"]), str(system.get("performanceLevel") or "PL1")))
    for disk in data:
        size = disk.get("size", disk.get("diskSize"))
        if size:
            name = disk.get("name") or disk.get("diskName") or "data disk"
            out.append((f"data disk {name}", float(size), str(disk.get("performanceLevel") or "PL1")))
    return out


def _node_lines(
    out: _Lines,
    owner: Named,
    nodes: int,
    inputs: Mapping[str, Any],
    system: Mapping[str, Any] | None,
    catalog: Catalog,
    region: str,
    *,
    pool_max: int | None = None,
) -> _Node:
    """Compute and disk lines of ``nodes`` identical nodes, and what one of them costs.

    A fixed group of 0 nodes (a parked cluster) has no lines; a pool (``pool_max`` set) always has them, at its
    minimum, so a pool that idles at 0 is still a line of the plan and its size range is in the item.
    """
    instance_type = str(inputs.get("instanceType"))
    scales = f" (scales {nodes}–{pool_max}; at min)" if pool_max is not None else ""
    parts = [(f"{instance_type}{scales}", 1.0, "node-hour", _compute_price(catalog, instance_type, region), "hourly")]
    for label, gib, level in _disks(system, inputs.get("dataDisks") or []):
        parts.append(
            (
                f"{label} ESSD {level} {gib:g} GiB",
                gib,
                "GiB-month",
                price_cny(catalog, "essd", level, region),
                "monthly",
            )
        )
    per_hour = sum(
        (
            exact(per_node) * exact(price.cny) / (HOURS_PER_MONTH if billing == "monthly" else 1)
            for _, per_node, _, price, billing in parts
            if price.cny is not None
        ),
        Decimal(0),
    )
    if nodes > 0 or pool_max is not None:
        for item, per_node, unit, price, billing in parts:
            out.add(owner, f"{nodes} × {item}", nodes * per_node, unit, price, billing)
    unpriced = tuple(item.removesuffix(scales) for item, _, _, price, _ in parts if price.cny is None)
    return _Node(per_hour, unpriced)


def price_plan(
    resources: Iterable[Resource],
    catalog: Catalog,
    region: str,
    *,
    run_hours: float | None = None,
    scenarios_context: CostContext | None = None,
) -> dict[str, Any]:
    """The Plan.costs block (CNY) for these resources in ``region``; see ``blueprints.review.plan.Plan.costs``."""
    context = scenarios_context or CostContext(run_hours=run_hours)
    run_hours = run_hours if run_hours is not None else context.run_hours
    custom = [r for r in resources if r.custom]
    out = _Lines()
    costs = _PlanCosts(custom, out, catalog, region, context.dataset_gib)
    for r in custom:
        kind = kind_of(r.type)
        if kind is None:
            # Never a silent skip: the line stays unpriced (totals incomplete) and AIT039 names the file to add it to.
            price = CnyPrice(None, "unknown", f"no resource kind: add one to {module_for(r.type)}", None)
            out.add(r, f"{r.type}: no resource kind, not priced", 1, "resource", price, "hourly")
        elif isinstance(kind.pricing, Priced):
            kind.pricing.pricer(costs, r)
    pools = costs.pools
    # A customer-managed key lives in a KMS instance this stack does not create: priced when one is named, else offered.
    keys = audit.customer_keys(custom)
    for item, quantity, unit, price, billing in audit.kms_parts(keys, catalog, region, HOURS_PER_MONTH / 24):
        out.add(audit.KmsInstance(), item, quantity, unit, price, billing)
    option, option_price = audit.kms_option(catalog, region)
    lines = out.lines
    totals = _totals(lines, run_hours)
    return {
        "currency": "CNY",
        "hours_per_month": HOURS_PER_MONTH,
        "catalog_version": catalog.version,
        "lines": lines,
        "totals": totals,
        "scenarios": _scenarios(lines, pools, context),
        "not_in_plan": []
        if keys
        else [
            {
                "item": option,
                "cny_per_month": None
                if option_price.cny is None
                else cents(exact(option_price.cny) * exact(HOURS_PER_MONTH / 24)),
                "status": option_price.status,
                "source": option_price.source,
                "date": option_price.date,
            }
        ],
        "notes": [
            "Pay-as-you-go list prices before discounts and tax; data "
            "transfer, OSS requests and NAT CU usage are not in the plan.",
            "Monthly = hourly-billed lines × 730 h + monthly-billed "
            "storage; per run = everything running for the run's hours.",
        ],
    }


class _PlanCosts:
    """One plan's ``blueprints.kinds.model.Costs``: what the kinds' pricers read and the lines and pools they add."""

    def __init__(
        self, resources: list[Resource], out: _Lines, catalog: Catalog, region: str, dataset_gib: float | None
    ) -> None:
        self.resources = resources
        self.dataset_gib = dataset_gib
        self.pools: list[_Pool] = []
        self._by_name = {r.name: r for r in resources}
        self._out, self._catalog, self._region = out, catalog, region

    def referenced(self, value: Any) -> Resource | None:
        """The resource ``${name.id}`` names, when it is one of the plan's."""
        return self._by_name.get(_ref(value) or "")

    def price(self, item: str, tier: str | None) -> CnyPrice:
        """The catalog's price in the plan's region."""
        return price_cny(self._catalog, item, tier, self._region)

    def instance_price(self, instance_type: str) -> CnyPrice:
        """Pay-as-you-go CNY per node-hour of ``instance_type`` in the plan's region (what ``nodes`` prices)."""
        return _compute_price(self._catalog, instance_type, self._region)

    def add(self, resource: Named, item: str, quantity: float, unit: str, price: CnyPrice, billing: str) -> None:
        """One cost line."""
        self._out.add(resource, item, quantity, unit, price, billing)

    def nodes(self, owner: Named, count: int, node: Mapping[str, Any], system: Mapping[str, Any] | None) -> None:
        """A fixed group of ``count`` nodes (no lines at 0: a parked cluster)."""
        _node_lines(self._out, owner, count, node, system, self._catalog, self._region)

    def pool(
        self, owner: Named, node: Mapping[str, Any], system: Mapping[str, Any] | None, low: int, high: int
    ) -> None:
        """A scaling pool: lines at ``low`` nodes, scenarios up to ``high``."""
        per_node = _node_lines(self._out, owner, low, node, system, self._catalog, self._region, pool_max=high)
        self.pools.append(_Pool(owner, per_node, low, high))


# Up to this many resources with the same unpriced item are named one by one.
_LISTED_ONE_BY_ONE = 3


def _totals(lines: list[dict[str, Any]], run_hours: float | None) -> dict[str, Any]:
    """Hourly, monthly and per-run totals of the known lines; ``complete`` False and ``unknown`` named otherwise."""
    unknown = _unknown_items([line for line in lines if line["cny_per_month"] is None])
    hour = _sum_known(lines, "cny_per_hour")
    month = _sum_known(lines, "cny_per_month")
    return {
        "cny_per_hour": cents(hour),
        "cny_per_month": cents(month),
        "run_hours": run_hours,
        "cny_per_run": None if run_hours is None else cents(hour * exact(run_hours)),
        "complete": not unknown,
        "unknown": unknown,
    }


def _sum_known(lines: Iterable[dict[str, Any]], key: str) -> Decimal:
    """The exact sum of the lines' known amounts under ``key``."""
    return sum((exact(line[key]) for line in lines if line[key] is not None), Decimal(0))


def _unknown_items(lines: list[dict[str, Any]]) -> list[str]:
    """ "<resource>: <item>" per unpriced line; one item repeated on many resources (per-node instances) is named once
    with the count, so 256 nodes do not fill a PR comment with 768 entries."""
    resources: dict[str, list[str]] = {}
    for line in lines:
        resources.setdefault(str(line["item"]), []).append(str(line["resource"]))
    named = []
    for item, names in resources.items():
        if len(names) > _LISTED_ONE_BY_ONE:
            named.append(f"{names[0]} and {len(names) - 1} more: {item}")
        else:
            named += [f"{name}: {item}" for name in names]
    return named


def _scenarios(lines: list[dict[str, Any]], pools: list[_Pool], context: CostContext) -> list[dict[str, Any]]:
    """A pool's monthly cost at min, at max, and with its off-hours schedule (max nodes awake, none asleep).

    Everything else (storage, NAT, EIPs) runs all month in every scenario. A scenario is ``complete`` only when
    every other line is priced and so is every item of its nodes; ``unpriced_nodes`` names the pool items with no
    price at the scenario's size (a pool of an unpriced type is ¥0 at 0 nodes, but not at max).
    """
    if not pools:
        return []
    names = {pool.resource.name for pool in pools}
    rest = [line for line in lines if line["resource"] not in names]
    rest_month = _sum_known(rest, "cny_per_month")
    rest_known = all(line["cny_per_month"] is not None for line in rest)

    def scenario(name: str, at_max: bool, hours: float) -> dict[str, Any]:
        sizes = [(pool, pool.max_nodes if at_max else pool.min_nodes) for pool in pools]
        unpriced = [item for pool, nodes in sizes for item in pool.unknown_at(nodes)]
        month = rest_month + sum((pool.node.per_hour * nodes * exact(hours) for pool, nodes in sizes), Decimal(0))
        nodes = sum(n for _, n in sizes)
        return {
            "name": name,
            "nodes": nodes,
            "cny_per_month": cents(month),
            "complete": rest_known and not unpriced,
            "unpriced_nodes": unpriced,
        }

    out = [scenario("at min", False, HOURS_PER_MONTH), scenario("at max", True, HOURS_PER_MONTH)]
    if context.working_hours_per_month is not None:
        hours = context.working_hours_per_month
        max_nodes = sum(pool.max_nodes for pool in pools)
        name = f"with the off-hours schedule: {max_nodes} nodes (max) for {hours:g} working hours a month, none outside"
        out.append(scenario(name + (f" ({context.schedule})" if context.schedule else ""), True, hours))
    return out


def storage_summary(costs: dict[str, Any]) -> dict[str, Any]:
    """The plan summary's storage cost, read from the file system's cost line so the two always agree."""
    lines = [line for line in costs.get("lines", []) if line["type"] == "nas.FileSystem"]
    if not lines:
        return {}
    line = lines[0]
    if line["cny_per_month"] is None:
        what = (
            "billed on usage, which the plan does not know" if line["billing"] == "usage" else "no price in the catalog"
        )
        price = (
            f"; {line['unit_price_cny']:g} CNY/GiB-month ({line['status']})"
            if line["unit_price_cny"] is not None
            else ""
        )
        return {"storage_cny_per_month": f"unknown: {what}{price}"}
    return {
        "storage_cny_per_month": line["cny_per_month"],
        "storage_price_basis": (
            f"{line['item']} × {line['unit_price_cny']:g} CNY/GiB-month "
            f"({line['status']}, {line['date']}; {line['source']})"
        ),
    }
