"""Shared conventions for aitrain components: child options, stable names, tags, node identity, user-data encoding."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from blueprints.core import userdata

# Where every node sees the shared storage pool, whatever its kind.
SHARED_MOUNT_PATH = "/mnt/shared"


def child(parent: pulumi.Resource, **extra: Any) -> pulumi.ResourceOptions:
    """Options for a child resource: parented to the component (so it inherits the provider)."""
    return pulumi.ResourceOptions(parent=parent, **extra)


def stateful(parent: pulumi.Resource) -> pulumi.ResourceOptions:
    """Options for data that must outlive any change of compute: never deleted, never replaced by Pulumi."""
    return pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True)


def with_tags(tags: dict[str, str], component: str) -> dict[str, str]:
    """Profile tags plus the tags aitrain always sets (who manages it, which unit it belongs to)."""
    return {**tags, "managed-by": "aitrain", "aitrain-component": component}


def encoded_user_data(text: str) -> str:
    """The ``user_data`` argument of instances, launch templates and ESS configurations: gzip, then Base64
    (``blueprints.core.userdata``: the 16 KB limit applies to the compressed bytes)."""
    return userdata.encode(text)


# The ECS service may assume the node role; nothing else may (RAM trust policy, version 1).
ECS_TRUST_POLICY = json.dumps(
    {
        "Version": "1",
        "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": ["ecs.aliyuncs.com"]}}],
    },
    sort_keys=True,
)


def node_role(parent: pulumi.Resource, name: str) -> alicloud.ram.Role:
    """The RAM role the training nodes run as. It holds no policy: least privilege until a unit needs one."""
    return alicloud.ram.Role(
        f"{name}-node-role",
        role_name=f"{name}-node",
        assume_role_policy_document=ECS_TRUST_POLICY,
        description="aitrain training nodes; grants nothing by default (attach scoped policies as needed)",
        opts=child(parent),
    )


def ssh_ingress(
    parent: pulumi.Resource,
    name: str,
    security_group_id: pulumi.Input[str],
    description: str,
    *,
    cidr_ip: str | None = None,
    source_security_group_id: pulumi.Input[str] | None = None,
) -> alicloud.ecs.SecurityGroupRule:
    """Admit TCP 22 into ``security_group_id`` from one CIDR or one security group, and nothing else."""
    return alicloud.ecs.SecurityGroupRule(
        name,
        type="ingress",
        ip_protocol="tcp",
        port_range="22/22",
        nic_type="intranet",
        policy="accept",
        priority=1,
        security_group_id=security_group_id,
        cidr_ip=cidr_ip,
        source_security_group_id=source_security_group_id,
        description=description,
        opts=child(parent),
    )


def attached_eip(
    parent: pulumi.Resource,
    name: str,
    *,
    address_name: str,
    bandwidth_mbps: str,
    instance_id: pulumi.Input[str],
    instance_type: str,
    tags: dict[str, str],
) -> tuple[alicloud.ecs.EipAddress, alicloud.ecs.EipAssociation]:
    """A pay-by-traffic EIP (``<name>-eip``) bound to one instance or NAT gateway (``<name>-eip-association``).

    The address has deletion protection: releasing it would change the public IP that allow-lists elsewhere name.
    """
    eip = alicloud.ecs.EipAddress(
        f"{name}-eip",
        address_name=address_name,
        bandwidth=bandwidth_mbps,
        internet_charge_type="PayByTraffic",
        payment_type="PayAsYouGo",
        deletion_protection=True,
        tags=tags,
        opts=child(parent),
    )
    association = alicloud.ecs.EipAssociation(
        f"{name}-eip-association",
        allocation_id=eip.id,
        instance_id=instance_id,
        instance_type=instance_type,
        opts=child(parent),
    )
    return eip, association
