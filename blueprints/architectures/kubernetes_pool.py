"""The kubernetes-pool blueprint: an ACK Pro cluster whose GPU node pool many training jobs share."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, cast

from annotated_types import Le
from pydantic import Field, model_validator

from blueprints.advisor.budget import BudgetTier, StandingCost
from blueprints.architectures.base import Blueprint, Foundation
from blueprints.errors import FieldError
from blueprints.profile import ESS_MAX_SIZE, ComputeBase, ProfileBase
from blueprints.profile_strict import Strict

# The job engine's API, written into every PyTorchJob (`aitrain launch --kubernetes`).
PYTORCHJOB_API = "kubeflow.org/v1"


class KubernetesCompute(ComputeBase):
    """One GPU node type in an ACK node pool that the cluster autoscaler sizes between min and max."""

    min_nodes: int = Field(default=0, ge=0, le=ESS_MAX_SIZE, description="GPU node pool minimum (nodes); 0 lets the pool empty when no job runs.")
    max_nodes: int = Field(ge=1, le=ESS_MAX_SIZE, description="GPU node pool maximum (nodes): what all jobs together may use.")
    nodes_per_job: int | None = Field(default=None, ge=1, le=ESS_MAX_SIZE, description="Nodes one training job spans (one PyTorchJob worker per node); empty: max_nodes.")

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


class KubernetesSettings(Strict):
    """The ACK cluster: version, edition and what the stack installs on it (pinned, with documented defaults)."""

    version: str = Field(default="", description="Kubernetes version ACK offers (catalog); empty: the catalog's default.")
    system_instance_type: str = Field(default="ecs.g7.xlarge", description="CPU type of the system node pool (CoreDNS, the training operator, add-ons); a CPU type of the catalog.")
    system_nodes: int = Field(default=2, ge=1, le=ESS_MAX_SIZE, description="System node pool size (fixed); 2 keeps cluster services up while one node is replaced.")
    namespace: str = Field(default="training", description="Namespace of the volumes and the training jobs.")


class KubernetesProfile(ProfileBase):
    """Profile of the ``kubernetes-pool`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ("min_nodes", "max_nodes", "nodes_per_job")

    blueprint: Literal["kubernetes-pool"] = Field(description="Which blueprint builds this profile.")
    compute: KubernetesCompute = Field(description="GPU node type and the GPU node pool's bounds.")
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings, description="The ACK cluster's version and add-ons.")


class KubernetesPoolBlueprint(Blueprint):
    """Kubernetes pool: an ACK Pro cluster with a GPU node pool that many training jobs share.

    Recommended when several training jobs run at once on one pool of GPUs: Kubernetes places each job's
    pods, queues what does not fit and restarts failed workers, and the Kubeflow training operator turns a
    ``PyTorchJob`` into one worker per node. The GPU pool scales between ``min_nodes`` (0 allowed) and
    ``max_nodes``; the shared file system and the bucket are volumes every job mounts, and outlive the cluster.
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

    def compute_summary(self) -> dict[str, Any]:
        """GPU pool bounds and the job size."""
        compute = self.compute
        return {
            "min_nodes": compute.min_nodes,
            "max_nodes": compute.max_nodes,
            "max_gpus": compute.max_nodes * self.instance.gpu_count,
            "nodes_per_job": compute.job_nodes,
        }

    def node_software_summary(self) -> dict[str, Any]:
        """GPU software comes from ACK; the fabric is the type's."""
        from blueprints.architectures.base import FABRIC_SUMMARY

        return {"gpu_software": "installed by ACK on GPU nodes (NVIDIA driver and device plugin)", "fabric": FABRIC_SUMMARY[self.fabric_link]}

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
                pool_max_nodes=next(cast(int, m.le) for m in KubernetesCompute.model_fields["max_nodes"].metadata if isinstance(m, Le)),
            ),
        )

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """Empty between jobs; the pool holds every parallel job at once (max_nodes = nodes × jobs), each job spans ``nodes``."""
        return {"instance_type": instance_type, "min_nodes": 0, "max_nodes": nodes * jobs_in_parallel, "nodes_per_job": nodes}

    def expected_nodes(self) -> int:
        """A job spans nodes_per_job nodes (one worker each)."""
        return self.compute.job_nodes

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The ACK cluster, its node pools, the volumes and the job engine (components in ``blueprints.components``)."""
        raise NotImplementedError("kubernetes-pool: built by the cluster and engine components (issue 11, in progress)")
