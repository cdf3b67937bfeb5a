"""Loads the advisor's cited constants (MFU, scaling, memory, limits) from ``data/*.csv``."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).with_name("data")


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA_DIR / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


LEVELS = ("tuned", "typical", "conservative")


@dataclass(frozen=True)
class MfuRow:
    """One published model-FLOPs-utilisation anchor (one level of the range) and the setup it was measured on.

    ``mfu`` is the fraction as published, on the anchor's own cluster: ``anchor_nodes`` nodes of
    ``anchor_gpus_per_node`` GPUs (linked inside a node by NVLink when ``anchor_nvlink``, else PCIe), the nodes
    linked by ``anchor_link`` (``node`` = a single node, ``rdma``, ``tcp``) at ``anchor_gbps_per_gpu`` Gbit/s
    per GPU (None = not published), training a model of communication class ``anchor_comm`` (the anchor's own
    model: LLMs and BERT-large are ``heavy``, ResNet-50 is ``light``; data/limits.csv ``comm_heavy_min_params``).
    ``anchor_fabric_bound`` is False when the anchor's own figures show its fabric did not limit it (bandwidth not
    published but MFU high at scale; BLOOM's measured throughput): its scaling loss is then taken at the fastest
    row of its link instead of the row its bandwidth falls in (``sizing.anchor_scaling``). ``anchor_params`` is the
    parameter count of the anchor's own model (None = not recorded: the CNN rows), so the advisor can say when a job
    is smaller than every model its range was measured on (``sizing.model_size_note``).
    """

    gpu_class: str
    model_kind: str
    precision_group: str
    level: str
    mfu: float
    anchor_nodes: int
    anchor_gpus_per_node: int
    anchor_nvlink: bool
    anchor_link: str
    anchor_gbps_per_gpu: float | None
    anchor_params: float | None
    anchor_comm: str
    anchor_fabric_bound: bool
    confidence: str
    derivation: str
    source: str

    @property
    def anchor_setup(self) -> str:
        """The anchor's scale and fabric in words, e.g. "250 nodes × 8 GPUs, rdma 200 Gbit/s per GPU"."""
        gpus = self.anchor_nodes * self.anchor_gpus_per_node
        inside = "NVLink" if self.anchor_nvlink else "PCIe"
        if self.anchor_nodes <= 1:
            return f"1 node, {gpus} GPUs over {inside}"
        speed = (
            "bandwidth not published"
            if self.anchor_gbps_per_gpu is None
            else f"{self.anchor_gbps_per_gpu:g} Gbit/s per GPU"
        )
        return (
            f"{self.anchor_nodes:,} nodes × {self.anchor_gpus_per_node} GPUs "
            f"({gpus:,}, {inside} inside a node), {self.anchor_link} {speed}"
        )


@dataclass(frozen=True)
class ScalingRow:
    """One published multi-node scaling anchor: efficiency at
    ``anchor_nodes`` over a link of at least ``min_gbps_per_gpu``."""

    link: str
    comm: str
    min_gbps_per_gpu: float
    anchor_nodes: int
    anchor_efficiency: float
    confidence: str
    anchor: str
    source: str

    @property
    def loss_per_doubling(self) -> float:
        """Efficiency lost per doubling of the node count: (1 − anchor efficiency) / log2(anchor nodes)."""
        import math

        return (1.0 - self.anchor_efficiency) / math.log2(self.anchor_nodes)


@dataclass(frozen=True)
class MemoryRow:
    """Bytes per parameter for weights, gradients and optimizer state."""

    precision_group: str
    optimizer: str
    weight_bytes: float
    grad_bytes: float
    optimizer_bytes: float
    source: str

    @property
    def total_bytes(self) -> float:
        """Weights + gradients + optimizer state, bytes per parameter."""
        return self.weight_bytes + self.grad_bytes + self.optimizer_bytes


def _flag(row: dict[str, str], column: str) -> bool:
    """A ``true`` / ``false`` cell of an advisor data file (anything else is a data error, named with its row)."""
    value = row[column]
    if value not in ("true", "false"):
        raise ValueError(f"data/mfu.csv: {column} = {value!r} in row {row}: must be true or false")
    return value == "true"


@functools.lru_cache(maxsize=None)
def mfu_rows() -> tuple[MfuRow, ...]:
    """All rows of ``data/mfu.csv``."""
    return tuple(
        MfuRow(
            r["gpu_class"],
            r["model_kind"],
            r["precision_group"],
            r["level"],
            float(r["mfu"]),
            int(r["anchor_nodes"]),
            int(r["anchor_gpus_per_node"]),
            r["anchor_nvlink"] == "true",
            r["anchor_link"],
            float(r["anchor_gbps_per_gpu"]) if r["anchor_gbps_per_gpu"] else None,
            float(r["anchor_params"]) if r["anchor_params"] else None,
            r["anchor_comm"],
            _flag(r, "anchor_fabric_bound"),
            r["confidence"],
            r["derivation"],
            r["source"],
        )
        for r in _rows("mfu.csv")
    )


@dataclass(frozen=True)
class RangeCheck:
    """Published runs a class's tuned–conservative range was checked against: their model sizes and how many fell
    inside (``data/range_checks.csv``; the test named in ``source`` recomputes it)."""

    gpu_class: str
    model_kind: str
    precision_group: str
    runs: str
    min_params: float
    max_params: float
    inside: int
    source: str


@functools.lru_cache(maxsize=None)
def range_checks() -> tuple[RangeCheck, ...]:
    """All rows of ``data/range_checks.csv``."""
    return tuple(
        RangeCheck(
            r["gpu_class"],
            r["model_kind"],
            r["precision_group"],
            r["runs"],
            float(r["min_params"]),
            float(r["max_params"]),
            int(r["inside"]),
            r["source"],
        )
        for r in _rows("range_checks.csv")
    )


@functools.lru_cache(maxsize=None)
def scaling_rows() -> tuple[ScalingRow, ...]:
    """All rows of ``data/scaling.csv``."""
    return tuple(
        ScalingRow(
            r["link"],
            r["comm"],
            float(r["min_gbps_per_gpu"]),
            int(r["anchor_nodes"]),
            float(r["anchor_efficiency"]),
            r["confidence"],
            r["anchor"],
            r["source"],
        )
        for r in _rows("scaling.csv")
    )


@functools.lru_cache(maxsize=None)
def memory_rows() -> tuple[MemoryRow, ...]:
    """All rows of ``data/memory.csv``."""
    return tuple(
        MemoryRow(
            r["precision_group"],
            r["optimizer"],
            float(r["weight_bytes"]),
            float(r["grad_bytes"]),
            float(r["optimizer_bytes"]),
            r["source"],
        )
        for r in _rows("memory.csv")
    )


@functools.lru_cache(maxsize=None)
def limits() -> dict[str, float]:
    """``data/limits.csv`` as name → value."""
    return {r["name"]: float(r["value"]) for r in _rows("limits.csv")}
