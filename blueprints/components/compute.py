"""Compute units: a fixed GPU cluster (GpuCluster) and an autoscaling GPU pool (AutoscalingGpuPool)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import base64_text, child, node_role, with_tags
from blueprints.layout import RecurringTask, instance_batches

# Alarm evaluation: 3 consecutive 5-minute periods (the ESS defaults: period 300 s, evaluation_count 3).
ALARM_PERIOD_SECONDS = 300
ALARM_EVALUATIONS = 3
SCALING_COOLDOWN_SECONDS = 300


@dataclass(frozen=True)
class NodeSpec:
    """How every node of a compute unit is built."""

    instance_type: str
    image_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    user_data: pulumi.Input[str]
    system_disk_gib: int
    system_disk_performance_level: str
    spot: bool = False
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def spot_strategy(self) -> str:
        """ECS spot strategy: market price capped at pay-as-you-go, or none."""
        return "SpotAsPriceGo" if self.spot else "NoSpot"


@dataclass(frozen=True)
class GpuClusterArgs:
    """A fixed cluster: N nodes in one zone."""

    node: NodeSpec
    nodes: int
    zone_id: str
    vswitch_id: pulumi.Input[str]


class GpuCluster(pulumi.ComponentResource):
    """N identical GPU nodes on one low-latency fabric.

    A ``LowLatency`` deployment set keeps every node in one zone's network topology (shortest hops for NCCL).
    Nodes come from ``ecs.EcsInstanceSet`` in batches of at most 100, so the plan has a handful of resources
    whatever the node count; a launch template carries what an instance set cannot (encrypted system disk,
    user data, IMDSv2).
    """

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:compute:GpuCluster", name, None, opts)
        node = args.node
        tags = with_tags(node.tags, "gpu-cluster")
        self.role = node_role(self, name)
        self.deployment_set = alicloud.ecs.EcsDeploymentSet(
            f"{name}-placement",
            deployment_set_name=f"{name}-low-latency",
            strategy="LowLatency",
            description="aitrain: all training nodes in one network topology",
            opts=child(self),
        )
        self.launch_template = alicloud.ecs.EcsLaunchTemplate(
            f"{name}-template",
            launch_template_name=f"{name}-node",
            instance_type=node.instance_type,
            image_id=node.image_id,
            security_group_ids=[node.security_group_id],
            vswitch_id=args.vswitch_id,
            zone_id=args.zone_id,
            deployment_set_id=self.deployment_set.id,
            ram_role_name=self.role.role_name,
            instance_charge_type="PostPaid",
            spot_strategy=node.spot_strategy,
            internet_max_bandwidth_out=0,
            http_tokens="required",
            system_disk=alicloud.ecs.EcsLaunchTemplateSystemDiskArgs(
                category="cloud_essd",
                size=node.system_disk_gib,
                performance_level=node.system_disk_performance_level,
                encrypted=True,
                delete_with_instance=True,
            ),
            user_data=pulumi.Output.from_input(node.user_data).apply(base64_text),
            tags=tags,
            template_tags=tags,
            opts=child(self),
        )
        self.instance_sets: list[alicloud.ecs.EcsInstanceSet] = []
        for index, amount in enumerate(instance_batches(args.nodes)):
            self.instance_sets.append(
                alicloud.ecs.EcsInstanceSet(
                    f"{name}-nodes-{index}",
                    amount=amount,
                    instance_type=node.instance_type,
                    image_id=node.image_id,
                    security_group_ids=[node.security_group_id],
                    vswitch_id=args.vswitch_id,
                    zone_id=args.zone_id,
                    deployment_set_id=self.deployment_set.id,
                    launch_template_id=self.launch_template.id,
                    ram_role_name=self.role.role_name,
                    instance_name=f"{name}-node-{index}-",
                    unique_suffix=True,
                    instance_charge_type="PostPaid",
                    spot_strategy=node.spot_strategy,
                    internet_max_bandwidth_out=0,
                    # Nodes are stateless (data lives on SharedStorage). An instance set changes only its tags in
                    # place (provider docs), so any other change replaces it: deletion protection would block every
                    # resize, and replacing delete-first avoids needing GPU quota for two clusters at once.
                    deletion_protection=False,
                    tags=tags,
                    opts=child(self, delete_before_replace=True),
                )
            )
        self.register_outputs(
            {
                "deployment_set_id": self.deployment_set.id,
                "instance_set_ids": [s.id for s in self.instance_sets],
                "role_name": self.role.role_name,
            }
        )


@dataclass(frozen=True)
class AutoscalingGpuPoolArgs:
    """An ESS pool of one GPU type."""

    node: NodeSpec
    min_nodes: int
    max_nodes: int
    working_hours_nodes: int
    vswitch_ids: list[pulumi.Input[str]]
    scale_out_cpu_percent: float
    scale_in_gpu_percent: float
    off_hours: tuple[RecurringTask, RecurringTask] | None = None  # (wake, sleep)


class AutoscalingGpuPool(pulumi.ComponentResource):
    """One GPU node type in an ESS scaling group that follows load and sleeps off-hours.

    Scale out by one node when average ``CpuUtilization`` stays at or above the threshold (the article's
    65–75 % band: a GPU job whose input pipeline saturates the CPUs wants more nodes); scale in by one when
    ``GpuUtilizationAgent`` (reported by the CloudMonitor agent) stays below the idle threshold. Optional
    scheduled tasks pin the group to zero outside working hours and restore it at the start of the day.
    """

    def __init__(self, name: str, args: AutoscalingGpuPoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:compute:AutoscalingGpuPool", name, None, opts)
        node = args.node
        tags = with_tags(node.tags, "gpu-pool")
        self.role = node_role(self, name)
        self.group = alicloud.ess.ScalingGroup(
            f"{name}-group",
            scaling_group_name=f"{name}-gpu",
            min_size=args.min_nodes,
            max_size=args.max_nodes,
            desired_capacity=args.working_hours_nodes,
            vswitch_ids=args.vswitch_ids,
            multi_az_policy="BALANCE",
            removal_policies=["NewestInstance", "OldestScalingConfiguration"],
            default_cooldown=SCALING_COOLDOWN_SECONDS,
            group_deletion_protection=True,
            tags=tags,
            # Alarms and scheduled tasks move the desired size at run time; Pulumi must not reset it.
            opts=child(self, ignore_changes=["desiredCapacity"]),
        )
        self.configuration = alicloud.ess.ScalingConfiguration(
            f"{name}-config",
            scaling_configuration_name=f"{name}-gpu",
            scaling_group_id=self.group.id,
            instance_type=node.instance_type,
            image_id=node.image_id,
            security_group_id=node.security_group_id,
            role_name=self.role.role_name,
            system_disk_category="cloud_essd",
            system_disk_size=node.system_disk_gib,
            system_disk_performance_level=node.system_disk_performance_level,
            system_disk_encrypted=True,
            internet_max_bandwidth_out=0,
            spot_strategy=node.spot_strategy,
            user_data=pulumi.Output.from_input(node.user_data).apply(base64_text),
            instance_name=f"{name}-node",
            active=True,
            enable=True,
            force_delete=False,
            tags=tags,
            opts=child(self),
        )
        scale_out = self._step_rule(name, "scale-out", +1)
        scale_in = self._step_rule(name, "scale-in", -1)
        self.scale_out_alarm = self._alarm(name, "cpu-busy", "CpuUtilization", ">=", args.scale_out_cpu_percent, scale_out)
        self.scale_in_alarm = self._alarm(name, "gpu-idle", "GpuUtilizationAgent", "<", args.scale_in_gpu_percent, scale_in)

        self.scheduled_tasks: list[alicloud.ess.ScheduledTask] = []
        if args.off_hours is not None:
            wake, sleep = args.off_hours
            self.scheduled_tasks.append(self._schedule(name, "wake", wake, args.min_nodes, args.max_nodes, args.working_hours_nodes))
            self.scheduled_tasks.append(self._schedule(name, "sleep", sleep, 0, 0, 0))

        self.register_outputs({"scaling_group_id": self.group.id, "role_name": self.role.role_name})

    def _step_rule(self, name: str, suffix: str, change: int) -> alicloud.ess.ScalingRule:
        return alicloud.ess.ScalingRule(
            f"{name}-{suffix}",
            scaling_rule_name=f"{name}-{suffix}",
            scaling_group_id=self.group.id,
            scaling_rule_type="SimpleScalingRule",
            adjustment_type="QuantityChangeInCapacity",
            adjustment_value=change,
            cooldown=SCALING_COOLDOWN_SECONDS,
            opts=child(self, depends_on=[self.configuration]),
        )

    def _alarm(self, name: str, suffix: str, metric: str, operator: str, threshold: float, rule: alicloud.ess.ScalingRule) -> alicloud.ess.Alarm:
        return alicloud.ess.Alarm(
            f"{name}-{suffix}",
            name=f"{name}-{suffix}",
            description=f"{metric} {operator} {threshold:g} % for {ALARM_EVALUATIONS}×{ALARM_PERIOD_SECONDS // 60} min",
            scaling_group_id=self.group.id,
            alarm_actions=[rule.ari],
            metric_type="system",
            metric_name=metric,
            statistics="Average",
            comparison_operator=operator,
            threshold=f"{threshold:g}",
            period=ALARM_PERIOD_SECONDS,
            evaluation_count=ALARM_EVALUATIONS,
            opts=child(self),
        )

    def _schedule(self, name: str, suffix: str, task: RecurringTask, min_value: int, max_value: int, desired: int) -> alicloud.ess.ScheduledTask:
        return alicloud.ess.ScheduledTask(
            f"{name}-{suffix}",
            scheduled_task_name=f"{name}-{suffix}",
            description=f"aitrain off-hours: {suffix} (min {min_value}, desired {desired})",
            scaling_group_id=self.group.id,
            min_value=min_value,
            max_value=max_value,
            desired_capacity=desired,
            launch_time=task.launch_time,
            recurrence_type=task.recurrence_type,
            recurrence_value=task.recurrence_value,
            recurrence_end_time=task.recurrence_end_time,
            task_enabled=True,
            opts=child(self, depends_on=[self.configuration]),
        )
