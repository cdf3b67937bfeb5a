"""The kubernetes-pool blueprint's profile: the GPU pool's bounds and the ACK cluster's settings, validated."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from blueprints.core.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile.context import context_of
from blueprints.profile.model import ComputeBase, ProfileBase
from blueprints.profile.strict import Strict, parse_ipv4_cidr

# Namespaces the stack must not create: it creates the jobs' namespace itself.
RESERVED_NAMESPACES = {"default": "every cluster already has it", "kubeflow": "the training operator's own namespace"}
# [registry[:port]/]repository[:tag][@sha256:digest] (the OCI distribution reference grammar, simplified).
_IMAGE_RE = re.compile(
    r"(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(?:@sha256:[a-f0-9]{64})?"
)

# An ACK node pool's scaling_config: min_size and max_size 0–1000 (pulumi-alicloud 4.0.0 cs NodePoolScalingConfigArgs);
# the provider's schema accepts max_size up to 2000 (aliyun/terraform-provider-alicloud@81c43b67
# alicloud/resource_alicloud_cs_kubernetes_node_pool.go), so the documented, stricter 1000 is kept.
NODE_POOL_MAX_SIZE = 1000

_ADDON_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_DRIVER_RE = re.compile(r"\d{3}\.\d{1,3}(\.\d{1,3})?")
# SLS project names (as profile_security.py, https://alibabacloud.com/help/en/sls/developer-reference/create-project).
_SLS_PROJECT_RE = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
_NAMESPACE_RE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


class KubernetesCompute(ComputeBase):
    """One GPU node type in an ACK node pool that the cluster autoscaler sizes between min and max."""

    min_nodes: int = Field(
        default=0,
        ge=0,
        le=NODE_POOL_MAX_SIZE,
        description="GPU node pool minimum (nodes), 0–1000; 0 lets the pool empty when no job runs.",
    )
    max_nodes: int = Field(
        ge=1,
        le=NODE_POOL_MAX_SIZE,
        description="GPU node pool maximum (nodes), 1–1000: what all jobs together may use.",
    )
    nodes_per_job: int | None = Field(
        default=None,
        ge=1,
        le=NODE_POOL_MAX_SIZE,
        description="Nodes one training job spans (one PyTorchJob worker per node); empty: max_nodes.",
    )
    scale_in_gpu_percent: float = Field(
        default=40.0,
        gt=0,
        lt=100,
        allow_inf_nan=False,
        description=(
            "The cluster autoscaler removes a GPU node whose GPU use stays below this (%; the article's 'scale in "
            "below 40 % GPU use'; ACK's default is 50)."
        ),
    )

    @model_validator(mode="after")
    def _bounds(self) -> "KubernetesCompute":
        if self.min_nodes > self.max_nodes:
            raise FieldError(
                "min_nodes",
                self.min_nodes,
                f"is greater than max_nodes ({self.max_nodes}); need 0 ≤ min_nodes ≤ max_nodes",
            )
        if self.nodes_per_job is not None and self.nodes_per_job > self.max_nodes:
            raise FieldError(
                "nodes_per_job",
                self.nodes_per_job,
                f"is greater than max_nodes ({self.max_nodes}); a job cannot span more nodes than the pool holds",
            )
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
            raise ValueError(
                "must be an add-on name: lowercase letters, digits and hyphens (e.g. ack-erdma-controller)"
            )
        return value

    @field_validator("config")
    @classmethod
    def _config(cls, value: str) -> str:
        if value:
            try:
                parsed = json.loads(value)
            except ValueError as exc:
                raise ValueError(
                    f'must be a JSON object ({exc}); e.g. \'{{"agent": {{"preferDriver": "ofed"}}}}\''
                ) from None
            if not isinstance(parsed, dict):
                raise ValueError("must be a JSON object, e.g. '{}'")
        return value


class KubernetesSettings(Strict):
    """The ACK cluster: version, edition and what the stack installs on it (pinned, with documented defaults)."""

    version: str | None = Field(
        default=None,
        description="Kubernetes version ACK offers (catalog kubernetes_versions.csv); empty: the catalog's default.",
    )
    # pulumi-alicloud 4.0.0 cs.ManagedKubernetes cluster_spec: ack.standard, ack.pro.small (Pro),
    # ack.pro.xlarge/2xlarge/4xlarge (provisioned).
    cluster_spec: Literal["ack.pro.small", "ack.pro.xlarge", "ack.pro.2xlarge", "ack.pro.4xlarge", "ack.standard"] = (
        Field(
            default="ack.pro.small",
            description=(
                "ACK edition: ack.pro.small (ACK Pro), ack.pro.xlarge/2xlarge/4xlarge (provisioned control plane; "
                "4xlarge needs a whitelist) or ack.standard."
            ),
        )
    )
    system_instance_type: str = Field(
        default="ecs.g7.xlarge",
        description=(
            "CPU type of the system node pool (CoreDNS, the training operator, add-ons); a CPU type of the catalog."
        ),
    )
    system_nodes: int = Field(
        default=2,
        ge=1,
        le=NODE_POOL_MAX_SIZE,
        description="System node pool size (fixed); 2 keeps cluster services up while one node is replaced.",
    )
    # pulumi-alicloud 4.0.0 cs.NodePool image_type (x86 Linux values; Windows and Arm cannot run the NVIDIA GPU types).
    image_type: Literal[
        "AliyunLinux3",
        "AliyunLinux3ContainerOptimized",
        "ContainerOS",
        "Ubuntu",
        "AliyunLinuxSecurity",
        "AliyunLinux4",
        "AliyunLinux4ContainerOptimized",
        "AliyunLinux4Security",
    ] = Field(
        default="AliyunLinux3",
        description="Node OS image type of both node pools (pulumi-alicloud cs.NodePool image_type).",
    )
    nvidia_driver_version: str | None = Field(
        default=None,
        description=(
            "Pin the GPU nodes' NVIDIA driver (node-pool label ack.aliyun.com/nvidia-driver-version, e.g. 550.144.03); "
            "applies only to nodes added after it is set. Empty: ACK's default."
        ),
    )
    pod_cidr: str | None = Field(
        default=None,
        description=(
            "Not used: the cluster runs Terway (for NetworkPolicy), whose pods take VPC addresses from the compute "
            "vSwitches; a value is refused (it was Flannel's pod network)."
        ),
    )
    service_cidr: str = Field(
        default="172.21.0.0/20",
        description="Service network; must not overlap network.vpc_cidr. Fixed once the cluster exists.",
    )
    addons: tuple[AddonPin, ...] = Field(
        default=(),
        description="Add-ons to pin besides, or instead of, the catalog defaults (same name replaces the default).",
    )
    audit_log_project: str | None = Field(
        default=None,
        description=(
            "SLS project for the API-server audit and control-plane logs; empty: ACK creates k8s-log-<cluster id>."
        ),
    )
    public_api_endpoint: bool = Field(
        default=False,
        description=(
            "Give the API server an internet-facing endpoint (needs network.admin_cidr, which the stack cannot apply "
            "to it: guardrail AIT033 is an error until you set the load balancer's access control by hand and skip it "
            "with a reason); default: reachable from the VPC only."
        ),
    )
    namespace: str = Field(default="training", description="Namespace of the volumes and the training jobs.")
    operator_image: str = Field(
        default="kubeflow/training-operator:v1-5170a36",
        description="Image of the Kubeflow training operator v1.9.0 (default: the release's, from Docker Hub, which "
        "nodes in mainland-China regions often cannot pull); "
        "give a copy in your own registry (e.g. ACR), pinned by digest (<registry>/<repo>@sha256:<64 hex>): a tag is "
        "mutable, so guardrail AIT038 warns on one. "
        "No digest of the release's image is citable from a stored source, so the default stays the tag.",
    )

    @field_validator("nvidia_driver_version")
    @classmethod
    def _driver(cls, value: str | None) -> str | None:
        if value is not None and not _DRIVER_RE.fullmatch(value):
            raise ValueError("must be an NVIDIA driver version like 550.144.03")
        return value

    @field_validator("service_cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        net = parse_ipv4_cidr(value, "172.20.0.0/16")
        if not net.is_private:
            raise ValueError(
                f"{value} is not a private range; use one inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"
            )
        return str(net)

    @field_validator("audit_log_project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        if value is not None and not _SLS_PROJECT_RE.fullmatch(value):
            raise ValueError(
                "must be an SLS project name: 3–63 lowercase letters, digits "
                "and hyphens, starting and ending with a letter or digit"
            )
        return value

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        if not _NAMESPACE_RE.fullmatch(value) or value.startswith("kube-"):
            raise ValueError(
                "must be a Kubernetes namespace: 1–63 lowercase letters, digits and hyphens, not starting with 'kube-'"
            )
        if value in RESERVED_NAMESPACES:
            # The stack creates this namespace: 'default' always exists, and 'kubeflow' is the training operator's own.
            raise ValueError(
                f"is a namespace the stack cannot create ({RESERVED_NAMESPACES[value]}); pick another, e.g. training"
            )
        return value

    @field_validator("operator_image")
    @classmethod
    def _operator_image(cls, value: str) -> str:
        if not _IMAGE_RE.fullmatch(value):
            raise ValueError(
                "must be a container image reference: [registry/]repository[:tag][@sha256:digest], lowercase "
                "repository, no spaces (e.g. registry.cn-shanghai.aliyuncs.com/team/training-operator:v1-5170a36)"
            )
        return value

    @model_validator(mode="after")
    def _terway_only(self) -> "KubernetesSettings":
        # Terway enforces NetworkPolicy (the jobs' namespace is default-deny);
        # Flannel enforces none and its pod_cidr has no meaning here.
        if self.pod_cidr is not None:
            raise FieldError(
                "pod_cidr",
                self.pod_cidr,
                "does not apply: the cluster runs Terway (for NetworkPolicy), whose pods take VPC addresses from the "
                "compute vSwitches; remove the field",
            )
        if any(a.name == "flannel" for a in self.addons):
            raise FieldError(
                "addons",
                "flannel",
                "is refused: Flannel enforces no NetworkPolicy, and the cluster runs Terway (terway-eniip) for the "
                "jobs' default-deny policy; remove the pin",
            )
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
    takes_reservation: ClassVar[bool] = True

    blueprint: Literal["kubernetes-pool"] = Field(description="Which blueprint builds this profile.")
    compute: KubernetesCompute = Field(description="GPU node type and the GPU node pool's bounds.")
    kubernetes: KubernetesSettings = Field(
        default_factory=KubernetesSettings, description="The ACK cluster's version and add-ons."
    )

    @property
    def reserved_nodes(self) -> int | None:
        """The GPU pool draws from the reservation up to its max_nodes (every node the autoscaler may add)."""
        return self.compute.max_nodes

    @model_validator(mode="after")
    def _ack_fits(self, info: ValidationInfo) -> "KubernetesProfile":
        catalog = context_of(info).catalog
        ack, k8s = catalog.kubernetes, self.kubernetes
        if k8s.version and k8s.version not in ack.version_names:
            hint = did_you_mean(k8s.version, ack.version_names)
            raise FieldError(
                "kubernetes.version",
                k8s.version,
                f"is not a version ACK offers in the catalog; allowed: {join_allowed(ack.version_names)}"
                + (f"; {hint}" if hint else ""),
            )
        instance = catalog.instance_types.get(self.compute.instance_type)
        if instance is not None and instance.is_gpu and not ack.supports_family(instance.family):
            supported = sorted(
                t for t, it in catalog.instance_types.items() if it.is_gpu and ack.supports_family(it.family)
            )
            raise FieldError(
                "compute.instance_type",
                self.compute.instance_type,
                f"is of family {instance.family}, which ACK does not list as a GPU node-pool family (catalog "
                f"kubernetes_gpu_families.csv); allowed: {join_allowed(supported, limit=40)}",
            )
        system = catalog.instance_types.get(k8s.system_instance_type)
        if system is None or system.is_gpu:
            cpu_types = sorted(name for name, it in catalog.instance_types.items() if not it.is_gpu)
            raise FieldError(
                "kubernetes.system_instance_type",
                k8s.system_instance_type,
                f"is not a CPU instance type in the catalog; allowed: {join_allowed(cpu_types, limit=40)}",
            )
        if "install_pytorch" in self.compute.model_fields_set:
            raise FieldError(
                "compute.install_pytorch",
                self.compute.install_pytorch,
                "does not apply to kubernetes-pool: PyTorch comes from each "
                "job's container image, not from the nodes; remove the field",
            )
        if self.cost.off_hours.enabled:
            raise FieldError(
                "cost.off_hours.enabled",
                True,
                "does not apply to kubernetes-pool: with compute.min_nodes 0 the cluster autoscaler removes idle GPU "
                "nodes, so no schedule is needed; set it false (or remove cost.off_hours)",
            )
        vpc = ipaddress.ip_network(self.network.vpc_cidr)
        for field in ("service_cidr",):
            value = getattr(k8s, field)
            if ipaddress.ip_network(value).overlaps(vpc):
                raise FieldError(
                    f"kubernetes.{field}",
                    value,
                    f"overlaps network.vpc_cidr {self.network.vpc_cidr}; pick a "
                    "range outside the VPC (e.g. 172.20.0.0/16 with a 10.x VPC)",
                )
        if self.storage.kind == "cpfs":
            raise FieldError(
                "storage.kind",
                "cpfs",
                "has no verified static-volume recipe for ACK in aitrain (the CPFS CSI docs cover the old CPFS client "
                "only); allowed here: nas, extreme_nas",
            )
        if k8s.public_api_endpoint and self.network.admin_cidr is None:
            raise FieldError(
                "kubernetes.public_api_endpoint",
                True,
                "needs network.admin_cidr (the range allowed to reach the API server); set it, or leave the endpoint "
                "private and reach it from the VPC",
            )
        return self
