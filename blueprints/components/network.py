"""TrainingNetwork: a private VPC for training nodes, reachable only from inside and from the admin range."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, with_tags
from blueprints.layout import choose_zones, vswitch_cidrs

# The NAT gateway's EIP bandwidth cap (Mbit/s) for outbound traffic (package mirrors, container registries).
NAT_EIP_BANDWIDTH_MBPS = "200"


@dataclass(frozen=True)
class TrainingNetworkArgs:
    """What the network needs to know."""

    region: str
    vpc_cidr: str
    instance_type: str
    zone_count: int
    preferred_zones: tuple[str, ...] = ()
    admin_cidr: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


class TrainingNetwork(pulumi.ComponentResource):
    """VPC, one vSwitch per chosen zone, a closed security group and NAT-only egress.

    Zones are asked from the cloud (``alicloud.get_zones(available_instance_type=…)``) so that a vSwitch is
    only placed where the GPU type can launch. Nodes get no public IP; they reach the internet through the
    NAT gateway's SNAT entries, and only the cluster itself and the admin CIDR may connect to them.
    """

    def __init__(self, name: str, args: TrainingNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:network:TrainingNetwork", name, None, opts)
        tags = with_tags(args.tags, "network")

        offered = alicloud.get_zones(
            available_instance_type=args.instance_type,
            available_resource_creation="VSwitch",
            opts=pulumi.InvokeOptions(parent=self),
        )
        self.zone_ids: list[str] = choose_zones(
            list(offered.ids), args.preferred_zones, args.zone_count, instance_type=args.instance_type, region=args.region
        )

        self.vpc = alicloud.vpc.Network(
            f"{name}-vpc", vpc_name=f"{name}-vpc", cidr_block=args.vpc_cidr, tags=tags, opts=child(self)
        )
        self.vswitches: list[alicloud.vpc.Switch] = []
        for zone, cidr in zip(self.zone_ids, vswitch_cidrs(args.vpc_cidr, len(self.zone_ids))):
            # Named by zone, not index, so adding a zone never renames an existing vSwitch.
            self.vswitches.append(
                alicloud.vpc.Switch(
                    f"{name}-vsw-{zone}",
                    vswitch_name=f"{name}-{zone}",
                    vpc_id=self.vpc.id,
                    cidr_block=cidr,
                    zone_id=zone,
                    tags=tags,
                    opts=child(self),
                )
            )

        self.security_group = alicloud.ecs.SecurityGroup(
            f"{name}-sg",
            security_group_name=f"{name}-nodes",
            description="aitrain training nodes: cluster-internal traffic and admin SSH only",
            vpc_id=self.vpc.id,
            # Members talk to each other only through the explicit rule below.
            inner_access_policy="Drop",
            tags=tags,
            opts=child(self),
        )
        # NCCL and the storage client use many ports: allow everything between members of this group.
        alicloud.ecs.SecurityGroupRule(
            f"{name}-sg-intra-cluster",
            type="ingress",
            ip_protocol="all",
            port_range="-1/-1",
            nic_type="intranet",
            policy="accept",
            priority=1,
            security_group_id=self.security_group.id,
            source_security_group_id=self.security_group.id,
            description="all traffic between training nodes",
            opts=child(self),
        )
        if args.admin_cidr:
            alicloud.ecs.SecurityGroupRule(
                f"{name}-sg-admin-ssh",
                type="ingress",
                ip_protocol="tcp",
                port_range="22/22",
                nic_type="intranet",
                policy="accept",
                priority=1,
                security_group_id=self.security_group.id,
                cidr_ip=args.admin_cidr,
                description="SSH from the configured admin range only",
                opts=child(self),
            )

        self.nat_gateway = alicloud.vpc.NatGateway(
            f"{name}-nat",
            nat_gateway_name=f"{name}-nat",
            vpc_id=self.vpc.id,
            vswitch_id=self.vswitches[0].id,
            nat_type="Enhanced",
            payment_type="PayAsYouGo",
            internet_charge_type="PayByLcu",
            tags=tags,
            opts=child(self),
        )
        self.nat_eip = alicloud.ecs.EipAddress(
            f"{name}-nat-eip",
            address_name=f"{name}-nat",
            bandwidth=NAT_EIP_BANDWIDTH_MBPS,
            internet_charge_type="PayByTraffic",
            payment_type="PayAsYouGo",
            tags=tags,
            opts=child(self),
        )
        association = alicloud.ecs.EipAssociation(
            f"{name}-nat-eip-association",
            allocation_id=self.nat_eip.id,
            instance_id=self.nat_gateway.id,
            instance_type="Nat",
            opts=child(self),
        )
        for zone, vswitch in zip(self.zone_ids, self.vswitches):
            alicloud.vpc.SnatEntry(
                f"{name}-snat-{zone}",
                snat_table_id=self.nat_gateway.snat_table_ids,
                source_vswitch_id=vswitch.id,
                snat_ip=self.nat_eip.ip_address,
                snat_entry_name=f"{name}-{zone}",
                opts=child(self, depends_on=[association]),
            )

        self.vpc_id = self.vpc.id
        self.vswitch_ids = [v.id for v in self.vswitches]
        self.security_group_id = self.security_group.id
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "vswitch_ids": self.vswitch_ids,
                "security_group_id": self.security_group_id,
                "zone_ids": self.zone_ids,
            }
        )
