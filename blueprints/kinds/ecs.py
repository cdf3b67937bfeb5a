"""ECS kinds: security groups, EIPs, launch templates, instance sets, instances, disks, key pairs, snapshot policies,
image pipelines (`aitrain bake`)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from blueprints.catalog import CnyPrice
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


def _instance_set_nodes(r: Resource, _: Neighbours) -> Sequence[NodeGroup]:
    return (NodeGroup(r.inputs, int(r.inputs.get("amount", 1))),)


def _instance_nodes(r: Resource, _: Neighbours) -> Sequence[NodeGroup]:
    return (NodeGroup(r.inputs, 1),)


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
    Kind(
        token="alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy",
        key_properties=("retentionDays", "repeatWeekdays", "timePoints"),
        pricing=Unpriced("its snapshots bill per GiB-month stored, which the plan does not know"),
        terraform=_MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
)
