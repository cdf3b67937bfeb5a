"""The ``aitrain`` command line: plan a blueprint offline, browse the catalog, size and recommend."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.group import AitrainGroup
from blueprints.cli.support import (
    PRESET,
    STACK_CONFIG,
    FailLevel,
    OutputFormat,
    emit,
    offline_plan,
    reports_user_errors,
    require_profile,
)

app = typer.Typer(
    name="aitrain",
    cls=AitrainGroup,  # a single-value option given twice (two --stack-config) is an error, not "last one wins"
    help="Turn an AI-training job into reviewable, tested Alibaba Cloud infrastructure (Pulumi).",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        from blueprints.catalog import load_catalog

        typer.echo(f"aitrain {version('aitrain')} (catalog {load_catalog().version})")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the aitrain and catalog versions and exit."
        ),
    ] = False,
) -> None:
    """Turn an AI-training job into reviewable, tested Alibaba Cloud infrastructure (Pulumi)."""


def _terminal_width(out: Path | None) -> int:
    """The terminal's columns when the table goes to one; 160 otherwise (files and pipes stay byte-identical)."""
    import shutil
    import sys

    return shutil.get_terminal_size((160, 24)).columns if out is None and sys.stdout.isatty() else 160


@app.command()
@reports_user_errors
def plan(
    preset: Annotated[Optional[str], PRESET] = None,
    stack_config: Annotated[Optional[Path], STACK_CONFIG] = None,
    set_: Annotated[
        Optional[list[str]],
        typer.Option(
            "--set",
            help=(
                "Override one profile field, PATH=VALUE (e.g. compute.nodes=16); "
                "repeatable, applied last, as `pulumi config set --path` would."
            ),
        ),
    ] = None,
    today: Annotated[
        Optional[str],
        typer.Option(
            "--today",
            help=(
                "Plan as if today were this date (YYYY-MM-DD); default: $AITRAIN_TODAY, else the system date. "
                "Off-hours schedules are checked against it."
            ),
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", help="table for a terminal, markdown for a pull request, json for tools."),
    ] = OutputFormat.table,
    out: Annotated[
        Optional[Path], typer.Option("--out", help="Write the plan to this file instead of standard output.")
    ] = None,
    check: Annotated[
        Optional[Path],
        typer.Option(
            "--check",
            help=(
                "Compare the plan of every DIR/Pulumi.<stack>.yaml with its committed DIR/plans/<stack>.plan.json; "
                "exit 1 with the plan diff of each stale stack. Pin --today (or AITRAIN_TODAY) in CI."
            ),
        ),
    ] = None,
    update: Annotated[
        Optional[Path],
        typer.Option(
            "--update",
            help=(
                "Rewrite DIR/plans/<stack>.plan.json for every DIR/Pulumi.<stack>.yaml (and delete plans whose stack "
                "file is gone); says which changed."
            ),
        ),
    ] = None,
    fail_level: Annotated[
        FailLevel,
        typer.Option(
            "--fail-level",
            help=(
                "Exit 1 when a guardrail finding is at this level or a more severe one (error, then warning, then "
                "info: `info` fails on any finding). Skipped rules never fail."
            ),
        ),
    ] = FailLevel.error,
    width: Annotated[
        Optional[int],
        typer.Option(
            "--width",
            min=40,
            max=1000,
            help=(
                "Columns of the table format; default: the terminal's width, or 160 when the output is not a terminal. "
                "Below 120 the resources and costs are lists, so nothing is cut."
            ),
        ),
    ] = None,
) -> None:
    """Show exactly what `pulumi up` would create, by running the real program offline under Pulumi mocks.

    Exit codes: 0 no guardrail finding at --fail-level or above; 1 there is one (the plan is written first, the
    findings are repeated on stderr); 2 invalid input. With --check DIR (or --update DIR) it checks (or rewrites)
    the committed golden plans of a folder of stack files instead: 0 all plans current (or rewritten); 1 a plan is
    stale, missing or has no stack file; 2 invalid input (no such folder, an invalid stack file).
    """
    if check is not None or update is not None:
        from blueprints.cli.ci import plan_check

        plan_check(check, update, today, conflicting=bool(preset or stack_config or set_ or out))
        return
    from blueprints.review.guardrails import at_or_above
    from blueprints.review.render import render_markdown, render_table

    require_profile(preset, stack_config)
    result, _ = offline_plan(preset, stack_config, set_ or [], today)
    if output_format is OutputFormat.json:
        text = result.to_json()
    elif output_format is OutputFormat.markdown:
        text = render_markdown(result)
    else:
        text = render_table(result, width or _terminal_width(out))
    emit(text, out)
    failing = [f for f in result.findings if at_or_above(f["level"], fail_level.value)]
    if failing:
        typer.echo(f"{len(failing)} guardrail finding(s) at --fail-level {fail_level.value} or above:", err=True)
        for f in failing:
            typer.echo(f"  {f['level']}: [{f['rule']}] {f['resource']}: {f['message']}", err=True)
        raise typer.Exit(code=1)


@app.command()
@reports_user_errors
def guardrails(
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="table for a terminal, markdown for docs, json for tools.")
    ] = OutputFormat.table,
) -> None:
    """List every guardrail: its id (what `guardrails.skip` names), level, what holds, why, and how to fix a finding."""
    import json

    from blueprints.review.render.findings import rules_json, rules_markdown, rules_text

    if output_format is OutputFormat.json:
        typer.echo(json.dumps(rules_json(), indent=2, ensure_ascii=False))
    elif output_format is OutputFormat.markdown:
        typer.echo(rules_markdown(), nl=False)
    else:
        typer.echo(rules_text(), nl=False)


