"""The checks of the health gate: what each runs on a node, its pass rule and what a failure means.

A node reports facts (``templates/aitrain-check.sh.j2``); ``blueprints.health.verdict`` judges them against a
``NodeExpectations``, built here from the catalog row of the stack's instance type and its GPU software pins.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from blueprints.bootstrap import CLOUDMONITOR_PROCESS
from blueprints.catalog import Catalog, InstanceType

SUITES = ("quick", "long")
DATA = Path(__file__).parent / "data"
# Where a failing node's way back is: the repair helper's `aitrain replace-node`, or a reboot for a transient fault.
REPLACE = "exclude the node; replace it (aitrain replace-node NODE, or let the pool replace it) or reboot it"


@dataclass(frozen=True)
class Check:
    """One health check: its name, what it runs on the node, its pass rule, and severity/action when it fails.

    ``severity`` is ``fail`` (the node is unhealthy: excluded, or the launch stops) or ``warn`` (reported only).
    """

    name: str
    runs: str
    rule: str
    severity: str
    action: str


@dataclass(frozen=True)
class NodeExpectations:
    """What a healthy node of this stack looks like: from the catalog, None where the catalog does not say."""

    instance_type: str
    gpu_count: int
    gpu_model: str | None
    gpu_model_inferred: bool
    driver_version: str | None
    cuda_version: str | None
    pytorch_version: str | None
    fabric: str  # erdma | roce | tcp
    nvlink: bool

    @property
    def rdma_prefix(self) -> str | None:
        """The RDMA device names the fabric brings: ``erdma_*`` (eRDMA) or ``mlx5_*`` (RoCE); None over TCP."""
        return {"erdma": "erdma_", "roce": "mlx5_"}.get(self.fabric)


def expectations(catalog: Catalog, instance: InstanceType, fabric: str | None = None) -> NodeExpectations:
    """The expectations for a node of ``instance`` (``fabric`` overrides the catalog's link, as a blueprint may)."""
    software = catalog.software_for(instance) if instance.is_gpu else None
    return NodeExpectations(
        instance_type=instance.instance_type,
        gpu_count=instance.gpu_count,
        gpu_model=instance.gpu_model,
        gpu_model_inferred=instance.gpu_inferred,
        driver_version=software.driver_version if software else None,
        cuda_version=software.cuda_version if software else None,
        pytorch_version=software.pytorch_version if software else None,
        fabric=fabric or instance.fabric_link,
        nvlink=bool(instance.nvlink) and instance.is_gpu,
    )


@dataclass(frozen=True)
class XidAction:
    """One XID code that makes a node unhealthy, with NVIDIA's meaning and the source."""

    xid: int
    meaning: str
    source: str


@cache
def fatal_xids() -> dict[int, XidAction]:
    """The XID codes (data/xid_errors.csv) that fail a node; any other XID is reported as a warning."""
    with (DATA / "xid_errors.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {int(r["xid"]): XidAction(int(r["xid"]), r["meaning"], r["source"]) for r in rows if r["action"] == "fail"}


def suite_checks(exp: NodeExpectations, suite: str = "quick") -> list[Check]:
    """The checks a node of this stack runs in ``suite`` (``long`` = quick + DCGM level 3), in report order."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; expected one of {', '.join(SUITES)}")
    checks: list[Check] = []
    if exp.gpu_count:
        pin = "the catalog's gpu_software pin"
        checks += [
            Check(
                "gpu_count",
                "nvidia-smi --query-gpu=index",
                f"{exp.gpu_count} GPUs, as the catalog row of {exp.instance_type} says",
                "fail",
                REPLACE,
            ),
            Check(
                "gpu_model",
                "nvidia-smi --query-gpu=name",
                f"every GPU is a {exp.gpu_model or 'GPU (model unknown in the catalog)'}"
                + (" (inferred in the catalog: a mismatch warns)" if exp.gpu_model_inferred else ""),
                "warn" if exp.gpu_model_inferred or exp.gpu_model is None else "fail",
                REPLACE,
            ),
            Check("driver", "nvidia-smi --query-gpu=driver_version", f"= {exp.driver_version} ({pin})", "fail",
                  "reinstall the driver (reboot the node: the boot installs the pinned one) or replace the node"),
            Check("cuda", "/usr/local/cuda/version.json", f"= {exp.cuda_version} ({pin})", "warn",
                  "the job's PyTorch wheel brings its own CUDA runtime; fix the image when it matters"),
            Check("torch_nccl", "python -c 'import torch' (the node's venv)",
                  f"PyTorch {exp.pytorch_version} ({pin}; its wheel bundles NCCL, whose version is reported)", "fail",
                  "reboot the node (the boot installs the pinned PyTorch) or replace it"),
            Check("ecc", "nvidia-smi ecc.errors.uncorrected.{volatile,aggregate}.total",
                  "0 uncorrected ECC errors (volatile and aggregate) on every GPU", "fail", REPLACE),
            Check("retired_pages", "nvidia-smi retired_pages.pending; --query-remapped-rows",
                  "no page retirement pending, no remapped-row pending or failure", "fail", REPLACE),
            Check("xid", "journalctl -k -b (or dmesg): 'NVRM: Xid' since boot",
                  f"no XID {', '.join(map(str, sorted(fatal_xids())))} since boot (others warn)", "fail", REPLACE),
        ]  # fmt: skip
        if exp.nvlink:
            checks.append(
                Check("nvlink", "nvidia-smi nvlink --status", "at least one link, none inactive", "fail", REPLACE)
            )
    if exp.rdma_prefix:
        checks.append(
            Check(
                "rdma",
                f"/sys/class/infiniband/{exp.rdma_prefix}*/ports/*/state",
                f"a {exp.rdma_prefix}* device ({exp.fabric}) with every port ACTIVE",
                "fail",
                REPLACE,
            )
        )
    checks += [
        Check("shared", "grep /proc/mounts; touch as the job user", "mounted and writable by the job user", "fail",
              "remount the file system (reboot the node) and check the mount target"),
        Check("scratch", "grep /proc/mounts; touch as the job user",
              "mounted and writable by the job user (when the profile has scratch)", "fail",
              "reboot the node (the boot formats and mounts scratch)"),
    ]  # fmt: skip
    checks.append(
        Check(
            "metrics_agent",
            f"cloudmonitor= in /etc/aitrain/status; pgrep -x {CLOUDMONITOR_PROCESS}",
            "the CloudMonitor agent runs where the boot installed it (it reports the *Agent metrics alarms read)",
            "warn",
            "its metrics go dead (a pool then never scales in): reboot the node (the boot retries the install) and "
            "check egress to the region's cms-agent bucket",
        )
    )
    if suite == "long" and exp.gpu_count:
        checks.append(Check("dcgm_diag", "dcgmi diag -r 3", "exit 0, no test reports Fail", "fail", REPLACE))
    return checks


def suite_names(exp: NodeExpectations, suite: str = "quick") -> list[str]:
    """The check names of ``suite`` for this stack, plus the cross-node all-reduce (what the plan lists)."""
    return [c.name for c in suite_checks(exp, suite)] + ["allreduce"]
