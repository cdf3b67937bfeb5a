"""What both job kinds of ``aitrain launch --kubernetes`` share: names, the torchrun command, the run's env, volumes,
tolerations, rendering. The stack's outputs are read by ``blueprints.launch.kubernetes_outputs``.

Nothing here runs a process or imports Pulumi: the CLI (``blueprints.cli.launch``) writes what ``render_job``
returns and, with ``--apply``, runs ``kubectl apply``. The outputs' ``job_api`` says which job the stack runs: a
TrainJob (Kubeflow Trainer v2, queued on Kueue: ``blueprints.launch.trainjob``) or a PyTorchJob (the legacy training
operator: ``blueprints.launch.pytorchjob``).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import yaml

from blueprints.bootstrap import SHUTDOWN_SECONDS
from blueprints.core.errors import UserInputError

# Re-exported (they were defined here; `aitrain check` and `aitrain runs` ask this module for a stack's job engine).
from blueprints.launch.kubernetes_outputs import KUBERNETES_ENGINE as KUBERNETES_ENGINE
from blueprints.launch.kubernetes_outputs import KubernetesOutputs
from blueprints.launch.kubernetes_outputs import job_engine_of as job_engine_of
from blueprints.launch.torchrun import launch_error

# Where the OSS bucket's claim is mounted in every pod (the shared file system keeps its node path, /mnt/shared).
BUCKET_MOUNT_PATH = "/mnt/data"
# Where a CPFS for Lingjun file system's claim is mounted in every pod (lingjun-cluster with cpfs: set).
CPFS_MOUNT_PATH = "/mnt/cpfs"
# Label that carries the run id on the job and on every pod it makes.
RUN_LABEL = "aitrain.io/run-id"
PROFILE_LABEL = "aitrain.io/profile"
# The eRDMA device the ack-erdma-controller advertises; one per pod gives it the node's ERIs
# (ready-to-train.md §7b: ACK "Use eRDMA to accelerate container networks").
ERDMA_RESOURCE = "aliyun/erdma"
GPU_RESOURCE = "nvidia.com/gpu"
# The RDMA device ACK's RDMA device plugin (ack-rdma-device-plugin) advertises on Lingjun nodes, and what a pod that
# uses it needs: "rdma/hca: 1", hostNetwork (RDMA without it needs an IPv6 Lingjun cluster) and the IPC_LOCK and
# SYS_RESOURCE capabilities (ACK "使用RDMA共享模式",
# https://help.aliyun.com/zh/ack/ack-managed-and-ack-dedicated/user-guide/use-rdma-shared-mode).
RDMA_DEVICE_RESOURCE = "rdma/hca"
RDMA_CAPABILITIES = ("IPC_LOCK", "SYS_RESOURCE")
# eRDMA pods use the node's network: "--hostNetwork true ensures that NCCL can reach the eRDMA device directly"
# (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/run-the-gdr-application-on-the-erdma-node-on-the-ack,
# 2026-03-26), and the ACK eRDMA doc's NCCL pod has hostNetwork: true (ready-to-train.md §2). A host-network pod
# resolves the rendezvous pod's name (a headless service's record) only with dnsPolicy ClusterFirstWithHostNet
# (Kubernetes "DNS for Services and Pods"). One pod per node (it takes every GPU), so a job's fixed ports (the
# operator's 23456, Trainer's 29500) cannot clash on a node.
ERDMA_HOST_NETWORK = True
# metadata.name of a PyTorchJob: the operator's webhook requires a DNS-1035 label (NameIsDNS1035Label); its pods add
# "-worker-<index>" to it, so 63 - len("-worker-") - 5 digits keeps every pod and service name a valid label.
# (A TrainJob's limit is lower: blueprints.launch.trainjob.MAX_TRAINJOB_NAME.)
MAX_JOB_NAME = 50
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_PYTHON = re.compile(r"(.*/)?python(3(\.\d+)?)?")


def refuse_torchrun_launch(blueprint: str, source: str) -> UserInputError:
    """The error for plain ``aitrain launch`` (torchrun on ECS nodes) on a stack whose jobs run on Kubernetes."""
    return launch_error(
        f"{source}: blueprint",
        blueprint,
        f"'{blueprint}' runs training jobs on Kubernetes: use `aitrain launch "
        f"--kubernetes --stack {source} --image IMAGE -- python train.py ...`",
    )


def check_job_name(name: str, max_length: int = MAX_JOB_NAME) -> str:
    """A job name is a DNS-1035 label short enough that the pod and service names made from it stay labels too."""
    if len(name) > max_length or not _DNS1035.fullmatch(name):
        raise launch_error(
            "--name",
            name,
            f"must be 1–{max_length} lowercase letters, digits or '-', starting with a letter and ending with a "
            "letter or digit (a DNS-1035 label), e.g. llama-sft",
        )
    return name


def default_job_name(profile_name: str, run_id: str, max_length: int = MAX_JOB_NAME) -> str:
    """``<profile>-<run id>`` made a DNS-1035 label (lowercase, ``._`` as ``-``), e.g. ``llama-20261201t093000z``."""
    return re.sub(r"[._]", "-", f"{profile_name}-{run_id}".lower())[:max_length].rstrip("-")


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


def check_run(name: str, image: str, run_id: str, max_length: int = MAX_JOB_NAME) -> None:
    """The job name, the run id (a label value on the job and its pods) and the image, before anything is built."""
    check_job_name(name, max_length)
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


def run_env(outputs: KubernetesOutputs, run_id: str) -> dict[str, str]:
    """What every pod of a run gets besides NCCL's settings: the run id, its checkpoints, torchrun's shutdown wait."""
    return {
        "AITRAIN_RUN_ID": run_id,
        "AITRAIN_CHECKPOINT_DIR": checkpoint_dir(outputs, run_id),
        "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": str(SHUTDOWN_SECONDS),
    }


def gpu_limits(gpus_per_node: int, fabric: str, rdma_device: str | None = None) -> dict[str, int]:
    """A pod's limits: every GPU of its node, on eRDMA one eRDMA device, with an RDMA device plugin one device."""
    limits = {GPU_RESOURCE: gpus_per_node}
    if fabric == "erdma":
        limits[ERDMA_RESOURCE] = 1
    if rdma_device:
        limits[rdma_device] = 1
    return limits


