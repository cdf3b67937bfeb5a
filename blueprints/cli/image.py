"""The ``image`` commands: ``aitrain image pin`` records the node image in the stack config (``compute.image_id``).

Unpinned, every `pulumi up` resolves the newest system image of the catalog's pattern, and a newer Alibaba image
re-images every running node at the next routine deploy. Pinning right after the first `pulumi up` (from its saved
outputs, which name the image the nodes booted) makes a newer image a change made on purpose, which `aitrain diff`
shows as "stops and re-images N nodes".
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from blueprints.cli.support import StackEdit, reports_user_errors, show_and_write
from blueprints.core.errors import MISSING, Problem, UserInputError

Runner = Callable[[list[str]], "subprocess.CompletedProcess[str]"]

image_app = typer.Typer(
    name="image",
    help="Pin the node image in the stack config, so a newer Alibaba image never changes running nodes by itself.",
    no_args_is_help=True,
)


@image_app.command("pin")
@reports_user_errors
def pin(
    stack_config: Annotated[Path, typer.Option("--stack-config", help="The Pulumi.<stack>.yaml to pin the image in.")],
    image_id: Annotated[
        Optional[str],
        typer.Option("--image-id", help="Pin this ECS image ID (an upgrade on purpose, or a first deploy's image)."),
    ] = None,
    from_outputs: Annotated[
        Optional[Path],
        typer.Option(
            "--from-outputs",
            help="Pin the image the nodes booted: node_image in this stack's `pulumi stack output --json`.",
        ),
    ] = None,
    newest: Annotated[
        bool,
        typer.Option(
            "--newest",
            help="Pin the newest image `pulumi up` would resolve now: the program's filter, asked through "
            "`aliyun ecs DescribeImages` (each call printed first).",
        ),
    ] = False,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Write compute.image_id into the stack file (atomically; every other byte kept). Without it, only "
            "show the change.",
        ),
    ] = False,
) -> None:
    """Write compute.image_id into a stack config: from the stack's saved outputs, --image-id, or --newest.

    Prints the change to the aitrain:* keys; with --write, writes it atomically (secrets, comments and other keys
    kept byte for byte). Bad input — a missing file, a malformed image ID, outputs of another stack — is exit 2 and
    nothing is written.
    """
    from blueprints.architectures import spec_for, specs
    from blueprints.profile.image import checked_image_id, image_from_outputs
    from blueprints.profile.stackconfig import merge

    chosen = [name for name, given in (("--image-id", image_id), ("--from-outputs", from_outputs)) if given is not None]
    chosen += ["--newest"] if newest else []
    if len(chosen) != 1:
        raise UserInputError(
            "which image to pin",
            [
                Problem(
                    "--from-outputs / --image-id / --newest",
                    " and ".join(chosen) if chosen else MISSING,
                    "give exactly one: --from-outputs outputs.json (the image the nodes booted, saved with `pulumi "
                    "stack output --json` after the first `pulumi up`), --image-id ID, or --newest (what `pulumi "
                    "up` would resolve now)",
                )
            ],
        )
    wanted = checked_image_id(image_id, "--image-id") if image_id is not None else None
    stack = StackEdit.read(stack_config)
    source, existing, profile = stack.source, stack.existing, stack.profile
    elsewhere = specs()[profile.blueprint].foreign_node_image
    if elsewhere and not profile.access.login_node:
        raise UserInputError(
            f"nothing to pin in {source}",
            [
                Problem(
                    f"{source}: blueprint",
                    profile.blueprint,
                    f"{elsewhere}, not an image aitrain resolves; compute.image_id is used by a login node only "
                    "(access.login_node: true)",
                )
            ],
        )
    if from_outputs is not None:
        outputs_source = str(from_outputs)
        data = _read_outputs(from_outputs)
        wanted = image_from_outputs(
            data, outputs_source, blueprint=profile.blueprint, profile_name=profile.name, region=profile.region
        )
        pinned = profile.compute.image_id
        if pinned is not None and pinned != wanted:
            raise UserInputError(
                f"{source} pins another image",
                [
                    Problem(
                        f"{source}: compute.image_id",
                        pinned,
                        f"is already pinned, and {outputs_source} says the nodes booted {wanted}: choose one on "
                        "purpose with --image-id (the next `pulumi up` re-images the nodes when it differs from "
                        "what they run)",
                    )
                ],
            )
    if newest:
        row = stack.catalog.image_for(profile.region)
        if row is None:
            raise UserInputError(
                "no image pattern",
                [
                    Problem(
                        "--newest", profile.region, "the catalog has no image pattern for this region; use --image-id"
                    )
                ],
            )
        instance_type = spec_for(profile, stack.catalog, stack.today).instance.instance_type
        wanted = newest_image(profile.region, instance_type, row.name_regex)
    assert wanted is not None  # one of the three options gave it
    if profile.compute.image_id == wanted:
        typer.echo(f"{source}: compute.image_id is already pinned to {wanted}; nothing to change")
        return
    new_profile = merge(
        _profile_as_written(existing, source, stack.settings.profile), {"compute": {"image_id": wanted}}
    )
    _, merged, _ = stack.rewritten(new_profile)
    before = profile.compute.image_id or "(not pinned: the newest image at each `pulumi up`)"
    typer.echo(f"aitrain image pin: {profile.name} ({profile.blueprint}) — compute.image_id: {before} -> {wanted}")
    if not show_and_write(stack_config, existing, merged, "pinned", write=write):
        return
    after = (
        "nothing changes on the nodes the outputs describe"
        if from_outputs is not None
        else "nodes not already on it are stopped and re-imaged: check with `aitrain diff` (a first deploy boots it)"
    )
    typer.echo(f"wrote {source}. Next `pulumi up`: {after}; preview with `aitrain plan --stack-config {source}`")


_SAVE_OUTPUTS = "save them with `pulumi stack output --json > outputs.json` in the stack `pulumi up` built"


def _run(argv: list[str]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def newest_image(region: str, instance_type: str, name_regex: str, run: Runner | None = None) -> str:
    """The newest system image matching ``name_regex`` for ``instance_type``: each DescribeImages page printed, then
    run; a failed call or no match is exit 1 with nothing written, no aliyun CLI exit 2."""
    from blueprints.profile.image import (
        DESCRIBE_PAGE_SIZE,
        checked_image_id,
        describe_images_argv,
        described_images,
        newest_matching,
    )

    run = run or _run
    images: list[dict[str, Any]] = []
    page = 1
    while True:
        argv = describe_images_argv(region, instance_type, page)
        typer.echo(f"running: {shlex.join(argv)}")
        try:
            result = run(argv)
        except FileNotFoundError:
            raise UserInputError(
                "the aliyun CLI is not installed",
                [Problem("--newest", "aliyun", "not found on PATH; install and configure it, or pass --image-id")],
            ) from None
        if result.returncode != 0:
            typer.echo(f"failed (exit {result.returncode}): {shlex.join(argv)}\n{result.stderr.strip()}", err=True)
            raise typer.Exit(code=1)
        try:
            found, total = described_images(result.stdout)
        except (ValueError, RecursionError) as exc:
            typer.echo(f"cannot read the answer of {shlex.join(argv)}: {exc}", err=True)
            raise typer.Exit(code=1) from None
        images += found
        if len(found) < DESCRIBE_PAGE_SIZE or page * DESCRIBE_PAGE_SIZE >= total:
            break
        page += 1
    best = newest_matching(images, name_regex)
    if best is None:
        typer.echo(
            f"no system image for {instance_type} in {region} matches {name_regex} ({len(images)} listed); "
            "nothing written: pass --image-id",
            err=True,
        )
        raise typer.Exit(code=1)
    image_id = checked_image_id(str(best.get("ImageId")), "DescribeImages: ImageId")
    typer.echo(f"newest: {image_id} ({best.get('ImageName')}, created {best.get('CreationTime')})")
    return image_id


def _read_outputs(path: Path) -> Any:
    """The saved stack outputs (JSON); a missing, unreadable or non-JSON file is exit 2 naming --from-outputs."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "does not exist" if isinstance(exc, FileNotFoundError) else f"cannot be read ({exc})"
        raise UserInputError(
            "cannot read the stack outputs", [Problem("--from-outputs", str(path), f"{reason}; {_SAVE_OUTPUTS}")]
        ) from None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UserInputError(
            "invalid stack outputs", [Problem("--from-outputs", str(path), f"is not JSON ({exc}); {_SAVE_OUTPUTS}")]
        ) from None


def _profile_as_written(existing: str, source: str, decoded: dict[str, Any]) -> dict[str, Any]:
    """The ``aitrain:profile`` mapping in the file's own key order (the engine form sorts keys), so the pin adds one
    line instead of reordering the profile; ``decoded`` when the file holds it in another form."""
    from blueprints.core.yamlsafe import load
    from blueprints.profile.stackconfig import PROFILE_KEY

    document = load(existing, source)
    config = document.get("config") if isinstance(document, dict) else None
    written = config.get(PROFILE_KEY) if isinstance(config, dict) else None
    return written if isinstance(written, dict) and written == decoded else decoded


def register(app: typer.Typer) -> None:
    """Add ``image`` to ``app``."""
    app.add_typer(image_app)
