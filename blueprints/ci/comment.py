"""One pull-request comment for every stack: plan each stack file on the base and the head checkout, diff, fit.

The CI workflow (``aitrain ci github``) calls ``aitrain ci comment``, which runs ``compare_stacks`` then
``comment_body``; the shell only checks out the base and posts the body. A stack only on the head is shown as
all-create, a stack only on the base as all-delete (with its data risks); a stack file that cannot be planned is
shown with its error in its own section and makes the exit code 2. The head's own error-level guardrail findings
block the pull request whatever the diff says: a head that strips ``protect`` everywhere must not pass because the
base, planned by the same code, looks the same.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blueprints.ci.goldenplans import STACK_FILE_RE, plan_stack_json
from blueprints.core.errors import Problem, UserInputError
from blueprints.core.text import md_cell, md_code, md_fence
from blueprints.review.diff.compare import PlanDiff, diff_plans, empty_plan, load_plan_json
from blueprints.review.render.diff import render_diff
from blueprints.review.render.fit import COMMENT_BUDGET, fit_blocks

# The hidden line the workflow looks for to update its own comment instead of adding another.
MARKER = "<!-- aitrain-plan -->"
# `aitrain ci comment` exit codes (after the body is written): no change of the --fail-on class / one or more /
# a stack could not be planned or a base plan could not be read (invalid input).
EXIT_OK, EXIT_FAIL_ON, EXIT_INVALID = 0, 1, 2
# Where the base side of the comparison came from (the comment says which).
BASE_PLANNED, BASE_COMMITTED = "planned", "committed"


@dataclass(frozen=True)
class StackOutcome:
    """One stack compared: ``status`` is changed, unchanged, new, removed or error; ``diff`` is None on error."""

    stack: str
    status: str
    diff: PlanDiff | None
    costs: tuple[Any, Any] = (None, None)  # the plans' ``costs.totals`` (base, head), None when absent
    error: str = ""
    blocking: tuple[tuple[str, str], ...] = ()  # the head plan's error-level findings: (rule id, resource)


def compare_stacks(
    base: Path, head: Path, stacks: str, today: dt.date, *, base_plans: Path | None = None
) -> list[StackOutcome]:
    """Plan every ``Pulumi.<stack>.yaml`` under ``stacks`` (relative to each checkout) on both sides and diff them.

    ``base_plans`` (optional) is a folder of ``<stack>.plan.json`` written by the base's own aitrain, read instead
    of planning the base's stack files; a plan of another schema there is an error for that stack.
    """
    for option, root in (("--base", base), ("--head", head)):
        if not root.is_dir():
            raise UserInputError(
                "no checkout",
                [Problem(option, str(root), "is not a directory; give the folder of a checkout of the repository")],
            )
    head_files, base_files = _stack_files(head / stacks), _stack_files(base / stacks)
    if base_plans is not None:
        if not base_plans.is_dir():
            raise UserInputError(
                "no base plans",
                [Problem("--base-plans", str(base_plans), "is not a directory of <stack>.plan.json files")],
            )
        base_files = {p.name[: -len(".plan.json")]: p for p in base_plans.glob("*.plan.json")}
    if not head_files and not base_files:
        raise UserInputError(
            "no stack files",
            [Problem("--stacks", stacks, f"neither {head / stacks} nor {base / stacks} holds a Pulumi.<stack>.yaml")],
        )
    outcomes = []
    for stack in sorted(set(head_files) | set(base_files)):
        try:
            old = (
                _base_plan(base_files[stack], today, from_json=base_plans is not None)
                if stack in base_files
                else empty_plan()
            )
            new = json.loads(plan_stack_json(head_files[stack], today)) if stack in head_files else empty_plan()
        except UserInputError as exc:
            outcomes.append(StackOutcome(stack, "error", None, error=exc.render()))
            continue
        diff = diff_plans(old, new)
        status = (
            "new"
            if stack not in base_files
            else "removed"
            if stack not in head_files
            else "changed"
            if diff.summary or diff.changes
            else "unchanged"
        )
        outcomes.append(
            StackOutcome(stack, status, diff, (_totals(old), _totals(new)), blocking=blocking_findings(new))
        )
    return outcomes


def blocking_findings(plan: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(rule, resource) of every error-level finding in a plan:
    what makes `aitrain plan` exit 1 (skipped rules are absent)."""
    findings = plan.get("findings")
    if not isinstance(findings, list):
        return ()
    return tuple(
        (str(f.get("rule")), str(f.get("resource")))
        for f in findings
        if isinstance(f, dict) and f.get("level") == "error"
    )