@app.command()
@reports_user_errors
def presets() -> None:
    """List the bundled presets."""
    from blueprints.profile.stackconfig import load_preset, preset_names

    for name in preset_names():
        data = load_preset(name)
        typer.echo(f"{name}\t{data.get('blueprint')}\t{data.get('description', '')}")


catalog_app = typer.Typer(
    name="catalog",
    invoke_without_command=True,  # `aitrain catalog [options]` lists; `aitrain catalog refresh` asks for prices
    pretty_exceptions_enable=False,
)


@catalog_app.callback()
@reports_user_errors
def catalog(
    ctx: typer.Context,
    gpu: Annotated[
        Optional[str],
        typer.Option(
            "--gpu", help="Only this GPU model, e.g. A100-SXM4-80GB (case-insensitive prefix match, so 'A100' works)."
        ),
    ] = None,
    min_gpus: Annotated[
        Optional[int], typer.Option("--min-gpus", min=0, help="Only types with at least this many GPUs per instance.")
    ] = None,
    region: Annotated[
        Optional[str],
        typer.Option(
            "--region",
            help=(
                "Only types sold in this region, plus those whose regions "
                "the catalog does not know (fill them with `aitrain zones`)."
            ),
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            help=(
                "table for a terminal, markdown for a pull request, json for "
                "tools (a list of objects with the catalog's column names)."
            ),
        ),
    ] = OutputFormat.table,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write to this file instead of standard output.")] = None,
) -> None:
    """List real Alibaba Cloud instance types from the versioned catalog, with specs, prices and sources.

    Reads the shipped catalog, or the directory named by AITRAIN_CATALOG_DIR when it is set. The price shown is the
    one a plan in --region would use (without --region, the newest quote and its region). `aitrain catalog refresh`
    asks Alibaba's pricing API for your account's prices.
    """
    if ctx.invoked_subcommand is not None:
        return
    from blueprints.catalog import load_catalog
    from blueprints.catalog.render import catalog_rows, render_catalog_markdown, render_catalog_table
    from blueprints.core.errors import Problem, UserInputError, did_you_mean, join_allowed

    catalog = load_catalog()
    if region is not None and region not in catalog.regions:
        raise UserInputError(
            "unknown region",
            [
                Problem(
                    "--region",
                    region,
                    f"not a region of catalog {catalog.version}; it knows {join_allowed(catalog.regions)}",
                    did_you_mean(region, catalog.regions),
                )
            ],
        )
    rows = catalog_rows(catalog, gpu=gpu, min_gpus=min_gpus, region=region)
    if output_format is OutputFormat.json:
        emit(json.dumps(rows, indent=2, ensure_ascii=False), out)
    elif output_format is OutputFormat.markdown:
        emit(render_catalog_markdown(rows), out)
    else:
        emit(render_catalog_table(rows), out)


class FailOn(str, Enum):
    """The change classes `aitrain diff --fail-on` exits 1 on (blueprints.review.diff.compare.FAIL_ON)."""

    data_risk = "data-risk"
    replace_ = "replace"  # not `replace`: that is str.replace
    any = "any"


