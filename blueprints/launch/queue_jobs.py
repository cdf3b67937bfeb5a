"""The jobs of ``aitrain queue``: each Kueue Workload in the stack's namespace as a row, with its GPUs, its state and,
in Kueue's words, why it waits.

What is read, as Kueue v0.19.2 writes it (kubernetes-sigs/kueue @v0.19.2, ``apis/kueue/v1beta2/workload_types.go``),
one Workload per job: ``spec.queueName`` (the LocalQueue), ``spec.podSets[].count`` and ``.template`` (GPUs = count ×
the pod's ``nvidia.com/gpu``; Kueue stores the job's template as is, so a GPU given only as a limit counts as its
request, ``pkg/workload/resources.go`` UseLimitsAsMissingRequestsInPod), ``metadata.ownerReferences`` (the job),
``status.admission.clusterQueue``, ``status.requeueState`` and ``status.conditions``:

- ``QuotaReserved`` (False while it waits: reason ``Pending`` by default, or the finer ``WaitingForQuota``,
  ``ExceedsMaxQuota``… with the UnadmittedWorkloadsObservability gate, off by default in v0.19; the message is the
  scheduler's, e.g. "couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in
  flavor gpu, 8 more needed", pkg/scheduler/flavorassigner/flavorassigner.go), ``Admitted``, ``PodsReady``
  (reasons ``Started``, ``WaitForStart``, ``WaitForRecovery``, ``Recovered``);
- ``Evicted`` (reasons ``Preempted``, ``PodsReadyTimeout`` with "Exceeded the PodsReady timeout NS/NAME",
  ``AdmissionCheck``, ``ClusterQueueStopped``, ``Deactivated``…; pkg/controller/core/workload_controller.go),
  ``Requeued`` and ``Finished`` (reasons ``Succeeded``, ``Failed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from blueprints.launch.kubernetes import GPU_RESOURCE
from blueprints.launch.kubernetes_outputs import TeamQueue
from blueprints.launch.queue_answers import as_number, conditions, field, is_true, parse_quantity, text_of

__all__ = ["STATES", "JobRow", "job_row", "pod_gpus", "workload_gpus"]

# The states, in the order a job goes through them (the table sorts by it).
STATES = ("running", "admitted", "quota reserved", "pending", "evicted", "finished")


@dataclass(frozen=True)
class JobRow:
    """One job (one Kueue Workload): what it asks for, where it stands, and why it waits."""

    job_kind: str
    job_name: str
    workload: str
    team: str | None
    local_queue: str
    cluster_queue: str | None
    gpus: float
    state: str
    reason: str | None
    why: str
    since: str | None
    priority_class: str | None
    priority: int | None
    evictions: int
    requeue_at: str | None


def pod_gpus(template: Any) -> Decimal:
    """GPUs one pod of a pod template asks for: its containers' sum, or its largest init container when that is
    more (Kubernetes' effective request); a GPU given only as a limit is its request."""
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return Decimal(0)

    def of(container: Any) -> Decimal:
        resources = container.get("resources") if isinstance(container, dict) else None
        if not isinstance(resources, dict):
            return Decimal(0)
        for kind in ("requests", "limits"):
            values = resources.get(kind)
            if isinstance(values, dict) and GPU_RESOURCE in values:
                return parse_quantity(values[GPU_RESOURCE])
        return Decimal(0)

    containers, inits = spec.get("containers"), spec.get("initContainers")
    containers = containers if isinstance(containers, list) else []
    inits = inits if isinstance(inits, list) else []
    return max(sum((of(c) for c in containers), Decimal(0)), max((of(c) for c in inits), default=Decimal(0)))


def workload_gpus(workload: Mapping[str, Any]) -> Decimal:
    """GPUs the whole job asks for: Σ podSets count × GPUs per pod."""
    pod_sets = field(workload, "spec", "podSets")
    if not isinstance(pod_sets, list):
        return Decimal(0)
    total = Decimal(0)
    for pod_set in pod_sets:
        if isinstance(pod_set, dict):
            count = pod_set.get("count", 1)
            total += Decimal(count if isinstance(count, int) and not isinstance(count, bool) else 0) * pod_gpus(
                pod_set.get("template")
            )
    return total


def _owner(workload: Mapping[str, Any]) -> tuple[str, str]:
    owners = field(workload, "metadata", "ownerReferences")
    refs = [o for o in owners if isinstance(o, dict)] if isinstance(owners, list) else []
    owner = next((o for o in refs if o.get("controller") is True), refs[0] if refs else None)
    if owner is None:
        return "Workload", str(field(workload, "metadata", "name") or "?")
    return str(owner.get("kind") or "?"), str(owner.get("name") or "?")


def _state(workload: Mapping[str, Any]) -> tuple[str, str | None, str, str | None]:
    """(state, the deciding condition's reason, why it is there or waits, since when) from the conditions."""
    conds = conditions(workload)
    reserved, admitted, ready = conds.get("QuotaReserved"), conds.get("Admitted"), conds.get("PodsReady")
    evicted, finished = conds.get("Evicted"), conds.get("Finished")
    if is_true(finished):
        return (
            "finished",
            text_of(finished, "reason"),
            text_of(finished, "message") or "",
            text_of(finished, "lastTransitionTime"),
        )
    if is_true(evicted):
        return (
            "evicted",
            text_of(evicted, "reason"),
            _eviction_why(workload, conds),
            text_of(evicted, "lastTransitionTime"),
        )
    if is_true(admitted):
        if is_true(ready):
            return "running", text_of(ready, "reason"), "", text_of(ready, "lastTransitionTime")
        why = text_of(ready, "message") or "waiting for the pods to start"
        since = text_of(admitted, "lastTransitionTime")
        return "admitted", text_of(ready, "reason"), why, since
    if is_true(reserved):
        checks = field(workload, "status", "admissionChecks")
        waiting = [
            f"admission check {c.get('name')}: {c.get('state')}" + (f" ({c['message']})" if c.get("message") else "")
            for c in (checks if isinstance(checks, list) else [])
            if isinstance(c, dict) and c.get("state") != "Ready"
        ]
        why = "; ".join(waiting) or text_of(admitted, "message") or "quota reserved, not yet admitted"
        return "quota reserved", text_of(admitted, "reason"), why, text_of(reserved, "lastTransitionTime")
    created = field(workload, "metadata", "creationTimestamp")
    created = created if isinstance(created, str) else None
    if field(workload, "spec", "active") is False:
        return "pending", "Deactivated", "deactivated: spec.active is false (Kueue will not admit it)", created
    if reserved is None:
        return "pending", None, "not yet tried by Kueue (no QuotaReserved condition)", created
    since = text_of(reserved, "lastTransitionTime") or created
    return "pending", text_of(reserved, "reason"), text_of(reserved, "message") or "waiting for quota", since


def _eviction_why(workload: Mapping[str, Any], conds: Mapping[str, dict[str, Any]]) -> str:
    evicted, preempted = conds["Evicted"], conds.get("Preempted")
    parts = [text_of(evicted, "message") or f"evicted ({text_of(evicted, 'reason')})"]
    if is_true(preempted) and text_of(preempted, "message") not in parts:
        parts.append(f"{text_of(preempted, 'reason')}: {text_of(preempted, 'message')}")
    if _evictions(workload) > 1:
        parts.append(f"evicted {_evictions(workload)} times")
    requeue_at = field(workload, "status", "requeueState", "requeueAt")
    requeued = conds.get("Requeued")
    if isinstance(requeue_at, str) and not is_true(requeued):
        parts.append(f"back in the queue after {requeue_at}")
    elif is_true(requeued):
        parts.append("back in the queue")
    if field(workload, "spec", "active") is False:
        parts.append("deactivated (spec.active is false): Kueue will not admit it again until that is true")
    now_waiting = text_of(conds.get("QuotaReserved"), "message")
    if now_waiting and now_waiting not in parts[0] and not is_true(conds.get("QuotaReserved")):
        parts.append(f"now: {now_waiting}")
    return "; ".join(parts)


def _evictions(workload: Mapping[str, Any]) -> int:
    stats = field(workload, "status", "schedulingStats", "evictions")
    if isinstance(stats, list):
        return sum(s.get("count", 0) for s in stats if isinstance(s, dict) and isinstance(s.get("count"), int))
    count = field(workload, "status", "requeueState", "count")
    return count if isinstance(count, int) else 0


def job_row(workload: Mapping[str, Any], teams: Mapping[str, TeamQueue]) -> JobRow:
    """One Workload as a row: the job that owns it, its team (by its LocalQueue, else the ClusterQueue it is admitted
    to, among the stack's ``teams``), GPUs, state and why."""
    kind, name = _owner(workload)
    local = str(field(workload, "spec", "queueName") or "")
    admitted_in = field(workload, "status", "admission", "clusterQueue")
    by_local = {t.local_queue: t for t in teams.values()}
    by_cluster = {t.cluster_queue: t for t in teams.values()}
    team = by_local.get(local) or (by_cluster.get(admitted_in) if isinstance(admitted_in, str) else None)
    state, reason, why, since = _state(workload)
    priority_class = field(workload, "spec", "priorityClassRef", "name") or field(workload, "spec", "priorityClassName")
    priority = field(workload, "spec", "priority")
    requeue_at = field(workload, "status", "requeueState", "requeueAt")
    return JobRow(
        job_kind=kind,
        job_name=name,
        workload=str(field(workload, "metadata", "name") or "?"),
        team=team.team if team is not None else None,
        local_queue=local,
        cluster_queue=admitted_in
        if isinstance(admitted_in, str)
        else (team.cluster_queue if team is not None else None),
        gpus=as_number(workload_gpus(workload)),
        state=state,
        reason=reason,
        why=why,
        since=since,
        priority_class=priority_class if isinstance(priority_class, str) else None,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
        evictions=_evictions(workload),
        requeue_at=requeue_at if isinstance(requeue_at, str) else None,
    )
