"""The pure half of ``aitrain queue``: who waits for GPUs on a kubernetes-pool stack, and why, as Kueue says it.

A kubernetes-pool stack with the default job engine (Kubeflow Trainer v2) installs Kueue v0.19.2 and gives each team a
LocalQueue in the jobs' namespace that feeds its own ClusterQueue (a GPU quota in one cohort, which may borrow what the
others leave idle). Its outputs say which: ``queues`` and ``default_team``, read by the reader
``aitrain launch --kubernetes`` uses (``blueprints.launch.kubernetes_outputs``). The CLI (``blueprints.cli.queue``)
runs two read-only calls, ``kubectl get workloads.kueue.x-k8s.io -n NS -o json`` and
``kubectl get clusterqueues.kueue.x-k8s.io -o json``; ``build_report`` reads their answers into one report: the
jobs (``blueprints.launch.queue_jobs``) and the teams' queues (``blueprints.launch.queue_usage``), shown by
``blueprints.launch.queue_render``. Nothing here runs a process.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Mapping

from blueprints.core.errors import MISSING, Problem, UserInputError, join_allowed
from blueprints.launch.kubernetes_outputs import (
    JOB_API,
    KUBERNETES_ENGINE,
    TRAINER_API,
    KubernetesOutputsReader,
    TeamQueue,
    job_engine_of,
    kubernetes_blueprints,
    unknown_team,
)
from blueprints.launch.queue_answers import KubectlAnswerError, field, kubectl_items
from blueprints.launch.queue_jobs import STATES, JobRow, job_row
from blueprints.launch.queue_usage import QueueUsage, queue_usage

__all__ = [
    "CLUSTER_QUEUES",
    "KUEUE_VERSION",
    "WORKLOADS",
    "QueueOutputs",
    "QueueReport",
    "build_report",
    "check_team",
    "cluster_queues_argv",
    "parse_queue_outputs",
    "workloads_argv",
]

KUEUE_VERSION = "v0.19.2"
WORKLOADS = "workloads.kueue.x-k8s.io"
CLUSTER_QUEUES = "clusterqueues.kueue.x-k8s.io"


@dataclass(frozen=True)
class QueueOutputs:
    """The parts of a kubernetes-pool stack's outputs that ``aitrain queue`` reads, checked."""

    source: str
    blueprint: str
    namespace: str
    teams: dict[str, TeamQueue]
    default_team: str | None


@dataclass(frozen=True)
class QueueReport:
    """Everything ``aitrain queue`` shows: the teams' queues and their jobs."""

    namespace: str
    team: str | None
    queues: list[QueueUsage]
    jobs: list[JobRow]
    now: str | None


def parse_queue_outputs(data: Any, source: str, engines: Mapping[str, str]) -> QueueOutputs:
    """Check the outputs for ``aitrain queue``: a kubernetes-pool stack with ``queues``; exit 2, naming every
    problem, otherwise."""
    engine = job_engine_of(data, source, engines)
    blueprint = data["blueprint"]
    if engine != KUBERNETES_ENGINE:
        raise UserInputError(
            f"no queues in {source}",
            [
                Problem(
                    f"{source}: blueprint",
                    blueprint,
                    f"a '{blueprint}' stack runs its jobs with torchrun on its own nodes and has no job queue; "
                    f"`aitrain queue` reads the `queues` output of {join_allowed(kubernetes_blueprints(engines))} "
                    f"stacks (Kueue {KUEUE_VERSION}); for this stack's runs use `aitrain runs --stack {source}`",
                )
            ],
        )
    problems: list[Problem] = []
    reader = KubernetesOutputsReader(data, source, problems)
    namespace = reader.namespace()
    if "queues" in data:
        teams = reader.teams()
    else:
        problems.append(_no_queues(data, source, blueprint))
        teams = None
    if problems:
        raise UserInputError(f"cannot read the queues of {source}", problems)
    assert namespace is not None and teams is not None
    return QueueOutputs(source, blueprint, namespace, *teams)


def _no_queues(data: dict[str, Any], source: str, blueprint: str) -> Problem:
    """The outputs of a stack made before queues, or of a legacy training-operator stack: what to run to get them."""
    legacy = data.get("job_api") == JOB_API
    return Problem(
        f"{source}: queues",
        MISSING,
        f"missing: the teams' Kueue queues are an output of {blueprint} stacks with the default job engine "
        f"(Kubeflow Trainer v2, job_api {TRAINER_API}) queued on Kueue {KUEUE_VERSION}, from this aitrain "
        "version on; "
        + (
            f"this stack runs the legacy training operator (job_api {JOB_API}, profile setting "
            "kubernetes.job_engine: training-operator-v1): remove that setting, "
            if legacy
            else "this stack was made by an older aitrain: "
        )
        + "run `pulumi up` with this aitrain version, then save the outputs again with "
        "`pulumi stack output --json`",
    )


def check_team(outputs: QueueOutputs, team: str | None) -> str | None:
    """``--team``: one of the outputs' teams (exit 2 listing them otherwise)."""
    if team is None or team in outputs.teams:
        return team
    raise UserInputError("unknown team", [unknown_team(outputs.source, team, outputs.teams, outputs.default_team)])


def workloads_argv(namespace: str) -> list[str]:
    """The read-only call for the namespace's Kueue Workloads."""
    return ["kubectl", "get", WORKLOADS, "-n", namespace, "-o", "json"]


def cluster_queues_argv() -> list[str]:
    """The read-only call for the cluster's ClusterQueues (cluster-scoped)."""
    return ["kubectl", "get", CLUSTER_QUEUES, "-o", "json"]


def build_report(
    outputs: QueueOutputs,
    workloads_answer: str,
    cluster_queues_answer: str,
    *,
    team: str | None = None,
    now: dt.datetime | None = None,
) -> QueueReport:
    """Both kubectl answers read into the report (only ``team``'s queue and jobs when given)."""
    workloads = kubectl_items(workloads_answer, WORKLOADS)
    by_name = {str(field(cq, "metadata", "name")): cq for cq in kubectl_items(cluster_queues_answer, CLUSTER_QUEUES)}
    try:
        rows = [job_row(w, outputs.teams) for w in workloads]
        queues = [
            queue_usage(t, by_name, t.team == outputs.default_team)
            for t in outputs.teams.values()
            if team is None or t.team == team
        ]
    except (KeyError, TypeError, AttributeError) as exc:
        raise KubectlAnswerError(f"an unexpected shape ({type(exc).__name__}: {exc})") from None
    if team is not None:
        rows = [r for r in rows if r.team == team]
    order = {name: index for index, name in enumerate(outputs.teams)}
    rows.sort(key=lambda r: (order.get(r.team or "", len(order)), STATES.index(r.state), r.since or "", r.job_name))
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if now is not None else None
    return QueueReport(outputs.namespace, team, queues, rows, stamp)
