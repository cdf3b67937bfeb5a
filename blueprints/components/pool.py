"""The autoscaling GPU pool (AutoscalingGpuPool): one GPU type
in an ESS group that follows load and sleeps off-hours."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, encoded_user_data, with_tags
from blueprints.components.errors import ResourceError
from blueprints.components.node import (
    ERI_TRAFFIC_MODE,
    NodeSpec,
    node_identity,
    node_launch_template,
    scratch_disk_fields,
)
from blueprints.core.layout import RecurringTask

# Alarm evaluation: 3 consecutive 5-minute periods (the ESS defaults: period 300 s, evaluation_count 3).
ALARM_PERIOD_SECONDS = 300
ALARM_EVALUATIONS = 3
SCALING_COOLDOWN_SECONDS = 300
# The alarms read ESS system metrics (metric_type "system"): blueprints/catalog/data/metrics.csv names them so.
ESS_SYSTEM_NAMESPACE = "ess:system"

# Repair. ESS's ECS health check: an instance that is no longer Running is unhealthy and the group removes it, then
# launches another to keep its desired capacity (pulumi-alicloud 4.0.0 ess.ScalingGroup health_check_types: ECS, NONE,
# LOAD_BALANCER; Cloud Config rule ess-group-health-check, https://alibabacloud.com/help/en/cloud-config/latest/ess-group-
# health-check). It does not see a GPU fault on a Running node: `aliyun ess SetInstanceHealth --HealthStatus Unhealthy`
# marks one so the group replaces it
# (https://alibabacloud.com/help/en/auto-scaling/developer-reference/api-setinstancehealth).
HEALTH_CHECK_TYPES = ("ECS",)
# A node the pool scales in waits in a SCALE_IN lifecycle hook while CloudOps Orchestration Service runs Alibaba's
# public template ACS-ESS-LifeCycleRunCommand on it (a Cloud Assistant command, then CompleteLifecycleAction): its
# job gets SIGTERM, checkpoints and exits before ESS removes the node. Notification ARN format
# acs:ess:{region}:{account-id}:oos/{template} and heartbeat timeout 30-21600 s (ROS ALIYUN::ESS::LifecycleHook,
# https://www.alibabacloud.com/help/doc-detail/107108.html); the template's parameters commandContent and timeout and
# its default role OOSServiceRole (https://www.alibabacloud.com/help/en/oos/user-guide/acs-ess-lifecycleruncommand).
# UNVERIFIED: that ESS passes NotificationMetadata (at most 128 characters) to the template as its parameters (only a
# ROS example shows it). A failed run still removes the node (lifecycle hooks and OOS templates,
# https://help.aliyun.com/en/auto-scaling/use-cases/overview-6).
LEAVE_TEMPLATE = "ACS-ESS-LifeCycleRunCommand"
LEAVE_COMMAND = "pkill -TERM -x torchrun;while pgrep -x torchrun>/dev/null;do sleep 5;done"
# The command must finish before the hook times out (CONTINUE: ESS removes the node then anyway).
LEAVE_COMMAND_MARGIN_SECONDS = 60
NOTIFICATION_METADATA_MAX = 128


def leave_metadata(grace_seconds: int) -> str:
    """The SCALE_IN hook's notification metadata: the template's command and its timeout (within ESS's 128 chars)."""
    text = json.dumps(
        {"commandContent": LEAVE_COMMAND, "timeout": grace_seconds - LEAVE_COMMAND_MARGIN_SECONDS},
        separators=(",", ":"),
    )
    assert len(text) <= NOTIFICATION_METADATA_MAX, text
    return text


# The group follows the template's newest version, so a changed template (image, user data) reaches new nodes.
LAUNCH_TEMPLATE_VERSION = "Latest"


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
    # eRDMA on purpose: launch from a scaling configuration with an ERI (no IMDSv2) instead of the launch template.
    erdma_pool: bool = False
    # The region (for the lifecycle hook's notification ARN) and how long a leaving node waits for its checkpoint.
    region: str = ""
    checkpoint_grace_seconds: int = 600


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
        if node.jumbo_frames:
            # Neither an ESS configuration nor a launch template can turn jumbo frames on (pulumi-alicloud 4.0.0), so a
            # boot at MTU 8500 would run on nodes without them: "an incorrect MTU causes data consistency issues".
            raise ResourceError(
                "jumbo frames (MTU 8500) cannot be set on ESS nodes; their boot must use MTU 1400", self
            )
        tags = with_tags(node.tags, "gpu-pool")
        self.role = node_identity(self, name, node)
        # The group launches from a template (IMDSv2 required) unless the profile opted into eRDMA (a configuration).
        self.launch_template = None if args.erdma_pool else self._launch_template(name, node, tags)
        group_args: dict[str, Any] = {}
        if self.launch_template is not None:
            # A group created from a launch template is enabled automatically (pulumi_alicloud 4.0.0
            # ess.ScalingGroup ``launch_template_id``); "Latest" makes a template change reach new nodes.
            group_args.update(
                launch_template_id=self.launch_template.id, launch_template_version=LAUNCH_TEMPLATE_VERSION
            )
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
            health_check_types=list(HEALTH_CHECK_TYPES),
            # A spot node ECS is about to reclaim is replaced ahead of time (SDK spot_instance_remedy).
            spot_instance_remedy=True if node.spot else None,
            tags=tags,
            **group_args,
            # Alarms and scheduled tasks move the desired size at run time; Pulumi must not reset it.
            opts=child(self, ignore_changes=["desiredCapacity"]),
        )
        self.configuration = self._eri_configuration(name, node, tags) if args.erdma_pool else None
        # What the scaling rules and schedules wait for: whatever the group launches from.
        source = self.configuration or self.launch_template
        assert source is not None
        self.launch_source: pulumi.Resource = source
        # Which alarm reads which ESS system metric: the plan's metric_producers and AIT040 check each has a producer.
        self.metric_readers: dict[tuple[str, str], list[str]] = {}
        scale_out = self._step_rule(name, "scale-out", +1)
        scale_in = self._step_rule(name, "scale-in", -1)
        self.scale_out_alarm = self._alarm(
            name, "cpu-busy", "CpuUtilization", ">=", args.scale_out_cpu_percent, scale_out
        )
        self.scale_in_alarm = self._alarm(
            name, "gpu-idle", "GpuUtilizationAgent", "<", args.scale_in_gpu_percent, scale_in
        )

        self.leave_hook = self._leave_hook(name, args)

        self.scheduled_tasks: list[alicloud.ess.ScheduledTask] = []
        if args.off_hours is not None:
            wake, sleep = args.off_hours
            self.scheduled_tasks.append(
                self._schedule(name, "wake", wake, args.min_nodes, args.max_nodes, args.working_hours_nodes)
            )
            self.scheduled_tasks.append(self._schedule(name, "sleep", sleep, 0, 0, 0))

        self.register_outputs({"scaling_group_id": self.group.id, "role_name": self.role.role_name})

    def _leave_hook(self, name: str, args: AutoscalingGpuPoolArgs) -> alicloud.ess.LifecycleHook:
        """SCALE_IN: the leaving node's job is signalled to checkpoint; ESS waits up to the grace period for it."""
        caller = alicloud.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        return alicloud.ess.LifecycleHook(
            f"{name}-leave",
            name=f"{name}-leave",
            scaling_group_id=self.group.id,
            lifecycle_transition="SCALE_IN",
            heartbeat_timeout=args.checkpoint_grace_seconds,
            default_result="CONTINUE",
            notification_arn=pulumi.Output.concat(
                "acs:ess:", args.region, ":", caller.account_id, ":oos/", LEAVE_TEMPLATE
            ),
            notification_metadata=leave_metadata(args.checkpoint_grace_seconds),
            opts=child(self, depends_on=[self.launch_source]),
        )

    def _launch_template(self, name: str, node: NodeSpec, tags: dict[str, str]) -> alicloud.ecs.EcsLaunchTemplate:
        """Every pool node's settings, IMDSv2 required: ESS enforces IMDSv2 only through a launch template."""
        user_data = pulumi.Output.from_input(node.user_data).apply(encoded_user_data)
        return node_launch_template(
            self,
            name,
            node,
            role_name=self.role.role_name,
            user_data=user_data,
            tags=tags,
            with_scratch=True,
            instance_name=f"{name}-node",
        )

    def _eri_configuration(self, name: str, node: NodeSpec, tags: dict[str, str]) -> alicloud.ess.ScalingConfiguration:
        """The opt-in eRDMA path: an ERI needs a scaling configuration,
        which has no http_tokens (IMDSv2 not enforced)."""
        return alicloud.ess.ScalingConfiguration(
            f"{name}-config",
            scaling_configuration_name=f"{name}-gpu",
            scaling_group_id=self.group.id,
            instance_type=node.instance_type,
            image_id=node.image_id,
            # A configuration with network_interfaces takes its security groups there and not in security_group_id
            # (pulumi-alicloud 4.0.0, ready-to-train.md §2b).
            network_interfaces=[
                alicloud.ess.ScalingConfigurationNetworkInterfaceArgs(
                    instance_type="Primary",
                    network_interface_traffic_mode=ERI_TRAFFIC_MODE,
                    security_group_ids=[node.security_group_id],
                )
            ],
            role_name=self.role.role_name,
            system_disk_category="cloud_essd",
            system_disk_size=node.system_disk_gib,
            system_disk_performance_level=node.system_disk_performance_level,
            system_disk_encrypted=True,
            system_disk_kms_key_id=node.kms_key_id,
            data_disks=[alicloud.ess.ScalingConfigurationDataDiskArgs(**scratch_disk_fields(node))]
            if node.scratch_disk_gib
            else None,
            internet_max_bandwidth_out=0,
            spot_strategy=node.spot_strategy,
            user_data=pulumi.Output.from_input(node.user_data).apply(encoded_user_data),
            instance_name=f"{name}-node",
            active=True,
            enable=True,
            force_delete=False,
            tags=tags,
            opts=child(self),
        )

    def _step_rule(self, name: str, suffix: str, change: int) -> alicloud.ess.ScalingRule:
        return alicloud.ess.ScalingRule(
            f"{name}-{suffix}",
            scaling_rule_name=f"{name}-{suffix}",
            scaling_group_id=self.group.id,
            scaling_rule_type="SimpleScalingRule",
            adjustment_type="QuantityChangeInCapacity",
            adjustment_value=change,
            cooldown=SCALING_COOLDOWN_SECONDS,
            opts=child(self, depends_on=[self.launch_source]),
        )

    def _alarm(
        self, name: str, suffix: str, metric: str, operator: str, threshold: float, rule: alicloud.ess.ScalingRule
    ) -> alicloud.ess.Alarm:
        self.metric_readers.setdefault((metric, ESS_SYSTEM_NAMESPACE), []).append(f"{name}-{suffix}")
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

    def _schedule(
        self, name: str, suffix: str, task: RecurringTask, min_value: int, max_value: int, desired: int
    ) -> alicloud.ess.ScheduledTask:
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
            opts=child(self, depends_on=[self.launch_source]),
        )
