"""The kubernetes-pool blueprint's meaning: an ACK Pro cluster whose GPU node pool many training jobs share."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from blueprints.advisor.budget import BudgetTier, StandingCost
from blueprints.architectures.base.repair import kubernetes_repair_note
from blueprints.architectures.base.spec import FABRIC_SUMMARY, BlueprintSpec
from blueprints.architectures.kubernetes_pool.kueue import ECS_POOL_TOPOLOGY, TopologyChoice, queue_summary
from blueprints.architectures.kubernetes_pool.profile import AckProfile, GpuPool, KubernetesProfile
from blueprints.architectures.kubernetes_pool.settings import NODE_POOL_MAX_SIZE, KubernetesSettings
from blueprints.catalog.engines import (
    JOBSET_VERSION,
    KUEUE_VERSION,
    LEGACY_ENGINE,
    TRAINER_VERSION,
    TRAINING_OPERATOR_VERSION,
)
from blueprints.catalog.metrics import PROMETHEUS_ADDON

if TYPE_CHECKING:
    from blueprints.catalog.kubernetes import AckAddon

# The job engines' APIs, written into every job `aitrain launch --kubernetes` makes: a TrainJob (Kubeflow Trainer v2)
# or, with kubernetes.job_engine training-operator-v1, a PyTorchJob (the legacy operator).
TRAINJOB_API = "trainer.kubeflow.org/v1alpha1"
PYTORCHJOB_API = "kubeflow.org/v1"

# The kubeconfig the stack's Kubernetes provider uses is a temporary credential: get_cluster_credential's
# temporary_duration_minutes (15–4320; omitted, ACK picks the validity itself) bounds it. It is read again at every
# `pulumi up`/preview once the cluster exists, and must outlast the rest of that run (both node pools, the operator);
# 120 minutes covers that with room, while a copy leaked from the state file or a log stops working two hours later.
# The cost: `pulumi destroy` more than two hours after the last `pulumi up` needs `pulumi destroy --run-program`
# (or a `pulumi up` first) so the provider gets a fresh kubeconfig.
KUBECONFIG_MINUTES = 120

# On ACK the ERIs come from the ack-erdma-controller add-on, not from the node's launch (ready-to-train.md §7b).
ERDMA_SUMMARY = (
    "eRDMA: the ack-erdma-controller add-on (preferDriver ofed) "
    "gives GPU nodes ERIs; a job's pods request aliyun/erdma "
    "and their image needs the eRDMA user-space libraries (libibverbs1, "
    "ibverbs-providers, librdmacm1 from mirrors.aliyun.com/erdma); NCCL gets PAI's eRDMA settings (NCCL >= 2.19) in "
    "every job pod; MTU: cs.NodePool has no jumbo-frame argument (pulumi-alicloud 4.0.0) and aitrain does not boot ACK "
    "nodes, so NCCL's LL128 needs the nodes at MTU 1400 (ECS GPU eRDMA doc), which aitrain does not set here "
    "(UNVERIFIED that the node image or the controller does)"
)


# The profile an ACK spec is written for (kubernetes-pool's, lingjun-cluster's).
A = TypeVar("A", bound=AckProfile)


class AckPoolSpec(BlueprintSpec[A]):
    """What a blueprint whose GPUs are an ACK node pool means (kubernetes-pool's autoscaled ECS pool, lingjun-cluster's
    Lingjun node pool): the cluster, its add-ons, the job engine and Kueue's queues, the plan's lines about them."""

    compute_zone_count = 1
    job_engine = "kubernetes"

    @property
    def compute(self) -> GpuPool:
        """The profile's GPU pool (its compute section)."""
        return self.profile.gpu_pool()

    @property
    def settings(self) -> KubernetesSettings:
        """The profile's kubernetes section."""
        return self.profile.kubernetes

    @property
    def kubernetes_version(self) -> str:
        """The profile's version, else the catalog's default."""
        default = self.catalog.kubernetes.default_version
        return self.settings.version or (default or "")

    @property
    def node_role_name(self) -> str:
        """The GPU pool's own RAM role (the system pool has its own too, with no policy)."""
        return f"{self.compute_unit_name}-gpu-node"

    def addons(self) -> tuple[tuple[str, str, str], ...]:
        """(name, version, config) of every add-on pinned at creation:
        the catalog's defaults, the profile's pins over them."""
        defaults: list[AckAddon] = list(self.catalog.kubernetes.default_addons(erdma=self.fabric_link == "erdma"))
        chosen = {a.name: (a.name, a.version, self._addon_config(a.name, a.config)) for a in defaults}
        for pin in self.settings.addons:
            chosen[pin.name] = (pin.name, pin.version, pin.config)
        return tuple(chosen.values())

    def _addon_config(self, name: str, config: str) -> str:
        # The Log Service agent writes to the profile's SLS project when one is named (SDK addon doc: sls_project_name).
        if name == "logtail-ds" and self.settings.audit_log_project and not config:
            return json.dumps({"sls_project_name": self.settings.audit_log_project})
        return config

    def compute_summary(self) -> dict[str, Any]:
        """GPU pool bounds, the job size and the cluster (version, edition, API endpoint, audit, pools)."""
        compute, k8s = self.compute, self.settings
        return {
            "min_nodes": compute.min_nodes,
            "max_nodes": compute.max_nodes,
            "max_gpus": compute.max_nodes * self.instance.gpu_count,
            "nodes_per_job": compute.job_nodes,
            "kubernetes_version": self.kubernetes_version,
            "cluster_spec": k8s.cluster_spec,
            "api_endpoint": "public, open to the whole internet (no ACL the stack can set: see AIT033 and the notes)"
            if k8s.public_api_endpoint
            else "private (VPC only)",
            "audit_log": f"API-server audit log to SLS project {k8s.audit_log_project}"
            if k8s.audit_log_project
            else "API-server audit log to the SLS project ACK creates (k8s-log-<cluster id>)",
            "node_pools": (
                f"system: {k8s.system_nodes} × {k8s.system_instance_type}; gpu: "
                f"{compute.min_nodes}–{compute.max_nodes} × {self.instance.instance_type} (cluster autoscaler)"
            ),
            "addons": ", ".join(f"{name}@{version or 'ACK default'}" for name, version, _ in self.addons()),
            **self._queue_summary(),
            **self._reservation_summary(),
        }

    def queues(self) -> dict[str, Any]:
        """The Kueue queues the plan shows and the stack exports (per team: queues, GPUs, borrowing, priority)."""
        return queue_summary(
            profile_name=self.profile.name,
            namespace=self.settings.namespace,
            gpus_per_node=self.instance.gpu_count,
            max_nodes=self.compute.max_nodes,
            queues=self.profile.queues,
            topology=self.topology,
        )

    @property
    def cpfs_volume(self) -> tuple[str, str, str, int] | None:
        """An existing CPFS for Lingjun file system the jobs mount (id, VPC and VSC mount targets, GiB): none here."""
        return None

    @property
    def rdma_device(self) -> str | None:
        """The RDMA device plugin's resource a job's pods ask for: none on an ECS GPU pool (eRDMA has its own)."""
        return None

    @property
    def topology(self) -> TopologyChoice:
        """The network levels Kueue places a job's pods by: none on an ECS GPU pool (no such node labels)."""
        return ECS_POOL_TOPOLOGY

    def engine_outputs(self, runtime_name: str | None) -> dict[str, Any]:
        """The stack outputs `aitrain launch --kubernetes` and `aitrain queue` read: the job API and engine version,
        the TrainingRuntime, and each team's queues (``default_team``: the team a job without --team goes to, when
        there is exactly one)."""
        queues = self.queues()
        teams = {
            t["team"]: {k: v for k, v in t.items() if k not in ("team", "priority_value")} for t in queues["teams"]
        }
        engine: dict[str, Any] = (
            {"job_api": PYTORCHJOB_API, "training_operator_version": TRAINING_OPERATOR_VERSION}
            if self.settings.job_engine == LEGACY_ENGINE
            else {"job_api": TRAINJOB_API, "trainer_version": TRAINER_VERSION, "training_runtime": runtime_name}
        )
        return {**engine, "queues": teams, "default_team": next(iter(teams)) if len(teams) == 1 else None}

    def _queue_summary(self) -> dict[str, Any]:
        """The job engine and the queues, as the plan's summary lines."""
        queues, k8s = self.queues(), self.settings
        admission = queues["admission"]
        engine = (
            f"Kubeflow training operator {TRAINING_OPERATOR_VERSION} (legacy; PyTorchJob {PYTORCHJOB_API})"
            if k8s.job_engine == LEGACY_ENGINE
            else f"Kubeflow Trainer {TRAINER_VERSION} with JobSet {JOBSET_VERSION} (TrainJob {TRAINJOB_API})"
        )
        teams = "; ".join(
            f"{t['team']}: {t['gpus']} GPUs (LocalQueue {t['local_queue']} → ClusterQueue {t['cluster_queue']}), "
            + (
                "borrows without limit"
                if t["borrowing_limit_gpus"] is None
                else f"borrows up to {t['borrowing_limit_gpus']}"
            )
            + f", priority {t['priority_class']} ({t['priority_value']})"
            for t in queues["teams"]
        )
        return {
            "job_engine": engine,
            "queueing": (
                f"Kueue {KUEUE_VERSION}: cohort {queues['cohort']} of {queues['pool_gpus']} GPUs "
                f"({queues['shared_gpus']} shared, in no team's quota); jobs without a queue are "
                f"{admission['jobs_without_queue']}"
            ),
            "queues": teams,
            "admission": (
                f"all or nothing: a job's pods must all be ready within {admission['pods_ready_timeout_minutes']} "
                f"min or Kueue evicts and requeues it (deactivated after {admission['requeue_backoff_limit']} "
                f"timeouts); {admission['preemption']}"
            ),
            "topology": queues["topology"],
        }

    def _reservation_summary(self) -> dict[str, Any]:
        """The capacity held for the GPU pool, and what it costs while the pool runs below it."""
        reservation, compute = self.profile.capacity.reservation, self.compute
        if reservation is None:
            return {}
        held = reservation.nodes or compute.max_nodes
        return {
            "reservation": (
                f"{reservation.kind}: {held} × {self.instance.instance_type} held in the GPU pool's zone in Target "
                f"mode; every node the autoscaler adds starts from it. Between min_nodes ({compute.min_nodes}) and "
                f"{held}, the reserved nodes no pod runs on bill at the pay-as-you-go rate"
                + ("" if reservation.kind == "capacity_reservation" else " (an assurance: its fee, for its term)")
            )
        }

    def node_software_summary(self) -> dict[str, Any]:
        """GPU software comes from ACK; PyTorch from each job's image; the fabric is the type's."""
        driver = self.settings.nvidia_driver_version
        return {
            "gpu_software": "installed by ACK on GPU nodes (NVIDIA driver and device plugin)"
            + (
                f"; driver pinned to {driver} for nodes added after the label is set"
                if driver
                else "; driver: ACK's default for the node image"
            )
            + "; PyTorch comes from each job's container image",
            # ACK installs the driver when a node joins the pool; no Alibaba page gives how long that takes.
            "boot_to_ready": "unknown (UNVERIFIED): ACK installs the driver as a node joins the pool and states no "
            "time (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/"
            "ack-supported-nvidia-driver-version-list); aitrain's own image paths do not apply to ACK's node image",
            "fabric": ERDMA_SUMMARY if self.fabric_link == "erdma" else FABRIC_SUMMARY[self.fabric_link],
        }

    def price_basis(self) -> tuple[int, str]:
        """Quoted at max_nodes: the most the GPU pool can cost per hour."""
        return self.compute.max_nodes, "GPU pool at max_nodes"

    def expected_nodes(self) -> int:
        """A job spans nodes_per_job nodes (one worker each)."""
        return self.compute.job_nodes

    def security_notes(self) -> list[str]:
        """The storage notes (no host registry on Kubernetes), and what a reviewer of an ACK stack must know."""
        from blueprints.profile.notes import storage_notes

        notes = storage_notes(self.profile, host_registry=False)
        notes.append(kubernetes_repair_note())
        k8s = self.settings
        if k8s.public_api_endpoint:
            notes.append(
                "The API server gets an internet-facing endpoint open to every address: ACK's only documented "
                "restriction is the access control of "
                "port 6443's listener on the CLB ACK creates, which pulumi-alicloud 4.0.0 cannot set "
                "(cs.ManagedKubernetes has no such argument and the "
                f"listener is not the stack's), so network.admin_cidr ({self.profile.network.admin_cidr}) is not "
                "applied. AIT033 is an error until you set that "
                "access control by hand (ACK console, Cluster Information, Set access control; keep the VPC and pod "
                "ranges in it, the nodes use the same CLB) "
                "and skip AIT033 with that reason; or keep the endpoint private."
            )
        if any(name == PROMETHEUS_ADDON for name, _version, _config in self.addons()):
            notes.append(
                f"GPU metrics: the {PROMETHEUS_ADDON} add-on turns on Managed Service for Prometheus, which collects "
                "ACK's GPU exporter (DCGM_FI_DEV_* metrics; the metric_producers output lists them). No alarm on "
                "them is in this stack (an XID or fallen-off-the-bus alert is a Prometheus alert rule you add); "
                "ACK bills custom metrics (not priced here)."
            )
        notes.append(
            f"The kubeconfig the stack reads (cs.get_cluster_credential) is temporary: valid {KUBECONFIG_MINUTES} "
            "minutes from each `pulumi up`, so a copy "
            "from the state file stops working soon after; a `pulumi destroy` later than that needs `pulumi destroy "
            "--run-program` (or a `pulumi up` first)."
        )
        notes.append(
            f"The GPU pool runs as its own RAM role {self.node_role_name} (trusts "
            "ecs.aliyuncs.com only; the bucket's one-bucket policy attached), "
            "not ACK's default worker role: node components that call cloud "
            "APIs with the node's credentials get only what that role grants."
        )
        # Which job pods run on the node's network: eRDMA's, or those of an RDMA device plugin (Lingjun's rdma/hca).
        host_jobs = (
            "eRDMA" if self.fabric_link == "erdma" else (f"RDMA ({self.rdma_device})" if self.rdma_device else "")
        )
        notes.append(
            f"The jobs' namespace {k8s.namespace} is default-deny (NetworkPolicy, "
            "enforced by Terway: the terway-eniip add-on with NetworkPolicy on): "
            "its pods reach only each other and the cluster DNS, not the "
            "internet, the API server or the metadata service (100.100.100.200). "
            "NetworkPolicy does not govern hostNetwork pods: "
            + (
                f"the {host_jobs} job pods use the node's own network, so for them "
                "only the node's security group and the node-egress rules apply."
                if host_jobs
                else "a job that sets hostNetwork escapes it (aitrain launch sets it only on eRDMA types)."
            )
        )
        notes.append(
            "Instance metadata: every node requires IMDSv2 tokens. A hostNetwork "
            f"pod{f' (every {host_jobs} job pod)' if host_jobs else ''} is on the node's network "
            f"and gets the GPU node role's STS credentials ({self.node_role_name}) as any node process does; "
            "pulumi-alicloud 4.0.0 cs.NodePool "
            "instance_metadata_options has only http_tokens (no hop limit, which would not stop a hostNetwork pod "
            "anyway), so the bound is the role: "
            "it holds only the bucket's one-bucket policy, which the job needs for the bucket volume."
        )
        if self.profile.security.kms_key_id:
            notes.append(
                f"Kubernetes Secrets are encrypted at rest in etcd with KMS key {self.profile.security.kms_key_id} "
                "(cs.ManagedKubernetes encryption_provider_key)."
            )
        else:
            notes.append(
                "Kubernetes Secrets are NOT encrypted with a key of yours: without security.kms_key_id the cluster "
                "gets no encryption_provider_key, so Secrets "
                "(the engines' webhook certificates, any a job creates) sit in etcd under ACK's own protection only. "
                "Set security.kms_key_id to encrypt them with KMS."
            )
        if self.fabric_link == "erdma":
            notes.append(
                "eRDMA: the ack-erdma-controller add-on creates and attaches ERIs itself (ecs:CreateNetworkInterface, "
                "AttachNetworkInterface); check it has those permissions on this cluster before the first job."
            )
        if self.compute.scratch(self.catalog).local_nvme:
            notes.append(
                f"{self.instance.instance_type} brings local NVMe, so the GPU pool gets no scratch data disk; on ACK "
                "nothing formats or mounts the NVMe, "
                "so /mnt/scratch does not exist on these nodes (use an emptyDir or a local volume in the job)."
            )
        notes.append(
            "The cluster has no deletion protection: it holds no data (the file system and the bucket live outside it "
            "and are retained), so `pulumi destroy` may remove it."
        )
        return notes


