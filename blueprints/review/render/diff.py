"""A plan diff for a terminal and for a pull-request comment (GitHub-Flavored Markdown that fits one comment).

Markdown: heading, one-line verdict, cost table, one table row per changed resource, a ``<details>`` block per
resource (inputs before/after, decoded user data and policies as ``diff`` fences), the data risks and a Mermaid
diagram with the changed resources marked. Every value passes through blueprints.core.text; what does not fit in
COMMENT_BUDGET is left out whole and counted. Pure: no Pulumi.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from blueprints.core.text import html_text, md_cell, md_code, md_fence, md_text, plain, plain_block, table
from blueprints.kinds import Role, has_role
from blueprints.review.diff.compare import ACTIONS, PlanDiff, ResourceChange
from blueprints.review.diff.costs import CostDiff, CostLine
from blueprints.review.render.diagram import mermaid_flowchart
from blueprints.review.render.fit import COMMENT_BUDGET, fit_blocks

SEE_ALL = "`aitrain diff OLD NEW --format json`"
_RISKS_BUDGET = 12_000
_DOWNTIME_BUDGET = 6_000  # the downtime risks: the headline counts every node, the list shows the first resources
_DIAGRAM_BUDGET = 15_000
_COST_ROWS = 40


def render_diff(diff: PlanDiff, markdown: bool = False, limit: int = COMMENT_BUDGET) -> str:
    """Terminal text, or Markdown under ``limit`` characters for a pull-request comment."""
    return render_diff_markdown(diff, limit) if markdown else render_diff_text(diff)


def verdict(diff: PlanDiff) -> str:
    """One line: the count of each action present, the number of data risks, and any downtime risks."""
    counts = [f"{n} {action}" for action, n in diff.counts().items() if n]
    risks = len(diff.risks)
    line = (", ".join(counts) or "no resource changes") + f"; {risks} data risk{'' if risks == 1 else 's'}"
    downtime = len(diff.downtime_risks())
    if downtime:
        # A node re-imaged or rebooted in place is an "update" to Pulumi: the verdict says what that does to a job.
        line += f"; {downtime} downtime risk{'' if downtime == 1 else 's'}: {diff.downtime_headline()}"
    below = sum(1 for cut in diff.quota_cuts if cut.below_job)
    if diff.quota_cuts:
        line += f"; {len(diff.quota_cuts)} queue quota cut{'' if len(diff.quota_cuts) == 1 else 's'}"
        line += f" ({below} below one job)" if below else ""
    return line


def why(change: ResourceChange, limit: int = 60) -> list[str]:
    """What changes and why, one phrase each (plain text): inputs, references, delete-first downtime, refusal."""
    parts = []
    forcing = "forces replacement" if change.certain else "may replace; type not in the replacement table"
    for key, (old, new) in change.inputs.items():
        if key in change.text_diffs:
            parts.append(f"{key} changed (decoded diff below)" + (f", {forcing}" if key in change.replacing else ""))
        else:
            parts.append(
                f"{key} {_short(old, limit)} → {_short(new, limit)}"
                + (f" {forcing}" if key in change.replacing else "")
            )
    parts += [f"{k} {_short(old, limit)} → {_short(new, limit)}" for k, (old, new) in change.options.items()]
    parts += list(change.reasons)
    if change.action == "update" and "userData" in change.inputs and has_role(change.type, Role.NODE_TEMPLATE):
        # A template's new user data reaches only nodes created after it: nothing restarts running nodes.
        parts.append("running nodes keep the user data they booted with; nodes created from now on get the new one")
    if change.action == "create":
        parts.append("new resource")
    elif change.would == "delete" or change.action == "delete":
        parts.append("removed from the plan")
    if change.downtime:
        parts.append(f"delete-first: {change.downtime}")
    if change.action == "refused":
        parts.append(f"protected: `pulumi up` refuses to {change.would}")
    return parts


def render_diff_text(diff: PlanDiff) -> str:
    """Plain text for a terminal: summary, verdict, cost, a table of changes, then each change's inputs and risks."""
    lines = ["aitrain plan diff", ""]
    if _unchanged(diff):
        return "\n".join(lines + ["No changes."]) + "\n"
    lines += [f"{plain(k)}: {plain(_short(old))} → {plain(_short(new))}" for k, (old, new) in diff.summary.items()]
    lines += ([""] if diff.summary else []) + [verdict(diff)]
    lines += ["", _cost_text(diff.costs)]
    if diff.changes:
        rows = [[c.action, c.name, c.short_type, "; ".join(why(c) + image_why(diff, c))] for c in diff.changes]
        lines += ["", table(["ACTION", "RESOURCE", "TYPE", "WHAT CHANGES AND WHY"], rows)]
    for c in diff.changes:
        if c.text_diffs:
            for key, text in c.text_diffs.items():
                lines += ["", f"{plain(c.name)} {plain(key)} (decoded):", plain_block(text).rstrip("\n")]
    if diff.risks:
        lines += ["", "Data-safety risks:"] + [f"- {plain(risk)}" for risk in diff.risks]
    lines += image_lines(diff, plain)
    if diff.quota_cuts:
        lines += ["", "Queue quota cuts:"] + [f"- {plain(cut.message())}" for cut in diff.quota_cuts]
    lines += guardrail_lines(diff, plain)
    return "\n".join(lines) + "\n"


