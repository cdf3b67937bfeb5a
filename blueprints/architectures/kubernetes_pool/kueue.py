"""The Kueue objects a kubernetes-pool stack creates from its ``queues`` section, as plain manifests (pure: no Pulumi),
the vendored Kueue manager configuration set for them, and the plain-data summary the plan shows.

Every Kueue fact below cites the file of kubernetes-sigs/kueue at the vendored tag (v0.19.2,
``blueprints/data/kueue/kueue-v0.19.2/SOURCE.md``); the objects use the storage version, kueue.x-k8s.io/v1beta2.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

import yaml

from blueprints.architectures.kubernetes_pool.queues import DEFAULT_TEAM, QueueSettings, Team
from blueprints.launch.kubernetes import ERDMA_RESOURCE, GPU_RESOURCE
from blueprints.launch.trainjob import PRIORITY_LABEL, QUEUE_LABEL

API_VERSION = "kueue.x-k8s.io/v1beta2"
# ERDMA_RESOURCE: the eRDMA device the ack-erdma-controller advertises, which every eRDMA job pod asks for. Kueue
# refuses a workload that requests a resource its ClusterQueue does not cover ("resource %s unavailable in
# ClusterQueue", pkg/scheduler/flavorassigner/flavorassigner.go@v0.19.2; "By default, administrators must specify all
# resources required by Pods", site/content/en/docs/tasks/manage/administer_cluster_quotas.md@v0.19.2), so the device is
# left out of quota accounting by prefix (resources.excludeResourcePrefixes, a strings.HasPrefix match in
# pkg/workload/workload.go@v0.19.2 dropExcludedResources): one per pod, never the scarce resource.
# The order every flavor lists its resources in, as coveredResources does (a ResourceGroup's flavors "MUST list all the
# resources listed for this group in the same order", apis/kueue/v1beta2/clusterqueue_types.go@v0.19.2).
COVERED_RESOURCES = ("cpu", "memory", GPU_RESOURCE)
NAMESPACE_LABEL = "kubernetes.io/metadata.name"  # set by Kubernetes on every namespace
MANAGED_LABELS = {"app.kubernetes.io/managed-by": "aitrain"}

# The job kinds Kueue admits (Integrations.frameworks, apis/config/v1beta2/configuration_types.go@v0.19.2):
# TrainJob (Kubeflow Trainer v2, the default engine; site/content/en/docs/tasks/run/trainjobs.md), PyTorchJob (the
# legacy training operator v1, still an engine here; deprecated in Kueue, "tentatively" removed in v0.20,
# site/content/en/docs/tasks/run/kubeflow/pytorchjobs.md), JobSet (what a TrainJob runs, and a job kind of its own)
# and batch/job. An integration whose CRD is absent (the other engine's) is deferred until it appears
# (pkg/controller/jobframework/setup.go@v0.19.2, "deferring setting up controller"). The vendored defaults' pod,
# deployment and statefulset integrations are left out on purpose: with manageJobsWithoutQueueName they would hold
# every bare pod in the jobs' namespace (a debugging shell, a notebook) until it named a queue and fitted the GPU
# flavor.
FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob", "trainer.kubeflow.org/trainjob")

# waitForPodsReady (apis/config/v1beta2/configuration_types.go@v0.19.2 WaitForPodsReady): v1beta2 has no `enable`
# field; the block being present turns it on (pkg/util/waitforpodsready/waitforpodsready.go@v0.19.2 Enabled: cfg !=
# nil). blockAdmission stays false: it admits workloads one at a time until each is ready
# (site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md@v0.19.2), which here would hold every team's jobs
# while one job's nodes are bought and booted (minutes per scale-out). The deadlock it prevents needs two admitted
# jobs that the nodes cannot hold together; the quotas here add up to exactly the pool's max_nodes, so that happens
# only when the autoscaler cannot buy nodes (stock), and then the timeout evicts and requeues with backoff instead.
BLOCK_ADMISSION = False
# Requeue an evicted job at the back of its queue (Eviction, Kueue's default) after 60 s, 120 s, 240 s… (at most an
# hour: Kueue's defaults, apis/config/v1beta2/defaults.go@v0.19.2), and deactivate it after 5 timeouts: a job whose
# pods can never start (a wrong image, a stock-out) would otherwise take its quota, scale the pool up and time out
# for ever, paying for GPU nodes each time (backoffLimitCount null = endless; a deactivated workload is reactivated
# by setting its .spec.active, site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md@v0.19.2).
REQUEUE_BACKOFF_LIMIT = 5
REQUEUE_BACKOFF_BASE_SECONDS = 60
REQUEUE_BACKOFF_MAX_SECONDS = 3600

# Preemption (apis/kueue/v1beta2/clusterqueue_types.go@v0.19.2 ClusterQueuePreemption): a team's nominal quota is its
# guarantee, so when it needs GPUs it lent, it takes them back from any borrower whatever its priority
# (reclaimWithinCohort Any: "if the pending Workload fits within the nominal quota of its ClusterQueue, preempt any
# Workload in the cohort"); within a team, a higher-priority job may evict a lower one (withinClusterQueue
# LowerPriority). A borrowing job never evicts another team's jobs (borrowWithinCohort, default Never). Eviction
# suspends the job and requeues it; it resumes only from what it checkpointed.
PREEMPTION = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
PREEMPTION_TEXT = (
    "a team takes back lent GPUs from any borrower (reclaimWithinCohort Any); within a team a higher-priority job "
    "may evict a lower one (withinClusterQueue LowerPriority); borrowers never evict"
)

# Topology-aware scheduling needs node labels that say where each node sits in the network (TopologySpec.levels[].
# nodeLabel, apis/kueue/v1beta2/topology_types.go@v0.19.2). ACK documents such labels (alibabacloud.com/asw-id, the
# access switch, and alibabacloud.com/point-of-delivery) only for Lingjun nodes of ACK Lingjun clusters, set by its
# lingjun-networktopology-collector, and says other node types must be labelled by hand
# (https://www.alibabacloud.com/help/ja/ack/ack-managed-and-ack-dedicated/user-guide/using-network-topology-aware-scheduling).
# ACK's GPU labels (ack.node.gpu.schedule, ack.node.gpu.placement) choose how GPUs inside one node are allocated, not
# where nodes sit (https://www.alibabacloud.com/help/en/container-service-for-kubernetes/latest/labels-used-by-ack-to-control-gpus).
# So an ECS GPU node pool gets no Topology: labels are not invented.
ACK_TOPOLOGY_DOC = (
    "https://www.alibabacloud.com/help/ja/ack/ack-managed-and-ack-dedicated/user-guide/"
    "using-network-topology-aware-scheduling"
)


@dataclass(frozen=True)
class TopologyChoice:
    """The topology levels (node label keys, widest first) Kueue places jobs by, or None, and why, for the plan."""

    levels: tuple[str, ...] | None
    note: str


ECS_POOL_TOPOLOGY = TopologyChoice(
    levels=None,
    note=(
        "Topology-aware scheduling is not configured: ACK sets network-placement node labels (alibabacloud.com/asw-id, "
        "alibabacloud.com/point-of-delivery) only on Lingjun nodes of ACK Lingjun clusters, and an ECS GPU node pool's "
        f"nodes carry no label saying which switch they sit under ({ACK_TOPOLOGY_DOC})."
    ),
)


def flavor_name(profile_name: str) -> str:
    """The ResourceFlavor of the GPU node pool."""
    return f"{profile_name}-gpu-pool"


def cluster_queue_name(profile_name: str, team: str) -> str:
    """A team's ClusterQueue (cluster-scoped, so named with the profile; a DNS subdomain of at most 24 + 1 + 63)."""
    return f"{profile_name}-{team}"


