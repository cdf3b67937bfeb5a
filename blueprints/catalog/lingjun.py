"""Lingjun (PAI-Lingjun, eflo) machine types: what Alibaba publishes about each, from ``lingjun_node_types.csv``.

Alibaba publishes no spec table for Lingjun machine types: the per-type GPUs, CPUs, memory and RDMA NICs come only
from the eflo-controller ``ListMachineTypes`` API of the buyer's account, and eflo nodes are sold on quote. So a row
holds the type's id, where a source shows it (zone and HPN zone), the fabric as Alibaba states it, and blank (unknown)
spec cells unless a source gives them; a ``lingjun-cluster`` profile states the rest from the buyer's own
``ListMachineTypes`` answer. Pure: no Pulumi.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any, Mapping

from blueprints.catalog.cells import _CellError, _date, _list, _opt_float, _opt_text, _text
from blueprints.catalog.schema import Schema, read_rows


def _opt_count(raw: str) -> int | None:
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise _CellError("must be a whole number or empty (unknown)") from None
    if value < 1:
        raise _CellError("must be > 0 or empty (unknown)")
    return value


def _zone_pairs(raw: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in _list(raw):
        zone, sep, hpn = item.partition(":")
        if not sep or not zone or not hpn:
            raise _CellError(f"{item!r} must be zone:hpn_zone (e.g. cn-wulanchabu-a:A1)")
        pairs.append((zone, hpn))
    return tuple(pairs)


LINGJUN_SCHEMA: Schema = {
    "machine_type": _text,
    "family": _text,
    "gpu_count": _opt_count,
    "gpu_model": _opt_text,
    "gpu_memory_gib": _opt_float,
    "vcpus": _opt_count,
    "memory_gib": _opt_float,
    "fabric": _text,
    "fabric_gbps": _opt_float,
    "fabric_scope": _text,
    "zones": _zone_pairs,
    "price": _text,
    "source": _text,
    "source_date": _date,
    "notes": str,
}

FABRICS = ("roce",)
FABRIC_SCOPES = ("node", "cluster")
# How a Lingjun node is priced: "quote" (Alibaba sends an order link after a form, no list price) is the only
# answer a source gives for eflo nodes (PAI-Lingjun "Billing", https://www.alibabacloud.com/help/en/pai/billing-2).
PRICE_KINDS = ("quote",)


@dataclass(frozen=True)
class LingjunNodeType:
    """One Lingjun machine type: its id, the specs a source gives (None: unknown) and where a source shows it."""

    machine_type: str
    family: str
    gpu_count: int | None
    gpu_model: str | None
    gpu_memory_gib: float | None
    vcpus: int | None
    memory_gib: float | None
    fabric: str  # the link NCCL uses between nodes ("roce": RDMA over the HPN, mlx5 devices)
    fabric_gbps: float | None
    fabric_scope: str  # "cluster": the bandwidth is stated for the cluster's network, not per node
    zones: tuple[tuple[str, str], ...]  # (zone, HPN zone) pairs a source shows the type in
    price: str
    source: str
    source_date: str
    notes: str
    regions: tuple[str, ...] = ()  # the regions of those zones (regions.csv), filled by the loader

    def hpn_zones(self, zone: str) -> tuple[str, ...]:
        """The HPN zones a source shows the type in, in ``zone``."""
        return tuple(hpn for z, hpn in self.zones if z == zone)


def load_lingjun(
    directory: pathlib.Path, regions: Mapping[str, Any], gpus: Mapping[str, Any]
) -> dict[str, LingjunNodeType]:
    """``lingjun_node_types.csv`` checked: unique ids, no ``ecs.`` types, known GPUs, zones of catalog regions."""
    name = "lingjun_node_types.csv"
    rows = read_rows(directory / name, LINGJUN_SCHEMA)
    found: dict[str, LingjunNodeType] = {}
    for line, v in rows:

        def fail(column: str, message: str, line: int = line) -> ValueError:
            return ValueError(f"{name} line {line}, column '{column}': {message}")

        if v["machine_type"] in found:
            raise fail("machine_type", f"duplicate {v['machine_type']!r}")
        if v["machine_type"].startswith("ecs."):
            raise fail("machine_type", "an ECS type belongs in instance_types.csv; Lingjun machine types are eflo's")
        if v["gpu_model"] is not None and v["gpu_model"] not in gpus:
            raise fail("gpu_model", f"{v['gpu_model']!r} is not a gpu_model in gpus.csv")
        if v["fabric"] not in FABRICS:
            raise fail("fabric", f"must be one of {', '.join(FABRICS)}")
        if v["fabric_scope"] not in FABRIC_SCOPES:
            raise fail("fabric_scope", f"must be one of {', '.join(FABRIC_SCOPES)}")
        if v["price"] not in PRICE_KINDS:
            raise fail("price", f"must be one of {', '.join(PRICE_KINDS)}")
        in_regions = set()
        for zone, _hpn in v["zones"]:
            region = next((r.region_id for r in regions.values() if zone in r.zones), None)
            if region is None:
                raise fail("zones", f"zone {zone!r} is not a zone of any region in regions.csv")
            in_regions.add(region)
        found[v["machine_type"]] = LingjunNodeType(**v, regions=tuple(sorted(in_regions)))
    return found
