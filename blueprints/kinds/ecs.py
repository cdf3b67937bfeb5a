"""ECS kinds: security groups, EIPs, launch templates, instance sets, instances, disks, key pairs, snapshot policies,
image pipelines (`aitrain bake`), reserved capacity (capacity reservations, elasticity assurances)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from blueprints.catalog import CnyPrice
from blueprints.core.tokens import referenced_names
from blueprints.kinds.model import (
    Costs,
    Free,
    Kind,
    Neighbours,
    NodeGroup,
    Priced,
    ReplacingInputs,
    Resource,
    Role,
    Terraform,
    Unpriced,
)

SERVICES = ("ecs",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS
_NO_CHARGE = "the ECS API charges nothing for it"


def system_disk(inputs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``systemDisk*`` inputs of an instance, scaling configuration or node pool as one dict (None: no size)."""
    if not inputs.get("systemDiskSize"):
        return None
    return {"size": inputs["systemDiskSize"], "performanceLevel": inputs.get("systemDiskPerformanceLevel")}


def _instance_set_cost(costs: Costs, r: Resource) -> None:
    """``amount`` nodes; the system disk is the launch template's when the set is built from one."""
    template = costs.referenced(r.inputs.get("launchTemplateId"))
    system = (template.inputs.get("systemDisk") if template else None) or r.inputs.get("systemDisk")
    costs.nodes(r, int(r.inputs.get("amount") or 0), r.inputs, system)


def _instance_cost(costs: Costs, r: Resource) -> None:
    costs.nodes(r, 1, r.inputs, system_disk(r.inputs))


def _eip_cost(costs: Costs, r: Resource) -> None:
    """The configuration fee, and the association fee when the EIP is bound to a NAT gateway."""
    costs.add(r, "EIP configuration fee", 1, "hour", costs.price("eip_config", None), "hourly")
    bound_to_nat = any(
        a.short_type == "ecs.EipAssociation"
        and getattr(costs.referenced(a.inputs.get("allocationId")), "name", None) == r.name
        and a.inputs.get("instanceType") == "Nat"
        for a in costs.resources
    )
    if bound_to_nat:
        price = costs.price("eip_association", None)
        costs.add(r, "EIP association fee (bound to a NAT gateway)", 1, "hour", price, "hourly")


def _disk_cost(costs: Costs, r: Resource) -> None:
    """A separate data disk: its size × the ESSD price of its performance level (other categories have no price)."""
    category = str(r.inputs.get("category") or "cloud_efficiency")  # the API's default category
    level = str(r.inputs.get("performanceLevel") or "PL1")
    price = (
        costs.price("essd", level)
        if category == "cloud_essd"
        else CnyPrice(None, "unknown", f"the catalog's prices.csv prices ESSD only, not {category}", None)
    )
    size = r.inputs.get("size")
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        costs.add(r, f"ECS disk {category} {level} {float(size):g} GiB", float(size), "GiB-month", price, "monthly")
    else:
        costs.add(r, f"ECS disk {category} {level} (size not in the plan)", 0, "GiB-month", price, "usage")


def pool_size(inputs: Mapping[str, Any]) -> tuple[int, int, bool]:
    """(fewest, most, scales): an ACK node pool's ``scalingConfig`` min and max sizes when it scales, else its
    ``desiredSize`` (or the older ``nodeCount``) twice. Its cost lines are at the fewest, preflight at the most."""
    scaling = inputs.get("scalingConfig") or {}
    if scaling.get("enable"):
        return int(scaling.get("minSize") or 0), int(scaling.get("maxSize") or 0), True
    fixed = int(inputs.get("desiredSize") or inputs.get("nodeCount") or 0)
    return fixed, fixed, False