def render_diff_markdown(diff: PlanDiff, limit: int = COMMENT_BUDGET) -> str:
    """GitHub-Flavored Markdown under ``limit`` characters: whole
    rows and blocks are left out (and counted) if needed."""
    head = "## aitrain plan diff\n\n"
    if _unchanged(diff):
        return head + "No changes.\n"
    head += f"**Verdict:** {md_text(verdict(diff))}\n\n"
    if diff.summary:
        rows = [
            f"| {md_cell(k)} | {md_code(_short(o))} | {md_code(_short(n))} |\n" for k, (o, n) in diff.summary.items()
        ]
        head += "### Summary\n\n| Field | Before | After |\n|---|---|---|\n" + "".join(rows) + "\n"
    head += _cost_markdown(diff.costs)
    tail = _risks_markdown(diff) + _image_markdown(diff) + _quota_markdown(diff)
    tail += _guardrails_markdown(diff) + _diagram_markdown(diff)
    if not diff.changes:
        return head + tail
    head += "### Changes\n\n| Action | Resource | Type | What changes and why |\n|---|---|---|---|\n"
    rows = [
        f"| {c.action} | {md_code(c.name)} | {md_code(c.short_type)} "
        f"| {'; '.join(md_cell(p) for p in why(c) + image_why(diff, c))} |\n"
        for c in diff.changes
    ]
    details = [_details(c) for c in diff.changes if c.inputs or c.options or c.text_diffs]
    # Rows first: the details of a resource are worth less than knowing that it changes at all.
    reserve = min(sum(len(d) for d in details), 4_000) + len(_omitted(len(details), "detail blocks"))
    table_text = fit_blocks(
        "",
        rows,
        "\n",
        lambda n: f"\n_{n:,} more changed resources not shown: run {SEE_ALL} to see all._\n",
        limit - len(head) - len(tail) - reserve,
    )
    room = limit - len(head) - len(table_text) - len(tail)
    detail_text = (
        fit_blocks("### Details\n\n", details, "", lambda n: _omitted(n, "detail blocks"), room) if details else ""
    )
    if len(detail_text) > room:  # not even the heading and the note fit
        detail_text = ""
    return head + table_text + detail_text + tail


def _unchanged(diff: PlanDiff) -> bool:
    """Nothing to show: no summary, resource, cost or guardrail change (a price update or a new skip alone is shown)."""
    guardrails_changed = diff.guardrails is not None and diff.guardrails.changed
    return (
        not diff.summary
        and not diff.changes
        and not (diff.costs and (diff.costs.lines or diff.costs.delta))
        and not guardrails_changed
    )


def image_why(diff: PlanDiff, change: ResourceChange) -> list[str]:
    """What a changed image does to this resource's running nodes, one phrase (none when its image is unchanged)."""
    found = [c for c in diff.reimage.changes if c.resource == change.name and c.type == change.short_type]
    return [("downtime: " if c.downtime else "") + c.summary() for c in found]


