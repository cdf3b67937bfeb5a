"""The fixed-cluster blueprint's meaning: N multi-GPU nodes on one low-latency fabric with a shared storage pool."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, model_validator

from blueprints.advisor.budget import BudgetTier
from blueprints.architectures.ecs.spec import EcsSpec
from blueprints.core.errors import FieldError
from blueprints.core.layout import MAX_INSTANCES_PER_SET, instance_batches
from blueprints.profile.context import context_of
from blueprints.profile.model import ComputeBase, ProfileBase
from blueprints.profile.preprocess import PreprocessGroup, preprocess_summary

if TYPE_CHECKING:
    from blueprints.catalog import Catalog

# An eRDMA cluster is one ecs.Instance per node (instance sets cannot ask for an ERI), so its plan grows by one
# resource per node (about 12 ms and 0.5 MB each under the offline preview, measured with `aitrain plan`). aitrain's
# own limit, not the cloud's: 256 nodes (2,048 GPUs on 8-GPU types) keeps a plan reviewable; a larger eRDMA fleet
# is an autoscaling pool with min_nodes = max_nodes, whose one scaling configuration gives every node an ERI.
ERI_CLUSTER_MAX_NODES = 256

# A node's name in `aitrain replace-node` and compute.replace_nodes: "node-" and its index (its ecs.Instance's name).
NODE_NAME_RE = re.compile(r"^node-[0-9]{3}$")


def node_names(nodes: int) -> tuple[str, ...]:
    """The names of a cluster's nodes, in index order (node-000, node-001, ...)."""
    return tuple(f"node-{index:03d}" for index in range(nodes))


class FixedCompute(ComputeBase):
    """A fixed number of identical GPU nodes."""

    nodes: int = Field(
        ge=0,
        le=2000,
        description=(
            f"Number of nodes (instances), 0–2000 (eRDMA types: up to {ERI_CLUSTER_MAX_NODES}); 0 parks the cluster: "
            "compute removed, storage and bucket kept."
        ),
    )

    replace_nodes: dict[str, int] = Field(
        default_factory=dict,
        description=(
            "Nodes to replace on the next `pulumi up`: node name (node-000, node-001, ...) → generation (1, 2, ...). "
            "Raising a node's generation replaces exactly that node (written by `aitrain replace-node`); eRDMA types "
            "only, whose nodes are one ecs.Instance each. Keep the entries: removing one changes only a tag in place."
        ),
    )

    @model_validator(mode="after")
    def _replace_nodes_exist(self, info: ValidationInfo) -> "FixedCompute":
        if not self.replace_nodes:
            return self
        allowed = node_names(self.nodes)
        for name, generation in self.replace_nodes.items():
            if not NODE_NAME_RE.match(name):
                raise FieldError(f"replace_nodes.{name}", name, "must be a node name: node- and 3 digits (node-003)")
            if self.nodes and name not in allowed:
                raise FieldError(
                    f"replace_nodes.{name}",
                    name,
                    f"is not a node of this {self.nodes}-node cluster ({allowed[0]} … {allowed[-1]}); remove it",
                )
            if isinstance(generation, bool) or generation < 1:
                raise FieldError(f"replace_nodes.{name}", generation, "must be a generation: a whole number ≥ 1")
        return self

    @model_validator(mode="after")
    def _eri_cluster_size(self, info: ValidationInfo) -> "FixedCompute":
        instance = context_of(info).catalog.instance_types.get(self.instance_type)
        if instance is not None and instance.fabric_link == "erdma" and self.nodes > ERI_CLUSTER_MAX_NODES:
            raise FieldError(
                "nodes",
                self.nodes,
                f"is more than {ERI_CLUSTER_MAX_NODES}, aitrain's limit for an eRDMA fixed cluster "
                f"({self.instance_type} gets one ecs.Instance per node "
                "so that each has an ERI); use blueprint 'autoscaling-pool' "
                "with min_nodes = max_nodes for a larger fleet",
            )
        return self


