"""Read what the nodes answered and judge it: one verdict per node (with reasons) and the all-reduce's.

A node's answer is the output of the check script (``AITRAIN-CHECK {json}``), from Cloud Assistant's
DescribeInvocationResults (``blueprints.launch.runs.parse_invocation``) or ssh. Nothing here runs a process.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from blueprints.bootstrap.fabric import FABRIC_LINKS_CSV, link_facts, version_below
from blueprints.health.suites import Check, NodeExpectations, fatal_xids, suite_checks
from blueprints.health.thresholds import Threshold

CHECK_MARKER = "AITRAIN-CHECK"
ALLREDUCE_MARKER = "AITRAIN-ALLREDUCE"
CHECK_VERSION = "v1"
_LINE = re.compile(rf"{CHECK_MARKER} (\{{.*\}})\s*$", re.M)
_ALLREDUCE = re.compile(rf"{ALLREDUCE_MARKER} (\{{.*\}})\s*$", re.M)


@dataclass(frozen=True)
class CheckResult:
    """One check on one node: ``pass``, ``fail``, ``warn`` or ``skip`` (not applicable), and what was seen."""

    name: str
    status: str
    detail: str


@dataclass(frozen=True)
class NodeVerdict:
    """One node: healthy unless a check with severity ``fail`` failed (or it gave no answer)."""

    node: str  # instance ID (Cloud Assistant) or private IP (ssh)
    host: str | None
    ip: str | None
    results: tuple[CheckResult, ...]

    @property
    def healthy(self) -> bool:
        """No failed check."""
        return not self.reasons

    @property
    def reasons(self) -> list[str]:
        """``check: detail`` of every failed check."""
        return [f"{r.name}: {r.detail}" for r in self.results if r.status == "fail"]


@dataclass(frozen=True)
class AllReduceVerdict:
    """The cross-node all-reduce: measured bus bandwidth against the threshold (None when unknown or not run)."""

    threshold: Threshold
    nodes: tuple[str, ...]
    busbw_gbps: float | None
    algbw_gbps: float | None
    status: str  # pass | fail | unknown (measured, no threshold) | skip (not run)
    detail: str
    suspects: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str, float | None], ...] = field(default=())


def node_facts(output: str) -> tuple[dict[str, str], str | None] | None:
    """(facts, host) from a node's answer; None when it holds no AITRAIN-CHECK line of this version."""
    found = _LINE.findall(output)
    if not found:
        return None
    try:
        data = json.loads(found[-1])
    except json.JSONDecodeError:
        return None
    if (
        not isinstance(data, dict)
        or data.get("aitrain_check") != CHECK_VERSION
        or not isinstance(data.get("facts"), dict)
    ):
        return None
    facts = {str(k): str(v) for k, v in data["facts"].items()}
    host = data.get("host")
    return facts, host if isinstance(host, str) else None


def allreduce_result(output: str) -> dict[str, Any] | None:
    """The AITRAIN-ALLREDUCE result rank 0 printed, if this output holds one."""
    for text in reversed(_ALLREDUCE.findall(output)):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and data.get("aitrain_allreduce") == "v1":
            return data
    return None


def _values(text: str) -> list[str]:
    return [v.strip() for v in text.split(";") if v.strip()]


def _normal(model: str) -> str:
    name = model.upper().strip()
    for prefix in ("NVIDIA ", "TESLA "):
        name = name.removeprefix(prefix)
    return name


def _model_ok(name: str, expected: str) -> bool:
    """The same model, or its family token (``H100`` in "NVIDIA H100 80GB HBM3") as a word of the name."""
    want, got = _normal(expected), _normal(name)
    return got == want or want.split("-")[0] in re.split(r"[\s-]+", got)


def _judge(check: Check, facts: Mapping[str, str], exp: NodeExpectations) -> CheckResult:
    status, detail = _RULES[check.name](facts, exp)
    if status == "fail" and check.severity == "warn":
        status = "warn"
    return CheckResult(check.name, status, detail)


Rule = Callable[[Mapping[str, str], NodeExpectations], tuple[str, str]]