def image_lines(diff: PlanDiff, escape: Callable[[str], str]) -> list[str]:
    """The image part of a diff: the downtime risks (nodes stopped and re-imaged), then image changes that reach only
    nodes created afterwards (a pool of two images until the old nodes go)."""
    reimage = diff.reimage
    lines: list[str] = []
    if diff.downtime_risks():
        lines += ["", f"Downtime risks — {escape(diff.downtime_headline())}:"]
        lines += [f"- {escape(risk)}" for risk in diff.downtime_risks()]
    later = [c for c in reimage.changes if not c.downtime]
    if later:
        lines += ["", "Image changes for new nodes only (running nodes keep theirs):"]
        lines += [f"- {escape(c.resource)}: {escape(c.message())}" for c in later]
    return lines


def guardrail_lines(diff: PlanDiff, escape: Callable[[str], str]) -> list[str]:
    """The guardrail part of a diff, one item per line: new findings, resolved ones, new and removed skips, and
    every rule the new plan skips with its reason (on every diff that shows a change, so a skip is never silent)."""
    g = diff.guardrails
    if g is None:
        return []
    lines: list[str] = []
    lines += [
        f"- new {f['level']}: [{f['rule']}] {escape(f['resource'])}: {escape(f['message'])}" for f in g.new_findings
    ]
    lines += [
        f"- resolved {f['level']}: [{f['rule']}] {escape(f['resource'])}: {escape(f['message'])}"
        for f in g.resolved_findings
    ]
    new_skip_rules = {s["rule"] for s in g.new_skips}
    lines += [
        f"- {'newly ' if s['rule'] in new_skip_rules else ''}skipped: "
        f"[{s['rule']}] {escape(s.get('title', ''))}: {escape(s.get('reason', ''))}"
        for s in g.skipped
    ]
    lines += [
        f"- no longer skipped (the rule runs again): [{s['rule']}] {escape(s.get('title', ''))}"
        for s in g.restored_skips
    ]
    if not lines:
        return []
    return ["", f"Guardrails ({g.kept_findings} unchanged findings):", *lines]


def _details(c: ResourceChange) -> str:
    out = [f"<details><summary>{html_text(c.action)} <code>{html_text(c.name)}</code></summary>\n\n"]
    plain_inputs = [(k, o, n) for k, (o, n) in {**c.inputs, **c.options}.items() if k not in c.text_diffs]
    if plain_inputs:
        out.append("| Input | Before | After |\n|---|---|---|\n")
        out += [
            f"| {md_code(k)} | {md_code(_short(o, 300))} | {md_code(_short(n, 300))} |\n" for k, o, n in plain_inputs
        ]
        out.append("\n")
    for key, text in c.text_diffs.items():
        body = plain_block(text).rstrip("\n") + "\n"
        fence = md_fence(body)
        out.append(f"{md_code(key)} (decoded):\n\n{fence}diff\n{body}{fence}\n\n")
    out.append("</details>\n\n")
    return "".join(out)


def _omitted(n: int, what: str) -> str:
    return f"_{n:,} more {what} not shown: run {SEE_ALL} to see all._\n\n"


def _risks_markdown(diff: PlanDiff) -> str:
    if not diff.risks:
        return "### Data risks\n\nNone.\n\n"
    items = [f"- {md_text(risk)}\n" for risk in diff.risks]
    return fit_blocks(
        "### Data risks\n\n",
        items,
        "\n",
        lambda n: f"\n_{n:,} more data risks not shown: run {SEE_ALL} to see all._\n",
        _RISKS_BUDGET,
    )


def _image_markdown(diff: PlanDiff) -> str:
    """The downtime risks and the new-nodes-only image changes as Markdown (each list fitted to its budget); nothing
    when no image changes."""
    reimage = diff.reimage
    out = ""
    if diff.downtime_risks():
        out += fit_blocks(
            f"### Downtime risks — {md_text(diff.downtime_headline())}\n\n",
            [f"- {md_text(risk)}\n" for risk in diff.downtime_risks()],
            "\n",
            lambda n: f"\n_{n:,} more downtime risks not shown: run {SEE_ALL} to see all._\n",
            _DOWNTIME_BUDGET,
        )
    later = [c for c in reimage.changes if not c.downtime]
    if later:
        out += fit_blocks(
            "### Image changes for new nodes only (running nodes keep theirs)\n\n",
            [f"- {md_text(c.resource)}: {md_text(c.message())}\n" for c in later],
            "\n",
            lambda n: f"\n_{n:,} more image changes not shown: run {SEE_ALL} to see all._\n",
            _DOWNTIME_BUDGET // 3,
        )
    return out


