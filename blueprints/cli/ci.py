"""CLI for review in CI: ``aitrain ci comment``, ``aitrain ci github`` and ``aitrain plan --check/--update``."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.support import emit, reports_user_errors

ci_app = typer.Typer(
    name="ci",
    help="Review stack changes in pull requests: the PR comment and the GitHub workflow that posts it.",
    no_args_is_help=True,
)


class FailOn(str, enum.Enum):
    """The diff classes `aitrain ci comment` can fail on (plandiff.FAIL_ON)."""

    DATA_RISK = "data-risk"
    REPLACE = "replace"
    ANY = "any"


def plan_check(check: Path | None, update: Path | None, today: str | None, *, conflicting: bool) -> None:
    """``aitrain plan --check DIR`` / ``--update DIR``: print the report, exit 0, 1 (stale) or 2 (invalid input)."""
    from blueprints.ci.goldenplans import check_plans, report
    from blueprints.core import clock
    from blueprints.core.errors import Problem, UserInputError

    if (check is not None and update is not None) or conflicting:
        raise UserInputError(
            "conflicting options",
            [
                Problem(
                    "--check/--update",
                    str(check or update),
                    "give one of --check DIR or --update DIR, without a preset, --stack-config, --set or --out",
                )
            ],
        )
    directory = check if check is not None else update
    assert directory is not None
    day = clock.parse_today(today, "--today") if today else clock.today()
    text, code = report(check_plans(directory, day, update=update is not None), directory, update=update is not None)
    typer.echo(text)
    raise typer.Exit(code=code)


@ci_app.command("comment")
@reports_user_errors
def comment(
    base: Annotated[
        Path,
        typer.Option("--base", help="A checkout of the pull request's base commit (e.g. a `git worktree add` of it)."),
    ],
    head: Annotated[Path, typer.Option("--head", help="A checkout of the pull request's head.")] = Path("."),
    stacks: Annotated[
        str, typer.Option("--stacks", help="The folder of Pulumi.<stack>.yaml files, relative to each checkout.")
    ] = ".",
    fail_on: Annotated[
        FailOn,
        typer.Option(
            "--fail-on", help="Exit 1 when a stack's diff holds a change of this class: data-risk, replace or any."
        ),
    ] = FailOn.DATA_RISK,
    today: Annotated[
        Optional[str],
        typer.Option(
            "--today",
            help=(
                "Plan both sides as if today were this date (YYYY-MM-DD); default $AITRAIN_TODAY, else the system date."
            ),
        ),
    ] = None,
    base_plans: Annotated[
        Optional[Path],
        typer.Option(
            "--base-plans",
            help=(
                "Read the base side from this folder of <stack>.plan.json (written by the base's own aitrain) instead "
                "of planning the base's stack files."
            ),
        ),
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option("--out", help="Write the comment body to this file instead of standard output.")
    ] = None,
) -> None:
    """Plan every stack file on the base and the head, diff each,
    and write ONE Markdown comment (marker `<!-- aitrain-plan -->`).

    A stack only on the head is all-create; only on the base, all-delete. The body is written first, whatever
    the outcome. Exit codes: 0 no change of the --fail-on class and no error-level guardrail finding in any head
    plan; 1 at least one of either (the comment names the rule ids and resources); 2 invalid input — a stack file
    that cannot be planned or a base plan of another schema or tool (shown in its section), or bad options
    (then nothing is written).
    """
    from blueprints.ci.comment import BASE_COMMITTED, BASE_PLANNED, comment_body, compare_stacks, exit_code
    from blueprints.core import clock

    day = clock.parse_today(today, "--today") if today else clock.today()
    outcomes = compare_stacks(base, head, stacks, day, base_plans=base_plans)
    source = BASE_COMMITTED if base_plans is not None else BASE_PLANNED
    emit(comment_body(outcomes, stacks=stacks, fail_on=fail_on.value, today=day, base_source=source), out)
    code = exit_code(outcomes, fail_on.value)
    if code:
        blocked = sorted({f"{rule} {resource}" for o in outcomes for rule, resource in o.blocking})
        why = (
            "a stack could not be planned"
            if code == 2
            else "; ".join(
                ([f"blocked: error-level findings in the head's plan: {', '.join(blocked)}"] if blocked else [])
                + (
                    [f"a change of class {fail_on.value}"]
                    if any(o.diff is not None and o.diff.fails_on(fail_on.value) for o in outcomes)
                    else []
                )
            )
        )
        typer.echo(f"aitrain ci comment: exit {code} ({why})", err=True)
    raise typer.Exit(code=code)


@ci_app.command("github")
@reports_user_errors
def github(
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            help=(
                "Write the workflow here, e.g. .github/workflows/aitrain-plan.yml, "
                "creating its folders (default: standard output)."
            ),
        ),
    ] = None,
    stacks: Annotated[
        str,
        typer.Option(
            "--stacks",
            help=(
                "The folder of your Pulumi.<stack>.yaml files, relative to the repository root: the folder `pulumi up` "
                "reads them from (next to Pulumi.yaml, or its stackConfigDir)."
            ),
        ),
    ] = ".",
    install: Annotated[
        Optional[str],
        typer.Option(
            "--install",
            help=(
                "The shell command that installs aitrain on the runner, from a source you pin: a git URL at a 40-hex "
                'commit or a release tag ("aitrain @ git+https://github.com/OWNER/aitrain@<commit>"), or a path in '
                "your repository (./vendor/aitrain). Default: the aitrain you are running, when pip recorded a git "
                "commit or a hashed archive for it."
            ),
        ),
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Fail the job on a change of this class: data-risk, replace or any.")
    ] = FailOn.DATA_RISK,
) -> None:
    """Write the GitHub Actions workflow that posts one sticky
    plan-diff comment on each pull request and fails on data risk.

    aitrain is not published on a package index, so the workflow never installs it by name: give --install, or run
    an aitrain installed from a pinned git commit and the workflow installs that same commit.
    """
    from blueprints.ci.install import EXAMPLES, derived_install, running_direct_url
    from blueprints.ci.workflow import workflow_yaml
    from blueprints.core.errors import MISSING, Problem, UserInputError

    if install is None:
        install = derived_install(running_direct_url())
        if install is None:
            raise UserInputError(
                "no install command",
                [
                    Problem(
                        "--install",
                        MISSING,
                        (
                            "is required: aitrain is not published on PyPI, so `pip "
                            "install aitrain` would fail, or install whatever someone "
                            "later publishes under that name, in a job that may write "
                            "to pull requests; the aitrain you are running came from "
                            f"a local folder, so no pinned source can be derived from it. Give {EXAMPLES}"
                        ),
                    )
                ],
            )
    text = workflow_yaml(stacks=stacks, install=install, fail_on=fail_on.value)
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)  # e.g. .github/workflows/ in a repository that has none yet
        except OSError as exc:
            raise UserInputError(
                "cannot write the output file",
                [Problem("--out", str(out), f"cannot create its folder: {exc.strerror or exc}")],
            ) from None
    emit(text, out)
    if out is not None:
        typer.echo(f"wrote {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add the ``ci`` command group to the main app."""
    app.add_typer(ci_app)
