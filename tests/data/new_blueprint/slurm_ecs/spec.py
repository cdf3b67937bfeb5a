"""The slurm-ecs stub's meaning: one CPU controller (slurmctld) and N GPU compute nodes (slurmd) on the foundation."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from blueprints.advisor.budget import BudgetTier
from blueprints.architectures.ecs.spec import EcsSpec
from blueprints.profile.model import ComputeBase, ProfileBase


class SlurmCompute(ComputeBase):
    """The compute nodes' type and count, and the controller's CPU type."""

    nodes: int = Field(ge=1, le=64, description="Compute nodes (slurmd), 1–64.")
    controller_instance_type: str = Field(default="ecs.g7.xlarge", description="CPU type of the controller node.")


class SlurmProfile(ProfileBase):
    """Profile of the ``slurm-ecs`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ("nodes",)

    blueprint: Literal["slurm-ecs"] = Field(description="Which blueprint builds this profile.")
    compute: SlurmCompute = Field(description="Compute nodes and the controller.")


class SlurmSpec(EcsSpec[SlurmProfile]):
    """Slurm on ECS (a stub): one CPU controller node and N GPU compute nodes sharing the file system and the bucket.

    It exists to show that a blueprint is its own package and a preset: the network, file system, bucket and node
    boot come from the shared base, the controller and the compute nodes are two existing GpuCluster components.
    """

    name = "slurm-ecs"
    profile_model = SlurmProfile
    compute_unit = "slurm"
    compute_zone_count = 1
    park_refusal = "the slurm-ecs stub cannot be parked: remove the stack to stop paying for it"

    def compute_summary(self) -> dict[str, Any]:
        """Compute node and GPU counts, and the controller."""
        compute = self.profile.compute
        return {
            "nodes": compute.nodes,
            "gpus": compute.nodes * self.instance.gpu_count,
            "controller": f"1 × {compute.controller_instance_type}",
        }

    def price_basis(self) -> tuple[int, str]:
        """The compute nodes, all the time; the controller is priced on its own line."""
        return self.profile.compute.nodes, "compute nodes (the controller is its own cost line)"

    @classmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple[BudgetTier, ...]:
        """None: the advisor never recommends a stub."""
        return ()

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """The recommended node count as compute nodes."""
        return {"instance_type": instance_type, "nodes": nodes}

    def expected_nodes(self) -> int:
        """Every compute node takes part in a run."""
        return self.profile.compute.nodes


SPEC = SlurmSpec
