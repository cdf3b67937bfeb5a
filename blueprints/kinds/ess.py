"""Auto Scaling (ESS) kinds: scaling groups, configurations, rules, alarms, lifecycle hooks and scheduled tasks."""

from __future__ import annotations

from typing import Sequence

from blueprints.core.tokens import referenced_names
from blueprints.kinds.ecs import system_disk
from blueprints.kinds.model import (
    Costs,
    Free,
    Kind,
    Neighbours,
    NodeGroup,
    Priced,
    ReplacingInputs,
    Resource,
    Role,
    Terraform,
)

SERVICES = ("ess",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS
_FREE = "Auto Scaling itself is free: the nodes it starts are priced on their scaling group"


def _size(group: Resource) -> tuple[int, int]:
    return int(group.inputs.get("minSize") or 0), int(group.inputs.get("maxSize") or 0)


def _group_cost(costs: Costs, r: Resource) -> None:
    """A group launched from a template: its nodes are the template's (type, system and data disks), at ``minSize``.

    A group without one is priced through the scaling configuration that names it.
    """
    template = costs.referenced(r.inputs.get("launchTemplateId")) if r.inputs.get("launchTemplateId") else None
    if template is not None:
        costs.pool(r, template.inputs, template.inputs.get("systemDisk"), *_size(r))


def _configuration_cost(costs: Costs, r: Resource) -> None:
    """The nodes of the group the configuration belongs to (the pool's lines are the group's)."""
    group = costs.referenced(r.inputs.get("scalingGroupId"))
    if group is not None:
        costs.pool(group, r.inputs, system_disk(r.inputs), *_size(group))


def _group_nodes(group: Resource, around: Neighbours) -> Sequence[NodeGroup]:
    """A pool at its ``maxSize``, its nodes from its launch template or else the scaling configuration naming it."""
    source = next(
        (around.by_name[n] for n in referenced_names(group.inputs.get("launchTemplateId")) if n in around.by_name), None
    )
    if source is None:
        # A scaling configuration points at its group (scalingGroupId), not the other way round.
        source = next(
            (
                r
                for r in around.resources
                if r.short_type == "ess.ScalingConfiguration"
                and group.name in referenced_names(r.inputs.get("scalingGroupId"))
            ),
            None,
        )
    return () if source is None else (NodeGroup(source.inputs, int(group.inputs.get("maxSize", 0))),)


KINDS = (
    Kind(
        token="alicloud:ess/scalingGroup:ScalingGroup",
        key_properties=("minSize", "maxSize", "desiredCapacity", "multiAzPolicy", "groupDeletionProtection"),
        pricing=Priced(_group_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.COMPUTE_GROUP, Role.IN_VSWITCH}),
        capacity=_group_nodes,
        deletion_protection=("groupDeletionProtection", True),
    ),
    Kind(
        token="alicloud:ess/scalingConfiguration:ScalingConfiguration",
        key_properties=(
            "instanceType",
            "systemDiskEncrypted",
            "internetMaxBandwidthOut",
            "spotStrategy",
            "dataDisks",
            "networkInterfaces",
        ),
        pricing=Priced(_configuration_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.NODE, Role.NODE_TEMPLATE, Role.DISKS}),
    ),
    Kind(
        token="alicloud:ess/scalingRule:ScalingRule",
        key_properties=("adjustmentType", "adjustmentValue"),
        pricing=Free(_FREE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        computed_outputs=("ari",),
    ),
    Kind(
        token="alicloud:ess/alarm:Alarm",
        key_properties=("metricName", "comparisonOperator", "threshold", "period", "evaluationCount"),
        pricing=Free(_FREE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        # The SCALE_IN hook that holds a leaving node while its job checkpoints (blueprints/components/pool.py).
        token="alicloud:ess/lifecycleHook:LifecycleHook",
        key_properties=("lifecycleTransition", "heartbeatTimeout", "defaultResult", "notificationArn"),
        pricing=Free(_FREE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ess/scheduledTask:ScheduledTask",
        key_properties=("launchTime", "recurrenceType", "recurrenceValue", "minValue", "desiredCapacity"),
        pricing=Free(_FREE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
)
