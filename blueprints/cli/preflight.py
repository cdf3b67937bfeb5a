"""CLI: ``aitrain preflight`` asks Alibaba Cloud whether the plan
fits: vCPU and instance-type quotas, stock, storage zone."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from blueprints.cli.choose import choose
from blueprints.cli.support import (
    PRESET,
    SET,
    STACK_CONFIG,
    TODAY,
    emit,
    offline_plan,
    offline_profile,
    reports_user_errors,
    require_credentials,
    require_profile,
    sdk_classes,
)
from blueprints.preflight.checks import KIND_NAMES
from blueprints.profile.capacity import next_step

if TYPE_CHECKING:
    pass

HELP = (
    "Ask the cloud, before `pulumi up`, whether the plan fits: the account's pay-as-you-go (or spot) vCPU quota "
    "(ECS DescribeAccountAttributes), the instance type's quota "
    "in Quota Center (ecs-spec), the type's stock in each zone "
    "the nodes go to (ECS DescribeAvailableResource) and whether "
    "the zone offers the file system (NAS DescribeZones).\n\n"
    "The needs come from the same offline plan as `aitrain plan` (a "
    "pool counts at max_nodes). Read-only: nothing is created.\n\n"
    "Credentials: the ones `pulumi up` uses (ALICLOUD_ACCESS_KEY "
    "and ALICLOUD_SECRET_KEY, plus ALICLOUD_SECURITY_TOKEN; "
    "or ALICLOUD_PROFILE, a profile of ~/.aliyun/config.json), "
    "else the SDK's default chain (ALIBABA_CLOUD_ACCESS_KEY_ID and "
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET, an OIDC role, the aliyun CLI's "
    "current profile, ~/.alibabacloud/credentials.ini, an ECS RAM role).\n\n"
    "Exit codes: 0 nothing short and every check answered (or its kind accepted with --accept-unanswered); "
    "1 something is short (listed with the numbers); "
    "2 invalid input (no profile, no such file, an invalid profile, an unknown "
    "--accept-unanswered name) or the preflight extra is not installed; "
    "3 no credentials found (checked before the plan is built and before any API call); "
    "4 a check went unanswered (no network, a missing RAM permission, "
    "an answer without the number): nothing proves the plan fits.\n\n"
    "--choose (with --stack-config): try the profile's shape, then each of its capacity.fallbacks in order, each with "
    "its own offline plan and these checks, and pin the first that fits into the stack config as explicit settings "
    "(--write writes it; without, the diff is shown). Exit 0 a shape fits, 1 none does (each one's reason listed; "
    "nothing written). Nothing falls back during `pulumi up` itself."
)


class PreflightFormat(str, enum.Enum):
    """How ``aitrain preflight`` prints its report."""

    text = "text"
    json = "json"


def preflight(
    preset: Annotated[Optional[str], PRESET] = None,
    stack_config: Annotated[Optional[Path], STACK_CONFIG] = None,
    set_: Annotated[Optional[list[str]], SET] = None,
    today: Annotated[Optional[str], TODAY] = None,
    output_format: Annotated[
        PreflightFormat,
        typer.Option("--format", help="text for a terminal, json (schema aitrain.preflight/v1) for tools."),
    ] = PreflightFormat.text,
    out: Annotated[
        Optional[Path], typer.Option("--out", help="Write the report to this file instead of standard output.")
    ] = None,
    accept_unanswered: Annotated[
        Optional[list[str]],
        typer.Option(
            "--accept-unanswered",
            help=(
                "Let these kinds of check go unanswered without failing (exit 0 "
                f"instead of 4): {', '.join(KIND_NAMES)}; comma-separated or "
                "repeated. Accepted checks are still listed and marked in the JSON."
            ),
        ),
    ] = None,
    choose_: Annotated[
        bool,
        typer.Option(
            "--choose",
            help="Walk the profile's shape, then capacity.fallbacks; pin the first that fits (needs --stack-config).",
        ),
    ] = False,
    write: Annotated[
        bool, typer.Option("--write", help="With --choose: write the chosen shape into the stack config.")
    ] = False,
) -> None:
    """Check the plan's needs against the account's quotas, the zones' stock and the file system's zone (see HELP)."""
    require_profile(preset, stack_config)
    accepted = accepted_kinds(accept_unanswered or [])
    _choose_options(choose_, write, stack_config, preset, set_ or [], output_format, out)
    source = require_credentials()
    from blueprints.preflight.aliyun import SdkReader

    if choose_:
        assert stack_config is not None
        classes = sdk_classes("aitrain preflight --choose")
        code = choose(
            stack_config,
            credentials=source,
            accepted=accepted,
            today=today,
            write=write,
            reader_for=lambda region: SdkReader(region, client_classes=classes),
        )
        raise typer.Exit(code=code)
    plan, catalog = offline_plan(preset, stack_config, set_ or [], today)

    from blueprints.preflight.checks import run_checks
    from blueprints.preflight.needs import needs_from_plan
    from blueprints.preflight.report import Report, render_text

    classes = sdk_classes("aitrain preflight")
    needs = needs_from_plan(plan, catalog)
    report = Report(
        needs,
        tuple(run_checks(needs, SdkReader(needs.region, client_classes=classes))),
        source,
        accepted,
        next_step=next_step(offline_profile(preset, stack_config, set_ or [], today).capacity),
    )
    emit(report.to_json() if output_format is PreflightFormat.json else render_text(report), out)
    if report.exit_code:
        raise typer.Exit(code=report.exit_code)


def _choose_options(
    choose_: bool,
    write: bool,
    stack_config: Optional[Path],
    preset: Optional[str],
    assignments: list[str],
    output_format: PreflightFormat,
    out: Optional[Path],
) -> None:
    """Exit 2 for option combinations --choose cannot honour (it rewrites one stack file, as `pulumi up` reads it)."""
    from blueprints.core.errors import Problem, UserInputError

    problems = []
    if write and not choose_:
        problems.append(Problem("--write", True, "goes with --choose (plain preflight writes nothing)"))
    if choose_:
        if stack_config is None:
            problems.append(Problem("--choose", True, "needs --stack-config: the stack file it pins the choice in"))
        if preset is not None:
            problems.append(Problem("preset", preset, "--choose reads the preset from the stack config; drop it"))
        if assignments:
            problems.append(Problem("--set", assignments, "--choose plans the stack file as written; drop --set"))
        if output_format is not PreflightFormat.text or out is not None:
            problems.append(Problem("--format/--out", output_format.value, "--choose prints text to the terminal"))
    if problems:
        raise UserInputError("invalid preflight options", problems)


def accepted_kinds(values: list[str]) -> tuple[str, ...]:
    """The kinds named by ``--accept-unanswered`` (comma-separated
    or repeated), in run order; exit 2 on an unknown name."""
    from blueprints.core.errors import Problem, UserInputError

    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    unknown = [n for n in names if n not in KIND_NAMES]
    if unknown:
        raise UserInputError(
            "unknown check name",
            [
                Problem(
                    "--accept-unanswered",
                    ", ".join(repr(n) for n in unknown),
                    f"name kinds of check, comma-separated: {', '.join(KIND_NAMES)}",
                )
            ],
        )
    return tuple(k for k in KIND_NAMES if k in names)


def register(app: typer.Typer) -> None:
    """Add the ``preflight`` command to the main app."""
    app.command("preflight", help=HELP)(reports_user_errors(preflight))