def topology_name(profile_name: str) -> str:
    """The Topology of the GPU node pool, when one is configured."""
    return f"{profile_name}-topology"


# Quantities are written in Kubernetes' canonical form (the largest suffix that keeps an integer: 2000 → "2k",
# 1024Gi → "1Ti", 96.5 → "96500m"; k8s.io/apimachinery resource.Quantity), the form a ClusterQueue's quantities take
# when Kueue's mutating webhook decodes and re-encodes it (ClusterQueueWebhook.Default,
# pkg/webhooks/clusterqueue_webhook.go@v0.19.2; /mutate-kueue-x-k8s-io-v1beta2-clusterqueue in the vendored
# kueue.yaml): any other spelling would come back changed and show as drift.
_DECIMAL_SUFFIXES = ("", "k", "M", "G", "T", "P", "E")
_BINARY_SUFFIXES = ("Mi", "Gi", "Ti", "Pi", "Ei")


def decimal_quantity(count: int) -> str:
    """A whole count (GPUs, cores) as a canonical decimal quantity."""
    step = 0
    while count and count % 1000 == 0 and step < len(_DECIMAL_SUFFIXES) - 1:
        count, step = count // 1000, step + 1
    return f"{count}{_DECIMAL_SUFFIXES[step]}"


def millicores(value: int) -> str:
    """CPU in millicores as a canonical quantity (whole cores without a suffix)."""
    return decimal_quantity(value // 1000) if value % 1000 == 0 else f"{value}m"


def binary_quantity(mib: int) -> str:
    """Memory in MiB as a canonical binary quantity (0 as "0")."""
    if mib == 0:
        return "0"
    step = 0
    while mib % 1024 == 0 and step < len(_BINARY_SUFFIXES) - 1:
        mib, step = mib // 1024, step + 1
    return f"{mib}{_BINARY_SUFFIXES[step]}"


@dataclass(frozen=True)
class Quota:
    """One quota of the pool's one flavor: GPUs, CPU in millicores and memory in MiB."""

    gpus: int
    cpu_millicores: int
    memory_mib: int

    def resources(self, borrow_gpus: int | None = None) -> list[dict[str, Any]]:
        """The flavor's ``resources`` list, in COVERED_RESOURCES order; a borrowing limit on GPUs only."""
        gpu: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": decimal_quantity(self.gpus)}
        if borrow_gpus is not None:
            gpu["borrowingLimit"] = decimal_quantity(borrow_gpus)
        return [
            {"name": "cpu", "nominalQuota": millicores(self.cpu_millicores)},
            {"name": "memory", "nominalQuota": binary_quantity(self.memory_mib)},
            gpu,
        ]


def quotas(
    teams: tuple[Team, ...], *, gpus_per_node: int, node_vcpus: int, node_memory_gib: float, max_nodes: int
) -> tuple[list[Quota], Quota]:
    """Each team's quota and the cohort's shared rest, which together are exactly the pool.

    A team's CPU and memory follow its share of nodes (gpus / gpus_per_node of a node's vCPUs and memory, rounded
    down), so its pods' CPU and memory requests are admissible alongside its GPUs; the rounding's remainder and the
    GPUs no team holds go to the cohort.
    """
    node_memory_mib = int(Fraction(str(node_memory_gib)) * 1024)
    pool = Quota(max_nodes * gpus_per_node, max_nodes * node_vcpus * 1000, max_nodes * node_memory_mib)
    shares = [
        Quota(
            team.quota,
            team.quota * node_vcpus * 1000 // gpus_per_node,
            team.quota * node_memory_mib // gpus_per_node,
        )
        for team in teams
    ]
    rest = Quota(
        pool.gpus - sum(q.gpus for q in shares),
        pool.cpu_millicores - sum(q.cpu_millicores for q in shares),
        pool.memory_mib - sum(q.memory_mib for q in shares),
    )
    return shares, rest


def kueue_objects(
    *,
    profile_name: str,
    namespace: str,
    gpus_per_node: int,
    node_vcpus: int,
    node_memory_gib: float,
    max_nodes: int,
    node_labels: Mapping[str, str],
    node_taint: Mapping[str, str],
    queues: QueueSettings,
    topology: tuple[str, ...] | None,
) -> list[dict[str, Any]]:
    """The Kueue objects of the pool, in apply order: priorities, topology, flavor, cohort, cluster queues, local
    queues (each ClusterQueue before the LocalQueue naming it)."""
    teams = queues.teams_for(max_nodes * gpus_per_node)
    labels = {**MANAGED_LABELS, "aitrain.io/profile": profile_name}
    flavor = flavor_name(profile_name)

    def meta(name: str, **more: str) -> dict[str, Any]:
        return {"name": name, **more, "labels": dict(labels)}

    # WorkloadPriorityClasses keep the user's names: they are cluster-scoped, but the cluster is this stack's own (the
    # blueprint creates one ACK cluster per stack and installs its Kueue), so no other owner creates them there; jobs
    # name one in the label kueue.x-k8s.io/priority-class, whose value is at most 63 characters, which a profile
    # prefix (up to 25) would eat into. A name `default` would become every unlabelled job's priority only with the
    # alpha WorkloadPriorityClassDefaulting gate on (setup_default_workload_priority_class.md@v0.19.2), left off.
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": API_VERSION,
            "kind": "WorkloadPriorityClass",
            "metadata": meta(name),
            "value": value,
            "description": f"aitrain profile {profile_name}: jobs labelled {PRIORITY_LABEL}: {name}",
        }
        for name, value in sorted(queues.priorities.items())
    ]
    flavor_spec: dict[str, Any] = {
        # Pods admitted on the flavor get its nodeLabels as node selectors; a pod set is assigned the flavor only when
        # it tolerates the flavor's nodeTaints (apis/kueue/v1beta2/resourceflavor_types.go@v0.19.2).
        "nodeLabels": dict(node_labels),
        "nodeTaints": [{k: node_taint[k] for k in ("key", "value", "effect") if k in node_taint}],
    }
    if topology is not None:
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "Topology",
                "metadata": meta(topology_name(profile_name)),
                "spec": {"levels": [{"nodeLabel": label} for label in topology]},
            }
        )
        flavor_spec["topologyName"] = topology_name(profile_name)
    objects.append({"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": meta(flavor), "spec": flavor_spec})

    shares, rest = quotas(
        teams, gpus_per_node=gpus_per_node, node_vcpus=node_vcpus, node_memory_gib=node_memory_gib, max_nodes=max_nodes
    )
    # The cohort's own quota is "a shared pool for the ClusterQueues within it", on top of theirs
    # (apis/kueue/v1beta2/cohort_types.go@v0.19.2 CohortSpec.resourceGroups); no borrowing or lending limits, which
    # only a cohort with a parent may set. It is written even at zero, so the pool's split is always on the page.
    objects.append(
        {
            "apiVersion": API_VERSION,
            "kind": "Cohort",
            "metadata": meta(profile_name),
            "spec": {"resourceGroups": [_group(flavor, rest.resources())]},
        }
    )
    for team, share in zip(teams, shares, strict=True):
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ClusterQueue",
                "metadata": meta(cluster_queue_name(profile_name, team.name)),
                "spec": {
                    # The v1beta2 field is cohortName (v1beta1's `cohort`), apis/kueue/v1beta2/clusterqueue_types.go.
                    "cohortName": profile_name,
                    # Default null admits no namespace; only the jobs' namespace may submit.
                    "namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: namespace}},
                    "queueingStrategy": "BestEffortFIFO",
                    "resourceGroups": [_group(flavor, share.resources(team.borrow_gpus))],
                    "preemption": dict(PREEMPTION),
                },
            }
        )
    for team in teams:
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "LocalQueue",
                "metadata": meta(team.name, namespace=namespace),
                "spec": {"clusterQueue": cluster_queue_name(profile_name, team.name)},
            }
        )
    return objects


