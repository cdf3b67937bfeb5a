"""A kubernetes-pool stack's outputs, checked: what ``aitrain launch --kubernetes`` and ``aitrain queue`` read.

Pure: which blueprints run jobs on Kubernetes is passed in (``{name: job_engine}`` from the registry), so this module
does not import the registry (which imports Pulumi).

The outputs' ``job_api`` says which job the stack runs: ``trainer.kubeflow.org/v1alpha1`` (the default engine,
Kubeflow Trainer v2 on JobSet, queued on Kueue) or ``kubeflow.org/v1`` (the legacy training operator v1.9.0, profile
setting ``kubernetes.job_engine: training-operator-v1``). Trainer stacks also name their TrainingRuntime and their
teams' Kueue queues: ``queues`` = ``{team: {local_queue, cluster_queue, gpus, borrowing_limit_gpus,
priority_class}}`` and ``default_team`` (the team a job without ``--team`` joins; null when the stack has several
teams, so that a job must name one). ``KubernetesOutputsReader.teams`` is the one reader of those two keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from blueprints.core.errors import MISSING, Problem, UserInputError, did_you_mean, join_allowed
from blueprints.launch.outputs import SAFE_PATH, OutputsReader
from blueprints.launch.torchrun import REGION_ID, launch_error, outputs_blueprint

__all__ = [
    "FABRICS",
    "JOB_API",
    "KUBERNETES_ENGINE",
    "TRAINER_API",
    "KubernetesOutputs",
    "KubernetesOutputsReader",
    "TeamQueue",
    "TrainerOutputs",
    "job_engine_of",
    "kubernetes_blueprints",
    "parse_kubernetes_outputs",
    "unknown_team",
]

# The legacy training operator's API group/version (a PyTorchJob).
JOB_API = "kubeflow.org/v1"
# Kubeflow Trainer v2's API group/version (pkg/apis/trainer/v1alpha1/groupversion_info.go @kubeflow/trainer v2.3.0).
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
KUBERNETES_ENGINE = "kubernetes"
FABRICS = ("erdma", "roce", "tcp")
_DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# A DNS-1123 label of at most 63 characters: a valid name and a valid label value (team, queue, priority class).
_NAME_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_VERSION = re.compile(r"v\d+\.\d+\.\d+")
# An extended resource name: a DNS subdomain prefix, a slash, a name (Kubernetes "Extended resources").
_RESOURCE_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_QUEUE_EXAMPLE = "{ml: {local_queue: ml, cluster_queue: ml, gpus: 16, borrowing_limit_gpus: 8, priority_class: null}}"


@dataclass(frozen=True)
class TeamQueue:
    """One team's Kueue queues on a Trainer stack: its LocalQueue (in the jobs' namespace) and its ClusterQueue's quota.

    ``borrowing_limit_gpus`` None: the team may borrow without limit (what its cohort lends); ``priority_class``: a
    Kueue WorkloadPriorityClass every job of the team is labelled with, or None.
    """

    team: str
    local_queue: str
    cluster_queue: str
    gpus: int
    borrowing_limit_gpus: int | None
    priority_class: str | None


@dataclass(frozen=True)
class TrainerOutputs:
    """What a Trainer v2 stack adds to its outputs: its release, its TrainingRuntime and its teams' queues
    (``default_team`` None: the stack has several teams and a job must name one)."""

    version: str
    runtime: str
    queues: dict[str, TeamQueue]
    default_team: str | None


@dataclass(frozen=True)
class KubernetesOutputs:
    """The parts of a kubernetes-pool stack's outputs that a job needs, checked."""

    source: str
    blueprint: str
    profile_name: str
    region: str
    namespace: str
    max_nodes: int
    nodes_per_job: int
    gpus_per_node: int
    fabric: str
    shared_claim: str
    shared_mount_path: str
    bucket_claim: str | None
    node_selector: dict[str, str]
    taint: dict[str, str]
    operator_version: str | None  # the training operator's release (kubeflow.org/v1 stacks only)
    job_api: str = JOB_API
    trainer: TrainerOutputs | None = None  # trainer.kubeflow.org/v1alpha1 stacks only
    # The RDMA device plugin's resource every pod asks for one of (lingjun-cluster: rdma/hca); None: no such plugin.
    rdma_device: str | None = None
    # A CPFS for Lingjun file system's claim (lingjun-cluster with cpfs: set); None: none.
    cpfs_claim: str | None = None


