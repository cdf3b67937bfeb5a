"""PAI-Lingjun (eflo) kinds: the Lingjun cluster, its node groups and nodes, and its own network (VPD, subnets, VSC
and the Lingjun hub). Replacing inputs are the ForceNew marks of terraform-provider-alicloud's eflo resources
(blueprints/data/replacing_inputs.csv); a Lingjun node has no list price (sold on quote), so its line stays unknown."""

from __future__ import annotations

from blueprints.kinds.model import Costs, Free, Kind, Priced, ReplacingInputs, Resource, Role, Terraform, Unpriced

SERVICES = ("eflo",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS


def _node_cost(costs: Costs, r: Resource) -> None:
    """One Lingjun node per hour: the catalog's ``lingjun_node`` price, unknown (quote only) until a row gives one."""
    machine = r.inputs.get("machineType") or "(machineType unset)"
    payment = r.inputs.get("paymentType") or "Subscription"
    item = f"Lingjun node {machine} ({payment}; sold on quote)"
    costs.add(r, item, 1, "node-hour", costs.price("lingjun_node", None), "hourly")


KINDS = (
    Kind(
        token="alicloud:eflo/cluster:Cluster",
        key_properties=("clusterType", "hpnZone", "openEniJumboFrame", "networks.vpcId"),
        pricing=Unpriced("no source states whether a Lingjun cluster bills on its own; its nodes are priced"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:eflo/nodeGroup:NodeGroup",
        key_properties=("machineType", "az", "imageId", "nodeGroupName"),
        pricing=Free("a node group only groups the cluster's nodes: each node is priced on its own line"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        computed_outputs=("nodeGroupId",),
    ),
    Kind(
        token="alicloud:eflo/node:Node",
        key_properties=("machineType", "paymentType", "zone", "hpnZone", "hostname"),
        pricing=Priced(_node_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.IN_VSWITCH}),
    ),
    Kind(
        token="alicloud:eflo/hyperNode:HyperNode",
        key_properties=("machineType", "paymentType", "zoneId", "hpnZone"),
        pricing=Priced(_node_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.IN_VSWITCH}),
    ),
    Kind(
        token="alicloud:eflo/nodeGroupAttachment:NodeGroupAttachment",
        key_properties=("nodeId", "nodeGroupId", "hostname"),
        pricing=Free("putting a node into a node group costs nothing of its own: the node is priced"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.IN_VSWITCH}),
    ),
    Kind(
        token="alicloud:eflo/vpd:Vpd",
        key_properties=("cidr", "vpdName"),
        pricing=Unpriced("no source found states a price for a Lingjun VPD"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:eflo/subnet:Subnet",
        key_properties=("cidr", "zoneId", "type"),
        pricing=Unpriced("no source found states a price for a Lingjun subnet"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:eflo/vsc:Vsc",
        key_properties=("nodeId", "vscType"),
        pricing=Unpriced("no source found states a price for a Lingjun VSC"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:eflo/er:Er",
        key_properties=("erName", "masterZoneId"),
        pricing=Unpriced("no source found states a price for a Lingjun hub (ER)"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
)
