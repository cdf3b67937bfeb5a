"""Can the nodes' vCPUs feed their GPUs? The input-pipeline check of ``recommend`` and ``estimate``.

The GPUs consume the run's samples in the advisor's own estimated time; each vCPU decodes and augments at most the
published rate of ``data/input_pipeline.csv`` (tuned, typical, conservative, with sources). When the vCPUs a node
leaves to its input pipeline fall short, the check says by how much and what closes the gap: a CPU preprocessing
node group (``preprocess:`` in a fixed-cluster or autoscaling-pool profile, sized and priced here) or a type with
the same GPUs and more vCPUs per GPU. Unknown stays unknown: a kind with no published figure says so.
"""

from __future__ import annotations

import csv
import functools
import math
from dataclasses import dataclass
from typing import Any

from blueprints.advisor.data import DATA_DIR, LEVELS
from blueprints.advisor.job import Job
from blueprints.catalog import instance_price
from blueprints.profile.preprocess import DEFAULT_PREPROCESS_TYPE, PREPROCESS_MAX_NODES

# The CPU type a group falls back to when no CPU type of the catalog is priced (docs/sources/alibaba-cloud-facts.md,
# section 5 "Suggested generator defaults": preprocessing on g7 or g8i 8xlarge); the profile section's default too.
DEFAULT_GROUP_TYPE = DEFAULT_PREPROCESS_TYPE
# torchrun starts one training process per GPU (aitrain-torchrun --nproc-per-node); each keeps one vCPU busy, so
# the input pipeline gets the rest. A modelling choice, stated in every finding.
VCPUS_PER_TRAINING_PROCESS = 1


@dataclass(frozen=True)
class PipelineRow:
    """One published per-vCPU preprocessing rate (one level of the range), or a kind whose rate is unknown."""

    input_kind: str
    level: str
    per_vcpu_per_second: float | None
    unit: str
    confidence: str
    derivation: str
    source: str


@functools.lru_cache(maxsize=None)
def pipeline_rows() -> tuple[PipelineRow, ...]:
    """All rows of ``data/input_pipeline.csv``."""
    with (DATA_DIR / "input_pipeline.csv").open(encoding="utf-8", newline="") as handle:
        return tuple(
            PipelineRow(
                r["input_kind"],
                r["level"],
                float(r["per_vcpu_per_second"]) if r["per_vcpu_per_second"] else None,
                r["unit"],
                r["confidence"],
                r["derivation"],
                r["source"],
            )
            for r in csv.DictReader(handle)
        )


def rates(job: Job) -> tuple[float, float, float] | None:
    """(tuned, typical, conservative) samples per vCPU-second for the job's input, or None when unknown."""
    if job.preprocess_per_vcpu is not None:
        return (job.preprocess_per_vcpu,) * 3
    found = {r.level: r.per_vcpu_per_second for r in pipeline_rows() if r.input_kind == job.input_kind}
    values = [found.get(level) for level in LEVELS]
    if any(v is None for v in values):
        return None
    tuned, typical, conservative = (float(v) for v in values if v is not None)
    return tuned, typical, conservative


@dataclass(frozen=True)
class CpuGroup:
    """The CPU preprocessing node group that closes a shortfall: how many nodes of which type, at what price."""

    instance_type: str
    nodes: int
    vcpus_per_node: int
    price_cny_per_hour: float | None  # per node

    @property
    def cny_per_hour(self) -> float | None:
        """The group's pay-as-you-go price per hour, or None when the type is unpriced."""
        return None if self.price_cny_per_hour is None else self.nodes * self.price_cny_per_hour