def _group(flavor: str, resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"coveredResources": list(COVERED_RESOURCES), "flavors": [{"name": flavor, "resources": resources}]}


def configure_manager(config_text: str, *, jobs_namespace: str, queues: QueueSettings) -> str:
    """The vendored ConfigMap's ``controller_manager_config.yaml`` with the pool's settings, dumped deterministically
    (upstream keys in their order, comments dropped)."""
    config = yaml.safe_load(config_text)
    if not isinstance(config, dict) or config.get("kind") != "Configuration":
        raise ValueError("not a Kueue Configuration (controller_manager_config.yaml of kueue-manager-config)")
    config["waitForPodsReady"] = {
        "timeout": f"{queues.pods_ready_timeout_minutes}m",
        "blockAdmission": BLOCK_ADMISSION,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": REQUEUE_BACKOFF_LIMIT,
            "backoffBaseSeconds": REQUEUE_BACKOFF_BASE_SECONDS,
            "backoffMaxSeconds": REQUEUE_BACKOFF_MAX_SECONDS,
        },
    }
    # No job in the jobs' namespace bypasses the queues: one without kueue.x-k8s.io/queue-name is suspended until it
    # names one (manageJobsWithoutQueueName; site/content/en/docs/tasks/manage/enforce_job_management/
    # manage_jobs_without_queue_name.md@v0.19.2), or, where a LocalQueue named `default` exists (the default team),
    # sent to it (setup_default_local_queue.md@v0.19.2; pkg/controller/jobframework/defaults.go applies it only in
    # namespaces the selector matches). Scoped to the jobs' namespace alone, so nothing else in the cluster is
    # held, and kube-system and kueue-system stay exempt as Kueue's validation requires (pkg/config/validation.go).
    config["manageJobsWithoutQueueName"] = True
    config["managedJobsNamespaceSelector"] = {"matchLabels": {NAMESPACE_LABEL: jobs_namespace}}
    integrations = config.get("integrations")
    config["integrations"] = {
        **(integrations if isinstance(integrations, dict) else {}),
        "frameworks": list(FRAMEWORKS),
    }
    config["resources"] = {"excludeResourcePrefixes": [ERDMA_RESOURCE]}
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False, width=1000)


