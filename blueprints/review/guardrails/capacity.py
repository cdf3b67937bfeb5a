"""A fixed GPU cluster starts whole or not at all (AIT041): a `pulumi up` that runs out of stock part-way must not leave
nodes that cannot train together running and billing without the plan having said so.

What is all-or-nothing, by the API's own terms:
- one ``ecs.EcsInstanceSet`` is one RunInstances call for its ``amount``; without MinAmount, "if the inventory is
  insufficient, the API returns a creation failure, and no instances are created" (RunInstances, MinAmount, as the
  alibabacloud-ecs20140526 7.11.8 SDK documents it). Several sets (more than 100 nodes) are several calls;
- nodes that start from a private pool in Target mode (a capacity reservation or elasticity assurance in the plan)
  start from capacity already held, or fail without it (RunInstances PrivatePoolOptions.MatchCriteria ``Target``).
Separate ``ecs.Instance`` nodes without such a pool (an eRDMA cluster) are separate calls: a partial start is possible.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from blueprints.kinds import Role, has_role
from blueprints.review.guardrails.inputs import referenced
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan

GPU_CLUSTER = "aitrain:compute:GpuCluster"


def starts_whole(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT041: each fixed GPU cluster of two or more nodes starts in one call, or from capacity held in Target mode."""
    by_name = {r.name: r for r in plan.resources}
    for cluster in (r for r in plan.resources if r.type == GPU_CLUSTER):
        children = [r for r in plan.resources if r.parent == cluster.name]
        sets = [r for r in children if r.short_type == "ecs.EcsInstanceSet"]
        nodes = [r for r in children if r.short_type == "ecs.Instance"]
        if len(sets) > 1:
            total = sum(int(s.inputs.get("amount") or 0) for s in sets)
            yield (
                cluster.name,
                f"its {total} nodes start in {len(sets)} instance sets (RunInstances calls of at most 100): one that "
                "runs out of stock leaves the others running and billing",
            )
        unheld = [n for n in nodes if not _from_held_capacity(n.inputs, by_name)]
        if len(nodes) > 1 and unheld:
            yield (
                cluster.name,
                f"{len(unheld)} of its {len(nodes)} nodes are separate ecs.Instance calls without held capacity: a "
                "`pulumi up` that runs out of stock part-way leaves the nodes it started running and billing",
            )


def _from_held_capacity(inputs: Mapping[str, Any], by_name: Mapping[str, Any]) -> bool:
    pool = by_name.get(referenced(inputs.get("privatePoolOptionsId")) or "")
    held = pool is not None and has_role(pool.type, Role.CAPACITY_HOLD)
    return inputs.get("privatePoolOptionsMatchCriteria") == "Target" and held


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT041",
        "warning",
        "a fixed GPU cluster starts all its nodes or none",
        starts_whole,
        rationale=(
            "Partial provisioning is the second most reported capacity failure of cluster tools "
            "(https://github.com/GoogleCloudPlatform/cluster-toolkit/issues/1536, "
            "https://github.com/GoogleCloudPlatform/cluster-toolkit/issues/4058; ParallelCluster's all-or-nothing "
            "scaling, https://github.com/aws/aws-parallelcluster-node/pull/560): a cluster short of nodes cannot run "
            "its job but bills for the nodes it has. One RunInstances call without MinAmount creates all its "
            "instances or none; nodes in Target mode start only from capacity already held."
        ),
        fix=(
            "Add capacity.reservation: {kind: capacity_reservation} (a Target pool of the node count, created "
            "before any node; it bills only for reserved nodes no instance uses, 0 while every node runs), keep a "
            "cluster without eRDMA at 100 nodes or fewer, or skip AIT041 with a reason to accept a partial start"
        ),
    ),
)
