"""The pure half of ``aitrain launch --kubernetes``: check a kubernetes-pool stack's outputs, build its PyTorchJob.

Nothing here runs a process or imports Pulumi: the CLI (``blueprints.cli.launch``) writes what ``render_job``
returns and, with ``--apply``, runs ``kubectl apply``. Which blueprints run jobs on Kubernetes is passed in
(``{name: job_engine}`` from the registry), so this module does not import the registry (which imports Pulumi).

The job follows the Kubeflow training operator v1.9.0 (the CRD vendored in
``blueprints/data/kubeflow/training-operator-v1.9.0/``): one pod per node, a ``Master`` replica (exactly 1; it is
rank 0 and its service ``<job>-master-0`` is the rendezvous address) and ``Worker`` replicas for the other nodes
(at least 1 when present, so a one-node job has no Worker). ``spec.nprocPerNode`` = GPUs per node and the
container runs ``torchrun``: the operator sets ``PET_NNODES``, ``PET_NODE_RANK``, ``PET_NPROC_PER_NODE``,
``PET_MASTER_ADDR`` and ``PET_MASTER_PORT``, which torchrun reads as its defaults (pytorch/pytorch
torch/distributed/argparse_util.py, class ``env``: an argument's default is ``PET_<DEST>``). Sources
(kubeflow/training-operator @6f74c7f6b2ed6c27aabd82d0a316b23f0646059c): pkg/controller.v1/pytorch/envvar.go
(setPodEnv), master.go, pkg/webhooks/pytorch/pytorchjob_webhook.go (Master replicas must be 1, Worker ≥ 1,
a container named ``pytorch``, job name a DNS-1035 label), examples/pytorch/cpu-demo/demo.yaml ("Make the
nprocPerNode part consistent with the gpu resource declaration").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import yaml

from blueprints.bootstrap import DEFAULT_MAX_RESTARTS, SHUTDOWN_SECONDS, nccl_env
from blueprints.core.errors import Problem, UserInputError, join_allowed
from blueprints.launch.torchrun import (
    REGION_ID,
    SAFE_PATH,
    OutputsReader,
    launch_error,
    outputs_blueprint,
)

JOB_API = "kubeflow.org/v1"
KUBERNETES_ENGINE = "kubernetes"
# The operator's required container name (PyTorchJobDefaultContainerName, pytorch_types.go @v1.9.0).
CONTAINER_NAME = "pytorch"
# Where the OSS bucket's claim is mounted in every pod (the shared file system keeps its node path, /mnt/shared).
BUCKET_MOUNT_PATH = "/mnt/data"
# Label that carries the run id on the job and on every pod it makes.
RUN_LABEL = "aitrain.io/run-id"
PROFILE_LABEL = "aitrain.io/profile"
# The eRDMA device the ack-erdma-controller advertises; one per pod gives it the node's ERIs
# (ready-to-train.md §7b: ACK "Use eRDMA to accelerate container networks").
ERDMA_RESOURCE = "aliyun/erdma"
GPU_RESOURCE = "nvidia.com/gpu"
# eRDMA pods use the node's network: "--hostNetwork true ensures that NCCL can reach the eRDMA device directly"
# (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/run-the-gdr-application-on-the-erdma-node-on-the-ack,
# 2026-03-26), and the ACK eRDMA doc's NCCL pod has hostNetwork: true (ready-to-train.md §2). A host-network pod
# resolves the Master's service (<job>-master-0) only with dnsPolicy ClusterFirstWithHostNet (Kubernetes "DNS for
# Services and Pods"). One pod per node (it takes every GPU), so the operator's port 23456 cannot clash on a node.
ERDMA_HOST_NETWORK = True
FABRICS = ("erdma", "roce", "tcp")
# metadata.name: the operator's webhook requires a DNS-1035 label (NameIsDNS1035Label); its pods add
# "-worker-<index>" to it, so 63 - len("-worker-") - 5 digits keeps every pod and service name a valid label.
MAX_JOB_NAME = 50
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_VERSION = re.compile(r"v\d+\.\d+\.\d+")
_PYTHON = re.compile(r"(.*/)?python(3(\.\d+)?)?")


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
    operator_version: str


def job_engine_of(data: Any, source: str, engines: Mapping[str, str]) -> str:
    """The job engine of the blueprint that wrote these outputs
    (``torchrun`` or ``kubernetes``); exit 2 when unknown."""
    blueprint = outputs_blueprint(data, source, engines)
    return engines[blueprint]


def kubernetes_blueprints(engines: Mapping[str, str]) -> tuple[str, ...]:
    """The blueprints whose jobs run on Kubernetes (``aitrain launch --kubernetes``)."""
    return tuple(name for name, engine in engines.items() if engine == KUBERNETES_ENGINE)


def refuse_torchrun_launch(blueprint: str, source: str) -> UserInputError:
    """The error for plain ``aitrain launch`` (torchrun on ECS nodes) on a stack whose jobs run on Kubernetes."""
    return launch_error(
        f"{source}: blueprint",
        blueprint,
        f"'{blueprint}' runs training jobs on Kubernetes: use `aitrain launch "
        f"--kubernetes --stack {source} --image IMAGE -- python train.py ...`",
    )


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
    get = _Reader(data, source, problems)
    profile = get.text("profile_name", _DNS1123, "a profile name (lowercase letters, digits, hyphens)")
    region = get.text("region", REGION_ID, "a region ID such as cn-shanghai")
    namespace = get.text("kubernetes_namespace", _DNS1123, "a Kubernetes namespace (a DNS-1123 label)")
    max_nodes = get.count("max_nodes")
    per_job = get.count("nodes_per_job")
    gpus = get.count("gpus_per_node")
    fabric = get.choice("fabric", FABRICS)
    shared = get.text("shared_volume_claim", _DNS1123, "a PersistentVolumeClaim name")
    mount = get.text("shared_mount_path", SAFE_PATH, "an absolute path such as /mnt/shared")
    bucket = get.text("bucket_volume_claim", _DNS1123, "a PersistentVolumeClaim name", required=False)
    selector = get.labels("gpu_node_selector")
    taint = get.labels("gpu_taint")
    api = get.text("job_api", re.compile(re.escape(JOB_API)), f"'{JOB_API}' (the job API this aitrain writes)")
    operator = get.text("training_operator_version", _VERSION, "a release tag such as v1.9.0")
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
        and operator
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
    )


def check_job_name(name: str) -> str:
    """A job name is a DNS-1035 label short enough that the operator's pod and service names stay labels too."""
    if len(name) > MAX_JOB_NAME or not _DNS1035.fullmatch(name):
        raise launch_error(
            "--name",
            name,
            f"must be 1–{MAX_JOB_NAME} lowercase letters, digits or '-', starting with a letter and ending with a "
            "letter or digit (a DNS-1035 label), e.g. llama-sft",
        )
    return name