@app.command()
@reports_user_errors
def diff(
    old: Annotated[Path, typer.Argument(help="The earlier plan, from `aitrain plan --format json`.")],
    new: Annotated[Path, typer.Argument(help="The later plan.")],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="table (plain text), markdown for a pull request, or json.")
    ] = OutputFormat.table,
    fail_on: Annotated[
        Optional[FailOn],
        typer.Option(
            "--fail-on",
            help=(
                "Exit 1 (after writing the diff) when it holds a data "
                "risk, a replacement/deletion (replace), or any change."
            ),
        ),
    ] = None,
    missing_as_empty: Annotated[
        bool,
        typer.Option(
            "--missing-as-empty",
            help="A missing OLD (a new stack) or NEW (a removed stack) is an empty plan: all create or all delete.",
        ),
    ] = False,
    out: Annotated[
        Optional[Path], typer.Option("--out", help="Write the diff to this file instead of standard output.")
    ] = None,
) -> None:
    """Compare two JSON plans: what `pulumi up` would create, update,
    replace (delete-first?) or refuse, the cost change and the data risks.

    Exit codes: 0 no change of the --fail-on class, 1 such a change is present, 2 invalid input.
    """
    from blueprints.review.diff.compare import diff_plans, load_plan_pair
    from blueprints.review.render.diff import render_diff

    result = diff_plans(*load_plan_pair(old, new, missing_as_empty=missing_as_empty))
    if output_format is OutputFormat.json:
        emit(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str), out)
    else:
        emit(render_diff(result, markdown=output_format is OutputFormat.markdown), out)
    if fail_on is not None and result.fails_on(fail_on.value):
        raise typer.Exit(code=1)


@app.command("case-studies")
@reports_user_errors
def case_studies(
    write: Annotated[
        Optional[Path], typer.Option("--write", help="Write the page to this file (docs/case-studies.md).")
    ] = None,
    check: Annotated[
        Optional[Path], typer.Option("--check", help="Exit 1 when this file differs from a fresh generation.")
    ] = None,
) -> None:
    """Regenerate the article's case studies beside what aitrain computes (docs/case-studies.md)."""
    from blueprints.advisor.casestudies import generate
    from blueprints.advisor.data import limits
    from blueprints.architectures import budget_tiers
    from blueprints.catalog import load_catalog

    text = generate(load_catalog(), budget_tiers(limits()))
    if check is not None:
        current = check.read_text(encoding="utf-8") if check.exists() else ""
        if current != text:
            typer.echo(f"{check} is stale: run `aitrain case-studies --write {check}`", err=True)
            raise typer.Exit(code=1)
        typer.echo(f"{check} is current")
        return
    emit(text, write)
    if write is not None:
        typer.echo(f"wrote {write}", err=True)


def _register_advisor() -> None:
    from blueprints.cli.advisor import register

    register(app)


def _register_launch() -> None:
    from blueprints.cli.launch import register
    from blueprints.cli.queue import register as register_queue
    from blueprints.cli.runs import register as register_runs

    register(app)
    register_runs(app)
    register_queue(app)


def _register_check() -> None:
    from blueprints.cli.check import register

    register(app)


def _register_replace() -> None:
    from blueprints.cli.replace import register

    register(app)


def _register_ci() -> None:
    from blueprints.cli.ci import register

    register(app)


def _register_export() -> None:
    from blueprints.cli.export import register

    register(app)


def _register_preflight() -> None:
    from blueprints.cli.explain import register as register_explain
    from blueprints.cli.preflight import register

    register(app)
    register_explain(app)


def _register_image() -> None:
    from blueprints.cli.image import register

    register(app)


def _register_catalog() -> None:
    from blueprints.cli.catalog_refresh import register

    register(catalog_app)
    app.add_typer(catalog_app)


def _register_bake() -> None:
    from blueprints.cli.bake import register

    register(app)


def _register_zones() -> None:
    from blueprints.cli.zones import register

    register(app)


def _register_schema() -> None:
    from blueprints.cli.schema import register

    register(app)


def _register_policy() -> None:
    from blueprints.cli.policy import register

    register(app)


_register_advisor()
_register_launch()
_register_check()
_register_replace()
_register_ci()
_register_policy()
_register_export()
_register_preflight()
_register_zones()
_register_catalog()
_register_image()
_register_bake()
_register_schema()


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
