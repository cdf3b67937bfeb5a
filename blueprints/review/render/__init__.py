"""Render a Plan for people: a terminal table and Markdown for pull requests (JSON lives on the Plan)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import jinja2
from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from blueprints.core import userdata
from blueprints.core.text import html_text, md_cell, md_code, md_fence, md_text, plain, plain_block
from blueprints.kinds import kind_of
from blueprints.review.plan import Plan, PlannedResource
from blueprints.review.render.costs import cost_section, cost_text
from blueprints.review.render.diagram import mermaid_flowchart
from blueprints.review.render.findings import guardrails_holding, level_counts, ordered_findings, skipped_rules
from blueprints.review.render.fit import COMMENT_BUDGET, fit_blocks
from blueprints.review.render.runtime import runtime_lines

TEMPLATE_DIR = Path(__file__).parent / "templates"

# When the plan must be summarised: rows of one type under one parent kept before the rest fold into one row.
KEEP_PER_GROUP = 3


_ABSENT = object()


def key_properties(resource: PlannedResource) -> dict[str, Any]:
    """The inputs a reviewer checks first: its kind's ``key_properties`` (``blueprints.kinds``; dotted paths reach
    nested inputs such as ``metadata.name``), in that order, absent ones skipped; none for a type with no kind."""
    kind = kind_of(resource.type)
    found = {path: _at(resource.inputs, path) for path in (kind.key_inputs() if kind else ())}
    return {path: value for path, value in found.items() if value is not _ABSENT}


def _at(inputs: dict[str, Any], path: str) -> Any:
    value: Any = inputs
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return _ABSENT
        value = value[key]
    return value


def format_value(value: Any) -> str:
    """Compact, deterministic text for a property value."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def markdown_cell(value: Any) -> str:
    """A value safe inside a Markdown table cell: one line, inline Markdown and HTML escaped, pipes escaped.

    ``md_cell``, not ``md_text``: a cell holds inline text only, so ``80.0`` needs (and gets) no list-marker escape.
    """
    return md_cell(format_value(value))


def safety_flags(resource: PlannedResource) -> str:
    """Short text for the data-safety options set on a resource."""
    flags = [
        name
        for name, on in (
            ("protect", resource.protect),
            ("retain-on-delete", resource.retain_on_delete),
            ("delete-before-replace", resource.delete_before_replace),
        )
        if on
    ]
    if resource.ignore_changes:
        flags.append("ignore-changes: " + ",".join(resource.ignore_changes))
    if resource.replace_on_changes:
        flags.append("replace-on-changes: " + ",".join(resource.replace_on_changes))
    return " ".join(flags)


def depth_of(plan: Plan) -> dict[str, int]:
    """Tree depth of every resource name (top level = 0)."""
    parents = {r.name: r.parent for r in plan.resources}
    depths: dict[str, int] = {}
    for name in parents:
        depth, cursor = 0, parents[name]
        while cursor is not None and cursor in parents:
            depth, cursor = depth + 1, parents[cursor]
        depths[name] = depth
    return depths


def user_data_blocks(plan: Plan) -> list[tuple[str, str]]:
    """(resource name, decoded cloud-init) for every resource that carries user data."""
    blocks = []
    for r in plan.resources:
        encoded = r.inputs.get("userData")
        if isinstance(encoded, str):
            text = userdata.decode(encoded)
            blocks.append((r.name, encoded if text is None else text))
    return blocks


# Below this many columns the resource tree is a list (name, type and safety flags on one wrapped line, key properties
# indented below): a table would have to cut the name, type or safety columns to fit.
TREE_AS_TABLE_WIDTH = 120