def default_job_name(profile_name: str, run_id: str) -> str:
    """``<profile>-<run id>`` made a DNS-1035 label (lowercase, ``._`` as ``-``), e.g. ``llama-20261201t093000z``."""
    return re.sub(r"[._]", "-", f"{profile_name}-{run_id}".lower())[:MAX_JOB_NAME].rstrip("-")


def job_nodes(outputs: KubernetesOutputs, nodes: int | None) -> int:
    """Nodes (= pods) of the job: ``--nodes`` or the outputs' ``nodes_per_job``, between 1 and ``max_nodes``."""
    count = outputs.nodes_per_job if nodes is None else nodes
    if not 1 <= count <= outputs.max_nodes:
        raise launch_error(
            "--nodes",
            count,
            f"must be 1 to {outputs.max_nodes} (the GPU pool's "
            f"max_nodes in {outputs.source}); one pod runs on each node",
        )
    return count


def torchrun_command(command: Sequence[str]) -> list[str]:
    """The container command: the user's command under ``torchrun``, as the ECS launcher (aitrain-torchrun) runs it.

    ``python SCRIPT ARGS`` and ``python -m MODULE ARGS`` become ``torchrun SCRIPT ARGS`` / ``torchrun -m MODULE
    ARGS``; anything else runs with ``torchrun --no-python``. A list, never a shell line: nothing is interpreted.
    """
    if not command:
        raise launch_error(
            "CMD",
            [],
            "give the command to run after --, e.g. `aitrain launch --kubernetes "
            "--stack outputs.json --image IMAGE -- python train.py --epochs 10`",
        )
    first, rest = command[0], list(command[1:])
    if not _PYTHON.fullmatch(first):
        return ["torchrun", "--no-python", *command]
    if not rest or (rest[0] == "-m" and len(rest) < 2):
        raise launch_error(
            "CMD", list(command), "python needs a script or -m MODULE, e.g. `python train.py` or `python -m pkg.train`"
        )
    if rest[0].startswith("-") and rest[0] != "-m":
        raise launch_error(
            "CMD",
            list(command),
            f"python option '{rest[0]}' is not supported; torchrun runs 'python "
            "SCRIPT' or 'python -m MODULE' (set PYTHON* variables instead)",
        )
    return ["torchrun", *rest]