def _drawing(resources: Sequence[Resource], reservation: Resource) -> list[tuple[int, int, bool]]:
    """(fewest, most, scales) nodes of each node group that names ``reservation`` as its private pool: an
    ``ecs.Instance`` by ``privatePoolOptionsId`` (one node), a ``cs.NodePool`` by
    ``privatePoolOptions.privatePoolOptionsId`` (its ``pool_size``)."""
    out = []
    for r in resources:
        if r.short_type == "ecs.Instance":
            if reservation.name in referenced_names(r.inputs.get("privatePoolOptionsId")):
                out.append((1, 1, False))
        elif r.short_type == "cs.NodePool":
            options = r.inputs.get("privatePoolOptions") or {}
            if reservation.name in referenced_names(options.get("privatePoolOptionsId")):
                out.append(pool_size(r.inputs))
    return out


# An immediate capacity reservation "is billed at the pay-as-you-go rate of the specified instance type regardless of
# whether you create pay-as-you-go instances in the reserved capacity" (Resource Assurance billing,
# https://www.alibabacloud.com/help/en/elastic-compute-service/latest/resource-assurance-bill), and "after an instance
# matches a private pool, you are billed for its configured resources" (CreateCapacityReservation,
# https://help.aliyun.com/en/ecs/developer-reference/api-ecs-2014-05-26-createcapacityreservation). The nodes that
# draw from it are priced on their own lines, so the reservation's line is the idle part only: (instanceAmount − the
# plan's nodes that name it) × the type's pay-as-you-go hourly price; together the lines come to instanceAmount × the
# price while the drawing nodes run. An Open reservation (the API's default) also serves matching instances that do
# not name it ("Open: ... The system selects an open private node pool to launch instances", pulumi_alicloud 4.0.0
# cs/_inputs.py privatePoolOptionsMatchCriteria); only the nodes that name it are counted, so its idle part may be
# smaller than the line says (the blueprints' nodes name theirs in Target mode).
def _capacity_reservation_cost(costs: Costs, r: Resource) -> None:
    instance_type = r.inputs.get("instanceType")
    amount = r.inputs.get("instanceAmount")
    label = f"capacity reservation {instance_type or '(instanceType unset)'}"
    if not isinstance(amount, int) or isinstance(amount, bool):
        price = CnyPrice(None, "unknown", f"instanceAmount is not a number in the plan ({amount!r})", None)
        costs.add(r, f"{label}: instanceAmount not in the plan", 1, "reservation-hour", price, "hourly")
        return
    price = (
        costs.instance_price(str(instance_type))
        if instance_type
        else CnyPrice(None, "unknown", "the reservation names no instanceType", None)
    )
    groups = _drawing(costs.resources, r)
    # The drawing nodes as their own lines count them: a scaling pool at its fewest.
    drawn, scales = sum(fewest for fewest, _, _ in groups), any(scaling for _, _, scaling in groups)
    idle = max(amount - drawn, 0)
    item = f"{label}: {amount} reserved, {drawn} drawn by nodes, {idle} idle"
    if drawn == 0 and not scales:
        item += " (the whole reservation is idle: no node in the plan draws from it)"
    elif drawn > amount:
        item += f" ({drawn - amount} more nodes name it than it reserves)"
    if scales:
        item += "; a scaling pool counts at its minimum, as its own lines do"
    costs.add(r, item, idle, "node-hour", price, "hourly")


# Elasticity assurance: "guaranteed access to resources for a period of one month to five years by paying only a
# small assurance fee" (https://www.alibabacloud.com/help/en/eci/user-guide/use-the-private-pool-of-an-elasticity-
# assurance-to-create-a-pod), paid once at purchase; "after you purchase an elasticity assurance, you cannot request a
# refund" (CreateElasticityAssurance, https://alibabacloud.com/help/doc-detail/190002.htm). No page states the fee as a
# formula or a number, so the line is unknown (the total stays incomplete), never a made-up price.
EA_FEE_NOT_IN_CATALOG = (
    "the elasticity assurance fee is not in the catalog: Alibaba quotes it per order (ECS console / DescribePrice); "
    "instances drawing from it are billed as pay-as-you-go instances"
)