def render_table(plan: Plan, width: int = 160) -> str:
    """Terminal rendering: summary, notes, the resource tree with key properties, the cost, the guardrails.

    ``width`` is the terminal's width; every line fits it and nothing is cut, only wrapped.
    """
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, record=True)
    summary = Table(
        title=Text(plain(f"aitrain plan: {plan.profile_name} ({plan.blueprint}, {plan.region})")),
        box=box.SIMPLE,
        show_header=False,
    )
    summary.add_column("key", style="bold")
    summary.add_column("value", overflow="fold")
    for key, value in plan.summary.items():
        summary.add_row(Text(plain(key)), Text(plain(format_value(value))))
    console.print(summary)
    for note in plan.notes:
        console.print(Text(f"note: {plain(note)}"))
    console.print(Text("run time (what keeps a run training):"))
    for heading, lines in runtime_lines(plan.outputs):
        for index, line in enumerate(lines):
            lead = f"{heading}: " if index == 0 else " " * (len(heading) + 2)
            console.print(Padding(Text(plain(lead + line)), (0, 0, 0, 2)))
    _resource_tree(console, plan, width)
    console.print(Text(cost_text(plan.costs, width)))
    console.print(Text(f"guardrail findings: {level_counts(plan)}"))
    for finding in ordered_findings(plan):
        console.print(
            Text(plain(f"{finding['level']}: [{finding['rule']}] {finding['resource']}: {finding['message']}"))
        )
    # Name only the guardrails that hold: a finding removes its claim from the summary, a skip lists it apart.
    console.print(
        "guardrails: all passed" if not plan.findings and not plan.skipped else "guardrails holding:", markup=False
    )
    for rule_id, claim in guardrails_holding(plan):
        console.print(Text(f"  {rule_id} {claim}"))
    for rule_id, title, reason in skipped_rules(plan):
        console.print(Text(plain(f"skipped on purpose: {rule_id} {title}: {reason}")))
    # A fixed width keeps the output byte-identical; rich pads cells, so trailing blanks are dropped.
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def _resource_tree(console: Console, plan: Plan, width: int) -> None:
    """The resources in tree order with their key properties and safety flags: a table when it fits, else a list."""
    title = (
        f"{sum(1 for r in plan.resources if r.custom)} resources in "
        f"{sum(1 for r in plan.resources if not r.custom)} components"
    )
    depths = depth_of(plan)
    rows = [
        (
            "  " * depths[r.name] + plain(r.name),
            plain(r.short_type),
            plain(", ".join(f"{k}={format_value(v)}" for k, v in key_properties(r).items())),
            plain(safety_flags(r)),
        )
        for r in plan.resources
    ]
    if width < TREE_AS_TABLE_WIDTH:
        console.print(Text(title))
        for name, kind, props, safety in rows:
            indent = len(name) - len(name.lstrip())
            head = f"{name.lstrip()}  {kind}" + (f"  [{safety}]" if safety else "")
            console.print(Padding(Text(head, overflow="fold"), (0, 0, 0, indent)))
            if props:
                console.print(Padding(Text(props, overflow="fold"), (0, 0, 0, indent + 4)))
        return
    tree = Table(box=box.SIMPLE_HEAD, title=title)
    tree.add_column("resource", no_wrap=True)
    tree.add_column("type", no_wrap=True)
    tree.add_column("key properties", overflow="fold", ratio=1)
    tree.add_column("safety", no_wrap=True)
    for name, kind, props, safety in rows:
        # Text, not str: values such as "[a, b]" must not be read as rich markup.
        tree.add_row(Text(name), Text(kind), Text(props), Text(safety))
    console.print(tree)