def host_network(fabric: str, rdma_device: str | None = None) -> dict[str, Any]:
    """The pod spec's network settings: the node's network on eRDMA (see ERDMA_HOST_NETWORK) and for an RDMA device
    plugin's device (RDMA_DEVICE_RESOURCE), else none."""
    if (fabric == "erdma" and ERDMA_HOST_NETWORK) or rdma_device:
        return {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"}
    return {}


def rdma_security(rdma_device: str | None) -> dict[str, Any]:
    """The container's securityContext for an RDMA device plugin's device (RDMA_CAPABILITIES), else none."""
    return {"securityContext": {"capabilities": {"add": list(RDMA_CAPABILITIES)}}} if rdma_device else {}


def toleration(taint: Mapping[str, str]) -> dict[str, str]:
    """The toleration of the GPU nodes' taint (Equal when it has a value, else Exists)."""
    return {**taint, "operator": "Equal" if "value" in taint else "Exists"}


def pod_storage(
    shared_claim: str, shared_mount_path: str, bucket_claim: str | None, cpfs_claim: str | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The container's volumeMounts and the pod's volumes: the shared file system, /dev/shm, the bucket if any, and a
    CPFS for Lingjun file system if any."""
    mounts = [{"name": "shared", "mountPath": shared_mount_path}, {"name": "dshm", "mountPath": "/dev/shm"}]
    volumes: list[dict[str, Any]] = [
        {"name": "shared", "persistentVolumeClaim": {"claimName": shared_claim}},
        # PyTorch's DataLoader workers and NCCL share memory through /dev/shm; a container's default is 64 MiB.
        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
    ]
    if bucket_claim is not None:
        mounts.append({"name": "data", "mountPath": BUCKET_MOUNT_PATH})
        volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": bucket_claim}})
    if cpfs_claim is not None:
        mounts.append({"name": "cpfs", "mountPath": CPFS_MOUNT_PATH})
        volumes.append({"name": "cpfs", "persistentVolumeClaim": {"claimName": cpfs_claim}})
    return mounts, volumes


def render_job(job: Mapping[str, Any]) -> str:
    """The manifest as YAML (block style, keys in the order built; every string quoted as YAML needs)."""
    return yaml.safe_dump(dict(job), sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)


def apply_argv(out: str | None) -> list[str]:
    """``kubectl apply`` of the written file, or of stdin (``-f -``) when no ``--out`` was given."""
    return ["kubectl", "apply", "-f", out if out is not None else "-"]
