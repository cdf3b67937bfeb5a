"""The Cost section of a Markdown plan, from ``Plan.costs`` (shape:
blueprints.review.costing; amounts in CNY, null = unknown).

Read with ``.get()`` throughout: a plan with ``"costs": {}`` renders "not priced", and an unknown amount is shown as
"unknown", never as 0.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping, Sequence

from blueprints.core.text import md_cell, md_text, plain, table
from blueprints.review.costing import cents, exact

# Lines of one resource type kept before the rest collapse into one summed row, when the plan must be summarised.
KEEP_PER_TYPE = 3


def money(value: Any) -> str:
    """``¥1,234.50`` for a number; ``unknown`` for null (an unknown price is never shown as 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "unknown"
    return f"¥{value:,.2f}"


def _source(line: Mapping[str, Any]) -> str:
    source, date = line.get("source") or "", line.get("date") or ""
    return f"{source} ({date})" if source and date else source or date or "none"


def line_row(line: Mapping[str, Any]) -> str:
    """One table row for one cost line: resource, item, ¥/hour, ¥/month, status, source (date)."""
    status = line.get("status") or "unknown"
    if line.get("billing"):
        status = f"{status}, {line['billing']}"
    cells = [
        md_cell(line.get("resource", "?")),
        md_cell(line.get("item", "")),
        money(line.get("cny_per_hour")),
        money(line.get("cny_per_month")),
        md_cell(status),
        md_cell(_source(line)),
    ]
    return "| " + " | ".join(cells) + " |"


def _sum(values: Sequence[Any]) -> float | None:
    """The sum, or None when any value is unknown (a partial sum would read as the whole); exact, as costing sums."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return None
    return cents(sum((exact(v) for v in values), Decimal(0)))


def collapse_lines(
    lines: Sequence[Mapping[str, Any]], keep: int = KEEP_PER_TYPE
) -> tuple[list[Mapping[str, Any]], int]:
    """Lines with those beyond the first ``keep`` of each type folded into one summed line per type; and how many
    lines were folded. The folded line's amounts are unknown if any folded amount is."""
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for line in lines:
        by_type.setdefault(str(line.get("type", "")), []).append(line)
    out: list[Mapping[str, Any]] = []
    folded = 0
    for kind, group in by_type.items():
        out += group[:keep]
        rest = group[keep:]
        if rest:
            folded += len(rest)
            out.append(
                {
                    "resource": f"… and {len(rest)} more {kind}",
                    "item": "summed",
                    "cny_per_hour": _sum([x.get("cny_per_hour") for x in rest]),
                    "cny_per_month": _sum([x.get("cny_per_month") for x in rest]),
                    "status": ", ".join(sorted({str(x.get("status") or "unknown") for x in rest})),
                    "source": "see the JSON plan",
                }
            )
    return out, folded


def cost_section(costs: Mapping[str, Any], collapse: bool = False) -> tuple[str, int]:
    """The ``### Cost`` section text, and how many lines were folded (``collapse``: to fit a PR comment)."""
    if not costs or not costs.get("lines"):
        return "### Cost\n\nNot priced: this plan carries no cost lines.\n", 0
    lines = list(costs.get("lines", []))
    folded = 0
    if collapse:
        lines, folded = collapse_lines(lines)
    out = [
        "### Cost",
        "",
        f"Amounts in {md_text(costs.get('currency', 'CNY'))}; {costs.get('hours_per_month', 730)} hours a month.",
        "",
    ]
    out += ["| resource | item | ¥/hour | ¥/month | status | source (date) |", "|---|---|--:|--:|---|---|"]
    out += [line_row(line) for line in lines]
    totals = costs.get("totals", {}) or {}
    run_hours = totals.get("run_hours")
    per_run = (
        f"{money(totals.get('cny_per_run'))} per run of {run_hours} hours"
        if run_hours is not None
        else "per run: no run length given"
    )
    out += [
        "",
        f"**{_total_label(totals)}:** {money(totals.get('cny_per_hour'))} per hour, "
        f"{money(totals.get('cny_per_month'))} per month, {per_run}.",
    ]
    if not totals.get("complete", False):
        unknown = totals.get("unknown") or []
        what = "; ".join(md_text(u) for u in unknown) if unknown else "the totals are not marked complete"
        out += ["", f"**Incomplete:** unknown prices are not counted (never as 0): {what}."]
    # What a profile switch would add (a customer key's KMS instance), so the reviewer sees what the default saves.
    for option in costs.get("not_in_plan") or []:
        out += [
            "",
            f"**Not in this plan:** {md_text(option.get('item', '?'))}: {money(option.get('cny_per_month'))} per month "
            f"({md_text(option.get('status') or 'unknown')}; {md_text(_source(option))}).",
        ]
    scenarios = costs.get("scenarios") or []
    if scenarios:
        out += ["", "| scenario | nodes | ¥/month | not priced |", "|---|--:|--:|---|"]
        out += [
            f"| {md_cell(s.get('name', '?'))} | {md_cell(s.get('nodes', '?'))} | {_scenario_amount(s)} | "
            f"{md_cell(_scenario_unknown(s, totals))} |"
            for s in scenarios
        ]
    return "\n".join(out) + "\n", folded


def _scenario_amount(scenario: Mapping[str, Any]) -> str:
    """A scenario's month; one built on an unpriced line says so beside the number."""
    amount = money(scenario.get("cny_per_month"))
    return amount if scenario.get("complete", False) or amount == "unknown" else f"{amount} (incomplete)"


def _scenario_unknown(scenario: Mapping[str, Any], totals: Mapping[str, Any]) -> str:
    """What a scenario leaves out: the unpriced lines of the totals, and its own nodes' unpriced items."""
    if scenario.get("complete", False):
        return "nothing"
    parts = ["the lines not priced above"] if not totals.get("complete", False) else []
    nodes = [str(u) for u in scenario.get("unpriced_nodes") or []]
    if nodes:
        parts.append("no catalog price for " + ", ".join(nodes))
    return "; ".join(parts) or "the scenario is not marked complete"


def _total_label(totals: Mapping[str, Any]) -> str:
    """An incomplete total is the sum of what is priced: say so where the number is, not only below it."""
    return "Total" if totals.get("complete", False) else "Total of the priced lines"


# Below this many columns, or when the table would be wider than the terminal, the cost lines are a list (resource,
# then each item with its amounts): a wrapped table row is unreadable.
COST_AS_TABLE_WIDTH = 120


def cost_text(costs: Mapping[str, Any], width: int = 160) -> str:
    """The cost for a terminal: one row per line of one type (repeated per-node lines summed), totals, what is
    unpriced, and a pool's scenarios; a list instead of a table that would not fit ``width``."""
    if not costs or not costs.get("lines"):
        return "cost: not priced (this plan carries no cost lines)\n"
    lines, _ = collapse_lines(list(costs["lines"]))
    rows = [
        [
            plain(str(x.get("resource", "?"))),
            plain(str(x.get("item", ""))),
            money(x.get("cny_per_hour")),
            money(x.get("cny_per_month")),
            plain(str(x.get("status") or "unknown")),
        ]
        for x in lines
    ]
    out = [f"cost ({plain(costs.get('currency', 'CNY'))}, {costs.get('hours_per_month', 730)} hours a month)"]
    grid = table(["resource", "item", "¥/hour", "¥/month", "status"], rows, right=(2, 3))
    if width >= COST_AS_TABLE_WIDTH and max(len(line) for line in grid.splitlines()) <= width:
        out.append(grid)
    else:
        for index, (resource, item, hour, month, status) in enumerate(rows):
            if index == 0 or rows[index - 1][0] != resource:
                out.append(resource)
            out.append(f"    {item}: {hour}/h, {month}/month ({status})")
    totals = costs.get("totals", {}) or {}
    run_hours = totals.get("run_hours")
    per_run = (
        f"{money(totals.get('cny_per_run'))} per run of {run_hours} h"
        if run_hours is not None
        else "per run: no run length given (cost.run_hours)"
    )
    out.append(
        f"{_total_label(totals).lower()}: {money(totals.get('cny_per_hour'))} per hour, "
        f"{money(totals.get('cny_per_month'))} per month, {per_run}"
    )
    if not totals.get("complete", False):
        out.append(
            "not priced (never counted as 0): "
            + "; ".join(plain(u) for u in totals.get("unknown") or ["the totals are not marked complete"])
        )
    for option in costs.get("not_in_plan") or []:
        out.append(
            f"not in this plan: {plain(option.get('item', '?'))}: {money(option.get('cny_per_month'))} per month "
            f"({plain(option.get('status') or 'unknown')})"
        )
    for scenario in costs.get("scenarios") or []:
        out.append(f"  {plain(scenario.get('name', '?'))}: {_scenario_amount(scenario)} per month")
        if not scenario.get("complete", False):
            out.append(f"    not counted: {plain(_scenario_unknown(scenario, totals))}")
    return "\n".join(out) + "\n"