@dataclass(frozen=True)
class Feed:
    """The input-pipeline check of one configuration: what the GPUs consume against what the vCPUs supply."""

    unit: str
    nodes: int
    needed_per_node: float  # samples/s one node's GPUs consume at the typical estimate
    pipeline_vcpus: int  # vCPUs per node left to the input pipeline
    supply_per_node: tuple[float, float, float]  # tuned, typical, conservative samples/s
    hours: float  # the run's estimated hours with the GPUs fed
    group: CpuGroup | None  # the CPU group that covers the typical shortfall (None: no shortfall)
    group_conservative: CpuGroup | None  # the group that covers it at the conservative rate
    roomier_type: tuple[str, float] | None  # a type with the same GPUs and more vCPUs, and its typical supply
    gpu_price_cny_per_hour: float | None = None  # per GPU node, to price the wait against the group

    @property
    def shortfall_per_node(self) -> float:
        """Samples/s per node the typical supply misses (0 when it feeds the GPUs)."""
        return max(0.0, self.needed_per_node - self.supply_per_node[1])

    @property
    def ratio(self) -> float:
        """Typical supply ÷ what the GPUs consume (below 1: the GPUs wait on the CPUs)."""
        return self.supply_per_node[1] / self.needed_per_node if self.needed_per_node > 0 else math.inf

    @property
    def cpu_bound_hours(self) -> float:
        """The run's hours when the CPUs set the pace (the GPUs wait on each batch): hours ÷ ratio, at least hours."""
        return self.hours / min(1.0, self.ratio) if self.ratio > 0 else math.inf


def samples_per_run(job: Job) -> tuple[float, str] | None:
    """What the input pipeline prepares in one run, and its unit; None when the job does not say (a transformer on
    images without tokens_per_sample)."""
    if job.model_kind != "transformer":
        assert job.samples is not None
        return job.samples * job.epochs, "images" if job.input_kind == "jpeg_images" else "samples"
    assert job.tokens is not None
    if job.input_kind in ("raw_text", "pretokenized"):
        return job.tokens, "tokens"
    if job.tokens_per_sample is None:
        return None
    return job.tokens / job.tokens_per_sample, "images" if job.input_kind == "jpeg_images" else "samples"


def check_feed(job: Job, catalog: Any, instance_type: str, nodes: int, hours: float) -> Feed | None:
    """The check for ``nodes`` × ``instance_type`` finishing the run in ``hours``; None when it cannot be made."""
    per_vcpu = rates(job)
    work = samples_per_run(job)
    inst = catalog.instance_types[instance_type]
    if per_vcpu is None or work is None or hours <= 0 or nodes < 1:
        return None
    samples, unit = work
    needed = samples / (hours * 3600.0) / nodes
    vcpus = max(0, inst.vcpus - VCPUS_PER_TRAINING_PROCESS * inst.gpu_count)
    supply = (vcpus * per_vcpu[0], vcpus * per_vcpu[1], vcpus * per_vcpu[2])
    group = cautious = roomier = None
    if needed > supply[1]:
        group = size_group(catalog, job.region, (needed - supply[1]) * nodes, per_vcpu[1])
        cautious = size_group(catalog, job.region, (needed - supply[2]) * nodes, per_vcpu[2])
        roomier = _roomier_type(catalog, inst, per_vcpu[1])
    gpu_price = instance_price(catalog, inst.instance_type, job.region).cny
    return Feed(unit, nodes, needed, vcpus, supply, hours, group, cautious, roomier, gpu_price)


def size_group(catalog: Any, region: str, missing_per_second: float, per_vcpu: float) -> CpuGroup:
    """The cheapest CPU group whose vCPUs prepare ``missing_per_second`` more samples/s: over every CPU type priced
    for ``region`` (``catalog.instance_price``), the fewest nodes of it that cover the gap, at the lowest price per
    hour (ties: fewer nodes, then the name). With no priced CPU type it is ``DEFAULT_GROUP_TYPE``, unpriced."""
    best: CpuGroup | None = None
    for cpu in catalog.instance_types.values():
        price = None if cpu.is_gpu or cpu.vcpus < 1 else instance_price(catalog, cpu.instance_type, region).cny
        if price is None:
            continue
        nodes = max(1, math.ceil(missing_per_second / (cpu.vcpus * per_vcpu)))
        if nodes > PREPROCESS_MAX_NODES:
            continue
        group = CpuGroup(cpu.instance_type, nodes, cpu.vcpus, price)
        if best is None or _cheaper(group, best):
            best = group
    if best is not None:
        return best
    cpu = catalog.instance_types[DEFAULT_GROUP_TYPE]
    return CpuGroup(cpu.instance_type, max(1, math.ceil(missing_per_second / (cpu.vcpus * per_vcpu))), cpu.vcpus, None)


def _cheaper(one: CpuGroup, other: CpuGroup) -> bool:
    assert one.cny_per_hour is not None and other.cny_per_hour is not None
    return (one.cny_per_hour, one.nodes, one.instance_type) < (other.cny_per_hour, other.nodes, other.instance_type)