def _quota_markdown(diff: PlanDiff) -> str:
    """The queue quota cuts as Markdown (few: one per team); nothing when no team's quota shrinks."""
    if not diff.quota_cuts:
        return ""
    return "### Queue quota cuts\n\n" + "".join(f"- {md_text(c.message())}\n" for c in diff.quota_cuts) + "\n"


def _guardrails_markdown(diff: PlanDiff) -> str:
    lines = guardrail_lines(diff, md_text)
    if not lines:
        return ""
    items = [line + "\n" for line in lines[2:]]
    return fit_blocks(
        f"### {lines[1].rstrip(':')}\n\n",
        items,
        "\n",
        lambda n: f"\n_{n:,} more guardrail changes not shown: run {SEE_ALL} to see all._\n",
        _RISKS_BUDGET,
    )


def _diagram_markdown(diff: PlanDiff) -> str:
    marks = {c.name: c.action for c in diff.changes}
    chart = mermaid_flowchart([dict(r) for r in diff.resources], diff.region, marks)
    if len(chart) > _DIAGRAM_BUDGET:
        return (
            f"### Diagram\n\n_The diagram ({len(chart):,} characters) does "
            "not fit in one comment: see `aitrain plan --format markdown`._\n"
        )
    fence = md_fence(chart)
    return f"### Diagram\n\n{fence}mermaid\n{chart.rstrip(chr(10))}\n{fence}\n"


def _cost_text(costs: CostDiff | None) -> str:
    if costs is None:
        return "Cost: not priced (a plan has no costs block)"
    lines = [f"Cost: {_money(costs.old_total)} → {_money(costs.new_total)} per month ({_change(costs)})"]
    lines += [
        f"  {plain(c.resource)}: {_money(c.old, c.old_partial)} → {_money(c.new, c.new_partial)} ({_line_change(c)})"
        for c in costs.lines
    ]
    return "\n".join(lines)


def _cost_markdown(costs: CostDiff | None) -> str:
    if costs is None:
        return "**Cost:** not priced (a plan has no costs block).\n\n"
    rows = [
        f"| {md_code(c.resource)} | {_money(c.old, c.old_partial)} "
        f"| {_money(c.new, c.new_partial)} | {_line_change(c)} |\n"
        for c in costs.lines
    ]
    shown = rows[:_COST_ROWS]
    more = f"| _{len(rows) - _COST_ROWS:,} more resources_ | | | |\n" if len(rows) > _COST_ROWS else ""
    total = f"| **Total** | {_money(costs.old_total)} | {_money(costs.new_total)} | {md_cell(_change(costs))} |\n"
    note = "" if costs.complete else f"\nIncomplete: {md_text('; '.join(costs.unknown) or 'a price is unknown')}.\n"
    return (
        "### Cost (¥/month)\n\n| Resource | Before | After | Change |\n|---|--:|--:|--:|\n"
        + "".join(shown)
        + more
        + total
        + note
        + "\n"
    )


def _change(costs: CostDiff) -> str:
    pct = "" if costs.percent is None else f" ({'+' if costs.percent >= 0 else '−'}{abs(costs.percent):.1f} %)"
    text = f"{_signed(costs.delta)}{pct}"
    return text + ("" if costs.complete else ", incomplete")


def _money(value: float | None, partial: bool = False) -> str:
    """An amount; with an unpriced item beside it, shown as "¥X + unknown" so a part never reads as the whole."""
    if value is None:
        return "unknown"
    return f"¥{value:,.0f}" + (" + unknown" if partial else "")


def _line_change(line: CostLine) -> str:
    return _signed(line.delta) + (", incomplete" if line.partial and line.delta is not None else "")


def _signed(value: float | None) -> str:
    return "unknown" if value is None else f"{'+' if value >= 0 else '−'}¥{abs(value):,.0f}"


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "ACTIONS",
    "image_lines",
    "image_why",
    "render_diff",
    "render_diff_markdown",
    "render_diff_text",
    "verdict",
    "why",
]