class FixedClusterProfile(ProfileBase):
    """Profile of the ``fixed-cluster`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ("nodes",)
    takes_reservation: ClassVar[bool] = True

    blueprint: Literal["fixed-cluster"] = Field(description="Which blueprint builds this profile.")
    compute: FixedCompute = Field(description="GPU node type and count.")
    preprocess: PreprocessGroup | None = Field(
        default=None,
        description="Optional CPU preprocessing node group (decode, augmentation beside the GPU nodes); empty: none.",
    )

    def one_instance_per_node(self, catalog: "Catalog") -> bool:
        """Whether each node is its own ecs.Instance: eRDMA nodes (an ERI each) and nodes that draw from a
        reservation (private pool options); otherwise the nodes are ecs.EcsInstanceSet batches."""
        instance = catalog.instance_types.get(self.compute.instance_type)
        return (instance is not None and instance.fabric_link == "erdma") or self.capacity.reservation is not None

    @model_validator(mode="after")
    def _replace_nodes_need_instances(self, info: ValidationInfo) -> "FixedClusterProfile":
        if self.compute.replace_nodes and not self.one_instance_per_node(context_of(info).catalog):
            raise FieldError(
                "compute.replace_nodes",
                self.compute.replace_nodes,
                f"needs one ecs.Instance per node, which eRDMA types and reserved clusters (capacity.reservation) get; "
                f"{self.compute.instance_type} nodes come from ecs.EcsInstanceSet batches, which Pulumi can only "
                "replace whole (see `aitrain replace-node --help`)",
            )
        return self

    @property
    def reserved_nodes(self) -> int | None:
        """Every node of the cluster draws from the reservation."""
        return self.compute.nodes

    @model_validator(mode="after")
    def _reserved_cluster_size(self) -> "FixedClusterProfile":
        # Nodes that draw from a reservation are one ecs.Instance each (private pool options are not arguments of
        # ecs.EcsInstanceSet), so the eRDMA cluster's limit on one-instance-per-node plans applies.
        if self.capacity.reservation is not None and self.compute.nodes > ERI_CLUSTER_MAX_NODES:
            raise FieldError(
                "capacity.reservation",
                self.capacity.reservation.kind,
                f"makes each of the {self.compute.nodes} nodes one ecs.Instance (a node draws from a reservation "
                f"only through its own private pool options), above aitrain's {ERI_CLUSTER_MAX_NODES} for such a "
                "cluster; use at most that many nodes, or no reservation",
            )
        return self

    @model_validator(mode="after")
    def _no_off_hours(self) -> "FixedClusterProfile":
        if self.cost.off_hours.enabled:
            raise ValueError(
                "cost.off_hours is for the autoscaling-pool blueprint; a fixed cluster keeps its nodes (use blueprint "
                "'autoscaling-pool' to sleep off-hours)"
            )
        return self


class FixedClusterSpec(EcsSpec[FixedClusterProfile]):
    """Fixed cluster: N multi-GPU nodes on one low-latency fabric with a shared elastic storage pool.

    Recommended for steady, long data-parallel or sharded training (the article's 96 × A100 medical-imaging
    case): every node sits in one zone under a ``LowLatency`` deployment set so collective operations take the
    shortest network path, and all nodes mount one NAS/CPFS pool, so data and checkpoints outlive the compute.
    It serves the article's dedicated tier (≥ ¥500k a year) and, as one node, its under-¥100k tier.
    """

    name = "fixed-cluster"
    profile_model = FixedClusterProfile
    compute_unit = "cluster"
    compute_zone_count = 1
    parked_compute = {"nodes": 0}
    resume_field = "nodes"
    replaces_named_nodes = True
    # Its eRDMA nodes are one ecs.Instance each (blueprints.components.compute), which has enable_jumbo_frame.
    jumbo_frame_blocker = None

    @property
    def nodes(self) -> int:
        """Nodes in the profile (0 when parked)."""
        return self.profile.compute.nodes

    def compute_summary(self) -> dict[str, Any]:
        """Node and GPU counts."""
        nodes = self.nodes
        summary: dict[str, Any] = {"nodes": nodes, "gpus": nodes * self.instance.gpu_count}
        if nodes == 0:
            summary["parked"] = (
                "yes: no compute; the file system and the bucket are kept (set "
                "compute.nodes, or `aitrain park --resume N`, to run again)"
            )
        else:
            summary.update(self.capacity_summary())
            if self.profile.preprocess is not None:
                summary.update(preprocess_summary(self.profile.preprocess, self.catalog, self.profile.region))
        return summary

    def capacity_summary(self) -> dict[str, Any]:
        """Whether the nodes start all together or not at all, by which mechanism, and the capacity held for them."""
        nodes, reservation = self.nodes, self.profile.capacity.reservation
        out: dict[str, Any] = {}
        if reservation is not None:
            held = reservation.nodes or nodes
            if reservation.kind == "capacity_reservation":
                terms = (
                    "released with the cluster (parking it releases it); bills at the pay-as-you-go rate for every "
                    "reserved node no instance uses"
                )
            else:
                terms = (
                    f"bought for {reservation.term_months} months up front and not releasable before the term ends "
                    "(parking the cluster does not stop its fee); its fee is not in the catalog"
                )
            out["reservation"] = (
                f"{reservation.kind}: {held} × {self.instance.instance_type} held in the nodes' zone in Target mode, "
                f"drawn by all {nodes} nodes; {terms}"
            )
        if nodes < 2:
            return out
        if reservation is not None:
            out["all_or_nothing"] = f"yes: every node starts from the {reservation.kind} held before any node starts"
        elif not self.profile.one_instance_per_node(self.catalog) and nodes <= MAX_INSTANCES_PER_SET:
            out["all_or_nothing"] = (
                f"yes: one RunInstances call for all {nodes} nodes (ecs.EcsInstanceSet without MinAmount: short stock "
                "starts none)"
            )
        else:
            why = (
                f"{nodes} nodes are {nodes} ecs.Instance calls (eRDMA)"
                if self.fabric_link == "erdma"
                else f"{nodes} nodes are {len(instance_batches(nodes))} instance sets"
            )
            out["all_or_nothing"] = f"no: {why}; add capacity.reservation to hold them first (guardrail AIT041)"
        return out

    def price_basis(self) -> tuple[int, str]:
        """Every node runs all the time the cluster exists."""
        return self.nodes, ""

    @classmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple[BudgetTier, ...]:
        """Dedicated (≥ the dedicated minimum, or unpriced) and single node (below the pool minimum)."""
        return (
            BudgetTier(
                "dedicated",
                cls.name,
                limits["tier_dedicated_min_cny_per_year"],
                "dedicated training cluster",
                cls.compute_from_choice,
                cpu_preprocess=True,
            ),
            BudgetTier(
                "single-node",
                cls.name,
                0.0,
                "single node",
                cls.compute_from_choice,
                spot_when_allowed=True,
                single_node=True,
                cpu_preprocess=True,
            ),
        )

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """The recommended node count, all the time (its tiers serve one job at a time: jobs_in_parallel 1)."""
        return {"instance_type": instance_type, "nodes": nodes}

    def expected_nodes(self) -> int:
        """Every node of the cluster takes part in a run."""
        return self.nodes


SPEC = FixedClusterSpec
