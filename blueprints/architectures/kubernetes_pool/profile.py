"""The kubernetes-pool blueprint's profile: the GPU pool's bounds and the ACK cluster's settings, validated."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from pydantic import Field, ValidationInfo, model_validator

from blueprints.architectures.kubernetes_pool.queues import QueueSettings, check_queues
from blueprints.architectures.kubernetes_pool.settings import NODE_POOL_MAX_SIZE, KubernetesSettings
from blueprints.core.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile.context import context_of
from blueprints.profile.model import ComputeBase, ProfileBase

if TYPE_CHECKING:
    from blueprints.catalog import Catalog
    from blueprints.profile.sections import Scratch


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


class GpuPool(Protocol):
    """What the ACK builders read of a GPU node pool's compute section: kubernetes-pool's autoscaled ECS pool, or
    lingjun-cluster's Lingjun node pool (bought nodes, min = max)."""

    @property
    def min_nodes(self) -> int: ...

    @property
    def max_nodes(self) -> int: ...

    @property
    def job_nodes(self) -> int: ...

    @property
    def scale_in_gpu_percent(self) -> float: ...

    @property
    def system_disk_gib(self) -> int: ...

    @property
    def system_disk_performance_level(self) -> str: ...

    def scratch(self, catalog: "Catalog") -> "Scratch": ...


class AckProfile(ProfileBase):
    """A profile whose GPUs are an ACK node pool (kubernetes-pool, lingjun-cluster): the cluster's settings, the teams'
    queues and the checks every ACK cluster needs; a subclass says what its GPU pool is."""

    kubernetes: KubernetesSettings = Field(
        default_factory=KubernetesSettings, description="The ACK cluster's version and add-ons."
    )
    queues: QueueSettings = Field(
        default_factory=QueueSettings,
        description="Teams sharing the GPU pool through Kueue: GPU quotas, borrowing, job priorities, all-or-nothing "
        "start timeout; empty: one team 'default' holding the whole pool.",
    )

    def gpu_pool(self) -> GpuPool:
        """The GPU node pool's compute section."""
        raise NotImplementedError

    @model_validator(mode="after")
    def _ack_cluster_fits(self, info: ValidationInfo) -> "AckProfile":
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
        system = catalog.instance_types.get(k8s.system_instance_type)
        if system is None or system.is_gpu:
            cpu_types = sorted(name for name, it in catalog.instance_types.items() if not it.is_gpu)
            raise FieldError(
                "kubernetes.system_instance_type",
                k8s.system_instance_type,
                f"is not a CPU instance type in the catalog; allowed: {join_allowed(cpu_types, limit=40)}",
            )
        vpc = ipaddress.ip_network(self.network.vpc_cidr)
        if ipaddress.ip_network(k8s.service_cidr).overlaps(vpc):
            raise FieldError(
                "kubernetes.service_cidr",
                k8s.service_cidr,
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


class KubernetesProfile(AckProfile):
    """Profile of the ``kubernetes-pool`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ("min_nodes", "max_nodes", "nodes_per_job")
    takes_reservation: ClassVar[bool] = True

    blueprint: Literal["kubernetes-pool"] = Field(description="Which blueprint builds this profile.")
    compute: KubernetesCompute = Field(description="GPU node type and the GPU node pool's bounds.")

    @property
    def reserved_nodes(self) -> int | None:
        """The GPU pool draws from the reservation up to its max_nodes (every node the autoscaler may add)."""
        return self.compute.max_nodes

    def gpu_pool(self) -> KubernetesCompute:
        """The autoscaled ECS GPU pool."""
        return self.compute

    @model_validator(mode="after")
    def _ack_fits(self, info: ValidationInfo) -> "KubernetesProfile":
        catalog = context_of(info).catalog
        ack = catalog.kubernetes
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
        return self

    @model_validator(mode="after")
    def _queues_fit(self, info: ValidationInfo) -> "KubernetesProfile":
        instance = context_of(info).catalog.instance_types.get(self.compute.instance_type)
        if instance is not None and instance.is_gpu:  # otherwise the instance type's own error is the one to show
            check_queues(
                self.queues,
                max_nodes=self.compute.max_nodes,
                job_nodes=self.compute.job_nodes,
                gpus_per_node=instance.gpu_count,
            )
        return self
