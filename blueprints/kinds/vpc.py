"""VPC kinds: the network, its vSwitches, the NAT gateway and its SNAT entries, flow logs."""

from __future__ import annotations

from blueprints.kinds.model import Costs, Free, Kind, Priced, ReplacingInputs, Resource, Role, Terraform, Unpriced

SERVICES = ("vpc",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS


def _nat_cost(costs: Costs, r: Resource) -> None:
    """The instance fee per hour, and the CU fee (usage: the plan does not know the traffic)."""
    costs.add(r, "NAT gateway instance fee", 1, "hour", costs.price("nat_instance", None), "hourly")
    costs.add(r, "NAT gateway CU fee (usage)", 0, "CU-hour", costs.price("nat_cu", None), "usage")


KINDS = (
    Kind(
        token="alicloud:vpc/network:Network",
        key_properties=("cidrBlock",),
        pricing=Free("a VPC has no charge of its own"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:vpc/switch:Switch",
        key_properties=("zoneId", "cidrBlock"),
        pricing=Free("a vSwitch has no charge of its own"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:vpc/natGateway:NatGateway",
        key_properties=("natType", "paymentType", "internetChargeType"),
        pricing=Priced(_nat_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.IN_VSWITCH}),
        computed_outputs=("snatTableIds", "forwardTableIds"),
        deletion_protection=("deletionProtection", True),
    ),
    Kind(
        token="alicloud:vpc/snatEntry:SnatEntry",
        key_properties=("sourceVswitchId", "snatIp"),
        pricing=Free("SNAT entries are part of the NAT gateway's fees"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:vpc/flowLog:FlowLog",
        key_properties=("resourceType", "trafficType", "projectName", "logStoreName"),
        pricing=Unpriced("flow logs bill per GB of traffic recorded into Log Service, which the plan does not know"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
)
