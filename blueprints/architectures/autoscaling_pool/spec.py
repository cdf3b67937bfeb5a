"""The autoscaling-pool blueprint's meaning: one GPU type in an ESS group that grows with load and sleeps off-hours."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from blueprints.advisor.budget import BudgetTier
from blueprints.architectures.base.repair import pool_repair_note
from blueprints.architectures.ecs.spec import EcsSpec
from blueprints.core.errors import FieldError
from blueprints.profile.model import ESS_MAX_SIZE, ComputeBase, ProfileBase
from blueprints.profile.preprocess import PreprocessGroup, preprocess_summary
from blueprints.review.costing import CostContext

# The article's scale-out band ("scale out at 65–75 % CPU"); outside it only on purpose.
ARTICLE_SCALE_OUT_BAND = (65.0, 75.0)

# An autoscaling pool spreads over up to this many zones that offer its type (ESS balances across them).
AUTOSCALING_ZONES = 3


class AutoscalingCompute(ComputeBase):
    """One GPU node type in an ESS scaling group."""

    min_nodes: int = Field(ge=0, le=ESS_MAX_SIZE, description="Scaling-group minimum size (instances), 0–2000.")
    max_nodes: int = Field(ge=1, le=ESS_MAX_SIZE, description="Scaling-group maximum size (instances), 1–2000.")
    desired_nodes: int | None = Field(
        default=None,
        ge=0,
        le=ESS_MAX_SIZE,
        description="Desired size (instances) during working hours; defaults to min_nodes.",
    )
    scale_out_cpu_percent: float = Field(
        default=70.0,
        gt=0,
        lt=100,
        allow_inf_nan=False,
        description="Scale out by one node when average CpuUtilization (%) stays at or above this.",
    )
    scale_in_gpu_percent: float = Field(
        default=40.0,
        gt=0,
        lt=100,
        allow_inf_nan=False,
        description="Scale in by one node when average GpuUtilizationAgent (%) stays below this.",
    )
    allow_scale_out_outside_article_band: bool = Field(
        default=False, description="Permit scale_out_cpu_percent outside the 65–75 % band."
    )
    checkpoint_grace_seconds: int = Field(
        default=600,
        ge=90,
        le=21600,
        description=(
            "How long a node the pool scales in waits for its job to checkpoint before ESS removes it (the SCALE_IN "
            "lifecycle hook's heartbeat timeout), 90–21600 s; ESS allows 30–21600, aitrain keeps 60 s for the "
            "command to start."
        ),
    )
    erdma_pool: bool = Field(
        default=False,
        description="eRDMA types only: build the pool from an ESS scaling "
        "configuration with an ERI (eRDMA) instead of a launch template; "
        "the configuration cannot require IMDSv2, so this needs guardrails.skip AIT008 with a reason.",
    )

    @model_validator(mode="after")
    def _bounds(self) -> "AutoscalingCompute":
        if self.min_nodes > self.max_nodes:
            raise ValueError(
                f"min_nodes ({self.min_nodes}) is greater than max_nodes "
                f"({self.max_nodes}); need min_nodes ≤ desired_nodes ≤ max_nodes"
            )
        if self.desired_nodes is not None and not self.min_nodes <= self.desired_nodes <= self.max_nodes:
            raise ValueError(
                f"desired_nodes ({self.desired_nodes}) is outside [min_nodes, "
                f"max_nodes] = [{self.min_nodes}, {self.max_nodes}]"
            )
        low, high = ARTICLE_SCALE_OUT_BAND
        if not self.allow_scale_out_outside_article_band and not low <= self.scale_out_cpu_percent <= high:
            raise ValueError(
                f"scale_out_cpu_percent ({self.scale_out_cpu_percent:g}) "
                f"is outside the recommended {low:g}–{high:g} % band; "
                "set compute.allow_scale_out_outside_article_band: true to use it anyway"
            )
        return self

    @property
    def working_hours_nodes(self) -> int:
        """Desired size during working hours."""
        return self.desired_nodes if self.desired_nodes is not None else self.min_nodes


class AutoscalingProfile(ProfileBase):
    """Profile of the ``autoscaling-pool`` blueprint."""

    alias_count_fields: ClassVar[tuple[str, ...]] = ("min_nodes", "max_nodes", "desired_nodes")

    blueprint: Literal["autoscaling-pool"] = Field(description="Which blueprint builds this profile.")
    compute: AutoscalingCompute = Field(description="GPU node type and scaling bounds.")
    preprocess: PreprocessGroup | None = Field(
        default=None,
        description="Optional CPU preprocessing node group (decode, augmentation beside the GPU nodes); empty: none.",
    )

    @model_validator(mode="after")
    def _erdma_pool_skips_imdsv2(self) -> "AutoscalingProfile":
        # ess.ScalingConfiguration has no http_tokens (SDK 4.0.0; ready-to-train.md §6 "Launch template"), so the
        # ERI path leaves IMDSv1 open: only with the IMDSv2 guardrail skipped on purpose.
        if self.compute.erdma_pool and not self.skips_rule("AIT008"):
            raise FieldError(
                "compute.erdma_pool",
                True,
                "needs guardrails.skip: [{rule: AIT008, reason: ...}]: the scaling "
                "configuration that gives nodes an ERI cannot require IMDSv2; "
                "allowed: false (launch template with IMDSv2, TCP between nodes), or true with that skip",
            )
        return self


class AutoscalingPoolSpec(EcsSpec[AutoscalingProfile]):
    """Autoscaling pool: one GPU node type in an ESS group that grows with load and sleeps off-hours.

    Recommended for bursty or shared experimentation (the article's autoscaling node group and mid budget
    tier): you pay for nodes while jobs keep them busy — out at 65–75 % CPU, in below 40 % GPU use, to zero
    outside working hours — and the shared storage pool keeps data while no node runs.
    """

    name = "autoscaling-pool"
    profile_model = AutoscalingProfile
    compute_unit = "pool"
    compute_zone_count = AUTOSCALING_ZONES
    metric_namespaces = ("ess:system", "acs_ecs_dashboard")
    jumbo_frame_blocker = (
        "an ESS pool launches its nodes from an ess.ScalingConfiguration, which has no jumbo-frame argument in "
        "pulumi-alicloud 4.0.0 (only ecs.Instance has enable_jumbo_frame)"
    )
    node_repair = "its scaling group replaces unhealthy instances itself (ESS health check; SetInstanceHealth)"
    park_refusal = (
        "an autoscaling pool parks itself: set compute.min_nodes 0 (it scales "
        "in when GPUs idle) and cost.off_hours to sleep outside working hours"
    )

    @property
    def fabric_link(self) -> str:
        """eRDMA only when the profile opts into the ERI scaling configuration; the launch template path is TCP."""
        link = self.instance.fabric_link
        return "tcp" if link == "erdma" and not self.compute.erdma_pool else link

    def security_notes(self) -> list[str]:
        """The storage notes, and what the pool gives up for eRDMA (or IMDSv2)."""
        notes = super().security_notes()
        notes.append(pool_repair_note(self.compute.checkpoint_grace_seconds))
        if self.instance.fabric_link == "erdma":
            notes.append(
                "eRDMA pool: an ERI needs an ESS scaling configuration, which "
                "cannot require IMDSv2 (no http_tokens in pulumi-alicloud 4.0.0); "
                + (
                    "compute.erdma_pool is true, so nodes get an ERI and IMDSv1 "
                    "stays open (AIT008 skipped with the profile's reason)."
                    if self.compute.erdma_pool
                    else (
                        "this pool uses the launch template (IMDSv2 required), so NCCL runs over TCP; set "
                        "compute.erdma_pool: true with guardrails.skip AIT008 to trade IMDSv2 for eRDMA."
                    )
                )
            )
        return notes

    @property
    def compute(self) -> AutoscalingCompute:
        """The profile's compute section, typed."""
        return self.profile.compute

    def compute_summary(self) -> dict[str, Any]:
        """Scaling bounds, thresholds and whether the pool sleeps off-hours."""
        compute, off = self.compute, self.profile.cost.off_hours
        summary: dict[str, Any] = {
            "min_nodes": compute.min_nodes,
            "max_nodes": compute.max_nodes,
            "working_hours_nodes": compute.working_hours_nodes,
            "max_gpus": compute.max_nodes * self.instance.gpu_count,
            "scale_out_cpu_percent": compute.scale_out_cpu_percent,
            "scale_in_gpu_percent": compute.scale_in_gpu_percent,
            "off_hours": off.enabled,
        }
        if off.enabled:
            summary["off_hours_start_date"] = off.first_day(self.today).isoformat() + (
                "" if off.start_date else " (tomorrow by the run's clock; pin cost.off_hours.start_date)"
            )
        if self.profile.preprocess is not None:
            summary.update(preprocess_summary(self.profile.preprocess, self.catalog, self.profile.region))
            summary["preprocess_scaling"] = "fixed: the CPU group keeps its nodes while the pool scales (and sleeps)"
        return summary

    def cost_context(self) -> CostContext:
        """Run hours, and with cost.off_hours the hours a month the pool is awake (working days × working hours)."""
        off = self.profile.cost.off_hours
        base = super().cost_context()
        if not off.enabled:
            return base
        start, end = (int(t[:2]) * 60 + int(t[3:]) for t in (off.work_start, off.work_end))
        # 365 days / 12 a month; weekdays only: 5 of 7 (public holidays are not modelled).
        days = 365 / 12 * (5 / 7 if off.weekdays_only else 1)
        hours = round(days * (end - start) / 60, 1)
        when = f"{off.work_start}–{off.work_end} {off.timezone}" + (
            ", Monday–Friday" if off.weekdays_only else ", every day"
        )
        return CostContext(run_hours=base.run_hours, working_hours_per_month=hours, schedule=when)

    def price_basis(self) -> tuple[int, str]:
        """Quoted at max_nodes: the most the pool can cost per hour."""
        return self.compute.max_nodes, "at max_nodes"

    @classmethod
    def budget_tiers(cls, limits: dict[str, float]) -> tuple[BudgetTier, ...]:
        """The article's mixed pool (¥100k–300k), extended over its ¥300k–500k gap."""
        return (
            BudgetTier(
                "pool",
                cls.name,
                limits["tier_pool_min_cny_per_year"],
                "autoscaling pool that scales to zero between runs",
                cls.compute_from_choice,
                spot_when_allowed=True,
                scales_to_zero=True,
                cpu_preprocess=True,
            ),
        )

    @classmethod
    def compute_from_choice(cls, instance_type: str, nodes: int, jobs_in_parallel: int = 1) -> dict[str, Any]:
        """Scale to zero between runs; a run scales out to the
        recommended node count (its tier serves one job at a time)."""
        return {"instance_type": instance_type, "min_nodes": 0, "max_nodes": nodes}

    def expected_nodes(self) -> None:
        """A run spans the nodes running when it starts (the launcher counts the host registry)."""
        return None


SPEC = AutoscalingPoolSpec
