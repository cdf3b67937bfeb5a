"""Lingjun (PAI-Lingjun, eflo) machine types weighed against the chosen ECS option, one line per kind of type.

Alibaba publishes no spec and no price for a Lingjun type (``blueprints/catalog/lingjun.py``), only its fabric. So a
line gives what the scaling model (``sizing.scaling_efficiency``) says that fabric would change for the chosen
option's GPUs — a what-if: the same GPUs, nodes and NVLink, RDMA between the nodes — and why the type can be neither
timed nor priced, so that it is never chosen automatically. Nothing else is estimated. Pure.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from blueprints.advisor import sizing
from blueprints.advisor.data import limits
from blueprints.advisor.job import Job
from blueprints.advisor.options import Option, scaling_for
from blueprints.catalog.lingjun import LingjunNodeType

HEADING = "Lingjun (PAI-Lingjun, eflo) considered:"
_FABRIC_NAMES = {"roce": "RDMA (RoCE)"}
_READ = "read them with eflo-controller ListMachineTypes and a quote"


def lingjun_lines(job: Job, catalog: Any, chosen: Option | None) -> tuple[str, ...]:
    """One line per group of Lingjun types with the same published facts in the job's region (one line naming the
    regions the catalog shows them in when none is in it); nothing when the catalog has no Lingjun types."""
    types = list(getattr(catalog, "lingjun", {}).values())
    if not types:
        return ()
    here = [t for t in types if job.region in t.regions]
    if not here:
        return (_elsewhere(job.region, types),)
    groups: dict[tuple[Any, ...], list[LingjunNodeType]] = {}
    for t in here:
        key = (t.gpu_count, t.gpu_model, t.fabric, t.fabric_gbps, t.fabric_scope, t.price)
        groups.setdefault(key, []).append(t)
    zones = set(catalog.regions[job.region].zones)
    return tuple(_line(job, catalog, chosen, members, zones) for members in groups.values())


def _names(types: Iterable[LingjunNodeType]) -> str:
    return ", ".join(sorted(t.machine_type for t in types))


def _elsewhere(region: str, types: list[LingjunNodeType]) -> str:
    by_region: dict[str, list[LingjunNodeType]] = {}
    for t in types:
        for r in t.regions:
            by_region.setdefault(r, []).append(t)
    where = " and ".join(f"{_names(members)} in {r}" for r, members in sorted(by_region.items()))
    return (
        f"Lingjun: none in {region} in the catalog, so none is weighed here; its sources show {where} (zones where a "
        "source uses them, not a complete list: ListMachineTypes in a region tells); recommend with region: set to "
        "one of those to weigh them against that region's ECS choice"
    )


def _line(job: Job, catalog: Any, chosen: Option | None, types: list[LingjunNodeType], zones: set[str]) -> str:
    first = types[0]
    seen = sorted({f"{z} (HPN zone {hpn})" for t in types for z, hpn in t.zones if z in zones})
    price = "sold on quote" if first.price == "quote" else f"price: {first.price}"
    fabric = _FABRIC_NAMES.get(first.fabric, first.fabric)
    if first.fabric_gbps is None:
        fabric += " of unstated bandwidth"
    else:
        scope = "stated per node" if first.fabric_scope == "node" else "stated for the cluster network, per node not"
        fabric += f" at {first.fabric_gbps:g} Gbit/s ({scope} stated)"
    missing = [
        what for what, value in (("the GPU model", first.gpu_model), ("the GPU count", first.gpu_count)) if not value
    ]
    unknown = " nor ".join([*missing, "a price"] if first.price == "quote" else missing)
    one = len(types) == 1
    tail = (
        f"not comparable on time or cost: Alibaba publishes neither {unknown} for "
        f"{'this type' if one else 'these types'} ({_READ}), "
        if unknown
        else "not comparable on cost: "
    )
    figure = _figure(job, catalog, chosen, first)
    return (
        f"Lingjun {_names(types)} ({price}; seen in {', '.join(seen)}): {fabric} — {figure}; {tail}so "
        f"{'it is' if one else 'they are'} never chosen automatically; plan {'it' if one else 'them'} with the "
        "lingjun-cluster blueprint."
    )


def _link(scaling: sizing.Scaling) -> str:
    per_gpu = "unknown bandwidth" if scaling.gbps_per_gpu is None else f"{scaling.gbps_per_gpu:g} Gbit/s per GPU"
    return f"{scaling.link} {per_gpu}"


def _figure(job: Job, catalog: Any, chosen: Option | None, lingjun: LingjunNodeType) -> str:
    """What the scaling model gives the Lingjun fabric at the chosen option's GPUs, against the chosen option."""
    if chosen is None:
        return "no ECS option was chosen, so there is no GPU count to weigh its fabric at"
    if lingjun.fabric_gbps is None:
        return "with no stated bandwidth the scaling model has no figure for its fabric"
    inst = catalog.instance_types[chosen.instance_type]
    # A chosen option is a GPU type (the advisor considers no other), so it has at least one GPU per node.
    per_node = lingjun.gpu_count or int(inst.gpu_count)
    nodes = math.ceil(chosen.gpus / per_node)
    comm = sizing.comm_class(job)
    ours = _same_gpus(job, nodes, per_node, inst.nvlink, lingjun.fabric, lingjun.fabric_gbps, lingjun.fabric_gbps)
    theirs = scaling_for(job, inst, chosen.nodes)
    whose = (
        "stated" if lingjun.gpu_count else "GPUs per node and NVLink as the chosen type's: Lingjun's are not published"
    )
    at = f"at the chosen option's {chosen.gpus} GPUs on {nodes} × {per_node}-GPU nodes ({whose})"
    versus = f"{ours.efficiency:.2f} vs {theirs.efficiency:.2f} for {chosen.nodes} × {chosen.instance_type}"
    if nodes == 1 and chosen.nodes == 1:
        gpus = f"{chosen.gpus} GPU{'' if chosen.gpus == 1 else 's'}"
        return (
            f"the chosen option runs on one node ({gpus}), so no traffic crosses a fabric: the scaling model gives "
            f"{versus}, and the fabric does not matter at this size"
        )
    reading = f", taking the {lingjun.fabric_gbps:g} Gbit/s as each node's" if lingjun.fabric_scope == "cluster" else ""
    optimistic = any(n.endswith("the efficiency is optimistic") for n in theirs.notes)
    figures = (
        f"{at}{reading}, the scaling model gives {versus} (between nodes {ours.inter_node:.2f} over {_link(ours)} vs "
        f"{theirs.inter_node:.2f} over {_link(theirs)}{', an optimistic figure' if optimistic else ''}; inside a node "
        f"{ours.intra_node:.2f} vs {theirs.intra_node:.2f})"
    )
    change = _hours_change(ours.efficiency, theirs.efficiency, upper=lingjun.fabric_scope == "cluster")
    change += "; " + _against_erdma(
        job, catalog, ours, nodes, per_node, inst.nvlink, upper=lingjun.fabric_scope == "cluster"
    )
    if comm == "light":
        floor = limits()["comm_heavy_min_params"]
        return (
            f"this job is not communication-heavy ({job.params:.3g} parameters, below comm_heavy_min_params "
            f"{floor:.3g}), so the fabric barely matters for it: {figures}, {change}"
        )
    return f"{figures}, {change}"


