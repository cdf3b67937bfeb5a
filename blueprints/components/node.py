"""What every GPU node of every compute unit is built from, and the node identity (RAM role and its policies)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, node_role

# The ECS NIC traffic mode that gives an interface eRDMA (an ERI); ready-to-train.md §2b.
ERI_TRAFFIC_MODE = "HighPerformance"


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
    # Custom RAM policies the node role gets (the bucket's scoped policy); attached by the compute unit, so parking
    # compute removes only the attachments.
    policy_names: Sequence[pulumi.Input[str]] = ()
    spot: bool = False
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def spot_strategy(self) -> str:
        """ECS spot strategy: market price capped at pay-as-you-go, or none."""
        return "SpotAsPriceGo" if self.spot else "NoSpot"


def node_identity(parent: pulumi.Resource, name: str, node: NodeSpec) -> alicloud.ram.Role:
    """The node RAM role of a compute unit, with the node's custom policies attached (children of ``parent``)."""
    role = node_role(parent, name)
    for index, policy in enumerate(node.policy_names):
        alicloud.ram.RolePolicyAttachment(
            f"{name}-node-policy-{index}",
            role_name=role.role_name,
            policy_name=policy,
            policy_type="Custom",
            opts=child(parent),
        )
    return role
