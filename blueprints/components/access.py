"""LoginNode: the one machine with a public address, SSH-only from the admin range, the way in to training nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import attached_eip, child, encoded_user_data, ssh_ingress, with_tags
from blueprints.components.network import ALIBABA_SERVICE_CIDR, egress_rules

# The tag that tells guardrails the login node's security group and instance from training nodes'.
from blueprints.review.guardrails import LOGIN_TAG

# Bandwidth cap (Mbit/s) of the login node's EIP: SSH and the odd scp of a script, not dataset traffic
# (datasets go to OSS through the internal endpoint).
LOGIN_EIP_BANDWIDTH_MBPS = "10"


@dataclass(frozen=True)
class LoginNodeArgs:
    """What the login node needs: a small CPU type, an image, where it lives and who may reach it."""

    name: str
    instance_type: str
    image_id: pulumi.Input[str]
    vswitch_id: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    admin_cidr: str
    # The VPC the nodes are in: the login node's egress reaches SSH on it and nothing else of it.
    vpc_cidr: str
    system_disk_gib: int = 40
    user_data: str | None = None
    key_pair_name: str | None = None
    kms_key_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


class LoginNode(pulumi.ComponentResource):
    """A small ECS instance with an EIP, admitting TCP 22 from ``admin_cidr`` and nothing else.

    It has its own security group (``inner_access_policy="Drop"``, one ingress rule: SSH from the admin range, and an
    egress allow-list: SSH into the VPC, Alibaba Cloud's service range, then a drop of everything else),
    no public bandwidth of its own (``internet_max_bandwidth_out=0``: its public address is the EIP, which can be
    released without touching the instance), an encrypted ESSD system disk, IMDSv2 only and no RAM role (it
    needs no cloud API). Training nodes admit SSH from this security group only: that rule belongs to the
    training network, which takes ``security_group_id``.
    """

    def __init__(self, name: str, args: LoginNodeArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:access:LoginNode", name, None, opts)
        tags = with_tags(args.tags, LOGIN_TAG)

        self.security_group = alicloud.ecs.SecurityGroup(
            f"{name}-sg",
            security_group_name=f"{args.name}-login",
            description="aitrain login node: SSH from the admin range only",
            vpc_id=args.vpc_id,
            inner_access_policy="Drop",
            tags=tags,
            opts=child(self),
        )
        ssh_ingress(
            self,
            f"{name}-sg-admin-ssh",
            self.security_group.id,
            "SSH to the login node from the configured admin range only",
            cidr_ip=args.admin_cidr,
        )
        # A bastion only forwards SSH: to the nodes (TCP 22 into the VPC) and to Alibaba Cloud's service range for its
        # own metadata, DNS, NTP and OS mirrors (the same range the nodes' list accepts). Nothing else: with its public
        # address it would otherwise be the one host that can send the share's data anywhere, past the nodes' list.
        egress_rules(
            self,
            f"{name}-sg",
            self.security_group.id,
            [
                ("ssh-vpc", "tcp", "22/22", args.vpc_cidr, "SSH from the login node to the training nodes"),
                (
                    "alibaba-services",
                    "all",
                    "-1/-1",
                    ALIBABA_SERVICE_CIDR,
                    "Alibaba Cloud services: metadata, DNS, NTP, OS mirrors",
                ),
            ],
        )
        self.instance = alicloud.ecs.Instance(
            f"{name}-instance",
            instance_name=f"{args.name}-login",
            instance_type=args.instance_type,
            image_id=args.image_id,
            vswitch_id=args.vswitch_id,
            security_groups=[self.security_group.id],
            instance_charge_type="PostPaid",
            internet_max_bandwidth_out=0,
            system_disk_category="cloud_essd",
            system_disk_size=args.system_disk_gib,
            system_disk_encrypted=True,
            system_disk_kms_key_id=args.kms_key_id,
            http_endpoint="enabled",
            http_tokens="required",
            key_name=args.key_pair_name,
            user_data=encoded_user_data(args.user_data) if args.user_data else None,
            tags=tags,
            volume_tags=tags,
            opts=child(self),
        )
        self.eip, _ = attached_eip(
            self,
            name,
            address_name=f"{args.name}-login",
            bandwidth_mbps=LOGIN_EIP_BANDWIDTH_MBPS,
            instance_id=self.instance.id,
            instance_type="EcsInstance",
            tags=tags,
        )

        self.security_group_id = self.security_group.id
        self.instance_id = self.instance.id
        self.private_ip = self.instance.private_ip
        self.public_ip = self.eip.ip_address
        self.register_outputs(
            {
                "security_group_id": self.security_group_id,
                "instance_id": self.instance_id,
                "private_ip": self.private_ip,
                "public_ip": self.public_ip,
            }
        )