def job_engine_of(data: Any, source: str, engines: Mapping[str, str]) -> str:
    """The job engine of the blueprint that wrote these outputs
    (``torchrun`` or ``kubernetes``); exit 2 when unknown."""
    blueprint = outputs_blueprint(data, source, engines)
    return engines[blueprint]


def kubernetes_blueprints(engines: Mapping[str, str]) -> tuple[str, ...]:
    """The blueprints whose jobs run on Kubernetes (``aitrain launch --kubernetes``)."""
    return tuple(name for name, engine in engines.items() if engine == KUBERNETES_ENGINE)


def parse_kubernetes_outputs(data: Any, source: str, engines: Mapping[str, str]) -> KubernetesOutputs:
    """Check one outputs document for ``--kubernetes``; every
    problem is reported at once (key, value, what is allowed)."""
    engine = job_engine_of(data, source, engines)
    blueprint = data["blueprint"]
    if engine != KUBERNETES_ENGINE:
        raise launch_error(
            "--kubernetes",
            blueprint,
            f"the stack {source} is a '{blueprint}' stack, whose jobs run with "
            "torchrun on its nodes (`aitrain launch` without --kubernetes); "
            f"--kubernetes needs a stack of {join_allowed(kubernetes_blueprints(engines))}",
        )
    problems: list[Problem] = []
    get = KubernetesOutputsReader(data, source, problems)
    profile = get.text("profile_name", _DNS1123, "a profile name (lowercase letters, digits, hyphens)")
    region = get.text("region", REGION_ID, "a region ID such as cn-shanghai")
    namespace = get.namespace()
    max_nodes = get.count("max_nodes")
    per_job = get.count("nodes_per_job")
    gpus = get.count("gpus_per_node")
    fabric = get.choice("fabric", FABRICS)
    shared = get.text("shared_volume_claim", _DNS1123, "a PersistentVolumeClaim name")
    mount = get.text("shared_mount_path", SAFE_PATH, "an absolute path such as /mnt/shared")
    bucket = get.text("bucket_volume_claim", _DNS1123, "a PersistentVolumeClaim name", required=False)
    selector = get.labels("gpu_node_selector")
    taint = get.labels("gpu_taint")
    rdma_device = get.text("rdma_device", _RESOURCE_NAME, "an extended resource name such as rdma/hca", required=False)
    cpfs = get.text("cpfs_volume_claim", _DNS1123, "a PersistentVolumeClaim name", required=False)
    api = get.choice("job_api", (JOB_API, TRAINER_API))
    operator = trainer = None
    if api == JOB_API:
        operator = get.text("training_operator_version", _VERSION, "a release tag such as v1.9.0")
    elif api == TRAINER_API:
        trainer = _trainer_outputs(get)
    if taint is not None and not {"key", "effect"} <= taint.keys():
        problems.append(
            Problem(
                f"{source}: gpu_taint",
                taint,
                "must have a key and an effect (and usually a value), e.g. "
                "{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}",
            )
        )
    if max_nodes is not None and per_job is not None and per_job > max_nodes:
        problems.append(
            Problem(
                f"{source}: nodes_per_job",
                per_job,
                f"is greater than max_nodes ({max_nodes}); re-run `pulumi up`, then save the outputs again",
            )
        )
    if problems:
        raise UserInputError(f"cannot launch from {source}", problems)
    assert (
        profile
        and region
        and namespace
        and max_nodes
        and per_job
        and gpus
        and fabric
        and shared
        and mount
        and selector is not None
        and taint is not None
        and api
        and (operator or trainer)
    )
    return KubernetesOutputs(
        source,
        blueprint,
        profile,
        region,
        namespace,
        max_nodes,
        per_job,
        gpus,
        fabric,
        shared,
        mount,
        bucket,
        selector,
        taint,
        operator,
        api,
        trainer,
        rdma_device,
        cpfs,
    )


def _trainer_outputs(get: KubernetesOutputsReader) -> TrainerOutputs | None:
    """The Trainer stack's keys: its release, TrainingRuntime, teams' queues and default team (None, with problems)."""
    version = get.text("trainer_version", _VERSION, "a release tag such as v2.3.0")
    runtime = get.text("training_runtime", _DNS1123, "a TrainingRuntime name such as aitrain-torch")
    teams = get.teams()
    if version is None or runtime is None or teams is None:
        return None
    return TrainerOutputs(version, runtime, *teams)


def unknown_team(source: str, team: str, queues: Mapping[str, TeamQueue], default_team: str | None) -> Problem:
    """``--team`` naming no team of the stack: the problem lists its teams (and its default team, if any)."""
    default = f" (default {default_team})" if default_team is not None else ""
    return Problem(
        "--team",
        team,
        f"is not a team of {source}: one of {join_allowed(queues)}{default}; each team has its own Kueue queue and "
        "GPU quota",
        did_you_mean(team, queues),
    )


