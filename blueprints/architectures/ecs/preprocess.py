"""Builds the optional CPU preprocessing group of an ECS blueprint (``preprocess:`` in its profile)."""

from __future__ import annotations

from typing import Any

import pulumi

from blueprints.architectures.base.build import Foundation
from blueprints.bootstrap.preprocess import PreprocessBoot, render_preprocess_user_data
from blueprints.components.errors import names_resource
from blueprints.components.node import NodeSpec
from blueprints.components.preprocess import CpuPreprocessGroup, CpuPreprocessGroupArgs
from blueprints.core.layout import check_vswitch_room
from blueprints.profile.preprocess import PREPROCESS_UNIT, PreprocessGroup


def build_preprocess_group(
    spec: Any, foundation: Foundation, image_id: pulumi.Input[str], nfs_package: str, opts: pulumi.ResourceOptions
) -> dict[str, object]:
    """The group in the first compute zone's vSwitch and the nodes' security group, and its outputs; nothing without
    a ``preprocess`` section or while the cluster is parked (no GPU node to feed)."""
    p = spec.profile
    group: PreprocessGroup | None = getattr(p, "preprocess", None)
    if group is None or spec.expected_nodes() == 0:
        return {}
    network, storage, bucket = foundation
    # The group shares the compute vSwitches with the GPU nodes: both must fit, or the last launches fail mid-way.
    with names_resource(network):
        check_vswitch_room(p.network.vpc_cidr, spec.most_nodes() + group.nodes, len(network.compute_zone_ids))
    name = f"{p.name}-{PREPROCESS_UNIT}"
    boot = PreprocessBoot(
        cluster=p.name,
        region=p.region,
        storage_kind=p.storage.kind,
        mount_source="",
        mount_options=storage.mount_options,
        nfs_package=nfs_package,
        bucket=p.bucket_name,
        role_name=f"{name}-node",
    )
    user_data = storage.mount_source.apply(
        lambda source: render_preprocess_user_data(
            PreprocessBoot(**{**boot.__dict__, "mount_source": source}),
        )
    )
    node = NodeSpec(
        instance_type=group.instance_type,
        image_id=image_id,
        security_group_id=network.security_group_id,
        user_data=user_data,
        system_disk_gib=group.system_disk_gib,
        system_disk_performance_level=group.system_disk_performance_level,
        kms_key_id=p.security.kms_key_id,
        bucket_policy_name=bucket.policy_name,
        tags=p.tags,
    )
    zone = network.compute_zone_ids[0]
    unit = CpuPreprocessGroup(
        name,
        CpuPreprocessGroupArgs(node=node, nodes=group.nodes, zone_id=zone, vswitch_id=network.vswitch_id(zone)),
        opts=opts,
    )
    return {
        "preprocess_nodes": group.nodes,
        "preprocess_instance_ids": unit.instance_ids,
        "preprocess_private_ips": unit.private_ips,
    }