def best_erdma_type(job: Job, catalog: Any, gpus_per_node: int) -> Any | None:
    """The eRDMA ECS type with the most RDMA bandwidth per GPU among the GPU types of ``gpus_per_node`` GPUs that the
    catalog does not rule out of the job's region (ties by name); None when there is none."""
    candidates = [
        inst
        for inst in catalog.instance_types.values()
        if inst.fabric_link == "erdma"
        and inst.rdma_gbps
        and inst.gpu_count == gpus_per_node
        and (not catalog.sold_only_in(inst) or job.region in catalog.sold_only_in(inst))
    ]
    return max(candidates, key=lambda inst: (inst.rdma_gbps / inst.gpu_count, inst.instance_type), default=None)


def _same_gpus(
    job: Job,
    nodes: int,
    per_node: int,
    nvlink: bool | None,
    link: str,
    rdma_gbps: float | None,
    network_gbps: float | None,
) -> sizing.Scaling:
    """The scaling model's figure for ``nodes`` × ``per_node`` GPUs (NVLink as given) over one inter-node link."""
    return sizing.scaling_efficiency(
        nodes=nodes,
        gpus_per_node=per_node,
        nvlink=nvlink,
        fabric_link=link,
        rdma_gbps_per_node=rdma_gbps,
        network_gbps=network_gbps,
        comm=sizing.comm_class(job),
    )


def _against_erdma(
    job: Job, catalog: Any, ours: sizing.Scaling, nodes: int, per_node: int, nvlink: bool | None, *, upper: bool
) -> str:
    """The same nodes, GPUs per node and NVLink as Lingjun's what-if on the best eRDMA ECS fabric of that many GPUs
    per node (only the link between nodes changed), as the scaling model gives them, against Lingjun's."""
    inst = best_erdma_type(job, catalog, per_node)
    if inst is None:
        return f"no eRDMA ECS type of {per_node} GPUs per node to weigh it against"
    theirs = _same_gpus(job, nodes, per_node, nvlink, "erdma", inst.rdma_gbps, inst.network_gbps)
    change = _hours_change(ours.efficiency, theirs.efficiency, upper=upper).removeprefix("i.e. ")
    return (
        f"against the fastest eRDMA of an ECS type with {per_node} GPUs ({inst.instance_type}, {_link(theirs)}) the "
        f"same GPUs scale at {theirs.efficiency:.2f} (between nodes {theirs.inter_node:.2f}): {change}"
    )


def _hours_change(ours: float, theirs: float, *, upper: bool) -> str:
    """Hours scale as 1 / efficiency at the same GPU and MFU: the change from the chosen option's to Lingjun's."""
    same = "at the same GPU and MFU"
    if math.isclose(ours, theirs, rel_tol=1e-9):
        return f"i.e. the same hours {same}"
    change = 1.0 - theirs / ours
    if change > 0:
        return f"i.e. {'up to ' if upper else ''}{change:.1%} fewer hours {same}"
    return f"i.e. {'at least ' if upper else ''}{-change:.1%} more hours {same}"
