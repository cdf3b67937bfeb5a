"""The teams' queues of ``aitrain queue``: each team's Kueue ClusterQueue as the cluster has it (quota, use,
borrowing), beside what the stack's outputs say, with a note wherever the two differ.

What is read, as Kueue v0.19.2 writes it (kubernetes-sigs/kueue @v0.19.2, ``apis/kueue/v1beta2/clusterqueue_types.go``):
``spec.resourceGroups[].flavors[].resources[]`` (``nominalQuota``, ``borrowingLimit``), ``spec.cohortName`` and
``status``: ``flavorsUsage`` (admitted; ``total`` and ``borrowed``), ``flavorsReservation`` (quota reserved),
``pendingWorkloads``, ``reservingWorkloads``, ``admittedWorkloads`` and the ``Active`` condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from blueprints.launch.kubernetes import GPU_RESOURCE
from blueprints.launch.kubernetes_outputs import TeamQueue
from blueprints.launch.queue_answers import as_number, conditions, field, is_true, parse_quantity, text_of

__all__ = ["QueueUsage", "queue_usage"]


@dataclass(frozen=True)
class QueueUsage:
    """One team's ClusterQueue: its quota and use, as the cluster says, beside what the stack's outputs say."""

    team: str
    default: bool
    local_queue: str
    cluster_queue: str
    stack_gpus: int
    stack_borrowing_limit_gpus: int | None
    found: bool
    cohort: str | None
    nominal_gpus: float | None
    # None with a cohort: no limit (it may borrow all the cohort's idle quota); 0 without a cohort.
    borrowing_limit_gpus: float | None
    used_gpus: float
    reserved_gpus: float
    borrowed_gpus: float
    pending_workloads: int
    reserving_workloads: int
    admitted_workloads: int
    active: bool | None
    notes: tuple[str, ...]


def _gpu_sum(usages: Any, key: str) -> Decimal:
    total = Decimal(0)
    for flavor in usages if isinstance(usages, list) else []:
        resources = flavor.get("resources") if isinstance(flavor, dict) else None
        for resource in resources if isinstance(resources, list) else []:
            if isinstance(resource, dict) and resource.get("name") == GPU_RESOURCE and key in resource:
                total += parse_quantity(resource[key])
    return total


def _quota(cluster_queue: Mapping[str, Any]) -> tuple[Decimal | None, Decimal | None]:
    """(nominal GPUs, borrowing limit in GPUs or None for no limit) over the ClusterQueue's flavors."""
    nominal: Decimal | None = None
    limit: Decimal | None = Decimal(0)
    unlimited = False
    groups = field(cluster_queue, "spec", "resourceGroups")
    for group in groups if isinstance(groups, list) else []:
        flavors = group.get("flavors") if isinstance(group, dict) else None
        for flavor in flavors if isinstance(flavors, list) else []:
            resources = flavor.get("resources") if isinstance(flavor, dict) else None
            for resource in resources if isinstance(resources, list) else []:
                if not isinstance(resource, dict) or resource.get("name") != GPU_RESOURCE:
                    continue
                nominal = (nominal or Decimal(0)) + parse_quantity(resource.get("nominalQuota", 0))
                if resource.get("borrowingLimit") is None:
                    unlimited = True
                else:
                    limit = (limit or Decimal(0)) + parse_quantity(resource["borrowingLimit"])
    return nominal, None if unlimited else limit


def queue_usage(team: TeamQueue, cluster_queues: Mapping[str, Mapping[str, Any]], default: bool) -> QueueUsage:
    """The team's ClusterQueue as the cluster has it, with notes where it differs from the stack's outputs."""
    found = cluster_queues.get(team.cluster_queue)
    notes: list[str] = []
    if found is None:
        notes.append(
            f"ClusterQueue {team.cluster_queue} is not in the cluster: is kubectl's current context this stack's "
            "cluster, and has `pulumi up` run?"
        )
        return QueueUsage(
            team.team, default, team.local_queue, team.cluster_queue, team.gpus, team.borrowing_limit_gpus,
            False, None, None, None, 0, 0, 0, 0, 0, 0, None, tuple(notes),
        )  # fmt: skip
    cohort = field(found, "spec", "cohortName") or field(found, "spec", "cohort")
    nominal, limit = _quota(found)
    if not cohort:
        limit = Decimal(0)
    raw_status = found.get("status")
    status: Mapping[str, Any] = raw_status if isinstance(raw_status, dict) else {}
    active_cond = conditions(found).get("Active")
    active = None if active_cond is None else is_true(active_cond)
    if active is False:
        notes.append(
            f"ClusterQueue {team.cluster_queue} is inactive ({text_of(active_cond, 'reason')}): "
            f"{text_of(active_cond, 'message') or 'it admits nothing'}"
        )
    if nominal is None:
        notes.append(f"ClusterQueue {team.cluster_queue} has no {GPU_RESOURCE} quota: it cannot admit a GPU job")
    elif nominal != team.gpus:
        notes.append(
            f"ClusterQueue {team.cluster_queue} has a nominal quota of {as_number(nominal)} GPUs, the stack's outputs "
            f"say {team.gpus}: run `pulumi up` (or save the outputs again)"
        )
    stack_limit = team.borrowing_limit_gpus
    same = (limit is None and stack_limit is None) or (
        limit is not None and stack_limit is not None and limit == stack_limit
    )
    if cohort and not same:
        shown = "no limit" if limit is None else f"{as_number(limit)} GPUs"
        said = "no limit" if stack_limit is None else f"{stack_limit} GPUs"
        notes.append(
            f"ClusterQueue {team.cluster_queue} may borrow {shown}, the stack's outputs say {said}: run `pulumi up` "
            "(or save the outputs again)"
        )

    def count(key: str) -> int:
        value = status.get(key, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return QueueUsage(
        team=team.team,
        default=default,
        local_queue=team.local_queue,
        cluster_queue=team.cluster_queue,
        stack_gpus=team.gpus,
        stack_borrowing_limit_gpus=stack_limit,
        found=True,
        cohort=str(cohort) if cohort else None,
        nominal_gpus=None if nominal is None else as_number(nominal),
        borrowing_limit_gpus=None if limit is None else as_number(limit),
        used_gpus=as_number(_gpu_sum(status.get("flavorsUsage"), "total")),
        reserved_gpus=as_number(_gpu_sum(status.get("flavorsReservation"), "total")),
        borrowed_gpus=as_number(_gpu_sum(status.get("flavorsUsage"), "borrowed")),
        pending_workloads=count("pendingWorkloads"),
        reserving_workloads=count("reservingWorkloads"),
        admitted_workloads=count("admittedWorkloads"),
        active=active,
        notes=tuple(notes),
    )
