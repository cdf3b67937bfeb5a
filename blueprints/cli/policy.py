"""CLI for the Pulumi policy pack: ``aitrain policy config`` writes the pack's config from a profile."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.support import emit, reports_user_errors

policy_app = typer.Typer(
    name="policy",
    help="Run aitrain's guardrails in `pulumi preview` through the policy pack in policy/.",
    no_args_is_help=True,
)


@policy_app.command("config")
@reports_user_errors
def config(
    preset: Annotated[
        Optional[str], typer.Argument(help="A bundled preset, e.g. medical-imaging or autoscaling-training.")
    ] = None,
    stack_config: Annotated[
        Optional[Path],
        typer.Option(
            "--stack-config",
            help=(
                "The Pulumi.<stack>.yaml the stack is deployed from; its aitrain:preset / aitrain:profile keys are "
                "read exactly as `pulumi up` reads them."
            ),
        ),
    ] = None,
    set_: Annotated[
        Optional[list[str]],
        typer.Option("--set", help="Override one profile field, PATH=VALUE (as `aitrain plan --set`); repeatable."),
    ] = None,
    today: Annotated[
        Optional[str],
        typer.Option(
            "--today",
            help="Plan as if today were this date (YYYY-MM-DD); default: $AITRAIN_TODAY, else the system date.",
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out", help="Write the config to this file (e.g. policy-config.json) instead of standard output."
        ),
    ] = None,
) -> None:
    """Write the policy pack's config for a profile: the rules it skips (disabled, with its reasons) and the plan
    facts the rules read (admin_cidr, bucket, scratch and memory per node).

    Then: `pulumi preview --policy-pack policy --policy-pack-config policy-config.json`. Without a config the pack
    still runs every rule on the resources it sees. Exit codes: 0 written; 2 invalid input.
    """
    from blueprints.architectures import profile_models
    from blueprints.catalog import load_catalog
    from blueprints.core import clock
    from blueprints.core.errors import Problem, UserInputError
    from blueprints.engine.preview import preview
    from blueprints.policy.config import pack_config_json
    from blueprints.profile.stackconfig import engine_config, parse_overrides, preset_names, with_cli_inputs

    if preset is None and stack_config is None:
        raise UserInputError(
            "no profile given",
            [Problem("preset", None, f"name a preset ({', '.join(preset_names())}) or give --stack-config")],
        )
    day = clock.parse_today(today, "--today") if today else clock.today()
    overrides = parse_overrides(set_ or [], profile_models())
    engine = engine_config(stack_config) if stack_config else {}
    plan = preview(with_cli_inputs(engine, preset, overrides), catalog=load_catalog(), today=day)
    emit(pack_config_json(plan), out)
    if out is not None:
        skipped = ", ".join(s["rule"] for s in plan.skipped) or "none"
        typer.echo(
            f"wrote {out} (skipped rules: {skipped}); run: pulumi "
            f"preview --policy-pack policy --policy-pack-config {out}",
            err=True,
        )


def register(app: typer.Typer) -> None:
    """Add the ``policy`` command group to the main app."""
    app.add_typer(policy_app)
