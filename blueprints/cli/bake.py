"""``aitrain bake``: build the team's own GPU image once, so every later node skips the install script and its reboot.

Where the catalog names no Alibaba image with the GPU stack for the family and region (images.csv), a node spends
10-20 minutes and a reboot in Alibaba's auto-install script at first boot (docs/sources/ready-to-train.md section
1b). `aitrain bake --stack-config Pulumi.<stack>.yaml --write` sets ``compute.bake_image: true``; the next `pulumi up`
adds an ECS Image Builder pipeline (``ecs.EcsImagePipeline``) and one execution of it, which installs the family's
catalog pins on the plain OS image on a temporary instance of the family's type and saves a custom image. Pin that
image (`aitrain image pin --image-id m-... --write`), set ``compute.gpu_stack_in_image: true`` and
``compute.bake_image: false``: the plan then shows the image path's boot-to-ready time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from blueprints.cli.support import StackEdit, reports_user_errors, show_and_write
from blueprints.core.errors import Problem, UserInputError


@reports_user_errors
def bake(
    stack_config: Annotated[Path, typer.Option("--stack-config", help="The Pulumi.<stack>.yaml of the GPU nodes.")],
    write: Annotated[
        bool,
        typer.Option("--write", help="Write compute.bake_image: true into the stack file; without it, only show it."),
    ] = False,
) -> None:
    """Bake the family's GPU stack into the team's own image (ECS Image Builder), once, at the next `pulumi up`.

    Exit 2 with nothing written for a stack whose nodes have no GPU, or boot ACK's image, or already boot an image
    with the GPU stack (Alibaba's, from the catalog, or one compute.gpu_stack_in_image says is baked).
    """
    from blueprints.architectures import spec_for, specs
    from blueprints.architectures.ecs.spec import EcsSpec
    from blueprints.cli.image import _profile_as_written
    from blueprints.profile.stackconfig import merge

    stack = StackEdit.read(stack_config)
    source, profile = stack.source, stack.profile
    spec = spec_for(profile, stack.catalog, stack.today)
    if not isinstance(spec, EcsSpec):
        raise UserInputError(
            f"nothing to bake in {source}",
            [
                Problem(
                    f"{source}: blueprint",
                    profile.blueprint,
                    f"{specs()[profile.blueprint].foreign_node_image or 'its nodes boot an image aitrain does not'}"
                    "; allowed: a blueprint whose nodes aitrain boots (fixed-cluster, autoscaling-pool)",
                )
            ],
        )
    path = spec.boot_path()
    if path != "install_script":
        why = {
            "none": f"{spec.instance.instance_type} has no GPU: there is no GPU stack to bake",
            "preinstalled": "its nodes already boot an image with the GPU stack (the catalog's images.csv)",
            "baked": f"compute.gpu_stack_in_image says {profile.compute.image_id} already has the GPU stack",
        }[path]
        raise UserInputError(
            f"nothing to bake in {source}",
            [Problem(f"{source}: compute.instance_type", spec.instance.instance_type, why)],
        )
    new_profile = merge(
        _profile_as_written(stack.existing, source, stack.settings.profile), {"compute": {"bake_image": True}}
    )
    _, merged, _ = stack.rewritten(new_profile)
    software = stack.catalog.software_for(spec.instance)
    typer.echo(
        f"aitrain bake: {profile.name} ({spec.instance.family}, {profile.region}) — compute.bake_image: true. The next "
        f"`pulumi up` builds an image with NVIDIA driver {software.driver_version}, CUDA {software.cuda_version} "
        f"(gpu_software.csv) on one temporary {spec.instance.instance_type} (billed while it builds)."
    )
    if show_and_write(stack_config, stack.existing, merged, "bake", write=write):
        typer.echo(
            f"wrote {source}. Preview with `aitrain plan --stack-config {source}`; after `pulumi up`, the "
            "image_bake output says how to pin the image."
        )


def register(app: typer.Typer) -> None:
    """Add ``bake`` to ``app``."""
    app.command("bake")(bake)
