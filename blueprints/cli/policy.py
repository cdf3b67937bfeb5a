"""CLI for the Pulumi policy pack: ``aitrain policy config`` writes the pack's config from a profile."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.support import PRESET, TODAY, emit, offline_plan, reports_user_errors, require_profile

policy_app = typer.Typer(
    name="policy",
    help="Run aitrain's guardrails in `pulumi preview` through the policy pack in policy/.",
    no_args_is_help=True,
)


@policy_app.command("config")
@reports_user_errors
def config(
    preset: Annotated[Optional[str], PRESET] = None,
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
    today: Annotated[Optional[str], TODAY] = None,
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
    from blueprints.policy.config import pack_config_json

    require_profile(preset, stack_config)
    plan, _ = offline_plan(preset, stack_config, set_ or [], today)
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
