"""What a plan asks of the cloud: instance types × nodes × zones, vCPUs and GPUs, and the file system's zone.

Read from the offline Plan (the resources `pulumi up` would create), never from the profile, so preflight checks
exactly what `aitrain plan` and `aitrain export terraform` show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from blueprints.catalog import Catalog
from blueprints.core.tokens import referenced_names
from blueprints.kinds import kind_of
from blueprints.kinds.model import Neighbours, Resource
from blueprints.review.plan import Plan, PlannedResource

# ECS SpotStrategy values (DescribeAvailableResource / RunInstances): NoSpot is a regular pay-as-you-go instance.
NO_SPOT = "NoSpot"
POSTPAID = "PostPaid"

# aitrain's storage kinds → NAS FileSystemType (NAS DescribeZones accepts standard / extreme / cpfs).
FILE_SYSTEM_TYPES = {"nas": "standard", "extreme_nas": "extreme", "cpfs": "cpfs"}


@dataclass(frozen=True)
class ComputeNeed:
    """One group of identical nodes: a fixed instance set, a pool (at its max size) or a single instance."""

    resource: str
    instance_type: str
    nodes: int
    zones: tuple[str, ...]
    charge_type: str
    spot_strategy: str
    vcpus_per_node: int | None
    gpus_per_node: int | None
    # False when the catalog lists no zones for the type in the region, so the offline plan assumed its zones.
    zones_from_catalog: bool = True

    @property
    def spot(self) -> bool:
        """True when the nodes are spot (preemptible) instances."""
        return self.spot_strategy != NO_SPOT

    @property
    def vcpus(self) -> int | None:
        """vCPUs of all nodes (None when the catalog does not know the type)."""
        return None if self.vcpus_per_node is None else self.vcpus_per_node * self.nodes

    @property
    def gpus(self) -> int | None:
        """GPUs of all nodes (None when the catalog does not know the type)."""
        return None if self.gpus_per_node is None else self.gpus_per_node * self.nodes

    def to_dict(self) -> dict[str, Any]:
        """JSON form (part of ``aitrain.preflight/v1``)."""
        return {
            "resource": self.resource,
            "instance_type": self.instance_type,
            "nodes": self.nodes,
            "zones": list(self.zones),
            "charge_type": self.charge_type,
            "spot_strategy": self.spot_strategy,
            "vcpus_per_node": self.vcpus_per_node,
            "gpus_per_node": self.gpus_per_node,
            "vcpus": self.vcpus,
            "gpus": self.gpus,
        }


@dataclass(frozen=True)
class StorageNeed:
    """The shared file system: aitrain kind, NAS file system type, storage and protocol type, zone."""

    resource: str
    kind: str
    file_system_type: str
    storage_type: str
    protocol_type: str
    zone: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form (part of ``aitrain.preflight/v1``)."""
        return {
            "resource": self.resource,
            "kind": self.kind,
            "file_system_type": self.file_system_type,
            "storage_type": self.storage_type,
            "protocol_type": self.protocol_type,
            "zone": self.zone,
        }


@dataclass(frozen=True)
class Needs:
    """Everything preflight asks the cloud about, for one plan."""

    profile_name: str
    blueprint: str
    region: str
    compute: tuple[ComputeNeed, ...]
    storage: StorageNeed | None

    def vcpus(self, *, spot: bool) -> int:
        """vCPUs of the pay-as-you-go groups, regular (spot=False) or spot (spot=True)."""
        return sum(c.vcpus or 0 for c in self.compute if c.charge_type == POSTPAID and c.spot == spot)

    @property
    def gpus(self) -> int:
        """GPUs of all groups."""
        return sum(c.gpus or 0 for c in self.compute)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (part of ``aitrain.preflight/v1``)."""
        return {
            "compute": [c.to_dict() for c in self.compute],
            "storage": self.storage.to_dict() if self.storage else None,
            "totals": {
                "postpaid_vcpus": self.vcpus(spot=False),
                "spot_vcpus": self.vcpus(spot=True),
                "gpus": self.gpus,
            },
        }


def needs_from_plan(plan: Plan, catalog: Catalog) -> Needs:
    """The compute groups and the file system a plan creates, sized from the catalog.

    Each resource's kind (``blueprints.kinds``) says how it counts: its capacity is the node groups it can run at
    most (an instance set's amount, a pool at its max size, a node pool per instance type, a reservation's nodes that
    no node draws from); other kinds run none.
    """
    around = Neighbours.of(plan.resources)
    compute: list[ComputeNeed] = []
    for r in plan.resources:
        kind = kind_of(r.type)
        if kind is not None and kind.capacity is not None:
            zones = _zones(r, around.by_name)
            compute.extend(
                _group(r, group.inputs, group.nodes, zones, catalog, plan.region) for group in kind.capacity(r, around)
            )
    storage = next(
        (_storage(r, plan, around.by_name) for r in plan.resources if r.short_type == "nas.FileSystem"), None
    )
    return Needs(plan.profile_name, plan.blueprint, plan.region, tuple(compute), storage)


def _group(
    r: PlannedResource, inputs: Mapping[str, Any], nodes: int, zones: tuple[str, ...], catalog: Catalog, region: str
) -> ComputeNeed:
    name = str(inputs.get("instanceType"))
    known = catalog.instance_types.get(name)
    return ComputeNeed(
        resource=r.name,
        instance_type=name,
        nodes=nodes,
        zones=zones,
        charge_type=str(inputs.get("instanceChargeType") or POSTPAID),
        spot_strategy=str(inputs.get("spotStrategy") or NO_SPOT),
        vcpus_per_node=known.vcpus if known else None,
        gpus_per_node=known.gpu_count if known else None,
        zones_from_catalog=catalog.zones_offering(name, region) is not None,
    )


def _zones(r: Resource, by_name: Mapping[str, Resource]) -> tuple[str, ...]:
    """The zone a resource names (a reservation: its zoneIds), else the zones of the vSwitches it references (in
    order, once each)."""
    for key in ("zoneId", "availabilityZone"):
        if r.inputs.get(key):
            return (str(r.inputs[key]),)
    if isinstance(r.inputs.get("zoneIds"), list) and r.inputs["zoneIds"]:
        return tuple(str(z) for z in r.inputs["zoneIds"])
    refs = referenced_names({k: r.inputs.get(k) for k in ("vswitchId", "vswitchIds")})
    zones = [str(by_name[n].inputs["zoneId"]) for n in refs if n in by_name and by_name[n].inputs.get("zoneId")]
    return tuple(dict.fromkeys(zones))


def _storage(r: PlannedResource, plan: Plan, by_name: Mapping[str, Resource]) -> StorageNeed:
    fs_type = str(r.inputs.get("fileSystemType") or "standard")
    kind = str(
        plan.summary.get("storage_kind") or next((k for k, v in FILE_SYSTEM_TYPES.items() if v == fs_type), fs_type)
    )
    zones = _zones(r, by_name)
    return StorageNeed(
        resource=r.name,
        kind=kind,
        file_system_type=fs_type,
        storage_type=str(r.inputs.get("storageType") or ""),
        protocol_type=str(r.inputs.get("protocolType") or ""),
        zone=zones[0] if zones else str(plan.summary.get("storage_zone") or ""),
    )
