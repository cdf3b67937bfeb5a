"""Golden plans for users' stacks: ``aitrain plan --check DIR`` / ``--update DIR``.

Each stack file ``DIR/Pulumi.<stack>.yaml`` has its JSON plan committed at ``DIR/plans/<stack>.plan.json``
(``PLANS_SUBDIR``). ``--check`` plans every stack file offline and compares the text with the committed plan,
byte for byte; a difference is reported as the plan diff (what `pulumi up` would now do differently), not as a
raw JSON diff. ``--update`` rewrites the committed plans and names each one it changed.

The only volatile input is the clock (an off-hours schedule's start date): plans come from the date given with
``--today`` or ``AITRAIN_TODAY``, so CI must pin it to the date the plans were written with.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from blueprints.core.errors import Problem, UserInputError

PLANS_SUBDIR = "plans"
# Pulumi's stack config files: ``Pulumi.<stack>.yaml`` beside ``Pulumi.yaml`` (which is the project file, not a stack).
STACK_FILE_RE = re.compile(r"^Pulumi\.(?P<stack>[^/]+)\.yaml$")


@dataclass(frozen=True)
class StackFile:
    """One ``Pulumi.<stack>.yaml`` and where its committed plan lives."""

    stack: str
    path: Path

    def plan_path(self, directory: Path) -> Path:
        """``DIR/plans/<stack>.plan.json``."""
        return directory / PLANS_SUBDIR / f"{self.stack}.plan.json"


@dataclass(frozen=True)
class StackCheck:
    """The outcome for one stack: ``status`` is current, stale,
    missing (no committed plan) or orphan (no stack file)."""

    stack: str
    status: str
    detail: str = ""


def stack_files(directory: Path, *, option: str = "DIR") -> list[StackFile]:
    """The stack files directly in ``directory``, sorted by stack name; a missing directory is a user error."""
    if not directory.is_dir():
        raise UserInputError(
            "no stack folder",
            [
                Problem(
                    option,
                    str(directory),
                    "is not a directory; give the folder that holds your Pulumi.<stack>.yaml files",
                )
            ],
        )
    found = [
        StackFile(m.group("stack"), p)
        for p in directory.iterdir()
        if p.is_file() and (m := STACK_FILE_RE.match(p.name))
    ]
    return sorted(found, key=lambda s: s.stack)


def plan_stack_json(path: Path, today: dt.date) -> str:
    """The JSON plan of one stack file, exactly as ``aitrain plan --stack-config PATH --format json`` prints it."""
    from blueprints.catalog import load_catalog
    from blueprints.engine.preview import preview
    from blueprints.profile.stackconfig import engine_config

    try:
        return preview(engine_config(path), catalog=load_catalog(), today=today).to_json()
    except UserInputError as exc:
        # Name the file: with several stacks, "invalid profile" alone does not say which one.
        subject = exc.subject if str(path) in exc.subject else f"{exc.subject} in {path}"
        raise UserInputError(subject, exc.problems) from None


def check_plans(directory: Path, today: dt.date, *, update: bool = False) -> list[StackCheck]:
    """Compare (or, with ``update``, rewrite) the committed plan of every stack file in ``directory``.

    Raises ``UserInputError`` (exit 2) for a missing folder, no stack files or an invalid stack file; stale,
    missing and orphan plans are results, not errors.
    """
    from blueprints.core.files import write_atomic

    stacks = stack_files(directory, option="--check" if not update else "--update")
    if not stacks:
        raise UserInputError(
            "no stack files",
            [Problem(str(directory), "(empty)", "holds no Pulumi.<stack>.yaml; give the folder of your stack files")],
        )
    results: list[StackCheck] = []
    for stack in stacks:
        current = plan_stack_json(stack.path, today)
        target = stack.plan_path(directory)
        committed = target.read_text(encoding="utf-8") if target.is_file() else None
        if committed == current:
            results.append(StackCheck(stack.stack, "current"))
            continue
        if update:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, current, option="--update")
            results.append(StackCheck(stack.stack, "written" if committed is None else "updated", str(target)))
        elif committed is None:
            results.append(
                StackCheck(
                    stack.stack, "missing", f"{target}: no committed plan; run `aitrain plan --update {directory}`"
                )
            )
        else:
            results.append(StackCheck(stack.stack, "stale", explain_difference(committed, current, str(target))))
    known = {s.stack for s in stacks}
    plans_dir = directory / PLANS_SUBDIR
    for orphan in sorted(plans_dir.glob("*.plan.json")) if plans_dir.is_dir() else []:
        stack_name = orphan.name[: -len(".plan.json")]
        if stack_name in known:
            continue
        if update:
            orphan.unlink()
            results.append(StackCheck(stack_name, "deleted", f"{orphan}: its stack file is gone"))
        else:
            results.append(
                StackCheck(
                    stack_name,
                    "orphan",
                    f"{orphan}: no Pulumi.{stack_name}.yaml; run `aitrain plan --update {directory}` to delete it",
                )
            )
    return results


def explain_difference(committed: str, current: str, where: str) -> str:
    """What changed between the committed and the current plan, as the plan diff a reviewer reads."""
    from blueprints.review.diff.compare import diff_plans, plan_shape_problems
    from blueprints.review.plan import PLAN_SCHEMA
    from blueprints.review.render.diff import render_diff

    try:
        old = json.loads(committed)
    except json.JSONDecodeError as exc:
        return f"{where} is not JSON ({exc.msg}, line {exc.lineno}); rewrite it with --update"
    if not isinstance(old, dict) or old.get("schema") != PLAN_SCHEMA:
        found = old.get("schema", "(no schema)") if isinstance(old, dict) else type(old).__name__
        return (
            f"{where} has schema {found!r}, this aitrain writes {PLAN_SCHEMA!r} "
            "(another version or another tool); rewrite it with --update"
        )
    if plan_shape_problems(old, where):
        return f"{where} is not a plan this aitrain can read; rewrite it with --update"
    diff = diff_plans(old, json.loads(current))
    if diff.summary or diff.changes:
        return render_diff(diff)
    # Same resources and summary: the difference is elsewhere (costs, notes, findings, outputs); show those lines.
    lines = list(
        difflib.unified_diff(committed.splitlines(), current.splitlines(), "committed", "current", lineterm="", n=1)
    )
    shown = lines[:40] + ([f"… {len(lines) - 40} more diff lines"] if len(lines) > 40 else [])
    return "same resources; other fields differ:\n" + "\n".join(shown)


def report(results: list[StackCheck], directory: Path, *, update: bool) -> tuple[str, int]:
    """The text ``plan --check``/``--update`` prints and its exit code (0 all current or written, 1 otherwise)."""
    lines: list[str] = []
    for r in results:
        head = f"{r.stack}: {r.status}"
        if r.status == "stale":
            lines += [
                f"{head} — {directory / PLANS_SUBDIR / (r.stack + '.plan.json')} differs from the current plan:",
                _indent(r.detail),
                "",
            ]
        else:
            lines.append(f"{head}{' — ' + r.detail if r.detail else ''}")
    bad = [r.stack for r in results if r.status in ("stale", "missing", "orphan")]
    if update:
        changed = [r.stack for r in results if r.status != "current"]
        lines.append(
            f"updated {len(changed)} of {len(results)} plans"
            + (f" ({', '.join(changed)}); review and commit them" if changed else "")
        )
        return "\n".join(lines), 0
    if bad:
        lines.append(
            f"{len(bad)} of {len(results)} stacks differ from their committed plans ({', '.join(bad)}); if intended, "
            f"run `aitrain plan --update {directory}` and commit"
        )
        return "\n".join(lines), 1
    lines.append(f"all {len(results)} committed plans are current")
    return "\n".join(lines), 0


def _indent(text: str) -> str:
    return "\n".join(("    " + line) if line else line for line in text.rstrip("\n").splitlines())