def _gpu_count(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    seen = facts.get("gpu_count", "")
    if seen == str(exp.gpu_count):
        return "pass", f"{seen} GPUs"
    return "fail", f"{seen or 'no'} GPUs visible, {exp.gpu_count} expected ({facts.get('gpu_names', '')})"


def _gpu_model(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    names = _values(facts.get("gpu_names", ""))
    if exp.gpu_model is None:
        return "warn", f"the catalog names no model; seen {', '.join(sorted(set(names))) or 'none'}"
    wrong = sorted({n for n in names if not _model_ok(n, exp.gpu_model)})
    if names and not wrong:
        return "pass", names[0]
    return "fail", f"{', '.join(wrong) or 'no GPU name'} is not {exp.gpu_model}"


def _pinned(fact: str, want: Callable[[NodeExpectations], str | None]) -> Rule:
    def rule(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
        seen = _values(facts.get(fact, ""))
        pin = want(exp)
        if pin is None:
            return "warn", f"{'/'.join(seen) or 'none'} (no pin in the catalog)"
        # torch reports "version;nccl version": the NCCL that wheel bundles is shown, the pin is PyTorch's.
        versions = seen[:1] if fact == "torch" else seen
        if versions == [pin]:
            extra = f", NCCL {seen[1]}" if fact == "torch" and len(seen) > 1 else ""
            floor = link_facts()[exp.fabric].min_nccl_version if exp.fabric in link_facts() else None
            if extra and floor and version_below(seen[1], floor):
                # PAI's eRDMA page: "This feature requires NCCL version 2.19 or later" (fabric_links.csv).
                return (
                    "fail",
                    f"{pin}{extra}, below NCCL {floor}, the oldest {exp.fabric} supports ({FABRIC_LINKS_CSV.name})",
                )
            return "pass", f"{pin}{extra}"
        return "fail", f"{'/'.join(seen) or 'not found'}, pinned {pin}"

    return rule


def _ecc(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    bad = []
    for kind in ("volatile", "aggregate"):
        for gpu, value in enumerate(_values(facts.get(f"ecc_{kind}", ""))):
            if value.isdigit() and int(value) > 0:
                bad.append(f"GPU {gpu} {value} uncorrected ({kind})")
    return ("fail", "; ".join(bad)) if bad else ("pass", "no uncorrected ECC errors")


def _retired(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    bad = [f"GPU {g} retirement pending" for g, v in enumerate(_values(facts.get("retired_pending", ""))) if v == "Yes"]
    for gpu, row in enumerate(_values(facts.get("remapped_rows", ""))):
        flags = [p.strip() for p in row.split(",")]
        if "Yes" in flags or any(p.isdigit() and int(p) > 0 for p in flags):
            bad.append(f"GPU {gpu} remapped rows pending/failed ({row})")
    return ("fail", "; ".join(bad)) if bad else ("pass", "none pending")


def _xid(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    seen = {}
    for item in _values(facts.get("xid", "")):
        code, _, times = item.partition("x")
        if code.isdigit():
            seen[int(code)] = times
    fatal = fatal_xids()
    bad = [f"XID {c} ({fatal[c].meaning}) x{seen[c]}" for c in sorted(seen) if c in fatal]
    if bad:
        return "fail", "; ".join(bad)
    if seen:
        return "warn", "XID " + ", ".join(f"{c} x{t}" for c, t in sorted(seen.items())) + " since boot"
    return "pass", "no XID since boot"


def _nvlink(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    links, _, inactive = facts.get("nvlink", "").partition(":")
    if links.isdigit() and int(links) > 0 and inactive == "0":
        return "pass", f"{links} links active"
    return "fail", f"{links or 0} links, {inactive or '?'} inactive"


def _rdma(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    devices = [d.partition(":") for d in _values(facts.get("rdma", ""))]
    mine = [(name, state) for name, _, state in devices if name.startswith(exp.rdma_prefix or "")]
    if not mine:
        return "fail", f"no {exp.rdma_prefix}* device in /sys/class/infiniband"
    down = [f"{name} {state or 'no port'}" for name, state in mine if not state or set(_split(state)) != {"ACTIVE"}]
    if down:
        return "fail", "; ".join(down)
    return "pass", ", ".join(name for name, _ in mine) + " ACTIVE"


def _split(state: str) -> list[str]:
    return [s for s in re.split(r"[;,\s]+", state) if s]


def _mount(name: str) -> Rule:
    def rule(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
        seen = facts.get(name, "not reported")
        if seen == "ok":
            return "pass", "mounted, writable by the job user"
        if seen == "not configured":
            return "skip", "the profile has no scratch disk"
        return "fail", seen

    return rule


def _metrics_agent(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    seen = facts.get("metrics_agent", "not reported")
    if seen == "running":
        return "pass", "the CloudMonitor agent runs"
    if seen == "not installed by the boot":
        return "skip", "this node's boot installs no CloudMonitor agent"
    return "fail", seen


def _dcgm(facts: Mapping[str, str], exp: NodeExpectations) -> tuple[str, str]:
    seen = facts.get("dcgm", "not reported")
    head, _, fails = seen.partition(";")
    if head == "rc=0" and not fails:
        return "pass", "dcgmi diag -r 3 passed"
    return "fail", seen


_RULES: dict[str, Rule] = {
    "gpu_count": _gpu_count,
    "gpu_model": _gpu_model,
    "driver": _pinned("driver", lambda e: e.driver_version),
    "cuda": _pinned("cuda", lambda e: e.cuda_version),
    "torch_nccl": _pinned("torch", lambda e: e.pytorch_version),
    "ecc": _ecc,
    "retired_pages": _retired,
    "xid": _xid,
    "nvlink": _nvlink,
    "rdma": _rdma,
    "shared": _mount("shared"),
    "scratch": _mount("scratch"),
    "metrics_agent": _metrics_agent,
    "dcgm_diag": _dcgm,
}


def judge_node(
    node: str, output: str, exp: NodeExpectations, suite: str = "quick", exit_code: int | None = 0
) -> NodeVerdict:
    """One node's verdict from its answer; no AITRAIN-CHECK line is a failure that quotes the answer's end."""
    parsed = node_facts(output)
    if parsed is None:
        tail = " ".join(output.strip().splitlines()[-3:])[-300:] or "(empty)"
        code = "" if exit_code in (0, None) else f"exit {exit_code}; "
        return NodeVerdict(node, None, None, (CheckResult("answer", "fail", f"no {CHECK_MARKER} line ({code}{tail})"),))
    facts, host = parsed
    results = tuple(_judge(check, facts, exp) for check in suite_checks(exp, suite))
    return NodeVerdict(node, host, facts.get("ip") or None, results)


def judge_allreduce(
    threshold: Threshold, nodes: Sequence[str], outputs: Sequence[str], *, note: str | None = None
) -> AllReduceVerdict:
    """The all-reduce verdict from every node's output (rank 0 prints the result; any node may be rank 0)."""
    found = next((r for r in map(allreduce_result, outputs) if r is not None), None)
    if found is None:
        return AllReduceVerdict(threshold, tuple(nodes), None, None, "fail", note or "no node printed a result")
    busbw, algbw = float(found["busbw_gbps"]), float(found["algbw_gbps"])
    measured = f"busbw {busbw:.2f} Gbit/s (algbw {algbw:.2f}) over {found.get('world_size')} ranks"
    if not found.get("correct", False):
        return AllReduceVerdict(threshold, tuple(nodes), busbw, algbw, "fail", f"{measured}: wrong sums")
    if len(nodes) < 2:
        return AllReduceVerdict(
            threshold, tuple(nodes), busbw, algbw, "unknown", f"{measured}; one node: the fabric is not exercised"
        )
    if threshold.threshold_gbps is None:
        return AllReduceVerdict(threshold, tuple(nodes), busbw, algbw, "unknown", f"{measured}; {threshold.source}")
    ok = busbw >= threshold.threshold_gbps
    verdict = "reaches" if ok else "is below"
    return AllReduceVerdict(
        threshold,
        tuple(nodes),
        busbw,
        algbw,
        "pass" if ok else "fail",
        f"{measured} {verdict} the threshold {threshold.threshold_gbps:g} Gbit/s",
    )
