"""The kubernetes-pool blueprint: an ACK Pro cluster whose GPU node pool many training jobs share."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from blueprints.advisor.budget import BudgetTier, StandingCost
from blueprints.architectures.base import FABRIC_SUMMARY, Blueprint, Foundation
from blueprints.architectures.kubernetes_profile import (
    NODE_POOL_MAX_SIZE,
    KubernetesCompute,
    KubernetesProfile,
    KubernetesSettings,
)

if TYPE_CHECKING:  # components load with the Pulumi SDK, only when resources are built (see base.py)
    from blueprints.catalog.kubernetes import AckAddon

# The job engine's API, written into every PyTorchJob (`aitrain launch --kubernetes`).
PYTORCHJOB_API = "kubeflow.org/v1"

# On ACK the ERIs come from the ack-erdma-controller add-on, not from the node's launch (ready-to-train.md §7b).
ERDMA_SUMMARY = (
    "eRDMA: the ack-erdma-controller add-on (preferDriver ofed) gives GPU nodes ERIs; a job's pods request aliyun/erdma "
    "and their image needs the eRDMA user-space libraries (libibverbs1, ibverbs-providers, librdmacm1 from mirrors.aliyun.com/erdma)"
)


class KubernetesPoolBlueprint(Blueprint):
    """Kubernetes pool: an ACK Pro cluster with a GPU node pool that many training jobs share.

    Recommended when several training jobs run at once on one pool of GPUs: Kubernetes places each job's
    pods, queues what does not fit and restarts failed workers, and the Kubeflow training operator turns a
    ``PyTorchJob`` into one worker per node. The GPU pool scales between ``min_nodes`` (0 allowed) and
    ``max_nodes``; the shared file system and the bucket are volumes every job mounts, and both outlive the cluster.
    """

    name = "kubernetes-pool"
    profile_model = KubernetesProfile
    compute_unit = "k8s"
    compute_zone_count = 1
    park_refusal = (
        "a Kubernetes GPU pool parks itself: set compute.min_nodes 0 and the cluster autoscaler removes idle GPU nodes"
    )
    job_engine = "kubernetes"

    @property
    def compute(self) -> KubernetesCompute:
        """The profile's compute section, typed."""
        return self.profile.compute  # type: ignore[return-value]

    @property
    def settings(self) -> KubernetesSettings:
        """The profile's kubernetes section, typed."""
        return self.profile.kubernetes  # type: ignore[attr-defined,no-any-return]

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
        """(name, version, config) of every add-on pinned at creation: the catalog's defaults, the profile's pins over them."""
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
            "node_pools": f"system: {k8s.system_nodes} × {k8s.system_instance_type}; gpu: {compute.min_nodes}–{compute.max_nodes} × {self.instance.instance_type} (cluster autoscaler)",
            "addons": ", ".join(f"{name}@{version or 'ACK default'}" for name, version, _ in self.addons()),
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
            "fabric": ERDMA_SUMMARY if self.fabric_link == "erdma" else FABRIC_SUMMARY[self.fabric_link],
        }

    def price_basis(self) -> tuple[int, str]:
        """Quoted at max_nodes: the most the GPU pool can cost per hour."""
        return self.compute.max_nodes, "GPU pool at max_nodes"

    @classmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple[BudgetTier, ...]:
        """Jobs that share one pool of GPUs, at any budget; the cluster's own standing costs (fee, system pool) declared."""
        defaults = KubernetesSettings.model_fields
        system_type, system_nodes = defaults["system_instance_type"].default, defaults["system_nodes"].default
        standing = (
            # Billed per cluster per hour of use (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/product-overview/cluster-management-fee);
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
            # "A Classic Load Balancer (CLB) instance is required for the API server" (ACK Pro billing page, prices.csv clb_api_server).
            StandingCost("API server load balancer (CLB)", 1, "hours", item="clb_api_server"),
        )
        why = (
            "Kubernetes is the scheduler the jobs share: it places each job's workers (one PyTorchJob worker per node, Kubeflow "
            "training operator), queues a job that does not fit until nodes free up, restarts failed workers, and the cluster "
            "autoscaler adds GPU nodes for queued jobs and removes idle ones; a fixed cluster or an ESS pool has no such queue, "
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
        """Empty between jobs; the pool holds every parallel job at once (max_nodes = nodes × jobs), each job spans ``nodes``."""
        return {
            "instance_type": instance_type,
            "min_nodes": 0,
            "max_nodes": nodes * jobs_in_parallel,
            "nodes_per_job": nodes,
        }

    def expected_nodes(self) -> int:
        """A job spans nodes_per_job nodes (one worker each)."""
        return self.compute.job_nodes

    def security_notes(self) -> list[str]:
        """The storage notes (no host registry on Kubernetes), and what a reviewer of an ACK stack must know."""
        from blueprints.profile.notes import storage_notes

        notes = storage_notes(self.profile, host_registry=False)
        k8s = self.settings
        if k8s.public_api_endpoint:
            notes.append(
                "The API server gets an internet-facing endpoint open to every address: ACK's only documented restriction is the access control of "
                "port 6443's listener on the CLB ACK creates, which pulumi-alicloud 4.0.0 cannot set (cs.ManagedKubernetes has no such argument and the "
                f"listener is not the stack's), so network.admin_cidr ({self.profile.network.admin_cidr}) is not applied. AIT033 is an error until you set that "
                "access control by hand (ACK console, Cluster Information, Set access control; keep the VPC and pod ranges in it, the nodes use the same CLB) "
                "and skip AIT033 with that reason; or keep the endpoint private."
            )
        from blueprints.components.kubernetes_cluster import KUBECONFIG_MINUTES

        notes.append(
            f"The kubeconfig the stack reads (cs.get_cluster_credential) is temporary: valid {KUBECONFIG_MINUTES} minutes from each `pulumi up`, so a copy "
            "from the state file stops working soon after; a `pulumi destroy` later than that needs `pulumi destroy --run-program` (or a `pulumi up` first)."
        )
        notes.append(
            f"The GPU pool runs as its own RAM role {self.node_role_name} (trusts ecs.aliyuncs.com only; the bucket's one-bucket policy attached), "
            "not ACK's default worker role: node components that call cloud APIs with the node's credentials get only what that role grants."
        )
        notes.append(
            f"The jobs' namespace {k8s.namespace} is default-deny (NetworkPolicy, enforced by Terway: the terway-eniip add-on with NetworkPolicy on): "
            "its pods reach only each other and the cluster DNS, not the internet, the API server or the metadata service (100.100.100.200). "
            "NetworkPolicy does not govern hostNetwork pods: "
            + (
                "the eRDMA job pods use the node's own network, so for them only the node's security group and the node-egress rules apply."
                if self.fabric_link == "erdma"
                else "a job that sets hostNetwork escapes it (aitrain launch sets it only on eRDMA types)."
            )
        )
        notes.append(
            f"Instance metadata: every node requires IMDSv2 tokens. A hostNetwork pod{' (every eRDMA job pod)' if self.fabric_link == 'erdma' else ''} is on the node's network "
            f"and gets the GPU node role's STS credentials ({self.node_role_name}) as any node process does; pulumi-alicloud 4.0.0 cs.NodePool "
            "instance_metadata_options has only http_tokens (no hop limit, which would not stop a hostNetwork pod anyway), so the bound is the role: "
            "it holds only the bucket's one-bucket policy, which the job needs for the bucket volume."
        )
        if self.profile.security.kms_key_id:
            notes.append(
                f"Kubernetes Secrets are encrypted at rest in etcd with KMS key {self.profile.security.kms_key_id} (cs.ManagedKubernetes encryption_provider_key)."
            )
        else:
            notes.append(
                "Kubernetes Secrets are NOT encrypted with a key of yours: without security.kms_key_id the cluster gets no encryption_provider_key, so Secrets "
                "(the operator's webhook certificate, any a job creates) sit in etcd under ACK's own protection only. Set security.kms_key_id to encrypt them with KMS."
            )
        if self.fabric_link == "erdma":
            notes.append(
                "eRDMA: the ack-erdma-controller add-on creates and attaches ERIs itself (ecs:CreateNetworkInterface, AttachNetworkInterface); check it has those permissions on this cluster before the first job."
            )
        if self.compute.scratch(self.catalog).local_nvme:
            notes.append(
                f"{self.instance.instance_type} brings local NVMe, so the GPU pool gets no scratch data disk; on ACK nothing formats or mounts the NVMe, "
                "so /mnt/scratch does not exist on these nodes (use an emptyDir or a local volume in the job)."
            )
        notes.append(
            "The cluster has no deletion protection: it holds no data (the file system and the bucket live outside it and are retained), so `pulumi destroy` may remove it."
        )
        return notes

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The login node (optional), the ACK cluster with its system and GPU node pools, and the seam's outputs."""
        from blueprints.components.kubernetes_cluster import (
            GPU_POOL_LABEL,
            GPU_TAINT,
            KubernetesCluster,
            KubernetesClusterArgs,
        )
        from blueprints.components.kubernetes_workloads import KubernetesWorkloads, KubernetesWorkloadsArgs
        from blueprints.core.layout import check_vswitch_room

        network, storage, bucket = foundation
        p, compute, k8s = self.profile, self.compute, self.settings
        login = self.build_login_node(network, self.image().image_id) if p.access.login_node else None
        # Every node of both pools (and the login node) must fit the compute zone's vSwitch, or the autoscaler fails later.
        zones = set(network.compute_zone_ids) | ({p.storage_zone} if login is not None else set())
        check_vswitch_room(
            p.network.vpc_cidr, compute.max_nodes + k8s.system_nodes + (1 if login is not None else 0), len(zones)
        )
        scratch = compute.scratch(self.catalog)
        cluster = KubernetesCluster(
            self.compute_unit_name,
            KubernetesClusterArgs(
                version=self.kubernetes_version,
                cluster_spec=k8s.cluster_spec,
                vswitch_ids=[network.vswitch_id(zone) for zone in network.compute_zone_ids],
                security_group_id=network.security_group_id,
                service_cidr=k8s.service_cidr,
                public_api_endpoint=k8s.public_api_endpoint,
                audit_log_project=k8s.audit_log_project,
                addons=self.addons(),
                image_type=k8s.image_type,
                system_instance_type=k8s.system_instance_type,
                system_nodes=k8s.system_nodes,
                instance_type=self.instance.instance_type,
                min_nodes=compute.min_nodes,
                scale_in_gpu_percent=compute.scale_in_gpu_percent,
                max_nodes=compute.max_nodes,
                system_disk_gib=compute.system_disk_gib,
                system_disk_performance_level=compute.system_disk_performance_level,
                scratch_disk_gib=scratch.cloud_disk_gib,
                scratch_performance_level=scratch.performance_level,
                nvidia_driver_version=k8s.nvidia_driver_version,
                spot=p.cost.spot,
                bucket_policy_name=bucket.policy_name,
                kms_key_id=p.security.kms_key_id,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        outputs: dict[str, object] = {}
        if login is not None:
            outputs.update(
                login_node_public_ip=login.public_ip,
                login_node_private_ip=login.private_ip,
                login_node_instance_id=login.instance_id,
            )
        # Inside the cluster, through its own kubeconfig: the jobs' namespace, the file system as a static volume, and
        # the Kubeflow training operator; all after both node pools exist (the operator needs a node to run on).
        workloads = KubernetesWorkloads(
            f"{p.name}-workloads",
            KubernetesWorkloadsArgs(
                name=p.name,
                region=p.region,
                namespace=k8s.namespace,
                kubeconfig=cluster.kubeconfig,
                storage_kind=p.storage.kind,
                file_system_id=storage.file_system_id,
                mount_source=storage.mount_source,
                capacity_gib=p.storage.capacity_gib,
                operator_image=k8s.operator_image,
                depends_on=cluster.ready,
                # The bucket as a volume, mounted keylessly with the GPU pool's role (which holds the one-bucket policy).
                bucket=bucket.bucket,
                bucket_endpoint=bucket.internal_endpoint,
                node_role_name=cluster.gpu_role.role_name,
            ),
            opts=self.opts,
        )
        outputs.update(
            cluster_id=cluster.cluster.id,
            gpu_node_pool_id=cluster.gpu_pool.node_pool_id,
            kubernetes_namespace=workloads.namespace,
            min_nodes=compute.min_nodes,
            max_nodes=compute.max_nodes,
            max_gpus=compute.max_nodes * self.instance.gpu_count,
            nodes_per_job=compute.job_nodes,
            gpus_per_node=self.instance.gpu_count,
            fabric=self.fabric_link,
            shared_volume_claim=workloads.shared_claim,
            **({"bucket_volume_claim": workloads.bucket_claim} if workloads.bucket_claim is not None else {}),
            gpu_node_selector=dict([GPU_POOL_LABEL]),
            gpu_taint=dict(zip(("key", "value", "effect"), GPU_TAINT, strict=True)),
            job_api=PYTORCHJOB_API,
            training_operator_version=workloads.training_operator_version,
        )
        return outputs