def _elasticity_assurance_cost(costs: Costs, r: Resource) -> None:
    # Default term: period 1, periodUnit Year (pulumi_alicloud 4.0.0 ecs/elasticity_assurance.py).
    term = f"{r.inputs.get('period') or 1} {r.inputs.get('periodUnit') or 'Year'}"
    item = (
        f"elasticity assurance {r.inputs.get('instanceType') or '(instanceType unset)'} × "
        f"{r.inputs.get('instanceAmount')} for {term}: assurance fee, paid once for the term, not refunded"
    )
    costs.add(r, item, 1, "order", CnyPrice(None, "unknown", EA_FEE_NOT_IN_CATALOG, None), "upfront")


def _instance_set_nodes(r: Resource, _: Neighbours) -> Sequence[NodeGroup]:
    return (NodeGroup(r.inputs, int(r.inputs.get("amount", 1))),)


def _instance_nodes(r: Resource, _: Neighbours) -> Sequence[NodeGroup]:
    return (NodeGroup(r.inputs, 1),)


def _reserved_idle_nodes(r: Resource, around: Neighbours) -> Sequence[NodeGroup]:
    """The reserved nodes no node of the plan draws from (those that do are counted as themselves), so preflight asks
    quota and stock for the larger of the reservation and its nodes. Whether reserved capacity counts against the
    account's pay-as-you-go vCPU quota is not documented; counting it is the stricter reading."""
    amount = r.inputs.get("instanceAmount")
    if not isinstance(amount, int) or isinstance(amount, bool):
        return ()
    # Preflight counts a node pool at its most nodes (``blueprints.kinds.cs._pool_nodes``): so does what it draws.
    drawn = sum(most for _, most, _ in _drawing(around.resources, r))
    idle = amount - drawn
    return (NodeGroup({"instanceType": r.inputs.get("instanceType")}, idle),) if idle > 0 else ()


