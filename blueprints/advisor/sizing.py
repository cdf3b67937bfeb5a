"""Sizing: training FLOPs, default MFU, scaling efficiency,
wall-clock time, memory per GPU and data rates (pure functions)."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from blueprints.advisor.data import (
    LEVELS,
    MfuRow,
    ScalingRow,
    limits,
    memory_rows,
    mfu_rows,
    range_checks,
    scaling_rows,
)
from blueprints.advisor.job import Job

GIB = 2.0**30
TB = 1e12
MB = 1e6
SECONDS_PER_HOUR = 3600.0

# A800 and H800 have the same math as A100 and H100; only NVLink differs (training-performance.md §1).
_CLASS_ALIASES = {"A800": "A100", "H800": "H100"}
# Blackwell-generation names (B200, B300; GB200 is B200 with a Grace CPU; the RTX PRO Blackwell cards the ebmgn9g*
# families carry) get a class so that "no anchor" names them; none has a published training MFU yet (§8.5).
_CLASS_RE = re.compile(
    r"(L40S|H100|H800|H200|H20|A100|A800|A30|A10|V100|T4|P100|L20|B200|B300|RTX[- ]?PRO[- ]?\d{4})", re.IGNORECASE
)


def training_flops(job: Job) -> float:
    """Training compute of one run, FLOPs.

    transformer: C = 6·N·D (Kaplan et al. 2020; 2ND forward + 4ND backward; training-performance.md §4).
    cnn / other: C = 3 × forward FLOPs per sample × samples × epochs (backward ≈ 2 × forward, the same 1 : 2 split).
    """
    if job.model_kind == "transformer":
        assert job.tokens is not None  # guaranteed by Job validation
        return 6.0 * job.params * job.tokens
    assert job.forward_gflops is not None and job.samples is not None
    return 3.0 * job.forward_gflops * 1e9 * job.samples * job.epochs


def precision_group(precision: str) -> str:
    """bf16 and fp16 share tensor-core peaks and MFU anchors ("mixed"); fp8, tf32 and fp32 stand alone."""
    return "mixed" if precision in ("bf16", "fp16") else precision


def gpu_class(gpu_model: str | None) -> str | None:
    """The MFU class of a catalog GPU model name (``A100-SXM4-80GB`` → ``A100``; A800 → A100, H800 → H100)."""
    if not gpu_model:
        return None
    match = _CLASS_RE.search(gpu_model)
    if not match:
        return None
    name = re.sub(r"^RTX[- ]?PRO[- ]?", "RTX-PRO-", match.group(1).upper())
    return _CLASS_ALIASES.get(name, name)


@dataclass(frozen=True)
class MfuRange:
    """The tuned, typical and conservative MFU anchors of one GPU class, model kind and precision group."""

    tuned: MfuRow
    typical: MfuRow
    conservative: MfuRow

    def levels(self) -> tuple[MfuRow, MfuRow, MfuRow]:
        """The three rows, tuned first."""
        return (self.tuned, self.typical, self.conservative)


def default_mfu(gpu_model: str | None, model_kind: str, precision: str) -> MfuRange | None:
    """The ``data/mfu.csv`` rows for this GPU class, model kind and precision; None when no anchor was published.

    There is no fallback row: an MFU for a GPU nobody measured would be a guess, and the advisor does not pick
    hardware on a guess (the option gets the ``no_anchor`` reason; a job's ``mfu:`` lifts it).
    """
    cls = gpu_class(gpu_model)
    group = precision_group(precision)
    found = {
        r.level: r
        for r in mfu_rows()
        if r.gpu_class == cls and r.model_kind == model_kind and r.precision_group == group
    }
    if not found:
        return None
    missing = [level for level in LEVELS if level not in found]
    if missing:
        raise LookupError(f"data/mfu.csv: {cls} {model_kind}/{group} lacks the {', '.join(missing)} row")
    return MfuRange(found["tuned"], found["typical"], found["conservative"])


def model_size_note(job: Job, mfu_range: MfuRange) -> str | None:
    """A caveat when the job's model is smaller than every model the range was measured on or checked against.

    Published MFU falls with model size (Megatron-LM, same cluster and code: 41.5% at 22B, 56.3% at 1T;
    training-performance.md §4.1): smaller matrices keep the tensor cores less busy, so for such a job even the
    conservative end may be optimistic. The smallest size is the smallest anchor model or, where published runs were
    checked against the range (``data/range_checks.csv``), the smallest of those. None inside, or when a size is
    not recorded (the CNN anchors).
    """
    sizes = [r.anchor_params for r in mfu_range.levels()]
    if any(size is None for size in sizes):
        return None
    known = [size for size in sizes if size is not None]
    row = mfu_range.typical
    checked = [
        c
        for c in range_checks()
        if (c.gpu_class, c.model_kind, c.precision_group) == (row.gpu_class, row.model_kind, row.precision_group)
    ]
    smallest = min(known + [c.min_params for c in checked])
    if job.params >= smallest:
        return None
    also = "".join(
        f" and checked against {c.inside} published runs of {c.min_params:.3g}–{c.max_params:.3g}" for c in checked
    )
    return (
        f"range: the MFU anchors were measured on {min(known):.3g}–{max(known):.3g}-parameter models{also}; this "
        f"job has {job.params:.3g}, fewer than any: published MFU falls with model size (training-performance.md "
        "§4.1), so even the conservative end may be optimistic; set mfu: to a measured fraction if you have one"
    )


def comm_class(job: Job) -> str:
    """``heavy`` when gradients are large enough to be bandwidth-bound
    (≥ 1e8 parameters, data/limits.csv), else ``light``."""
    return "heavy" if job.params >= limits()["comm_heavy_min_params"] else "light"


@functools.lru_cache(maxsize=None)
def _scaling_row(link: str, comm: str, gbps_per_gpu: float | None) -> ScalingRow:
    """The anchor row with the highest bandwidth threshold the link reaches (unknown bandwidth → the slowest row)."""
    candidates = [r for r in scaling_rows() if r.link == link and r.comm == comm]
    reached = [r for r in candidates if gbps_per_gpu is not None and gbps_per_gpu >= r.min_gbps_per_gpu]
    pool = reached or [min(candidates, key=lambda r: r.min_gbps_per_gpu)]
    return max(pool, key=lambda r: r.min_gbps_per_gpu)


def log_scaling(units: int, row: ScalingRow) -> float:
    """Efficiency of ``units`` data-parallel nodes: 1 − loss_per_doubling × log2(units), loss from the anchor.

    loss_per_doubling = (1 − anchor efficiency) / log2(anchor nodes). The Horovod VGG-16 anchor fits this
    (79% measured at 32 servers, 1 − 0.0457 × 5 = 77% predicted). Floored at 5% so the formula never goes to zero.
    """
    if units <= 1:
        return 1.0
    return max(0.05, 1.0 - row.loss_per_doubling * math.log2(units))


@dataclass(frozen=True)
class Scaling:
    """Scaling efficiency of a configuration and the anchors behind it."""

    efficiency: float
    intra_node: float
    inter_node: float
    link: str
    gbps_per_gpu: float | None
    notes: tuple[str, ...]


@functools.lru_cache(maxsize=4096)  # recommend asks for every (type, nodes); many types share their specs
def scaling_efficiency(
    *,
    nodes: int,
    gpus_per_node: int,
    nvlink: bool | None,
    fabric_link: str,
    rdma_gbps_per_node: float | None,
    network_gbps: float | None,
    comm: str,
) -> Scaling:
    """Throughput of the configuration ÷ (GPUs × one GPU's throughput at the default MFU).

    Inside a node: 1.0 with NVLink (the MFU anchors were measured on 8-GPU NVLink nodes); without NVLink
    (or unknown) the PCIe row applies per doubling of GPUs. Between nodes: the scaling.csv row for the link
    (``rdma`` when ``fabric_link`` — the catalog's ``InstanceType.fabric_link``, which the plan's node boot also
    reads — is eRDMA or RoCE, else ``tcp``) and the bandwidth per GPU, applied per doubling of nodes.
    """
    notes: list[str] = []
    intra = 1.0
    if gpus_per_node > 1 and nvlink is not True:
        row = _scaling_row("pcie", comm, 256.0)
        intra = log_scaling(gpus_per_node, row)
        if nvlink is None:
            notes.append("NVLink unknown for this type: GPUs in a node assumed to talk over PCIe")
    inter = 1.0
    link = "nvlink" if nvlink else "pcie"
    gbps_per_gpu: float | None = None
    if nodes > 1:
        if fabric_link in ("erdma", "roce"):
            link = "rdma"
            node_gbps = rdma_gbps_per_node if rdma_gbps_per_node is not None else network_gbps
            if rdma_gbps_per_node is None:
                notes.append(f"{fabric_link} bandwidth not published: the VPC bandwidth is used as the RDMA bandwidth")
        else:
            link = "tcp"
            node_gbps = network_gbps
        gbps_per_gpu = None if node_gbps is None else node_gbps / gpus_per_node
        if gbps_per_gpu is None:
            notes.append("network bandwidth unknown: the slowest scaling anchor is used")
        row = _scaling_row(link, comm, gbps_per_gpu)
        inter = log_scaling(nodes, row)
        if comm == "heavy" and (gbps_per_gpu is None or gbps_per_gpu < 100):
            notes.append(
                f"{gbps_per_gpu:g} Gbit/s per GPU is below the 100 Gbit/s where large-model gradients stop being "
                "bandwidth-bound (training-performance.md §5); the efficiency is optimistic"
                if gbps_per_gpu is not None
                else "large-model gradients over a link of unknown bandwidth: the efficiency is optimistic"
            )
    return Scaling(intra * inter, intra, inter, link, gbps_per_gpu, tuple(notes))


def anchor_scaling(row: MfuRow) -> Scaling:
    """The scaling efficiency the model gives the anchor's own cluster (its nodes, GPUs per node, fabric and model).

    The anchor's own model decides its communication class, not the user's: BLOOM's 176B gradients over 50 Gbit/s
    lost what a heavy model loses there, whatever model is being estimated.

    An anchor whose fabric did not limit it (``anchor_fabric_bound`` false: bandwidth not published but MFU high at
    that scale, or BLOOM, whose own throughput rules the fabric out) is taken at the fastest row of its link; each
    such row says why in its derivation. Dividing out a fabric loss the anchor did not have would raise its MFU.
    """
    gbps = row.anchor_gbps_per_gpu
    if not row.anchor_fabric_bound and row.anchor_link in ("rdma", "tcp"):
        gbps = max(r.min_gbps_per_gpu for r in scaling_rows() if r.link == row.anchor_link)
    node_gbps = None if gbps is None else gbps * row.anchor_gpus_per_node
    return scaling_efficiency(
        nodes=row.anchor_nodes,
        gpus_per_node=row.anchor_gpus_per_node,
        nvlink=row.anchor_nvlink,
        fabric_link="tcp" if row.anchor_link == "tcp" else "roce",
        rdma_gbps_per_node=node_gbps,
        network_gbps=node_gbps,
        comm=row.anchor_comm,
    )


def node_mfu(row: MfuRow) -> float:
    """The anchor's MFU normalised to one NVLink node: published MFU ÷ the scaling efficiency of the anchor's cluster
    (its nodes and fabric, and PCIe inside a node for PCIe anchors).

    The LLM anchors are whole-cluster wall-clock figures (Llama 2: 2,000 A100 at 200 Gbit/s per GPU), so they
    already contain that cluster's scaling loss; dividing it out and multiplying by the user's own efficiency
    applies only the difference between the two fabrics and scales (never the loss twice).
    """
    return row.mfu / anchor_scaling(row).efficiency


def training_hours(flops: float, gpus: int, peak_tflops: float, mfu: float, efficiency: float) -> float:
    """Wall-clock hours = FLOPs ÷ (GPUs × peak FLOP/s × MFU × scaling efficiency) ÷ 3600."""
    return flops / (gpus * peak_tflops * 1e12 * mfu * efficiency) / SECONDS_PER_HOUR


@functools.lru_cache(maxsize=None)
def bytes_per_param(precision: str, optimizer: str) -> float:
    """Weights + gradients + optimizer state, bytes per parameter (data/memory.csv; adamw counts as adam)."""
    group = precision_group(precision)
    opt = "adam" if optimizer == "adamw" else optimizer
    for row in memory_rows():
        if row.precision_group == group and row.optimizer == opt:
            return row.total_bytes
    raise LookupError(f"data/memory.csv has no row for {group}/{opt}")


def model_state_gib_per_gpu(job: Job, gpus: int) -> float:
    """Model state per GPU, GiB = params × bytes per param ÷ (GPUs if sharding is allowed, else 1) ÷ 2^30.

    Activations, buffers and framework overhead are not counted, so passing this check is necessary, not sufficient.
    """
    shards = gpus if job.sharding else 1
    return job.params * bytes_per_param(job.precision, job.optimizer) / shards / GIB


def read_rate_mb_s(job: Job, hours: float) -> float | None:
    """Storage read rate the run needs, MB/s = dataset bytes × epochs ÷ run seconds ÷ 10^6 (None without dataset_tb)."""
    if job.dataset_tb is None or hours <= 0:
        return None
    return job.dataset_tb * TB * job.epochs / (hours * SECONDS_PER_HOUR) / MB


def ingest_rate_mb_s(job: Job) -> float | None:
    """Storage write rate of the daily ingest, MB/s = TB per day × 10^12 ÷ 86,400 s ÷ 10^6 (None without ingest)."""
    if job.ingest_tb_per_day is None:
        return None
    return job.ingest_tb_per_day * TB / limits()["ingest_seconds_per_day"] / MB


def sample_rate(job: Job, hours: float) -> tuple[float, str]:
    """What the GPUs consume: tokens/s for transformers, samples/s otherwise."""
    seconds = hours * SECONDS_PER_HOUR
    if job.model_kind == "transformer":
        assert job.tokens is not None
        return job.tokens / seconds, "tokens/s"
    assert job.samples is not None
    return job.samples * job.epochs / seconds, "samples/s"
