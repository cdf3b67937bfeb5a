"""The TrainJob (Kubeflow Trainer v2, ``trainer.kubeflow.org/v1alpha1``) of ``aitrain launch --kubernetes``, queued on
Kueue, and the TrainingRuntime (``torch_runtime``) a kubernetes-pool stack installs for it. Pure: no Pulumi.

The split: what every run of a stack shares is the runtime's (GPU node selector and toleration, the shared file
system and bucket claims, host network and NCCL settings for the fabric, the grace period); what one run asks for
is the TrainJob's (image, torchrun command, nodes, GPUs per node, the run's env and labels, its team's queue).

Facts relied on (kubeflow/trainer v2.3.0, commit 658725bd, vendored in blueprints/data/kubeflow/trainer-v2.3.0/):

- manifests/base/runtimes/torch_distributed.yaml: the torch runtime is ``mlPolicy {numNodes: 1, torch: {}}`` and a
  JobSet with one replicated job ``node`` whose Job template carries the label
  ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` and whose pod has a container named ``node``.
- pkg/constants/constants.go: LabelTrainJobAncestor, AncestorTrainer = "trainer", Node = "node" (the replicated
  job's and the trainer container's name), ContainerTrainerPort = 29500, TorchRunReservedEnvNames (PET_NNODES,
  PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT: a TrainJob must not set them).
- pkg/runtime/framework/plugins/torch/torch.go (EnforceMLPolicy): the torch plugin sets those five in the ``node``
  container: PET_NNODES = spec.trainer.numNodes, PET_NPROC_PER_NODE = spec.trainer.numProcPerNode (default "auto"),
  PET_NODE_RANK = the Job completion index, PET_MASTER_ADDR = ``<trainjob>-node-0-0.<trainjob>``,
  PET_MASTER_PORT = 29500; it has no elastic policy ("TODO: Add support for PyTorch elastic").
- pkg/apis/trainer/v1alpha1/trainingruntime_types.go: TorchMLPolicySource has only ``envInjection`` (no
  numProcPerNode at v2.3.0: it is the TrainJob's ``spec.trainer.numProcPerNode``); PodGroupPolicy is optional.
- pkg/apis/trainer/v1alpha1/trainjob_types.go: a TrainJob's name is a DNS-1035 label of at most 63 characters
  (CRD rules); runtimeRef.kind defaults to ClusterTrainingRuntime (so TrainingRuntime is spelt out);
  ``runtimePatches`` keyed by ``manager`` may set pod template labels.
- pkg/webhooks/trainingruntime_webhook.go: a replicated job with the ancestor label must have replicas 1 and the
  ``node`` container.
- pkg/runtime/core/trainingruntime.go (newRuntimeInfo): spec.trainer.resourcesPerNode is merged per key into the
  runtime's ``node`` container resources (pkg/util/trainingruntime/trainingruntime.go MergeResourceRequirements);
  the runtime's template metadata labels and runtimePatches are what reach the JobSet and pods (not the TrainJob's).
- pkg/runtime/framework/plugins/jobset/builder.go (Trainer): image, command and env of the TrainJob go to the
  ``node`` container of the ancestor-``trainer`` job (env upserted over the runtime's).

JobSet v0.12.0 (kubernetes-sigs/jobset): pkg/util/placement/placement.go names a Job ``<jobset>-<rjob>-<index>`` and
a pod ``<jobset>-<rjob>-<jobindex>-<podindex>``; pkg/webhooks/jobset_webhook.go defaults completionMode Indexed and
restartPolicy OnFailure and rejects a JobSet whose longest pod name + "-abcde" is not a DNS-1035 label. The JobSet
is named as the TrainJob.

Kueue v0.19.2 (kubernetes-sigs/kueue): pkg/controller/constants/constants.go QueueLabel =
``kueue.x-k8s.io/queue-name``, WorkloadPriorityClassLabel = ``kueue.x-k8s.io/priority-class``;
pkg/controller/jobs/trainjob/trainjob_webhook.go suspends a queued TrainJob and adds its own runtime patch (manager
``kueue.x-k8s.io/manager``), leaving other managers' patches alone (trainjob_controller.go getKueueRuntimePatch);
pkg/workload/resources.go (UseLimitsAsMissingRequestsInPod) counts a limit without a request as the request.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from blueprints.bootstrap import DEFAULT_MAX_RESTARTS, SHARED_MOUNT, SHUTDOWN_SECONDS, nccl_env
from blueprints.core.errors import MISSING, UserInputError, join_allowed
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
from blueprints.launch.kubernetes_outputs import FABRICS, TRAINER_API, KubernetesOutputs, TeamQueue, unknown_team
from blueprints.launch.torchrun import launch_error

__all__ = [
    "ANCESTOR_LABEL",
    "MAX_TRAINJOB_NAME",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "RUNTIME_NAME",
    "TEAM_LABEL",
    "TRAINER_API",
    "build_trainjob",
    "check_quota",
    "describe_trainjob",
    "follow_hint",
    "master_address",
    "refuse_team",
    "team_queue",
    "torch_runtime",
]

TRAINER_GROUP = "trainer.kubeflow.org"
RUNTIME_NAME = "aitrain-torch"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # Kueue v0.19.2 pkg/controller/constants/constants.go QueueLabel
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"  # same file, WorkloadPriorityClassLabel
TEAM_LABEL = "aitrain.io/team"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"  # Trainer v2.3.0 constants.LabelTrainJobAncestor
ANCESTOR_TRAINER = "trainer"  # constants.AncestorTrainer
NODE = "node"  # constants.Node: the trainer's replicated job and container
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"  # torch_distributed.yaml's runtime label
TRAINER_PORT = 29500  # constants.ContainerTrainerPort: PET_MASTER_PORT, the node container's port
# The manager of aitrain's runtime patch (the run's labels on every pod); a domain-prefixed path, as the JobSet
# plugin's Validate requires (pkg/runtime/framework/plugins/jobset/jobset.go @v2.3.0).
PATCH_MANAGER = "aitrain.io/launch"
# The JobSet (= TrainJob name) names pods <name>-node-0-<pod index>-<5 random>; JobSet's webhook requires that to be a
# DNS-1035 label: 63 - len("-node-0-") - 5 digits - len("-abcde") = 44.
MAX_TRAINJOB_NAME = 63 - len(f"-{NODE}-0-") - 5 - len("-abcde")


def torch_runtime(
    *,
    name: str,
    namespace: str,
    gpus_per_node: int,
    fabric: str,
    node_selector: dict[str, str],
    taint: dict[str, str],
    shared_claim: str,
    bucket_claim: str | None,
    labels: dict[str, str],
    shared_mount_path: str = SHARED_MOUNT,
    rdma_device: str | None = None,
    cpfs_claim: str | None = None,
) -> dict[str, Any]:
    """The namespaced TrainingRuntime the stack installs in the jobs' namespace: upstream's torch-distributed runtime
    with aitrain's pod settings (the same a PyTorchJob's pods get), deterministic for the same arguments.

    The ``node`` container has no image (every TrainJob gives ``spec.trainer.image``; aitrain launch always does)
    and asks for every GPU of its node (a TrainJob's resourcesPerNode is merged over this per resource). No
    podGroupPolicy: all-or-nothing admission is Kueue's waitForPodsReady.
    """
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, int) or gpus_per_node < 1:
        raise ValueError(f"gpus_per_node must be a whole number, 1 or more (got {gpus_per_node!r})")
    if fabric not in FABRICS:
        raise ValueError(f"fabric must be one of {join_allowed(FABRICS)} (got {fabric!r})")
    if not node_selector:
        raise ValueError("node_selector must not be empty: the runtime's pods run on the GPU node pool only")
    if not {"key", "effect"} <= taint.keys():
        raise ValueError(f"taint must have a key and an effect (got {taint!r})")
    mounts, volumes = pod_storage(shared_claim, shared_mount_path, bucket_claim, cpfs_claim)
    container = {
        "name": NODE,
        "env": [{"name": key, "value": value} for key, value in nccl_env(fabric).items()],
        "resources": {"limits": gpu_limits(gpus_per_node, fabric, rdma_device)},
        "volumeMounts": mounts,
        **rdma_security(rdma_device),
    }
    pod = {
        **host_network(fabric, rdma_device),
        "restartPolicy": "OnFailure",
        # torchrun waits TORCH_ELASTIC_SHUTDOWN_TIMEOUT (= SHUTDOWN_SECONDS) for its workers after SIGTERM.
        "terminationGracePeriodSeconds": SHUTDOWN_SECONDS,
        "nodeSelector": dict(node_selector),
        "tolerations": [toleration(taint)],
        "containers": [container],
        "volumes": volumes,
    }
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainingRuntime",
        "metadata": {"name": name, "namespace": namespace, "labels": {FRAMEWORK_LABEL: "torch", **labels}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": NODE,
                            "replicas": 1,
                            "template": {
                                "metadata": {"labels": {ANCESTOR_LABEL: ANCESTOR_TRAINER}},
                                "spec": {"template": {"spec": pod}},
                            },
                        }
                    ]
                }
            },
        },
    }


def refuse_team(outputs: KubernetesOutputs, team: str) -> UserInputError:
    """``--team`` on a stack of the legacy training operator: teams are Kueue queues of a Trainer stack."""
    return launch_error(
        "--team",
        team,
        f"teams and their Kueue queues need a Kubeflow Trainer stack, and {outputs.source} runs the legacy training "
        f"operator (job_api {outputs.job_api}, profile setting kubernetes.job_engine: training-operator-v1). To move: "
        "remove that setting (the default job_engine is trainer-v2), run `pulumi up`, save the outputs again; or drop "
        "--team",
    )


def team_queue(outputs: KubernetesOutputs, team: str | None) -> TeamQueue:
    """The team's queues: ``--team`` or the outputs' default team; an unknown team, or none on a stack without a
    default team (several teams), lists the stack's teams (exit 2)."""
    trainer = outputs.trainer
    if trainer is None:
        raise refuse_team(outputs, team or "")
    chosen = trainer.default_team if team is None else team
    if chosen is None:
        raise launch_error(
            "--team",
            MISSING,
            f"{outputs.source} has several teams and no default team (its default_team is null): name the team "
            f"whose Kueue queue and GPU quota the job joins, one of {join_allowed(trainer.queues)}",
        )
    if chosen not in trainer.queues:
        problem = unknown_team(outputs.source, chosen, trainer.queues, trainer.default_team)
        raise UserInputError("cannot launch (--team)", [problem])
    return trainer.queues[chosen]


def check_quota(outputs: KubernetesOutputs, queue: TeamQueue, nodes: int) -> None:
    """A job Kueue could never admit is refused: nodes × GPUs per node above the team's quota plus what it may borrow
    (no borrowing limit: the pool's max_gpus = max_nodes × gpus_per_node)."""
    per_node = outputs.gpus_per_node
    need = nodes * per_node
    pool = outputs.max_nodes * per_node
    if queue.borrowing_limit_gpus is None:
        limit = pool
        borrow = f"may borrow without limit, up to the pool's {pool} GPUs (max_nodes × gpus_per_node)"
    else:
        limit = queue.gpus + queue.borrowing_limit_gpus
        borrow = f"may borrow {queue.borrowing_limit_gpus} more ({limit} in all)"
    if need <= limit:
        return
    fit = limit // per_node
    advice = (
        f"use --nodes {fit} or fewer"
        if fit >= 1
        else f"it cannot run even one node of {per_node} GPUs: raise its quota or use another --team"
    )
    raise launch_error(
        "--nodes",
        nodes,
        f"{nodes} node{'s' if nodes != 1 else ''} × {per_node} GPUs = {need} GPUs is more than team '{queue.team}' "
        f"can ever be admitted with: its ClusterQueue '{queue.cluster_queue}' has a quota of {queue.gpus} GPUs and "
        f"{borrow}; {advice}",
    )


def master_address(name: str) -> str:
    """The rank-0 pod's name in the JobSet's headless service, as Trainer's torch plugin sets PET_MASTER_ADDR."""
    return f"{name}-{NODE}-0-0.{name}"


def build_trainjob(
    outputs: KubernetesOutputs,
    *,
    name: str,
    image: str,
    run_id: str,
    command: Sequence[str],
    team: str | None = None,
    nodes: int | None = None,
    max_restarts: int = DEFAULT_MAX_RESTARTS,
) -> dict[str, Any]:
    """The TrainJob for one run on the stack's TrainingRuntime, in its team's Kueue LocalQueue.

    torchrun runs as on ECS nodes and in the PyTorchJob: c10d rendezvous at the rank-0 pod's address (Trainer's
    PET_MASTER_ADDR, port 29500), fixed size (PET_NNODES = numNodes, set by Trainer), ``--max-restarts`` and the run
    id as rendezvous id, through torchrun's PET_<DEST> defaults (pytorch torch/distributed/argparse_util.py); none of
    them is reserved by Trainer. A restarted pod (restartPolicy OnFailure) rejoins the rendezvous. UNVERIFIED on a
    cluster: which pod hosts the c10d store under the host network (torch matches the endpoint to the pod's
    addresses), as for the PyTorchJob.
    """
    trainer = outputs.trainer
    if trainer is None:
        raise ValueError(f"{outputs.source} is a {outputs.job_api} stack: build its PyTorchJob instead")
    check_run(name, image, run_id, MAX_TRAINJOB_NAME)
    queue = team_queue(outputs, team)
    count = job_nodes(outputs, nodes)
    check_quota(outputs, queue, count)
    pod_labels = {RUN_LABEL: run_id, PROFILE_LABEL: outputs.profile_name, TEAM_LABEL: queue.team}
    labels = {**pod_labels, QUEUE_LABEL: queue.local_queue}
    if queue.priority_class is not None:
        labels[PRIORITY_LABEL] = queue.priority_class
    env = {
        **run_env(outputs, run_id),
        "PET_RDZV_BACKEND": "c10d",
        "PET_RDZV_ENDPOINT": f"{master_address(name)}:{TRAINER_PORT}",
        "PET_RDZV_ID": run_id,
        "PET_MAX_RESTARTS": str(max_restarts),
    }
    # JobSet's replicatedJobs[].template (a Job template) → spec.template (the pod template) → metadata.labels.
    patch = {"spec": {"template": {"metadata": {"labels": dict(pod_labels)}}}}
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": outputs.namespace, "labels": labels},
        "spec": {
            "runtimeRef": {"name": trainer.runtime, "apiGroup": TRAINER_GROUP, "kind": "TrainingRuntime"},
            "trainer": {
                "image": image,
                "command": torchrun_command(command),
                "numNodes": count,
                "numProcPerNode": outputs.gpus_per_node,
                "resourcesPerNode": {"limits": gpu_limits(outputs.gpus_per_node, outputs.fabric, outputs.rdma_device)},
                "env": [{"name": key, "value": value} for key, value in env.items()],
            },
            # The run's labels on every pod (a TrainJob's own labels stay on the TrainJob).
            "runtimePatches": [
                {
                    "manager": PATCH_MANAGER,
                    "trainingRuntimeSpec": {
                        "template": {"spec": {"replicatedJobs": [{"name": NODE, "template": patch}]}}
                    },
                }
            ],
        },
    }