def collapse_rows(rows: list[dict[str, Any]], keep: int = KEEP_PER_GROUP) -> tuple[list[dict[str, Any]], int]:
    """Resource rows with the custom resources beyond the first ``keep`` of one type under one parent folded into one
    "… and N more" row; and how many rows were folded. Components are always kept (they frame the tree)."""
    groups: dict[tuple[str | None, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row["r"].custom:
            groups.setdefault((row["r"].parent, row["r"].short_type), []).append(row)
    out: list[dict[str, Any]] = []
    folded = 0
    for row in rows:
        r = row["r"]
        if not r.custom:
            out.append(row)
            continue
        group = groups[(r.parent, r.short_type)]
        index = next(i for i, x in enumerate(group) if x is row)
        if index < keep:
            out.append(row)
        if index == keep:  # the first folded row stands for the rest of its group, where it was
            out.append({"more": len(group) - keep, "type": r.short_type, "depth": row["depth"]})
            folded += len(group) - keep
    return out, folded


def _fits(text: str) -> bool:
    return len(text) <= COMMENT_BUDGET


def render_markdown(plan: Plan) -> str:
    """Markdown for a pull request: summary, cost, diagram, counts, tree, guardrails, safety, cloud-init.

    Stays under ``COMMENT_BUDGET`` characters (one GitHub comment) by summarising, in this order until it fits:
    leave out the cloud-init blocks; fold rows (and cost lines) of one type beyond the first few into one "… and N
    more" row; keep only the first rows of every list. Each step is named at the top of the comment.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["value"] = markdown_cell
    env.filters["text"] = md_text
    env.filters["cell"] = md_cell
    env.filters["code"] = lambda v: md_code(format_value(v))
    env.filters["html"] = html_text
    template = env.get_template("plan.md.j2")
    depths = depth_of(plan)
    all_rows: list[dict[str, Any]] = [
        {"r": r, "depth": depths[r.name], "props": key_properties(r), "safety": safety_flags(r)} for r in plan.resources
    ]
    # One block per distinct cloud-init: per-node instances share theirs, and 256 copies would say nothing more.
    same: dict[str, list[str]] = {}
    for name, text in user_data_blocks(plan):
        same.setdefault(text, []).append(name)
    user_data = [(names[0], len(names) - 1, plain_block(text), md_fence(text)) for text, names in same.items()]
    with_user_data = sum(len(names) for names in same.values())
    diagram = mermaid_flowchart(plan.to_dict()["resources"], plan.region)
    counts = plan.count_by_type()
    context: dict[str, Any] = {
        "plan": plan,
        "holding": guardrails_holding(plan),
        "diagram": diagram,
        "fence": md_fence(diagram),
        "total": sum(counts.values()),
        "components": sum(1 for r in plan.resources if not r.custom),
        "counts": list(counts.items()),
        "rows": all_rows,
        "user_data": user_data,
        "findings": ordered_findings(plan),
        "level_counts": level_counts(plan),
        "skipped": skipped_rules(plan),
        "cost": cost_section(plan.costs)[0],
        "runtime": runtime_lines(plan.outputs),
        "summarised": [],
        "cut": {"rows": 0, "counts": 0, "findings": 0},
    }
    text = template.render(**context)
    if _fits(text):
        return text
    # 1. The cloud-init blocks are the bulk of a normal plan, and the JSON plan has them decoded-equivalent.
    if user_data:
        context["user_data"] = []
        context["summarised"] = [f"the cloud-init of {with_user_data} resources is not shown"]
        text = template.render(**context)
        if _fits(text):
            return text
    # 2. Fold repeated rows: 256 per-node instances read as three and "… and 253 more".
    rows, folded = collapse_rows(all_rows)
    cost, folded_lines = cost_section(plan.costs, collapse=True)
    context.update(rows=rows, cost=cost)
    if folded:
        context["summarised"] = context["summarised"] + [f'{folded} resource rows are folded into "… and N more" rows']
    if folded_lines:
        context["summarised"] = context["summarised"] + [f"{folded_lines} cost lines are folded into summed rows"]
    if user_data:  # folded rows may leave room for the cloud-init after all: show it then
        restored = template.render(**{**context, "user_data": user_data, "summarised": context["summarised"][1:]})
        if _fits(restored):
            return restored
    text = template.render(**context)
    if _fits(text):
        return text
    # 3. Keep only the first k entries of every list (types, rows, findings): the largest k that fits.
    notices = list(context["summarised"])
    low, high, best = 0, max(len(rows), len(counts), len(plan.findings)), ""
    while low <= high:
        k = (low + high) // 2
        candidate = _truncated(template, context, notices, rows, counts, context["findings"], k)
        if _fits(candidate):
            best, low = candidate, k + 1
        else:
            high = k - 1
    if best:
        return best
    # Even empty lists do not fit (a summary or notes of tens of thousands of characters): keep whole lines.
    lines = [
        line + "\n"
        for line in _truncated(template, context, notices, rows, counts, context["findings"], 0).splitlines()
    ]
    return fit_blocks(
        "",
        lines,
        "",
        lambda n: (
            f"\n_… {n} more lines are not shown (one GitHub comment holds 65,536 characters); run `aitrain plan "
            "--format json` for the whole plan._\n"
        ),
    )


def _truncated(
    template: jinja2.Template,
    context: dict[str, Any],
    notices: list[str],
    rows: list[dict[str, Any]],
    counts: dict[str, int],
    findings: list[dict[str, Any]],
    k: int,
) -> str:
    """The plan with every list cut to its first ``k`` entries, and the cut named."""
    cut = {"rows": len(rows) - k, "counts": len(counts) - k, "findings": len(findings) - k}
    said = [
        f"only the first {k} {what} are shown ({n} more)"
        for what, n in (
            ("resource rows", cut["rows"]),
            ("resource types", cut["counts"]),
            ("findings", cut["findings"]),
        )
        if n > 0
    ]
    return template.render(
        **{
            **context,
            "rows": rows[:k],
            "counts": list(counts.items())[:k],
            "findings": list(findings[:k]),
            "summarised": notices + said,
            "cut": {key: max(0, n) for key, n in cut.items()},
        }
    )