class KubernetesOutputsReader(OutputsReader):
    """The stack outputs' reader, plus the kinds of value a Kubernetes stack's outputs hold."""

    def namespace(self) -> str | None:
        """``kubernetes_namespace``: where the jobs, their LocalQueues and Kueue's Workloads are."""
        return self.text("kubernetes_namespace", _DNS1123, "a Kubernetes namespace (a DNS-1123 label)")

    def count(self, key: str) -> int | None:
        value = self._raw(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self._wrong(key, value, "a whole number, 1 or more")
            return None
        return value

    def choice(self, key: str, allowed: Sequence[str]) -> str | None:
        value = self._raw(key)
        if value is None:
            return None
        if not isinstance(value, str) or value not in allowed:
            self._wrong(key, value, f"one of {join_allowed(tuple(allowed))}")
            return None
        return str(value)

    def labels(self, key: str) -> dict[str, str] | None:
        value = self._raw(key)
        if value is None:
            return None
        if (
            not isinstance(value, dict)
            or not value
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            self._wrong(key, value, "a non-empty mapping of strings to strings")
            return None
        return dict(value)

    def teams(self) -> tuple[dict[str, TeamQueue], str | None] | None:
        """``queues`` and ``default_team`` (which may be null: no default, a job names its team); None when either
        is missing or wrong, with its problems."""
        before = len(self.problems)
        queues = self.queues("queues")
        team = self.text("default_team", _NAME_LABEL, "a team name (a DNS-1123 label of at most 63 characters)")
        if queues is not None and team is not None and team not in queues:
            self._wrong("default_team", team, f"one of the teams in queues: {join_allowed(queues)}")
        if queues is None or len(self.problems) > before:
            return None
        return queues, team

    def queues(self, key: str) -> dict[str, TeamQueue] | None:
        """``{team: {local_queue, cluster_queue, gpus, borrowing_limit_gpus, priority_class}}``, each checked."""
        value = self._raw(key)
        if value is None and (key not in self.data or self.data[key] is not None):
            return None  # missing or secret: _raw said so
        if not isinstance(value, dict) or not value:
            self._wrong(key, value, f"a non-empty mapping of team names to their Kueue queues, e.g. {_QUEUE_EXAMPLE}")
            return None
        before = len(self.problems)
        teams: dict[str, TeamQueue] = {}
        for team, entry in value.items():
            where = f"{key}.{team}"
            if not isinstance(team, str) or not _NAME_LABEL.fullmatch(team):
                self._wrong(where, team, "named by a DNS-1123 label of at most 63 characters (it labels the jobs)")
                continue
            if not isinstance(entry, dict):
                self._wrong(where, entry, f"a mapping like {_QUEUE_EXAMPLE}")
                continue
            local = self._name(entry, f"{where}.local_queue", "a LocalQueue name", required=True)
            cluster = self._name(entry, f"{where}.cluster_queue", "a ClusterQueue name", required=True)
            gpus = self._gpus(entry, f"{where}.gpus", required=True)
            borrow = self._gpus(entry, f"{where}.borrowing_limit_gpus", required=False)
            priority = self._name(entry, f"{where}.priority_class", "a WorkloadPriorityClass name", required=False)
            if local is not None and cluster is not None and gpus is not None:
                teams[team] = TeamQueue(team, local, cluster, gpus, borrow, priority)
        return teams if len(self.problems) == before else None

    def _name(self, entry: dict[str, Any], where: str, what: str, *, required: bool) -> str | None:
        value = entry.get(where.rsplit(".", 1)[1])
        if value is None:
            if required:
                self.problems.append(Problem(f"{self.source}: {where}", MISSING, f"must be {what} (is missing)"))
            return None
        if not isinstance(value, str) or not _NAME_LABEL.fullmatch(value):
            self._wrong(where, value, f"{what}: a DNS-1123 label of at most 63 characters")
            return None
        return value

    def _gpus(self, entry: dict[str, Any], where: str, *, required: bool) -> int | None:
        key = where.rsplit(".", 1)[1]
        value = entry.get(key)
        if value is None:
            if required:
                self.problems.append(
                    Problem(f"{self.source}: {where}", MISSING, "must be a number of GPUs (is missing)")
                )
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            allowed = "a whole number of GPUs, 0 or more" + ("" if required else " (null: may borrow without limit)")
            self._wrong(where, value, allowed)
            return None
        return value