def checkpoint_dir(outputs: KubernetesOutputs, run_id: str) -> str:
    """The run's ``AITRAIN_CHECKPOINT_DIR`` in the pods: on the shared volume, as on ECS nodes."""
    return f"{outputs.shared_mount_path.rstrip('/')}/.aitrain/checkpoints/{run_id}"


def build_job(
    outputs: KubernetesOutputs,
    *,
    name: str,
    image: str,
    run_id: str,
    command: Sequence[str],
    nodes: int | None = None,
    max_restarts: int = DEFAULT_MAX_RESTARTS,
) -> dict[str, Any]:
    """The PyTorchJob (``kubeflow.org/v1``) for one run: a Master
    pod and ``nodes - 1`` Worker pods, one per GPU node.

    ``elasticPolicy`` gives torchrun the same elastic agent as on ECS nodes: c10d rendezvous, a fixed size
    (min = max = nodes) and ``maxRestarts``; the operator turns it into PET_RDZV_BACKEND, PET_NNODES=min:max,
    PET_MAX_RESTARTS, PET_RDZV_ID and PET_RDZV_ENDPOINT (pkg/controller.v1/pytorch/elastic.go @v1.9.0). With
    ``restartPolicy: OnFailure`` a failed pod is restarted in place and rejoins the rendezvous. UNVERIFIED: which
    pod hosts the c10d store when the pods use the host network (torch matches the endpoint to the pod's hostname).
    """
    check_job_name(name)
    if len(run_id) > 63 or not _LABEL_VALUE.fullmatch(run_id):
        raise launch_error(
            "--run-id",
            run_id,
            "labels the job's pods, so must be 1–63 letters, digits, "
            "'.', '_' or '-', starting and ending with a letter or digit",
        )
    if not image.strip() or any(c.isspace() for c in image):
        raise launch_error(
            "--image",
            image,
            "must be a container image reference without spaces, e.g. "
            "registry.cn-shanghai.aliyuncs.com/team/train:2026-11",
        )
    count = job_nodes(outputs, nodes)
    container_command = torchrun_command(command)
    labels = {RUN_LABEL: run_id, PROFILE_LABEL: outputs.profile_name}
    run_env = {
        "AITRAIN_RUN_ID": run_id,
        "AITRAIN_CHECKPOINT_DIR": checkpoint_dir(outputs, run_id),
        "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": str(SHUTDOWN_SECONDS),
    }
    replicas: dict[str, Any] = {"Master": _replica(outputs, 1, image, container_command, labels, run_env)}
    if count > 1:
        replicas["Worker"] = _replica(outputs, count - 1, image, container_command, labels, run_env)
    return {
        "apiVersion": JOB_API,
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": outputs.namespace, "labels": dict(labels)},
        "spec": {
            "elasticPolicy": {
                "rdzvBackend": "c10d",
                "rdzvId": run_id,
                "minReplicas": count,
                "maxReplicas": count,
                "maxRestarts": max_restarts,
            },
            "nprocPerNode": str(outputs.gpus_per_node),
            "pytorchReplicaSpecs": replicas,
        },
    }


