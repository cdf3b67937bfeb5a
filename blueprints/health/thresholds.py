"""The all-reduce's pass line per fabric: the catalog's bandwidth for the link times a pass fraction, with sources.

``data/allreduce_thresholds.csv`` says, per fabric (erdma, roce, tcp), which instance column is the link's
bandwidth and what fraction of it a healthy all-reduce's bus bandwidth must reach. A row whose bandwidth the
catalog does not give leaves the threshold unknown: the all-reduce is then measured and reported, not judged.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from blueprints.catalog import InstanceType

THRESHOLDS_CSV = Path(__file__).parent / "data" / "allreduce_thresholds.csv"
# nccl-tests' definition of bus bandwidth for all-reduce: busbw = algbw * 2(n-1)/n, n ranks.
BUSBW_SOURCE = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"


@dataclass(frozen=True)
class FabricRule:
    """One row of the thresholds file."""

    fabric: str
    bandwidth_column: str
    pass_fraction: float
    source: str
    retrieved: str


@dataclass(frozen=True)
class Threshold:
    """What the all-reduce must reach on this stack: expected and threshold in Gbit/s (None = unknown), and why."""

    fabric: str
    expected_busbw_gbps: float | None
    threshold_gbps: float | None
    source: str

    def as_output(self) -> dict[str, object]:
        """The JSON-plain form (stack output ``health_gate.allreduce``, the JSON report)."""
        return {
            "fabric": self.fabric,
            "expected_busbw_gbps": self.expected_busbw_gbps,
            "threshold_gbps": self.threshold_gbps,
            "source": self.source,
        }


@cache
def fabric_rules() -> dict[str, FabricRule]:
    """The thresholds file, by fabric; ``ValueError`` naming the line when a row is malformed."""
    rules: dict[str, FabricRule] = {}
    with THRESHOLDS_CSV.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            fraction = float(row["pass_fraction"])
            if not 0 < fraction <= 1 or row["bandwidth_column"] not in ("rdma_gbps", "network_gbps"):
                raise ValueError(f"{THRESHOLDS_CSV.name} line {line}: pass_fraction in (0, 1], known bandwidth column")
            rules[row["fabric"]] = FabricRule(
                row["fabric"], row["bandwidth_column"], fraction, row["source"], row["retrieved"]
            )
    return rules


def threshold_for(instance: InstanceType, fabric: str) -> Threshold:
    """The all-reduce threshold for nodes of ``instance`` linked by ``fabric``; unknown when the catalog is silent."""
    rule = fabric_rules().get(fabric)
    if rule is None:
        return Threshold(fabric, None, None, f"unknown: no row for fabric {fabric!r} in {THRESHOLDS_CSV.name}")
    bandwidth = getattr(instance, rule.bandwidth_column)
    if bandwidth is None:
        return Threshold(
            fabric,
            None,
            None,
            f"unknown: the catalog gives no {rule.bandwidth_column} for {instance.instance_type}, so the all-reduce "
            "is measured and reported without a pass/fail",
        )
    expected = float(bandwidth)
    return Threshold(
        fabric,
        expected,
        round(expected * rule.pass_fraction, 3),
        f"{rule.pass_fraction:g} x {rule.bandwidth_column} {expected:g} Gbit/s of {instance.instance_type} "
        f"(catalog: {instance.spec_source}); {rule.source} (retrieved {rule.retrieved})",
    )


def bus_bandwidth(algbw: float, ranks: int) -> float:
    """nccl-tests' all-reduce bus bandwidth: ``algbw * 2(n-1)/n`` (``BUSBW_SOURCE``); 0 ranks or 1 gives 0."""
    return algbw * 2 * (ranks - 1) / ranks if ranks > 1 else 0.0
