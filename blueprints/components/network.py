"""TrainingNetwork: a private VPC for training nodes, reachable only from inside and from the admin range."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import attached_eip, child, ssh_ingress, with_tags
from blueprints.components.errors import ResourceError, names_resource
from blueprints.core.layout import choose_compute_zones, login_vswitch_cidr, network_zones, vswitch_cidr

# The NAT gateway's EIP bandwidth cap (Mbit/s) for outbound traffic (package mirrors, container registries).
NAT_EIP_BANDWIDTH_MBPS = "200"

# "100.64.0.0/10 is reserved for Alibaba Cloud services and is only applicable to private network access"
# (https://www.alibabacloud.com/help/en/eip/product-overview/security-hardening-for-eip-associating-with-nic-in-cut-through-mode-accessing-100-64-100):
# the metadata service (100.100.100.200), internal DNS, mirrors.cloud.aliyuncs.com and OSS internal endpoints.
ALIBABA_SERVICE_CIDR = "100.64.0.0/10"

# Security group rule priorities run 1 (first) to 100 (last) (pulumi_alicloud 4.0.0 ecs.SecurityGroupRule).
EGRESS_ACCEPT_PRIORITY = 1
EGRESS_DROP_PRIORITY = 100


@dataclass(frozen=True)
class EgressAllow:
    """One allowed egress destination: TCP ``ports`` ('low/high') to ``cidr``."""

    cidr: str
    ports: str
    description: str = ""


@dataclass(frozen=True)
class TrainingNetworkArgs:
    """What the network needs to know."""

    region: str
    vpc_cidr: str
    region_zones: tuple[str, ...]
    storage_zone: str
    instance_type: str
    compute_zone_count: int
    preferred_zones: tuple[str, ...] = ()
    # SSH straight from this range to the nodes; None when nobody may (or when a login node is the only way in).
    admin_cidr: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    # VPC flow log into an existing SLS (project, logstore); None: no flow log.
    flow_log: tuple[str, str] | None = None
    # Egress allow-list beyond the VPC and Alibaba Cloud's service range; None: egress unrestricted.
    egress_allow: tuple[EgressAllow, ...] | None = None
    # A vSwitch of its own for the login node (in the storage zone), apart from every compute vSwitch.
    login_vswitch: bool = False
    # What to do when no zone offers the type: the profile's next fallback, or how to find one.
    zone_next_step: str = "change network.zones, the region or compute.instance_type"


class TrainingNetwork(pulumi.ComponentResource):
    """VPC, one vSwitch per zone in use, a closed security group and NAT-only egress.

    The storage zone always has a vSwitch. Compute zones are asked from the cloud
    (``alicloud.get_zones(available_instance_type=…)``) so compute only lands where the GPU type can launch;
    each vSwitch is named and numbered by its zone, so a change of compute never touches the storage zone's.
    Nodes get no public IP; they reach the internet through the
    NAT gateway's SNAT entries, and only the cluster itself and the admin CIDR may connect to them.
    """

    def __init__(self, name: str, args: TrainingNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:network:TrainingNetwork", name, None, opts)
        tags = with_tags(args.tags, "network")
        self.prefix = name

        offered = alicloud.get_zones(
            available_instance_type=args.instance_type,
            available_resource_creation="VSwitch",
            opts=pulumi.InvokeOptions(parent=self),
        )
        # A zone choice or CIDR layout the arguments cannot give is this network's error (it names the network).
        with names_resource(self):
            self.compute_zone_ids: list[str] = choose_compute_zones(
                list(offered.ids),
                args.preferred_zones,
                args.storage_zone,
                args.compute_zone_count,
                region_zones=args.region_zones,
                instance_type=args.instance_type,
                region=args.region,
                next_step=args.zone_next_step,
            )
            self.zone_ids = network_zones(args.storage_zone, self.compute_zone_ids, args.region_zones)
            cidrs = {zone: vswitch_cidr(args.vpc_cidr, zone, args.region_zones) for zone in self.zone_ids}
            login_cidr = (
                login_vswitch_cidr(args.vpc_cidr, self.zone_ids, args.region_zones) if args.login_vswitch else None
            )

        self.vpc = alicloud.vpc.Network(
            f"{name}-vpc", vpc_name=f"{name}-vpc", cidr_block=args.vpc_cidr, tags=tags, opts=child(self)
        )
        self.vswitches: dict[str, alicloud.vpc.Switch] = {}
        for zone in self.zone_ids:
            # Named and numbered by zone, not by position, so adding a zone never renames or moves another.
            self.vswitches[zone] = alicloud.vpc.Switch(
                f"{name}-vsw-{zone}",
                vswitch_name=f"{name}-{zone}",
                vpc_id=self.vpc.id,
                cidr_block=cidrs[zone],
                zone_id=zone,
                tags=tags,
                opts=child(self),
            )

        # The compute vSwitches' CIDRs by zone: what the share admits and what the launcher takes as a node address.
        self.compute_cidrs: dict[str, str] = {zone: cidrs[zone] for zone in self.compute_zone_ids}
        self.login_vswitch = (
            alicloud.vpc.Switch(
                f"{name}-vsw-login",
                vswitch_name=f"{name}-login",
                vpc_id=self.vpc.id,
                cidr_block=login_cidr,
                zone_id=args.storage_zone,
                tags=tags,
                opts=child(self),
            )
            if login_cidr is not None
            else None
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
        if args.egress_allow is not None:
            self._egress_allow_list(name, args)
        if args.admin_cidr:
            ssh_ingress(
                self,
                f"{name}-sg-admin-ssh",
                self.security_group.id,
                "SSH from the configured admin range only",
                cidr_ip=args.admin_cidr,
            )

        self.nat_gateway = alicloud.vpc.NatGateway(
            f"{name}-nat",
            nat_gateway_name=f"{name}-nat",
            vpc_id=self.vpc.id,
            # In the storage zone's vSwitch: the one that no change of compute removes.
            vswitch_id=self.vswitches[args.storage_zone].id,
            nat_type="Enhanced",
            payment_type="PayAsYouGo",
            internet_charge_type="PayByLcu",
            # Deleting the gateway cuts every node's egress mid-run; turning this off must be a deliberate step.
            deletion_protection=True,
            tags=tags,
            opts=child(self),
        )
        self.nat_eip, association = attached_eip(
            self,
            f"{name}-nat",
            address_name=f"{name}-nat",
            bandwidth_mbps=NAT_EIP_BANDWIDTH_MBPS,
            instance_id=self.nat_gateway.id,
            instance_type="Nat",
            tags=tags,
        )
        for zone, vswitch in self.vswitches.items():
            alicloud.vpc.SnatEntry(
                f"{name}-snat-{zone}",
                snat_table_id=self.nat_gateway.snat_table_ids,
                source_vswitch_id=vswitch.id,
                snat_ip=self.nat_eip.ip_address,
                snat_entry_name=f"{name}-{zone}",
                opts=child(self, depends_on=[association]),
            )

        self.flow_log = (
            alicloud.vpc.FlowLog(
                f"{name}-flow-log",
                flow_log_name=f"{name}-vpc",
                description="aitrain: all traffic of the training VPC",
                resource_type="VPC",
                resource_id=self.vpc.id,
                traffic_type="All",
                project_name=args.flow_log[0],
                log_store_name=args.flow_log[1],
                tags=tags,
                opts=child(self),
            )
            if args.flow_log is not None
            else None
        )

        self.vpc_id = self.vpc.id
        self.vswitch_ids = [v.id for v in self.vswitches.values()]
        self.security_group_id = self.security_group.id
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "vswitch_ids": self.vswitch_ids,
                "security_group_id": self.security_group_id,
                "zone_ids": self.zone_ids,
                "compute_zone_ids": self.compute_zone_ids,
            }
        )

    def _egress_allow_list(self, name: str, args: TrainingNetworkArgs) -> None:
        """Egress accepts (VPC, Alibaba Cloud services, the profile's entries) and, last, a drop of everything else."""
        accepts = [
            ("vpc", "all", "-1/-1", args.vpc_cidr, "the training VPC (nodes, NAS mount targets)"),
            (
                "alibaba-services",
                "all",
                "-1/-1",
                ALIBABA_SERVICE_CIDR,
                "Alibaba Cloud services: metadata, DNS, mirrors, OSS internal",
            ),
        ]
        accepts += [
            (f"allow-{i}", "tcp", rule.ports, rule.cidr, rule.description or f"allow-list entry {i}")
            for i, rule in enumerate(args.egress_allow or ())
        ]
        egress_rules(self, f"{name}-sg", self.security_group.id, accepts)

    def admit_ssh_from(self, security_group_id: pulumi.Input[str]) -> alicloud.ecs.SecurityGroupRule:
        """Let members of another security group (the login node's) SSH into the training nodes, and nobody else."""
        return ssh_ingress(
            self,
            f"{self.prefix}-sg-ssh-from-login",
            self.security_group.id,
            "SSH from the login node only",
            source_security_group_id=security_group_id,
        )

    @property
    def login_vswitch_id(self) -> pulumi.Output[str]:
        """The login node's vSwitch (``login_vswitch=True`` only)."""
        if self.login_vswitch is None:
            raise ResourceError("TrainingNetwork: login_vswitch_id needs TrainingNetworkArgs(login_vswitch=True)", self)
        return self.login_vswitch.id

    def vswitch_id(self, zone: str) -> pulumi.Output[str]:
        """The ID of the vSwitch in ``zone`` (a zone in ``zone_ids``)."""
        return self.vswitches[zone].id


def egress_rules(
    parent: pulumi.Resource,
    prefix: str,
    security_group_id: pulumi.Input[str],
    accepts: list[tuple[str, str, str, str, str]],
) -> None:
    """Egress accepts ``(suffix, protocol, ports, cidr, description)``
    into one group and, last, a drop of everything else.

    The rules are named ``<prefix>-egress-<suffix>`` and ``<prefix>-egress-drop-all``: the training nodes' group and
    the login node's group use the same shape, so AIT027 judges both alike.
    """
    for suffix, protocol, ports, cidr, description in accepts:
        alicloud.ecs.SecurityGroupRule(
            f"{prefix}-egress-{suffix}",
            type="egress",
            ip_protocol=protocol,
            port_range=ports,
            nic_type="intranet",
            policy="accept",
            priority=EGRESS_ACCEPT_PRIORITY,
            security_group_id=security_group_id,
            cidr_ip=cidr,
            description=description,
            opts=child(parent),
        )
    alicloud.ecs.SecurityGroupRule(
        f"{prefix}-egress-drop-all",
        type="egress",
        ip_protocol="all",
        port_range="-1/-1",
        nic_type="intranet",
        policy="drop",
        priority=EGRESS_DROP_PRIORITY,
        security_group_id=security_group_id,
        cidr_ip="0.0.0.0/0",
        description="egress allow-list: everything not accepted above is dropped",
        opts=child(parent),
    )