def describe_trainjob(outputs: KubernetesOutputs, job: Mapping[str, Any]) -> str:
    """One line for the user: what the job asks for and where it queues."""
    meta, spec = job["metadata"], job["spec"]
    labels = meta["labels"]
    nodes = spec["trainer"]["numNodes"]
    extra = f", {ERDMA_RESOURCE} 1 per pod" if outputs.fabric == "erdma" else ""
    extra += f", {outputs.rdma_device} 1 per pod (host network)" if outputs.rdma_device else ""
    bucket = f", bucket at {BUCKET_MOUNT_PATH}" if outputs.bucket_claim else ""
    queue = outputs.trainer.queues[labels[TEAM_LABEL]] if outputs.trainer else None
    cluster = f", ClusterQueue {queue.cluster_queue}" if queue else ""
    priority = f", priority {labels[PRIORITY_LABEL]}" if PRIORITY_LABEL in labels else ""
    return (
        f"aitrain launch --kubernetes: TrainJob {meta['namespace']}/{meta['name']} on {outputs.profile_name} "
        f"({outputs.blueprint}, {outputs.region}): {nodes} node{'s' if nodes != 1 else ''} × {outputs.gpus_per_node} "
        f"GPUs, fabric {outputs.fabric}{extra}, shared at {outputs.shared_mount_path}{bucket}; team "
        f"{labels[TEAM_LABEL]} (queue {labels[QUEUE_LABEL]}{cluster}{priority}), runtime "
        f"{spec['runtimeRef']['name']}, run {labels[RUN_LABEL]}"
    )


def follow_hint(job: Mapping[str, Any]) -> str:
    """How to follow the job once applied: Kueue's workload (queued or admitted), its pods, the rank-0 logs."""
    meta = job["metadata"]
    ns, name, run = meta["namespace"], meta["name"], meta["labels"][RUN_LABEL]
    return (
        f"follow with: kubectl -n {ns} get trainjob {name}; kubectl -n {ns} get workloads (Kueue: queued or "
        f"admitted); kubectl -n {ns} get pods -l {RUN_LABEL}={run}; "
        f"kubectl -n {ns} logs -f -l {RUN_LABEL}={run} --prefix --max-log-requests {job['spec']['trainer']['numNodes']}"
    )
