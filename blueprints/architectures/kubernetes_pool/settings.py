"""The kubernetes-pool profile's ``kubernetes`` section: the ACK cluster's version, edition, add-ons, network ranges,
the jobs' namespace and the engines the stack installs in it (pinned, with documented defaults)."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from blueprints.architectures.kubernetes_pool.engines import EngineImages, JobEngine, check_image
from blueprints.catalog.engines import KUEUE_NAMESPACE, TRAINER_ENGINE, TRAINER_NAMESPACE
from blueprints.core.errors import FieldError
from blueprints.profile.strict import Strict, parse_ipv4_cidr

# An ACK node pool's scaling_config: min_size and max_size 0–1000 (pulumi-alicloud 4.0.0 cs NodePoolScalingConfigArgs);
# the provider's schema accepts max_size up to 2000 (aliyun/terraform-provider-alicloud@81c43b67
# alicloud/resource_alicloud_cs_kubernetes_node_pool.go), so the documented, stricter 1000 is kept.
NODE_POOL_MAX_SIZE = 1000

# Namespaces the stack must not create: it creates the jobs' namespace itself.
RESERVED_NAMESPACES = {
    "default": "every cluster already has it",
    "kubeflow": "the training operator's own namespace",
    KUEUE_NAMESPACE: "Kueue's own namespace",
    TRAINER_NAMESPACE: "Kubeflow Trainer's and JobSet's own namespace",
}

_ADDON_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_DRIVER_RE = re.compile(r"\d{3}\.\d{1,3}(\.\d{1,3})?")
# SLS project names (as profile_security.py, https://alibabacloud.com/help/en/sls/developer-reference/create-project).
_SLS_PROJECT_RE = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
_NAMESPACE_RE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


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
    job_engine: JobEngine = Field(
        default=TRAINER_ENGINE,
        description=(
            "The job engine the stack installs: trainer-v2 (Kubeflow Trainer v2.3.0 with JobSet; `aitrain launch "
            "--kubernetes` writes TrainJobs) or training-operator-v1 (the legacy Kubeflow training operator v1.9.0 "
            "and PyTorchJobs, kept for one release; both are admitted through Kueue)."
        ),
    )
    images: EngineImages = Field(
        default_factory=EngineImages,
        description="Controller images of Kueue, Kubeflow Trainer and JobSet (copies in your registry, by digest).",
    )
    operator_image: str = Field(
        default="kubeflow/training-operator:v1-5170a36",
        description="With job_engine training-operator-v1: image of the Kubeflow training operator v1.9.0 (default: "
        "the release's, from Docker Hub, which "
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
        return check_image(value, "registry.cn-shanghai.aliyuncs.com/team/training-operator:v1-5170a36")

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
    def _engine_fields(self) -> "KubernetesSettings":
        if self.job_engine == TRAINER_ENGINE and "operator_image" in self.model_fields_set:
            raise FieldError(
                "operator_image",
                self.operator_image,
                "applies to job_engine training-operator-v1 only; this stack runs Kubeflow Trainer v2 (set "
                "images.trainer and images.jobset for your registry's copies), or set job_engine training-operator-v1",
            )
        return self

    @model_validator(mode="after")
    def _addons_once(self) -> "KubernetesSettings":
        names = [a.name for a in self.addons]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise FieldError("addons", repeated, f"names {repeated} more than once; pin each add-on once")
        return self
