"""CLI: ``aitrain export terraform`` writes the Terraform JSON form of a blueprint's offline plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.support import PRESET, SET, STACK_CONFIG, TODAY, offline_plan, reports_user_errors, require_profile
from blueprints.core.files import write_atomic

export_app = typer.Typer(
    name="export",
    help="Write a blueprint in another tool's format (Terraform JSON), from the same offline plan.",
    no_args_is_help=True,
)

# The file name Terraform and checkov (`--framework terraform_json`) read as a JSON configuration.
MAIN_FILE = "main.tf.json"


@export_app.command("terraform")
@reports_user_errors
def terraform(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Directory to write main.tf.json into (created if missing; an existing main.tf.json is replaced).",
        ),
    ],
    preset: Annotated[Optional[str], PRESET] = None,
    stack_config: Annotated[Optional[Path], STACK_CONFIG] = None,
    set_: Annotated[Optional[list[str]], SET] = None,
    today: Annotated[Optional[str], TODAY] = None,
    cloud_only: Annotated[
        bool,
        typer.Option(
            "--cloud-only",
            help=(
                "For a plan with Kubernetes objects (kubernetes-pool): write its alicloud resources alone; the "
                "Kubernetes objects and their provider are left out and named."
            ),
        ),
    ] = False,
) -> None:
    """Write DIR/main.tf.json: the same resources and inputs as `aitrain plan`, under the Terraform provider's names.

    The plan is the offline run of the real program (same code, same inputs), so the export is what `pulumi up`
    would create. A plan with Kubernetes objects is refused unless --cloud-only, which writes the cloud side and
    names what it left out. Exit codes: 0 written; 1 the plan holds a resource type with no Terraform mapping (nothing
    is written); 2 invalid input (no profile, a bad --set, --out
    not a directory, Kubernetes objects without --cloud-only).
    """
    from blueprints.core.errors import Problem, UserInputError
    from blueprints.export import ExportError, NotExportable, kubernetes_objects, left_out, to_terraform_json

    require_profile(preset, stack_config)
    if out.exists() and not out.is_dir():
        raise UserInputError(
            "cannot write the export",
            [Problem("--out", str(out), "is a file; give a directory (main.tf.json is written inside it)")],
        )
    plan, _ = offline_plan(preset, stack_config, set_ or [], today)
    try:
        text = to_terraform_json(plan, cloud_only=cloud_only)
    except ExportError as exc:
        typer.echo(f"error: cannot export {plan.profile_name} to Terraform: {exc}", err=True)
        # A refusal (Kubernetes objects) answers what the user asked for: exit 2 like any bad input; else a bug (1).
        raise typer.Exit(code=2 if isinstance(exc, NotExportable) else 1) from None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(
            "cannot write the export", [Problem("--out", str(out), f"{exc.strerror or exc}; give a writable directory")]
        ) from None
    target = out / MAIN_FILE
    write_atomic(target, text)
    resources = sum(
        1 for r in plan.resources if r.custom and not r.type.startswith(("pulumi:providers:", "kubernetes:"))
    )
    skipped = kubernetes_objects(plan) if cloud_only else []
    typer.echo(
        f"wrote {target} ({resources} resources of {plan.profile_name})"
        + (f"; cloud side only, {left_out(skipped)}" if skipped else "")
    )


def register(app: typer.Typer) -> None:
    """Add the ``export`` command group to the main app."""
    app.add_typer(export_app)
