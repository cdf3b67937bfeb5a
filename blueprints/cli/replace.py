"""The ``replace-node`` command: replace exactly the named nodes of a fixed cluster on the next `pulumi up`.

It raises each node's generation in ``compute.replace_nodes`` of the stack file (atomically, every other byte kept,
as `aitrain park --write` does); the program turns a generation into a tag on that node's ``ecs.Instance`` and
Pulumi's ``replace_on_changes`` on that node only, so the plan and `aitrain diff` show just those nodes replaced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from blueprints.cli.support import StackEdit, reports_user_errors, show_and_write
from blueprints.core.errors import Problem, UserInputError

# What replaces a node where aitrain cannot replace one alone (nodes in ecs.EcsInstanceSet batches): ECS's own
# per-instance operations. RedeployInstance migrates an instance to a healthy physical server and restarts it, but
# only when ECS has sent it a system event (https://www.alibabacloud.com/help/en/ecs/api-redeployinstance).
_BATCH_ALTERNATIVE = (
    "instead, for a node ECS has sent a system event: `aliyun ecs RedeployInstance --InstanceId <id>` (moves it to a "
    "healthy physical server, same ID and IP); otherwise `aliyun ecs RebootInstance --InstanceId <id> --ForceStop "
    "true`; to rebuild every node on purpose, `aitrain park --write`, `pulumi up`, then `aitrain park --resume N "
    "--write`, `pulumi up`"
)


def replace_node(
    nodes: Annotated[
        list[str],
        typer.Argument(
            help="Node names as the plan shows them: node-000, node-001, … (one or more).", show_default=False
        ),
    ],
    stack_config: Annotated[Path, typer.Option("--stack-config", help="The Pulumi.<stack>.yaml of a fixed cluster.")],
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help=(
                "Write the change into the stack file (atomically; every "
                "other byte kept). Without it, only show the change."
            ),
        ),
    ] = False,
) -> None:
    """Replace exactly the named nodes of a fixed cluster on the next `pulumi up`; nothing else changes.

    Raises each node's generation in compute.replace_nodes; `pulumi up` then deletes that node and creates a new one
    (delete-first, ~10–20 min until it is ready), the storage, the bucket and every other node untouched. Only eRDMA
    clusters, whose nodes are one ecs.Instance each; a node name the cluster does not have is refused.
    """
    from blueprints.architectures import spec_for, specs
    from blueprints.architectures.fixed_cluster.spec import FixedCompute, node_names
    from blueprints.profile.stackconfig import merge

    stack = StackEdit.read(stack_config)
    source, settings, catalog, profile = stack.source, stack.settings, stack.catalog, stack.profile
    refusal = _refusal(profile, specs(), catalog)
    if refusal is not None:
        raise UserInputError(f"cannot replace nodes of {source}", [refusal])
    compute = profile.compute
    assert isinstance(compute, FixedCompute)  # _refusal let only fixed clusters through
    allowed = node_names(compute.nodes)
    # The plan and the cloud name a node by its resource name (<profile>-cluster-node-003): that name works too.
    prefix = f"{spec_for(profile, catalog, stack.today).compute_unit_name}-"
    nodes = [n.removeprefix(prefix) for n in nodes]
    unknown = [n for n in nodes if n not in allowed]
    if unknown:
        raise UserInputError(
            f"cannot replace nodes of {source}",
            [
                Problem(
                    "NODE",
                    ", ".join(unknown),
                    f"is not a node of {profile.name} ({compute.nodes} nodes); allowed: {', '.join(allowed)}",
                )
            ],
        )
    current: dict[str, int] = dict(compute.replace_nodes)
    wanted = {name: current.get(name, 0) + 1 for name in dict.fromkeys(nodes)}
    new_profile = merge(settings.profile, {"compute": {"replace_nodes": {**current, **wanted}}})
    # The changed profile must still be valid before anything is written (the same check `pulumi up` makes).
    _, merged, _ = stack.rewritten(new_profile)
    summary = "; ".join(f"compute.replace_nodes.{n}: {current.get(n, '(none)')} -> {g}" for n, g in wanted.items())
    typer.echo(f"aitrain replace-node: {profile.name} ({profile.blueprint}) — {summary}")
    if not show_and_write(stack_config, stack.existing, merged, f"replace {', '.join(wanted)}", write=write):
        return
    typer.echo(
        f"wrote {source}. Next: `pulumi up` replaces {', '.join(wanted)} (delete first, then a new node boots: "
        f"~10–20 min); preview with `aitrain plan --stack-config {source}`"
    )


def _refusal(profile: Any, blueprints: dict[str, Any], catalog: Any) -> Problem | None:
    """Why this profile's nodes cannot be replaced one by one, or None when they can."""
    blueprint = blueprints[profile.blueprint]
    if not blueprint.replaces_named_nodes:
        named = ", ".join(n for n, s in sorted(blueprints.items()) if s.replaces_named_nodes)
        return Problem(
            "blueprint",
            profile.blueprint,
            f"replace-node is for {named} stacks; {profile.blueprint}: {blueprint.node_repair}",
        )
    if profile.compute.nodes == 0:
        return Problem("compute.nodes", 0, "the cluster is parked: it has no nodes (`aitrain park --resume N` first)")
    if not profile.one_instance_per_node(catalog):
        return Problem(
            "compute.instance_type",
            profile.compute.instance_type,
            f"has no eRDMA and the cluster no capacity.reservation, so its {profile.compute.nodes} nodes come from "
            "ecs.EcsInstanceSet batches of up to 100; "
            "Pulumi can replace a batch only whole (every node in it), never one of its instances, so aitrain will "
            f"not promise to replace one node; {_BATCH_ALTERNATIVE}",
        )
    return None


def register(app: typer.Typer) -> None:
    """Add ``replace-node`` to ``app``."""
    app.command("replace-node")(reports_user_errors(replace_node))