class KubernetesPoolSpec(AckPoolSpec[KubernetesProfile]):
    """Kubernetes pool: an ACK Pro cluster with a GPU node pool that many training jobs share.

    Recommended when several training jobs (and teams) run at once on one pool of GPUs: Kueue queues each team's
    jobs against its GPU quota and admits a job whole or not at all, Kubeflow Trainer v2 turns a ``TrainJob`` into
    one pod per node, and Kubernetes places them and restarts failed workers. The GPU pool scales between
    ``min_nodes`` (0 allowed) and
    ``max_nodes``; the shared file system and the bucket are volumes every job mounts, and both outlive the cluster.
    """

    name = "kubernetes-pool"
    profile_model = KubernetesProfile
    compute_unit = "k8s"
    node_repair = "ACK's node auto repair restarts or repairs its GPU nodes (managed node pool)"
    park_refusal = (
        "a Kubernetes GPU pool parks itself: set compute.min_nodes 0 and the cluster autoscaler removes idle GPU nodes"
    )
    foreign_node_image = "its GPU nodes boot ACK's image of kubernetes.image_type"

    @classmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple[BudgetTier, ...]:
        """Jobs that share one pool of GPUs, at any budget; the
        cluster's own standing costs (fee, system pool) declared."""
        defaults = KubernetesSettings.model_fields
        system_type, system_nodes = defaults["system_instance_type"].default, defaults["system_nodes"].default
        standing = (
            # Billed per cluster per hour of use
            # (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/product-overview/cluster-management-fee);
            # the price is the catalog's prices.csv row ack/pro-cluster-fee (unknown while absent, never 0).
            StandingCost(
                "ACK Pro cluster management fee", 1, "cluster-hours", item="ack", price_tier="pro-cluster-fee"
            ),
            StandingCost(
                f"system node pool ({system_nodes} × {system_type})",
                system_nodes,
                "node-hours",
                instance_type=system_type,
            ),
            # "A Classic Load Balancer (CLB) instance is required for the
            # API server" (ACK Pro billing page, prices.csv clb_api_server).
            StandingCost("API server load balancer (CLB)", 1, "hours", item="clb_api_server"),
        )
        why = (
            "Kubernetes is the scheduler the jobs share: it places each "
            "job's workers (one TrainJob pod per node, Kubeflow "
            "Trainer), Kueue queues a job that does not fit its team's quota until "
            "GPUs free up and admits it whole, Kubernetes restarts failed workers, and the cluster "
            "autoscaler adds GPU nodes for queued jobs and removes idle "
            "ones; a fixed cluster or an ESS pool has no such queue, "
            "so parallel jobs there need a stack each or wait for one another by hand"
        )
        return (
            BudgetTier(
                "shared-pool",
                cls.name,
                0.0,
                "Kubernetes GPU pool shared by parallel jobs",
                cls.compute_from_choice,
                spot_when_allowed=True,
                scales_to_zero=True,
                min_jobs_in_parallel=2,
                standing=standing,
                why_parallel=why,
                # The pool's own bound (compute.max_nodes), so a recommended pool is always one the profile accepts.
                pool_max_nodes=NODE_POOL_MAX_SIZE,
            ),
        )

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """Empty between jobs; the pool holds every parallel job at
        once (max_nodes = nodes × jobs), each job spans ``nodes``."""
        return {
            "instance_type": instance_type,
            "min_nodes": 0,
            "max_nodes": nodes * jobs_in_parallel,
            "nodes_per_job": nodes,
        }


SPEC = KubernetesPoolSpec