def queue_summary(
    *,
    profile_name: str,
    namespace: str,
    gpus_per_node: int,
    max_nodes: int,
    queues: QueueSettings,
    topology: TopologyChoice,
) -> dict[str, Any]:
    """What the plan shows of the queues: per team its LocalQueue (in ``namespace``) and ClusterQueue, GPUs, borrowing
    limit (None: no limit) and priority; the pool's shared rest; the team whose LocalQueue is ``default`` (it takes
    jobs that name no queue), if any; the admission policy; and why topology-aware scheduling is or is not configured.
    Plain data, keyed as the stack's ``queues`` output is read (blueprints/launch/kubernetes_outputs.py TeamQueue)."""
    pool = max_nodes * gpus_per_node
    teams = queues.teams_for(pool)
    default_team = DEFAULT_TEAM if any(team.name == DEFAULT_TEAM for team in teams) else None
    return {
        "cohort": profile_name,
        "namespace": namespace,
        "pool_gpus": pool,
        "shared_gpus": pool - sum(team.quota for team in teams),
        "teams": [
            {
                "team": team.name,
                "local_queue": team.name,
                "cluster_queue": cluster_queue_name(profile_name, team.name),
                "gpus": team.quota,
                "borrowing_limit_gpus": team.borrow_gpus,
                "priority_class": queues.priority_of(team),
                "priority_value": queues.priorities[queues.priority_of(team)],
            }
            for team in teams
        ],
        "default_team": default_team,
        "admission": {
            "all_or_nothing": True,
            "pods_ready_timeout_minutes": queues.pods_ready_timeout_minutes,
            "block_admission": BLOCK_ADMISSION,
            "requeue_backoff_limit": REQUEUE_BACKOFF_LIMIT,
            "preemption": PREEMPTION_TEXT,
            "jobs_without_queue": (
                f"sent to LocalQueue {DEFAULT_TEAM}"
                if default_team is not None
                else f"suspended until they set {QUEUE_LABEL} (namespace {namespace} only)"
            ),
        },
        "topology": topology.note,
    }