def _replica(
    outputs: KubernetesOutputs,
    replicas: int,
    image: str,
    command: list[str],
    labels: dict[str, str],
    run_env: dict[str, str],
) -> dict[str, Any]:
    limits: dict[str, Any] = {GPU_RESOURCE: outputs.gpus_per_node}
    if outputs.fabric == "erdma":
        limits[ERDMA_RESOURCE] = 1
    mounts = [{"name": "shared", "mountPath": outputs.shared_mount_path}, {"name": "dshm", "mountPath": "/dev/shm"}]
    volumes: list[dict[str, Any]] = [
        {"name": "shared", "persistentVolumeClaim": {"claimName": outputs.shared_claim}},
        # PyTorch's DataLoader workers and NCCL share memory through /dev/shm; a container's default is 64 MiB.
        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
    ]
    if outputs.bucket_claim is not None:
        mounts.append({"name": "data", "mountPath": BUCKET_MOUNT_PATH})
        volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": outputs.bucket_claim}})
    env = [{"name": key, "value": value} for key, value in {**nccl_env(outputs.fabric), **run_env}.items()]
    pod: dict[str, Any] = {}
    if outputs.fabric == "erdma" and ERDMA_HOST_NETWORK:
        pod = {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"}
    return {
        "replicas": replicas,
        "restartPolicy": "OnFailure",
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                **pod,
                "nodeSelector": dict(outputs.node_selector),
                "tolerations": [{**outputs.taint, "operator": "Equal" if "value" in outputs.taint else "Exists"}],
                "containers": [
                    {
                        "name": CONTAINER_NAME,
                        "image": image,
                        "command": list(command),
                        "env": env,
                        "resources": {"limits": limits},
                        "volumeMounts": mounts,
                    }
                ],
                "volumes": volumes,
            },
        },
    }


def render_job(job: Mapping[str, Any]) -> str:
    """The manifest as YAML (block style, keys in the order built; every string quoted as YAML needs)."""
    return yaml.safe_dump(dict(job), sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)


def apply_argv(out: str | None) -> list[str]:
    """``kubectl apply`` of the written file, or of stdin (``-f -``) when no ``--out`` was given."""
    return ["kubectl", "apply", "-f", out if out is not None else "-"]


def describe(outputs: KubernetesOutputs, job: Mapping[str, Any]) -> str:
    """One line for the user: what the job asks for."""
    spec = job["spec"]["pytorchReplicaSpecs"]
    nodes = sum(r["replicas"] for r in spec.values())
    extra = f", {ERDMA_RESOURCE} 1 per pod" if outputs.fabric == "erdma" else ""
    bucket = f", bucket at {BUCKET_MOUNT_PATH}" if outputs.bucket_claim else ""
    return (
        "aitrain launch --kubernetes: PyTorchJob "
        f"{job['metadata']['namespace']}/{job['metadata']['name']} on {outputs.profile_name} "
        f"({outputs.blueprint}, {outputs.region}): {nodes} node{'s' if nodes != 1 else ''} × {outputs.gpus_per_node} "
        f"GPUs, fabric {outputs.fabric}{extra}, "
        f"shared at {outputs.shared_mount_path}{bucket}, run {job['metadata']['labels'][RUN_LABEL]}"
    )


class _Reader(OutputsReader):
    """The torchrun launch's outputs reader, plus the kinds of value a Kubernetes stack's outputs hold."""

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
        if value not in allowed:
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