KINDS = (
    Kind(
        token="alicloud:ecs/securityGroup:SecurityGroup",
        key_properties=("innerAccessPolicy",),
        pricing=Free(_NO_CHARGE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ecs/securityGroupRule:SecurityGroupRule",
        key_properties=("type", "ipProtocol", "portRange", "cidrIp", "sourceSecurityGroupId", "policy"),
        pricing=Free(_NO_CHARGE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ecs/eipAddress:EipAddress",
        key_properties=("bandwidth", "internetChargeType"),
        pricing=Priced(_eip_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        computed_outputs=("ipAddress",),
        deletion_protection=("deletionProtection", True),
    ),
    Kind(
        token="alicloud:ecs/eipAssociation:EipAssociation",
        key_properties=("instanceType",),
        pricing=Free("an association fee, where one is due (an EIP bound to a NAT gateway), is a line of the EIP"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ecs/ecsDeploymentSet:EcsDeploymentSet",
        key_properties=("strategy",),
        pricing=Free(_NO_CHARGE),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate",
        key_properties=("instanceType", "systemDisk", "internetMaxBandwidthOut", "httpTokens", "spotStrategy"),
        pricing=Free("a template costs nothing: its nodes are priced on the instance set or scaling group it launches"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.NODE, Role.NODE_TEMPLATE, Role.DISKS}),
    ),
    Kind(
        token="alicloud:ecs/ecsInstanceSet:EcsInstanceSet",
        key_properties=(
            "amount",
            "instanceType",
            "zoneId",
            "internetMaxBandwidthOut",
            "deletionProtection",
            "spotStrategy",
            "dataDisks",
        ),
        pricing=Priced(_instance_set_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.NODE, Role.COMPUTE_GROUP, Role.IN_VSWITCH, Role.DISKS}),
        counted_outputs=(("instanceIds", "amount"),),
        capacity=_instance_set_nodes,
    ),
    Kind(
        token="alicloud:ecs/instance:Instance",
        key_properties=(
            "instanceType",
            "availabilityZone",
            "networkInterfaceTrafficMode",
            "internetMaxBandwidthOut",
            "httpTokens",
            "systemDiskEncrypted",
            "dataDisks",
        ),
        pricing=Priced(_instance_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.NODE, Role.COMPUTE_GROUP, Role.IN_VSWITCH, Role.DISKS}),
        computed_outputs=("privateIp",),
        capacity=_instance_nodes,
    ),
    Kind(
        token="alicloud:ecs/ecsDisk:EcsDisk",
        key_properties=("category", "size", "performanceLevel", "encrypted", "zoneId", "deleteWithInstance"),
        pricing=Priced(_disk_cost),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
        roles=frozenset({Role.STATEFUL, Role.DISKS}),
    ),
    Kind(
        token="alicloud:ecs/ecsNetworkInterface:EcsNetworkInterface",
        key_properties=("networkInterfaceTrafficMode", "vswitchId", "primaryIpAddress"),
        pricing=Free("an elastic network interface has no charge of its own"),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    Kind(
        token="alicloud:ecs/ecsKeyPair:EcsKeyPair",
        key_properties=("keyPairName",),
        pricing=Free(_NO_CHARGE),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    Kind(
        token="alicloud:ecs/keyPair:KeyPair",
        key_properties=("keyPairName",),
        pricing=Free(_NO_CHARGE),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    Kind(
        # `aitrain bake`: the image template (pulumi_alicloud 4.0.0 ecs/ecs_image_pipeline.py).
        token="alicloud:ecs/ecsImagePipeline:EcsImagePipeline",
        key_properties=("imageName", "baseImage", "instanceType", "systemDiskSize", "internetMaxBandwidthOut"),
        pricing=Free("an image template costs nothing; its executions run the build instance"),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    Kind(
        # One run of the template (ecs/image_pipeline_execution.py): a temporary instance of the template's type.
        token="alicloud:ecs/imagePipelineExecution:ImagePipelineExecution",
        key_properties=("imagePipelineId",),
        pricing=Unpriced(
            "the build runs a pay-as-you-go instance of the template's type for as long as the build takes (unknown "
            "offline), and the image's snapshots bill per GiB-month stored"
        ),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    # Reserved capacity the nodes draw from (ecs.Instance privatePoolOptionsId, cs.NodePool privatePoolOptions).
    # Neither is a COMPUTE_GROUP (no node runs in it: the drawing nodes are the groups) nor STATEFUL (it holds no
    # data; protect + retain_on_delete would keep a reservation billing after `pulumi destroy`). Deletion differs:
    # a capacity reservation stops billing when released (the provider's delete calls ReleaseCapacityReservation);
    # an elasticity assurance's fee is paid once for the term, and it "cannot be manually released" and is not
    # refundable (the links above; the provider's delete asks BSS RefundInstance since v1.261.0), so deleting it
    # saves nothing, and replacing it (a ForceNew input, blueprints/data/replacing_inputs.csv) buys a second term:
    # the diff names the replacement, and its cost line says the fee is never refunded.
    Kind(
        token="alicloud:ecs/capacityReservation:CapacityReservation",
        key_properties=("instanceType", "instanceAmount", "zoneIds", "matchCriteria", "endTimeType"),
        pricing=Priced(_capacity_reservation_cost),
        capacity=_reserved_idle_nodes,
        roles=frozenset({Role.CAPACITY_HOLD}),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ecs/elasticityAssurance:ElasticityAssurance",
        key_properties=(
            "instanceType",
            "instanceAmount",
            "zoneIds",
            "privatePoolOptionsMatchCriteria",
            "period",
            "periodUnit",
        ),
        pricing=Priced(_elasticity_assurance_cost),
        capacity=_reserved_idle_nodes,
        roles=frozenset({Role.CAPACITY_HOLD}),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy",
        key_properties=("retentionDays", "repeatWeekdays", "timePoints"),
        pricing=Unpriced("its snapshots bill per GiB-month stored, which the plan does not know"),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
)
