"""CpuPreprocessGroup: CPU nodes that decode and augment training data beside the GPU nodes."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, encoded_user_data, with_tags
from blueprints.components.node import NodeSpec, node_identity

# The ``aitrain-component`` tag of the group's instances (tells them from GPU nodes and the login node).
PREPROCESS_TAG = "cpu-preprocess"


@dataclass(frozen=True)
class CpuPreprocessGroupArgs:
    """N identical CPU nodes in one vSwitch: the node spec (type, image, security group, user data, disks, bucket
    policy, KMS key, tags) and where they live."""

    node: NodeSpec
    nodes: int
    zone_id: str
    vswitch_id: pulumi.Input[str]


class CpuPreprocessGroup(pulumi.ComponentResource):
    """N CPU nodes on the GPU nodes' network, file system and bucket, with no GPU and no public address.

    Each node is one ``ecs.Instance`` named by its index (``<name>-cpu-000``, ...), so a resize adds or removes only
    the last ones and adding the group renames nothing else: IMDSv2 required, ``internet_max_bandwidth_out=0`` (the
    NAT gateway is the way out), an encrypted ESSD system disk, the group's own RAM role with the bucket's scoped
    policy attached (``node_identity``), and user data that mounts the shared file system.
    """

    def __init__(self, name: str, args: CpuPreprocessGroupArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:compute:CpuPreprocessGroup", name, None, opts)
        node = args.node
        tags = with_tags(node.tags, PREPROCESS_TAG)
        self.role = node_identity(self, name, node)
        user_data = pulumi.Output.from_input(node.user_data).apply(encoded_user_data)
        self.instances = [
            alicloud.ecs.Instance(
                f"{name}-cpu-{index:03d}",
                instance_name=f"{name}-cpu-{index:03d}",
                instance_type=node.instance_type,
                image_id=node.image_id,
                security_groups=[node.security_group_id],
                vswitch_id=args.vswitch_id,
                availability_zone=args.zone_id,
                role_name=self.role.role_name,
                instance_charge_type="PostPaid",
                spot_strategy=node.spot_strategy,
                internet_max_bandwidth_out=0,
                http_tokens="required",
                system_disk_category="cloud_essd",
                system_disk_size=node.system_disk_gib,
                system_disk_performance_level=node.system_disk_performance_level,
                system_disk_encrypted=True,
                system_disk_kms_key_id=node.kms_key_id,
                user_data=user_data,
                # Stateless like the GPU nodes: prepared data goes to the shared file system or the bucket.
                deletion_protection=False,
                tags=tags,
                volume_tags=tags,
                opts=child(self),
            )
            for index in range(args.nodes)
        ]
        self.instance_ids = pulumi.Output.all(*[i.id for i in self.instances]).apply(list)
        self.private_ips = pulumi.Output.all(*[i.private_ip for i in self.instances]).apply(list)
        self.register_outputs(
            {"instance_ids": self.instance_ids, "private_ips": self.private_ips, "role_name": self.role.role_name}
        )
