"""What every blueprint means, without building anything: its profile, summary, price basis, parking and tiers.

A spec is pure (no Pulumi): the plan, the advisor, `aitrain launch` and `aitrain park` read it. Each blueprint's
builder (its ``build`` module, ``blueprints.architectures.base.build``) turns the same spec into resources.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from blueprints.profile.model import ProfileBase

if TYPE_CHECKING:
    from blueprints.advisor.budget import BudgetTier
    from blueprints.catalog import Catalog, InstanceType
    from blueprints.review.costing import CostContext

# What the plan says about the link NCCL uses between nodes (the catalog's ``InstanceType.fabric_link``).
FABRIC_SUMMARY = {
    # The MTU and why follow it (the blueprint's ``fabric()``: blueprints.bootstrap.fabric.erdma_mtu).
    "erdma": (
        "eRDMA: every node's primary NIC is an ERI (HighPerformance mode); NCCL uses the erdma devices with PAI's "
        "settings (NCCL >= 2.19)"
    ),
    "roce": "RoCE: NCCL uses the type's RDMA NICs (mlx5) with Alibaba's PAI defaults",
    "tcp": "TCP: this type has no eRDMA or RoCE in the catalog, so NCCL runs over sockets on the VPC network",
}

# The profile model a spec is written for: ``FixedClusterSpec(EcsSpec[FixedClusterProfile])`` reads
# ``self.profile.compute.nodes`` typed, with no cast.
P = TypeVar("P", bound=ProfileBase)


class BlueprintSpec(ABC, Generic[P]):
    """A training architecture's meaning, bound to one validated profile (and the catalog and day it was read with).

    A subclass declares its ``name``, its ``profile_model`` (the ``P`` it is generic over, with the compute fields
    an article alias scales), how many zones its compute spans, its plan summary and price basis, the budget tiers
    it serves and how a recommendation becomes its profile. Its package's ``spec`` module exports it as ``SPEC``;
    the registry (``blueprints.architectures``) finds it there.
    """

    name: ClassVar[str]
    # The same class as P (a ClassVar cannot name a type variable); the registry parses profiles with it.
    profile_model: ClassVar[type[ProfileBase]]
    compute_zone_count: ClassVar[int]
    # The compute component's name suffix (``<profile>-<suffix>``); stable, so storage and roles never move.
    compute_unit: ClassVar[str]
    # Parking (compute removed, data kept): the compute fields that park it, and the one a resume sets back.
    # None: this blueprint cannot be parked (it says how it stops costing money in ``park_refusal``).
    parked_compute: ClassVar[dict[str, Any] | None] = None
    resume_field: ClassVar[str | None] = None
    park_refusal: ClassVar[str] = ""
    # Whether `aitrain replace-node` can name this blueprint's nodes; when not, how its nodes are repaired instead.
    replaces_named_nodes: ClassVar[bool] = False
    node_repair: ClassVar[str] = "it has no named nodes"
    # Where the compute nodes' image comes from when it is not compute.image_id (empty: compute.image_id boots them;
    # `aitrain image pin` then pins nothing without a login node).
    foreign_node_image: ClassVar[str] = ""
    # How `aitrain launch` starts a run on this blueprint's stack:
    # "torchrun" on the nodes, or "kubernetes" (a PyTorchJob).
    job_engine: ClassVar[str] = "torchrun"

    def __init__(self, profile: P, catalog: "Catalog", today: dt.date):
        self.profile: P = profile
        self.catalog = catalog
        self.today = today
        self.instance: InstanceType = catalog.instance_type(profile.compute.instance_type)

    @abstractmethod
    def compute_summary(self) -> dict[str, Any]:
        """The blueprint's own lines of the plan summary (node counts, scaling)."""

    @abstractmethod
    def price_basis(self) -> tuple[int, str]:
        """(nodes the hourly compute price is quoted for, what that number means)."""

    @classmethod
    @abstractmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple["BudgetTier", ...]:
        """The article's budget tiers this blueprint serves (boundaries from the advisor's limits.csv)."""

    @classmethod
    @abstractmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """The ``compute`` profile section for a recommended (instance
        type, node count per job, jobs sharing the nodes)."""

    @abstractmethod
    def expected_nodes(self) -> int | None:
        """How many nodes a training run spans (None: as many as are running, for a pool that scales)."""

    @abstractmethod
    def node_software_summary(self) -> dict[str, Any]:
        """How a node becomes ready to train (GPU software, the inter-node link, scratch): the plan's summary lines."""

    @property
    def wants_login_node(self) -> bool:
        """Whether the builder creates a login node (the profile asks for it and names an admin range)."""
        return bool(self.profile.access.login_node and self.profile.network.admin_cidr is not None)

    @property
    def network_instance_type(self) -> str:
        """The ECS type whose zones the compute vSwitch must offer (the cloud is asked for them): the nodes' own."""
        return self.instance.instance_type

    @property
    def fabric_link(self) -> str:
        """The link NCCL uses between this blueprint's nodes (the
        catalog's, unless the compute unit cannot build it)."""
        return self.instance.fabric_link

    def security_notes(self) -> list[str]:
        """Plan notes on the safety choices this profile's storage implies (what the reviewer must do or accept)."""
        from blueprints.profile.notes import storage_notes

        return storage_notes(self.profile)

    @property
    def compute_unit_name(self) -> str:
        """Logical name of the compute component (its node role is ``<name>-node``)."""
        return f"{self.profile.name}-{self.compute_unit}"

    @property
    def node_role_name(self) -> str:
        """The RAM role the nodes run as (created by the compute unit; nodes read its credentials from metadata)."""
        return f"{self.compute_unit_name}-node"

    def most_nodes(self) -> int:
        """The most nodes this blueprint can run at once (the count its price is quoted at)."""
        return self.price_basis()[0]

    def cost_context(self) -> "CostContext":
        """What pricing the plan needs that only the blueprint knows:
        the profile's run hours (a pool adds its schedule)."""
        from blueprints.review.costing import CostContext

        return CostContext(run_hours=self.profile.cost.run_hours)

    def summary(self) -> dict[str, Any]:
        """What a reviewer reads first: hardware, counts, storage and the compute price, with its source."""
        from blueprints.catalog.pricing import instance_price

        profile, instance, catalog = self.profile, self.instance, self.catalog
        summary: dict[str, Any] = {
            "blueprint": self.name,
            "region": profile.region,
            "instance_type": instance.instance_type,
            "gpu_model": instance.gpu_model,
            # "inferred": the documentation gives the peak and memory,
            # not the name (catalog README, "Inferred GPU models").
            "gpu_model_confidence": instance.gpu_model_confidence,
            "gpus_per_node": instance.gpu_count,
            "gpu_memory_gib": instance.gpu_memory_gib,
            "vcpus_per_node": instance.vcpus,
            "memory_gib_per_node": instance.memory_gib,
        }
        summary.update(self.compute_summary())
        summary.update(self.node_software_summary())
        storage = profile.storage
        tier = next(t for t in catalog.storage_tiers(storage.kind) if t.storage_type == storage.throughput_tier)
        throughput = tier.throughput_mb_s(storage.capacity_gib)
        summary.update(
            storage_kind=storage.kind,
            storage_tier=storage.throughput_tier,
            storage_zone=profile.storage_zone,
            storage_capacity_gib=storage.capacity_gib,
            storage_encrypted=storage.kind != "cpfs",
            storage_throughput_mb_s=round(throughput) if throughput is not None else "unknown (not in the catalog)",
            bucket=profile.bucket_name,
            bucket_managed=not profile.bucket.existing,
            login_node=f"{profile.access.login_instance_type} with an EIP, SSH from {profile.network.admin_cidr} only"
            if profile.access.login_node
            else "none: reach nodes with Cloud Assistant",
            spot=profile.cost.spot,
            admin_cidr=profile.network.admin_cidr,
        )
        if profile.capacity.fallbacks:
            summary["fallbacks"] = (
                "; ".join(f"{i + 1}. {a.label()}" for i, a in enumerate(profile.capacity.fallbacks))
                + " (tried in this order by `aitrain preflight --choose`, which pins the first that fits; never by "
                "`pulumi up`)"
            )
        price = instance_price(catalog, instance.instance_type, profile.region)
        if price.cny is None:
            summary["compute_price"] = f"unknown: {price.source}"
        else:
            nodes, basis = self.price_basis()
            summary["compute_cny_per_hour"] = round(price.cny * nodes, 2)
            summary["compute_price_basis"] = (
                f"{nodes} × {price.cny:g} CNY/h pay-as-you-go {price.status} price"
                f" ({price.region}, {price.date}; {price.source})"
                + (f"; {basis}" if basis else "")
                + ("; spot pays less, by a varying discount" if profile.cost.spot else "")
            )
        return summary
