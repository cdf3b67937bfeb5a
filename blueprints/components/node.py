"""What every GPU node of every compute unit is built from, and the node identity (RAM role and its policies)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, node_role
from blueprints.components.bucket import attach_bucket_policy

# The ECS NIC traffic mode that gives an interface eRDMA (an ERI); ready-to-train.md §2b.
ERI_TRAFFIC_MODE = "HighPerformance"

# The scratch disk's name on every node (the boot script finds it by being the one extra disk, not by name).
SCRATCH_DISK_NAME = "aitrain-scratch"


@dataclass(frozen=True)
class NodeSpec:
    """How every node of a compute unit is built."""

    instance_type: str
    image_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    user_data: pulumi.Input[str]
    system_disk_gib: int
    system_disk_performance_level: str
    scratch_disk_gib: int = 0
    scratch_performance_level: str = "PL1"
    # The type has eRDMA: its primary NIC is created as an ERI (HighPerformance traffic mode).
    eri: bool = False
    # eRDMA nodes: the jumbo-frame state the boot's MTU assumes (8500 on, 1400 off); ecs.Instance sets it explicitly
    # (enable_jumbo_frame), so a family whose default differs still matches the MTU. Only ecs.Instance can carry it.
    jumbo_frames: bool = False
    # The bucket's scoped RAM policy; the compute unit attaches it to its node role, so parking compute removes only
    # the attachment, never the bucket or the policy.
    bucket_policy_name: pulumi.Input[str] | None = None
    spot: bool = False
    # Customer-managed KMS key for every disk (None: the service-managed key).
    kms_key_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def spot_strategy(self) -> str:
        """ECS spot strategy: market price capped at pay-as-you-go, or none."""
        return "SpotAsPriceGo" if self.spot else "NoSpot"


def node_identity(parent: pulumi.Resource, name: str, node: NodeSpec) -> alicloud.ram.Role:
    """The node RAM role of a compute unit, with the bucket policy attached (children of ``parent``)."""
    role = node_role(parent, name)
    if node.bucket_policy_name is not None:
        attach_bucket_policy(parent, name, role, node.bucket_policy_name)
    return role


def scratch_disk_fields(node: NodeSpec) -> dict[str, Any]:
    """The scratch data disk as launch templates, ESS configurations and instances name its arguments: one encrypted
    ESSD, deleted with its node (scratch holds nothing that must outlive the node)."""
    return dict(
        category="cloud_essd",
        size=node.scratch_disk_gib,
        performance_level=node.scratch_performance_level,
        encrypted=True,
        kms_key_id=node.kms_key_id,
        delete_with_instance=True,
        name=SCRATCH_DISK_NAME,
    )


def node_launch_template(
    parent: pulumi.Resource,
    name: str,
    node: NodeSpec,
    *,
    role_name: pulumi.Input[str],
    user_data: pulumi.Input[str],
    tags: dict[str, str],
    with_scratch: bool,
    **placement: Any,
) -> alicloud.ecs.EcsLaunchTemplate:
    """``<name>-template``: what every node of a unit starts from. IMDSv2 required, no public IP, an encrypted system
    disk (and the scratch disk when ``with_scratch``; an instance set asks for its own). ``placement`` adds the
    unit's own arguments (vSwitch, zone, deployment set, instance name)."""
    return alicloud.ecs.EcsLaunchTemplate(
        f"{name}-template",
        launch_template_name=f"{name}-node",
        instance_type=node.instance_type,
        image_id=node.image_id,
        security_group_ids=[node.security_group_id],
        ram_role_name=role_name,
        instance_charge_type="PostPaid",
        spot_strategy=node.spot_strategy,
        internet_max_bandwidth_out=0,
        http_tokens="required",
        system_disk=alicloud.ecs.EcsLaunchTemplateSystemDiskArgs(
            category="cloud_essd",
            size=node.system_disk_gib,
            performance_level=node.system_disk_performance_level,
            encrypted=True,
            kms_key_id=node.kms_key_id,
            delete_with_instance=True,
        ),
        data_disks=[alicloud.ecs.EcsLaunchTemplateDataDiskArgs(**scratch_disk_fields(node))]
        if with_scratch and node.scratch_disk_gib
        else None,
        user_data=user_data,
        tags=tags,
        template_tags=tags,
        opts=child(parent),
        **placement,
    )