def exit_code(outcomes: list[StackOutcome], fail_on: str) -> int:
    """2 when a stack could not be planned, else 1 when a head plan has an error-level finding or a diff holds a
    change of class ``fail_on``, else 0."""
    if any(o.status == "error" for o in outcomes):
        return EXIT_INVALID
    blocked = any(o.blocking for o in outcomes)
    return (
        EXIT_FAIL_ON if blocked or any(o.diff is not None and o.diff.fails_on(fail_on) for o in outcomes) else EXIT_OK
    )


def _blocked_line(outcomes: list[StackOutcome], limit: int = 12) -> str:
    """``**Blocked: AIT004** `fs`, `bucket` in `train`; …``: every rule
    id with its resources, per stack (at most ``limit`` names each)."""
    parts = []
    for o in outcomes:
        by_rule: dict[str, list[str]] = {}
        for rule, resource in o.blocking:
            by_rule.setdefault(rule, []).append(resource)
        for rule, names in by_rule.items():
            shown = ", ".join(md_code(n) for n in names[:limit]) + (
                f" and {len(names) - limit} more" if len(names) > limit else ""
            )
            parts.append(f"{md_code(rule)} on {shown} in {md_code(o.stack)}")
    count = sum(len(o.blocking) for o in outcomes)
    return (
        f"**Blocked: {count} error-level guardrail finding(s) in the "
        "head's plan** (`aitrain plan` exits 1 on them; fix them or "
        f"skip a rule with a reason in the stack file): blocked: {'; '.join(parts)}."
    )


def comment_body(
    outcomes: list[StackOutcome],
    *,
    stacks: str,
    fail_on: str,
    today: dt.date,
    limit: int = COMMENT_BUDGET,
    base_source: str = BASE_PLANNED,
) -> str:
    """The Markdown comment: marker, verdict, one summary row per stack, then one section per stack (as many as fit).

    ``base_source`` says where the base side came from (BASE_PLANNED or BASE_COMMITTED), in the comment's last line.
    """
    failing = [o.stack for o in outcomes if o.diff is not None and o.diff.fails_on(fail_on)]
    errors = [o.stack for o in outcomes if o.status == "error"]
    lines = []
    if errors:
        lines.append(
            f"**Cannot plan {len(errors)} stack(s)**: {', '.join(md_code(s) for s in errors)} — see their sections."
        )
    if any(o.blocking for o in outcomes):
        lines.append(_blocked_line(outcomes))
    if failing:
        lines.append(f"**Blocked: a change of class {md_code(fail_on)}** in {', '.join(md_code(s) for s in failing)}.")
    elif not errors:
        lines.append(f"No change of class {md_code(fail_on)}.")
    verdict = "\n\n".join(lines)
    rows = ["| Stack | Status | Resources | Data risks | ¥ / month (base → head) |", "|---|---|---|---:|---|"]
    rows += [_summary_row(o) for o in outcomes]
    head = "\n".join([MARKER, "## aitrain plan", "", verdict, "", *rows, "", ""])
    sections = [_section(o, stacks) for o in outcomes]
    base = {
        BASE_COMMITTED: (
            f"the base commit's committed plans ({md_code((stacks or '.') + '/plans/')}, "
            "written by the base's own aitrain)"
        ),
        BASE_PLANNED: (
            "the base's stack files planned with the head's aitrain (no committed plans on the base: commit them with "
            "`aitrain plan --update` so the base is planned by its own code)"
        ),
    }[base_source]
    tail = (
        "\n---\n_Head planned offline (Pulumi mocks) with `--today "
        f"{today.isoformat()}` from the stack files in {md_code(stacks or '.')}; "
        f"base: {base}._\n"
    )

    def omitted(n: int) -> str:
        return (
            f"\n_{n} stack section(s) left out to stay under GitHub's comment limit; their rows are in the table "
            "above. Run `aitrain ci comment` locally (or read the job log) for all of them._\n"
        )

    return fit_blocks(head, sections, tail, omitted, limit)


