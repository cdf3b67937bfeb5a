"""``aitrain preflight --choose``: the first shape of the profile and its ``capacity.fallbacks`` that the cloud has
quota and stock for, written into the stack config as explicit settings (with ``--write``), atomically or not at all.

Each candidate gets its own offline plan, built as `pulumi up` would build it with the candidate's settings, and
the same read-only checks as `aitrain preflight`. Nothing ever falls back during `pulumi up`: the switch is a change
of the stack file that the plan, the review and the diff all show.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import typer

from blueprints.cli.support import StackEdit, show_and_write
from blueprints.core.errors import UserInputError

if TYPE_CHECKING:
    from blueprints.preflight.checks import CloudReader
    from blueprints.preflight.choose import Candidate, Tried


def choose(
    stack_config: Path,
    *,
    credentials: str,
    accepted: tuple[str, ...],
    today: str | None,
    write: bool,
    reader_for: Callable[[str], "CloudReader"],
) -> int:
    """Walk the candidates, print each one tried and why, and pin the first that fits. The exit code: 0 a shape fits
    (written with ``write``), 1 none fits (nothing written)."""
    from blueprints.cli.image import _profile_as_written
    from blueprints.core import clock
    from blueprints.engine.preview import preview
    from blueprints.preflight.checks import run_checks
    from blueprints.preflight.choose import Tried, candidates, walk
    from blueprints.preflight.needs import needs_from_plan
    from blueprints.preflight.report import Report
    from blueprints.profile.stackconfig import engine_config, merge, with_cli_inputs

    stack = StackEdit.read(stack_config)
    day = clock.parse_today(today, "--today") if today else stack.today
    config = engine_config(stack_config)
    found = candidates(stack.profile, stack.catalog)

    def evaluate(candidate: "Candidate") -> "Tried":
        try:
            plan = preview(with_cli_inputs(config, None, list(candidate.settings)), catalog=stack.catalog, today=day)
        except UserInputError as exc:
            return Tried(candidate, None, refused="; ".join(p.render() for p in exc.problems))
        needs = needs_from_plan(plan, stack.catalog)
        checks = tuple(run_checks(needs, reader_for(needs.region)))
        return Tried(candidate, Report(needs, checks, credentials, accepted))

    tried = walk(found, evaluate)
    typer.echo(f"preflight --choose {stack.profile.name} in {stack.profile.region}; credentials: {credentials}")
    typer.echo("")
    for attempt in tried:
        typer.echo(_tried_text(attempt))
    untried = found[len(tried) :]
    if untried:
        typer.echo(f"  not asked: {', '.join(c.name for c in untried)} (an earlier shape fits)")
    typer.echo("")
    chosen = tried[-1] if tried[-1].fits else None
    if chosen is None:
        typer.echo(
            f"NOTHING FITS: {len(tried)} shape(s) tried, none has the quota and stock (exit 1); nothing written. "
            "Add alternatives to capacity.fallbacks, raise the quota named above, or try later."
        )
        return 1
    if chosen.candidate.index is None:
        typer.echo(f"{stack.source} fits as it is: nothing to change.")
        return 0
    new_profile = merge(
        _profile_as_written(stack.existing, stack.source, stack.settings.profile), chosen.candidate.settings_dict()
    )
    _, merged, _ = stack.rewritten(new_profile)
    typer.echo(
        f"chosen: {chosen.candidate.name} ({_settings_text(chosen.candidate)}), pinned as explicit settings; "
        "`aitrain plan --stack-config` and the pull request's diff show the switch."
    )
    if show_and_write(stack_config, stack.existing, merged, "preflight --choose", write=write):
        typer.echo(f"wrote {stack.source}. Review with `aitrain plan --stack-config {stack.source}`, then `pulumi up`.")
    return 0


def _tried_text(attempt: "Tried") -> str:
    candidate = attempt.candidate
    mark = "FITS " if attempt.fits else "no   "
    head = f"  {mark} {candidate.name}"
    if candidate.settings:
        head += f" ({_settings_text(candidate)})"
    lines = [head, f"        changes: {'; '.join(candidate.changes)}", f"        {attempt.reason()}"]
    return "\n".join(lines)


def _settings_text(candidate: "Candidate") -> str:
    return ", ".join(f"{path}: {_value(value)}" for path, value in candidate.settings)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)