def _roomier_type(catalog: Any, inst: Any, per_vcpu: float) -> tuple[str, float] | None:
    """The type with the same GPU model and count and the most vCPUs, when it has more than ``inst``."""
    same = [
        t
        for t in catalog.instance_types.values()
        if t.gpu_model == inst.gpu_model and t.gpu_count == inst.gpu_count and t.vcpus > inst.vcpus
    ]
    if not same:
        return None
    best = max(same, key=lambda t: (t.vcpus, t.instance_type))
    vcpus = best.vcpus - VCPUS_PER_TRAINING_PROCESS * best.gpu_count
    return best.instance_type, vcpus * per_vcpu


def cpu_group_for(job: Job, catalog: Any, instance_type: str, nodes: int, hours: float | None) -> CpuGroup | None:
    """The CPU preprocessing group a configuration needs (None: its vCPUs feed its GPUs, or the check cannot run)."""
    if job.input_kind is None or hours is None:
        return None
    feed = check_feed(job, catalog, instance_type, nodes, hours)
    return None if feed is None else feed.group


def feed_findings(job: Job, catalog: Any, instance_type: str, nodes: int, hours: float | None) -> list[str]:
    """The check as findings: nothing without an input_kind, else the numbers, the verdict and what to do."""
    if job.input_kind is None or hours is None:
        return []
    if samples_per_run(job) is None:
        return [
            f"input pipeline not checked: a transformer on {job.input_kind} needs tokens_per_sample (tokens per image, "
            "e.g. 196 for 224² pixels in 16² patches) to turn its tokens into images"
        ]
    feed = check_feed(job, catalog, instance_type, nodes, hours)
    if feed is None:
        row = next((r for r in pipeline_rows() if r.input_kind == job.input_kind), None)
        why = row.derivation if row is not None else "no row in data/input_pipeline.csv"
        return [f"input pipeline not checked for {job.input_kind}: {why}"]
    return [_verdict(job, feed)]


def _verdict(job: Job, feed: Feed) -> str:
    tuned, typical, conservative = feed.supply_per_node
    where = "the job's preprocess_per_vcpu" if job.preprocess_per_vcpu is not None else "data/input_pipeline.csv"
    head = (
        f"input pipeline: the GPUs of each node consume {feed.needed_per_node:,.0f} {feed.unit}/s; its "
        f"{feed.pipeline_vcpus} vCPUs left to the pipeline (one per GPU runs training) prepare {typical:,.0f} "
        f"{feed.unit}/s (range {tuned:,.0f}–{conservative:,.0f}, tuned–conservative, per-vCPU rates from {where})"
    )
    if feed.group is None:
        low = (
            ""
            if conservative >= feed.needed_per_node
            else f"; at the conservative rate they fall {feed.needed_per_node - conservative:,.0f} {feed.unit}/s short"
        )
        return f"{head}: {feed.ratio:.1f}× what the GPUs need{low}"
    group = feed.group
    price = "unpriced" if group.cny_per_hour is None else f"¥{group.cny_per_hour:,.2f}/h"
    cautious = feed.group_conservative
    text = (
        f"{head}: SHORTFALL of {feed.shortfall_per_node:,.0f} {feed.unit}/s per node "
        f"({feed.ratio:.0%} of what the GPUs need), so the GPUs would wait on the CPUs and the run would take "
        f"{feed.cpu_bound_hours:,.1f} h instead of {feed.hours:,.1f} h. Move decode and augmentation to a CPU "
        f"preprocessing group: {group.nodes} × {group.instance_type} ({group.vcpus_per_node} vCPUs each, {price}; "
        f"profile section preprocess: {{instance_type: {group.instance_type}, nodes: {group.nodes}}}"
        + ("" if cautious is None else f"; {cautious.nodes} at the conservative rate")
        + ")"
    )
    if feed.gpu_price_cny_per_hour is not None and group.cny_per_hour is not None:
        waiting = feed.nodes * feed.gpu_price_cny_per_hour * (feed.cpu_bound_hours - feed.hours)
        text += (
            f"; per run the group costs ¥{group.cny_per_hour * feed.hours:,.0f} against ¥{waiting:,.0f} of GPU time "
            "spent waiting"
        )
    if feed.roomier_type is not None:
        name, supply = feed.roomier_type
        text += f", or a type with more vCPUs per GPU: {name} prepares {supply:,.0f} {feed.unit}/s per node"
    return text
