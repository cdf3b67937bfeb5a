"""The kubernetes-pool blueprint: an ACK Pro cluster whose GPU node pool many training jobs share."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from blueprints.advisor.budget import BudgetTier, StandingCost
from blueprints.architectures.base import FABRIC_SUMMARY, Blueprint, Foundation
from blueprints.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile import ComputeBase, ProfileBase
from blueprints.profile_context import context_of
from blueprints.profile_strict import Strict, parse_ipv4_cidr

if TYPE_CHECKING:  # components load with the Pulumi SDK, only when resources are built (see base.py)
    from blueprints.catalog.kubernetes import AckAddon

# Namespaces the stack must not create: it creates the jobs' namespace itself.
RESERVED_NAMESPACES = {"default": "every cluster already has it", "kubeflow": "the training operator's own namespace"}
# [registry[:port]/]repository[:tag][@sha256:digest] (the OCI distribution reference grammar, simplified).
_IMAGE_RE = re.compile(r"(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(?:@sha256:[a-f0-9]{64})?")

# The job engine's API, written into every PyTorchJob (`aitrain launch --kubernetes`).
PYTORCHJOB_API = "kubeflow.org/v1"

# An ACK node pool's scaling_config: min_size and max_size 0–1000 (pulumi-alicloud 4.0.0 cs NodePoolScalingConfigArgs);
# the provider's schema accepts max_size up to 2000 (aliyun/terraform-provider-alicloud@81c43b67
# alicloud/resource_alicloud_cs_kubernetes_node_pool.go), so the documented, stricter 1000 is kept.
NODE_POOL_MAX_SIZE = 1000

# On ACK the ERIs come from the ack-erdma-controller add-on, not from the node's launch (ready-to-train.md §7b).
ERDMA_SUMMARY = (
    "eRDMA: the ack-erdma-controller add-on (preferDriver ofed) gives GPU nodes ERIs; a job's pods request aliyun/erdma "
    "and their image needs the eRDMA user-space libraries (libibverbs1, ibverbs-providers, librdmacm1 from mirrors.aliyun.com/erdma)"
)

_ADDON_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_DRIVER_RE = re.compile(r"\d{3}\.\d{1,3}(\.\d{1,3})?")
# SLS project names (as profile_security.py, https://alibabacloud.com/help/en/sls/developer-reference/create-project).
_SLS_PROJECT_RE = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
_NAMESPACE_RE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


class KubernetesCompute(ComputeBase):
    """One GPU node type in an ACK node pool that the cluster autoscaler sizes between min and max."""

    min_nodes: int = Field(default=0, ge=0, le=NODE_POOL_MAX_SIZE, description="GPU node pool minimum (nodes), 0–1000; 0 lets the pool empty when no job runs.")
    max_nodes: int = Field(ge=1, le=NODE_POOL_MAX_SIZE, description="GPU node pool maximum (nodes), 1–1000: what all jobs together may use.")
    nodes_per_job: int | None = Field(default=None, ge=1, le=NODE_POOL_MAX_SIZE, description="Nodes one training job spans (one PyTorchJob worker per node); empty: max_nodes.")
    scale_in_gpu_percent: float = Field(
        default=40.0, gt=0, lt=100, allow_inf_nan=False,
        description="The cluster autoscaler removes a GPU node whose GPU use stays below this (%; the article's 'scale in below 40 % GPU use'; ACK's default is 50).",
    )

    @model_validator(mode="after")
    def _bounds(self) -> "KubernetesCompute":
        if self.min_nodes > self.max_nodes:
            raise FieldError("min_nodes", self.min_nodes, f"is greater than max_nodes ({self.max_nodes}); need 0 ≤ min_nodes ≤ max_nodes")
        if self.nodes_per_job is not None and self.nodes_per_job > self.max_nodes:
            raise FieldError("nodes_per_job", self.nodes_per_job, f"is greater than max_nodes ({self.max_nodes}); a job cannot span more nodes than the pool holds")
        return self

    @property
    def job_nodes(self) -> int:
        """Nodes one job spans."""
        return self.nodes_per_job if self.nodes_per_job is not None else self.max_nodes


class AddonPin(Strict):
    """One ACK add-on installed when the cluster is created (replaces the catalog default of the same name)."""

    name: str = Field(description="Add-on name as ACK spells it, e.g. csi-plugin.")
    version: str = Field(default="", description="Add-on version; empty: ACK's default for the cluster version.")
    config: str = Field(default="", description="Add-on configuration, a JSON object as text; empty: none.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _ADDON_RE.fullmatch(value):
            raise ValueError("must be an add-on name: lowercase letters, digits and hyphens (e.g. ack-erdma-controller)")
        return value

    @field_validator("config")
    @classmethod
    def _config(cls, value: str) -> str:
        if value:
            try:
                parsed = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"must be a JSON object ({exc}); e.g. '{{\"agent\": {{\"preferDriver\": \"ofed\"}}}}'") from None
            if not isinstance(parsed, dict):
                raise ValueError("must be a JSON object, e.g. '{}'")
        return value


class KubernetesSettings(Strict):
    """The ACK cluster: version, edition and what the stack installs on it (pinned, with documented defaults)."""

    version: str | None = Field(default=None, description="Kubernetes version ACK offers (catalog kubernetes_versions.csv); empty: the catalog's default.")
    # pulumi-alicloud 4.0.0 cs.ManagedKubernetes cluster_spec: ack.standard, ack.pro.small (Pro), ack.pro.xlarge/2xlarge/4xlarge (provisioned).
    cluster_spec: Literal["ack.pro.small", "ack.pro.xlarge", "ack.pro.2xlarge", "ack.pro.4xlarge", "ack.standard"] = Field(
        default="ack.pro.small", description="ACK edition: ack.pro.small (ACK Pro), ack.pro.xlarge/2xlarge/4xlarge (provisioned control plane; 4xlarge needs a whitelist) or ack.standard."
    )
    system_instance_type: str = Field(default="ecs.g7.xlarge", description="CPU type of the system node pool (CoreDNS, the training operator, add-ons); a CPU type of the catalog.")
    system_nodes: int = Field(default=2, ge=1, le=NODE_POOL_MAX_SIZE, description="System node pool size (fixed); 2 keeps cluster services up while one node is replaced.")
    # pulumi-alicloud 4.0.0 cs.NodePool image_type (x86 Linux values; Windows and Arm cannot run the NVIDIA GPU types).
    image_type: Literal[
        "AliyunLinux3", "AliyunLinux3ContainerOptimized", "ContainerOS", "Ubuntu", "AliyunLinuxSecurity", "AliyunLinux4", "AliyunLinux4ContainerOptimized", "AliyunLinux4Security"
    ] = Field(default="AliyunLinux3", description="Node OS image type of both node pools (pulumi-alicloud cs.NodePool image_type).")
    nvidia_driver_version: str | None = Field(
        default=None,
        description="Pin the GPU nodes' NVIDIA driver (node-pool label ack.aliyun.com/nvidia-driver-version, e.g. 550.144.03); applies only to nodes added after it is set. Empty: ACK's default.",
    )
    pod_cidr: str = Field(default="172.20.0.0/16", description="Flannel pod network; must not overlap network.vpc_cidr or service_cidr. Fixed once the cluster exists.")
    service_cidr: str = Field(default="172.21.0.0/20", description="Service network; must not overlap network.vpc_cidr or pod_cidr. Fixed once the cluster exists.")
    addons: tuple[AddonPin, ...] = Field(default=(), description="Add-ons to pin besides, or instead of, the catalog defaults (same name replaces the default).")
    audit_log_project: str | None = Field(default=None, description="SLS project for the API-server audit and control-plane logs; empty: ACK creates k8s-log-<cluster id>.")
    public_api_endpoint: bool = Field(default=False, description="Give the API server an internet-facing load balancer (needs network.admin_cidr); default: reachable from the VPC only.")
    namespace: str = Field(default="training", description="Namespace of the volumes and the training jobs.")
    operator_image: str = Field(
        default="kubeflow/training-operator:v1-5170a36",
        description="Image of the Kubeflow training operator v1.9.0 (default: the release's, from Docker Hub, which nodes in mainland-China regions often cannot pull); "
        "give a copy in your own registry (e.g. ACR) if so.",
    )

    @field_validator("nvidia_driver_version")
    @classmethod
    def _driver(cls, value: str | None) -> str | None:
        if value is not None and not _DRIVER_RE.fullmatch(value):
            raise ValueError("must be an NVIDIA driver version like 550.144.03")
        return value

    @field_validator("pod_cidr", "service_cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        net = parse_ipv4_cidr(value, "172.20.0.0/16")
        if not net.is_private:
            raise ValueError(f"{value} is not a private range; use one inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16")
        return str(net)

    @field_validator("audit_log_project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        if value is not None and not _SLS_PROJECT_RE.fullmatch(value):
            raise ValueError("must be an SLS project name: 3–63 lowercase letters, digits and hyphens, starting and ending with a letter or digit")
        return value

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        if not _NAMESPACE_RE.fullmatch(value) or value.startswith("kube-"):
            raise ValueError("must be a Kubernetes namespace: 1–63 lowercase letters, digits and hyphens, not starting with 'kube-'")
        if value in RESERVED_NAMESPACES:
            # The stack creates this namespace: 'default' always exists, and 'kubeflow' is the training operator's own.
            raise ValueError(f"is a namespace the stack cannot create ({RESERVED_NAMESPACES[value]}); pick another, e.g. training")
        return value

    @field_validator("operator_image")
    @classmethod
    def _operator_image(cls, value: str) -> str:
        if not _IMAGE_RE.fullmatch(value):
            raise ValueError("must be a container image reference: [registry/]repository[:tag][@sha256:digest], lowercase repository, no spaces (e.g. registry.cn-shanghai.aliyuncs.com/team/training-operator:v1-5170a36)")
        return value

    @model_validator(mode="after")
    def _networks_apart(self) -> "KubernetesSettings":
        if ipaddress.ip_network(self.pod_cidr).overlaps(ipaddress.ip_network(self.service_cidr)):
            raise FieldError("service_cidr", self.service_cidr, f"overlaps pod_cidr {self.pod_cidr}; give each its own range")
        return self

    @model_validator(mode="after")
    def _addons_once(self) -> "KubernetesSettings":
        names = [a.name for a in self.addons]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise FieldError("addons", repeated, f"names {repeated} more than once; pin each add-on once")
        return self


class KubernetesProfile(ProfileBase):
    """Profile of the ``kubernetes-pool`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ("min_nodes", "max_nodes", "nodes_per_job")

    blueprint: Literal["kubernetes-pool"] = Field(description="Which blueprint builds this profile.")
    compute: KubernetesCompute = Field(description="GPU node type and the GPU node pool's bounds.")
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings, description="The ACK cluster's version and add-ons.")

    @model_validator(mode="after")
    def _ack_fits(self, info: ValidationInfo) -> "KubernetesProfile":
        catalog = context_of(info).catalog
        ack, k8s = catalog.kubernetes, self.kubernetes
        if k8s.version and k8s.version not in ack.version_names:
            hint = did_you_mean(k8s.version, ack.version_names)
            raise FieldError("kubernetes.version", k8s.version, f"is not a version ACK offers in the catalog; allowed: {join_allowed(ack.version_names)}" + (f"; {hint}" if hint else ""))
        instance = catalog.instance_types.get(self.compute.instance_type)
        if instance is not None and instance.is_gpu and not ack.supports_family(instance.family):
            supported = sorted(t for t, it in catalog.instance_types.items() if it.is_gpu and ack.supports_family(it.family))
            raise FieldError(
                "compute.instance_type", self.compute.instance_type,
                f"is of family {instance.family}, which ACK does not list as a GPU node-pool family (catalog kubernetes_gpu_families.csv); allowed: {join_allowed(supported, limit=40)}",
            )
        system = catalog.instance_types.get(k8s.system_instance_type)
        if system is None or system.is_gpu:
            cpu_types = sorted(name for name, it in catalog.instance_types.items() if not it.is_gpu)
            raise FieldError("kubernetes.system_instance_type", k8s.system_instance_type, f"is not a CPU instance type in the catalog; allowed: {join_allowed(cpu_types, limit=40)}")
        if "install_pytorch" in self.compute.model_fields_set:
            raise FieldError(
                "compute.install_pytorch", self.compute.install_pytorch,
                "does not apply to kubernetes-pool: PyTorch comes from each job's container image, not from the nodes; remove the field",
            )
        if self.cost.off_hours.enabled:
            raise FieldError(
                "cost.off_hours.enabled", True,
                "does not apply to kubernetes-pool: with compute.min_nodes 0 the cluster autoscaler removes idle GPU nodes, so no schedule is needed; set it false (or remove cost.off_hours)",
            )
        vpc = ipaddress.ip_network(self.network.vpc_cidr)
        for field in ("pod_cidr", "service_cidr"):
            value = getattr(k8s, field)
            if ipaddress.ip_network(value).overlaps(vpc):
                raise FieldError(f"kubernetes.{field}", value, f"overlaps network.vpc_cidr {self.network.vpc_cidr}; pick a range outside the VPC (e.g. 172.20.0.0/16 with a 10.x VPC)")
        if self.storage.kind == "cpfs":
            raise FieldError(
                "storage.kind", "cpfs",
                "has no verified static-volume recipe for ACK in aitrain (the CPFS CSI docs cover the old CPFS client only); allowed here: nas, extreme_nas",
            )
        if k8s.public_api_endpoint and self.network.admin_cidr is None:
            raise FieldError(
                "kubernetes.public_api_endpoint", True,
                "needs network.admin_cidr (the range allowed to reach the API server); set it, or leave the endpoint private and reach it from the VPC",
            )
        return self


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
    park_refusal = "a Kubernetes GPU pool parks itself: set compute.min_nodes 0 and the cluster autoscaler removes idle GPU nodes"
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
            "api_endpoint": f"public, meant for {self.profile.network.admin_cidr} (no ACL set by the stack: see the notes)" if k8s.public_api_endpoint else "private (VPC only)",
            "audit_log": f"API-server audit log to SLS project {k8s.audit_log_project}" if k8s.audit_log_project else "API-server audit log to the SLS project ACK creates (k8s-log-<cluster id>)",
            "node_pools": f"system: {k8s.system_nodes} × {k8s.system_instance_type}; gpu: {compute.min_nodes}–{compute.max_nodes} × {self.instance.instance_type} (cluster autoscaler)",
            "addons": ", ".join(f"{name}@{version or 'ACK default'}" for name, version, _ in self.addons()),
        }

    def node_software_summary(self) -> dict[str, Any]:
        """GPU software comes from ACK; PyTorch from each job's image; the fabric is the type's."""
        driver = self.settings.nvidia_driver_version
        return {
            "gpu_software": "installed by ACK on GPU nodes (NVIDIA driver and device plugin)"
            + (f"; driver pinned to {driver} for nodes added after the label is set" if driver else "; driver: ACK's default for the node image")
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
            StandingCost("ACK Pro cluster management fee", 1, "cluster-hours", item="ack", price_tier="pro-cluster-fee"),
            StandingCost(f"system node pool ({system_nodes} × {system_type})", system_nodes, "node-hours", instance_type=system_type),
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
                "shared-pool", cls.name, 0.0, "Kubernetes GPU pool shared by parallel jobs", cls.compute_from_choice,
                spot_when_allowed=True, scales_to_zero=True, min_jobs_in_parallel=2, standing=standing, why_parallel=why,
                # The pool's own bound (compute.max_nodes), so a recommended pool is always one the profile accepts.
                pool_max_nodes=NODE_POOL_MAX_SIZE,
            ),
        )

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """Empty between jobs; the pool holds every parallel job at once (max_nodes = nodes × jobs), each job spans ``nodes``."""
        return {"instance_type": instance_type, "min_nodes": 0, "max_nodes": nodes * jobs_in_parallel, "nodes_per_job": nodes}

    def expected_nodes(self) -> int:
        """A job spans nodes_per_job nodes (one worker each)."""
        return self.compute.job_nodes

    def security_notes(self) -> list[str]:
        """The storage notes (no host registry on Kubernetes), and what a reviewer of an ACK stack must know."""
        from blueprints.profile_security import storage_notes

        notes = storage_notes(self.profile, host_registry=False)
        k8s = self.settings
        if k8s.public_api_endpoint:
            notes.append(
                f"The API server gets an internet-facing load balancer. pulumi-alicloud 4.0.0 cs.ManagedKubernetes has no argument that restricts it "
                f"to network.admin_cidr ({self.profile.network.admin_cidr}); set the API server SLB's access control to that range after deployment, or keep the endpoint private."
            )
        notes.append(
            f"The GPU pool runs as its own RAM role {self.node_role_name} (trusts ecs.aliyuncs.com only; the bucket's one-bucket policy attached), "
            "not ACK's default worker role: node components that call cloud APIs with the node's credentials get only what that role grants."
        )
        if self.fabric_link == "erdma":
            notes.append("eRDMA: the ack-erdma-controller add-on creates and attaches ERIs itself (ecs:CreateNetworkInterface, AttachNetworkInterface); check it has those permissions on this cluster before the first job.")
        if self.compute.scratch(self.catalog).local_nvme:
            notes.append(
                f"{self.instance.instance_type} brings local NVMe, so the GPU pool gets no scratch data disk; on ACK nothing formats or mounts the NVMe, "
                "so /mnt/scratch does not exist on these nodes (use an emptyDir or a local volume in the job)."
            )
        notes.append("The cluster has no deletion protection: it holds no data (the file system and the bucket live outside it and are retained), so `pulumi destroy` may remove it.")
        return notes

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The login node (optional), the ACK cluster with its system and GPU node pools, and the seam's outputs."""
        from blueprints.components.kubernetes_cluster import GPU_POOL_LABEL, GPU_TAINT, KubernetesCluster, KubernetesClusterArgs
        from blueprints.components.kubernetes_workloads import KubernetesWorkloads, KubernetesWorkloadsArgs
        from blueprints.layout import check_vswitch_room

        network, storage, bucket = foundation
        p, compute, k8s = self.profile, self.compute, self.settings
        login = self.build_login_node(network, self.image().image_id) if p.access.login_node else None
        # Every node of both pools (and the login node) must fit the compute zone's vSwitch, or the autoscaler fails later.
        zones = set(network.compute_zone_ids) | ({p.storage_zone} if login is not None else set())
        check_vswitch_room(p.network.vpc_cidr, compute.max_nodes + k8s.system_nodes + (1 if login is not None else 0), len(zones))
        scratch = compute.scratch(self.catalog)
        cluster = KubernetesCluster(
            self.compute_unit_name,
            KubernetesClusterArgs(
                version=self.kubernetes_version,
                cluster_spec=k8s.cluster_spec,
                vswitch_ids=[network.vswitch_id(zone) for zone in network.compute_zone_ids],
                security_group_id=network.security_group_id,
                pod_cidr=k8s.pod_cidr,
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
            outputs.update(login_node_public_ip=login.public_ip, login_node_private_ip=login.private_ip, login_node_instance_id=login.instance_id)
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
