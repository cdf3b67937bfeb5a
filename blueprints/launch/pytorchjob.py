"""The PyTorchJob (``kubeflow.org/v1``) of ``aitrain launch --kubernetes`` on a legacy stack
(``kubernetes.job_engine: training-operator-v1``, kept one release behind Kubeflow Trainer v2).

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

from typing import Any, Mapping, Sequence

from blueprints.bootstrap import DEFAULT_MAX_RESTARTS, nccl_env
from blueprints.launch.kubernetes import (
    BUCKET_MOUNT_PATH,
    ERDMA_RESOURCE,
    PROFILE_LABEL,
    RUN_LABEL,
    check_run,
    gpu_limits,
    host_network,
    job_nodes,
    pod_storage,
    rdma_security,
    run_env,
    toleration,
    torchrun_command,
)
from blueprints.launch.kubernetes_outputs import JOB_API, KubernetesOutputs

# The operator's required container name (PyTorchJobDefaultContainerName, pytorch_types.go @v1.9.0).
CONTAINER_NAME = "pytorch"


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
    check_run(name, image, run_id)
    count = job_nodes(outputs, nodes)
    container_command = torchrun_command(command)
    labels = {RUN_LABEL: run_id, PROFILE_LABEL: outputs.profile_name}
    env = run_env(outputs, run_id)
    replicas: dict[str, Any] = {"Master": _replica(outputs, 1, image, container_command, labels, env)}
    if count > 1:
        replicas["Worker"] = _replica(outputs, count - 1, image, container_command, labels, env)
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
    env_values: dict[str, str],
) -> dict[str, Any]:
    mounts, volumes = pod_storage(
        outputs.shared_claim, outputs.shared_mount_path, outputs.bucket_claim, outputs.cpfs_claim
    )
    env = [{"name": key, "value": value} for key, value in {**nccl_env(outputs.fabric), **env_values}.items()]
    return {
        "replicas": replicas,
        "restartPolicy": "OnFailure",
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                **host_network(outputs.fabric, outputs.rdma_device),
                "nodeSelector": dict(outputs.node_selector),
                "tolerations": [toleration(outputs.taint)],
                "containers": [
                    {
                        "name": CONTAINER_NAME,
                        "image": image,
                        "command": list(command),
                        "env": env,
                        "resources": {"limits": gpu_limits(outputs.gpus_per_node, outputs.fabric, outputs.rdma_device)},
                        **rdma_security(outputs.rdma_device),
                        "volumeMounts": mounts,
                    }
                ],
                "volumes": volumes,
            },
        },
    }


def describe(outputs: KubernetesOutputs, job: Mapping[str, Any]) -> str:
    """One line for the user: what the job asks for."""
    spec = job["spec"]["pytorchReplicaSpecs"]
    nodes = sum(r["replicas"] for r in spec.values())
    extra = f", {ERDMA_RESOURCE} 1 per pod" if outputs.fabric == "erdma" else ""
    extra += f", {outputs.rdma_device} 1 per pod (host network)" if outputs.rdma_device else ""
    bucket = f", bucket at {BUCKET_MOUNT_PATH}" if outputs.bucket_claim else ""
    return (
        "aitrain launch --kubernetes: PyTorchJob "
        f"{job['metadata']['namespace']}/{job['metadata']['name']} on {outputs.profile_name} "
        f"({outputs.blueprint}, {outputs.region}): {nodes} node{'s' if nodes != 1 else ''} × {outputs.gpus_per_node} "
        f"GPUs, fabric {outputs.fabric}{extra}, "
        f"shared at {outputs.shared_mount_path}{bucket}, run {job['metadata']['labels'][RUN_LABEL]}"
    )