def _stack_files(directory: Path) -> dict[str, Path]:
    if not directory.is_dir():
        return {}
    return {
        m.group("stack"): p for p in sorted(directory.iterdir()) if p.is_file() and (m := STACK_FILE_RE.match(p.name))
    }


def _base_plan(path: Path, today: dt.date, *, from_json: bool) -> dict[str, Any]:
    if from_json:
        return load_plan_json(path)
    data: dict[str, Any] = json.loads(plan_stack_json(path, today))
    return data


def _totals(plan: dict[str, Any]) -> Any:
    costs = plan.get("costs")
    return costs.get("totals") if isinstance(costs, dict) else None


def _counts(diff: PlanDiff) -> str:
    text = ", ".join(f"{n} {a}" for a, n in diff.counts().items() if n)
    return text or "no change"


def _money(totals: Any) -> str:
    if not isinstance(totals, dict) or not isinstance(totals.get("cny_per_month"), (int, float)):
        return "not priced"
    return f"{totals['cny_per_month']:,.0f}" + ("" if totals.get("complete", True) else " (incomplete)")


def _cost_cell(o: StackOutcome) -> str:
    old, new = o.costs
    if o.status == "new":
        return f"— → {_money(new)}"
    if o.status == "removed":
        return f"{_money(old)} → —"
    cell = f"{_money(old)} → {_money(new)}"
    try:
        a, b = float(old["cny_per_month"]), float(new["cny_per_month"])
    except (TypeError, KeyError, ValueError):
        return cell
    if a and a != b:
        cell += f" ({(b - a) / a * 100:+.1f} %)"
    return cell


def _summary_row(o: StackOutcome) -> str:
    if o.diff is None:
        return f"| {md_code(o.stack)} | error | — | — | — |"
    risks = len(o.diff.risks)
    return (
        f"| {md_code(o.stack)} | {o.status} | {md_cell(_counts(o.diff))} "
        f"| {risks}{' ⚠' if risks else ''} | {md_cell(_cost_cell(o))} |"
    )


def _section(o: StackOutcome, stacks: str) -> str:
    title = f"### {md_code(o.stack)} — {o.status}\n\n"
    if o.diff is None:
        fence = md_fence(o.error)
        return f"{title}This stack could not be planned:\n\n{fence}\n{o.error}\n{fence}\n\n"
    note = {
        "new": "New stack file: everything below would be created.\n\n",
        "removed": (
            "Stack file removed: if this stack is destroyed, everything below "
            "is deleted (this workflow never runs `pulumi destroy`).\n\n"
        ),
    }.get(o.status, "")
    text = _demote(render_diff(o.diff, markdown=True)).rstrip("\n")
    if note:
        # A whole stack created or deleted is long and says little line by line: folded, the table row says it.
        text = f"<details><summary>{len(o.diff.changes)} resources</summary>\n\n{text}\n\n</details>"
    if o.blocking:
        listed = "\n".join(f"- {md_code(rule)} {md_code(resource)}" for rule, resource in o.blocking)
        note = (
            "**Error-level findings in the head's plan** (`aitrain plan` "
            f"exits 1; they block this pull request):\n\n{listed}\n\n" + note
        )
    return title + note + text + "\n\n"


_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def _demote(markdown: str, levels: int = 2) -> str:
    """Headings two levels down (outside code fences), so each stack's diff nests under its own ``###``."""
    out, fence = [], ""
    for line in markdown.split("\n"):
        match = _FENCE_RE.match(line)
        if match and (not fence or match.group(1).startswith(fence)):
            fence = "" if fence else match.group(1)
        elif not fence and re.match(r"^#{1,6}\s", line):
            line = "#" * min(6, len(line) - len(line.lstrip("#")) + levels) + line.lstrip("#")
        out.append(line)
    return "\n".join(out)
