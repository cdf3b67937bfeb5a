"""Builds the autoscaling pool: one AutoscalingGpuPool over the compute zones, with its off-hours schedule."""

from __future__ import annotations

from blueprints.architectures.autoscaling_pool.spec import AutoscalingPoolSpec
from blueprints.architectures.base.repair import pool_repair
from blueprints.architectures.ecs.build import EcsBuilder
from blueprints.components.network import TrainingNetwork
from blueprints.components.node import NodeSpec
from blueprints.components.pool import AutoscalingGpuPool, AutoscalingGpuPoolArgs
from blueprints.core.layout import off_hours_tasks


class AutoscalingPoolBuilder(EcsBuilder[AutoscalingPoolSpec]):
    """The pool's ESS scaling group, spread over up to three zones that offer the type."""

    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        """One AutoscalingGpuPool over the compute zones, with the off-hours schedule when enabled."""
        spec = self.spec
        off, compute = spec.profile.cost.off_hours, spec.compute
        schedule = (
            off_hours_tasks(
                off.first_day(self.today),
                off.timezone,
                off.work_start,
                off.work_end,
                off.weekdays_only,
                created=self.today,
            )
            if off.enabled
            else None
        )
        pool = AutoscalingGpuPool(
            spec.compute_unit_name,
            AutoscalingGpuPoolArgs(
                node=node,
                min_nodes=compute.min_nodes,
                max_nodes=compute.max_nodes,
                working_hours_nodes=compute.working_hours_nodes,
                vswitch_ids=[network.vswitch_id(zone) for zone in network.compute_zone_ids],
                scale_out_cpu_percent=compute.scale_out_cpu_percent,
                scale_in_gpu_percent=compute.scale_in_gpu_percent,
                off_hours=schedule,
                erdma_pool=compute.erdma_pool,
                region=spec.profile.region,
                checkpoint_grace_seconds=compute.checkpoint_grace_seconds,
            ),
            opts=self.opts,
        )
        self.metric_readers = dict(pool.metric_readers)
        return {
            "min_nodes": compute.min_nodes,
            "max_nodes": compute.max_nodes,
            "max_gpus": compute.max_nodes * self.instance.gpu_count,
            "scaling_group_id": pool.group.id,
            "repair": pool_repair(grace_seconds=compute.checkpoint_grace_seconds, spot=spec.profile.cost.spot),
        }


BUILDER = AutoscalingPoolBuilder
