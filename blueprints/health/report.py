"""The health report: one verdict per node and the all-reduce's, as text, JSON (versioned) or Markdown."""

from __future__ import annotations

import json
from dataclasses import dataclass

from blueprints.health.thresholds import BUSBW_SOURCE
from blueprints.health.verdict import CHECK_VERSION, AllReduceVerdict, NodeVerdict

FORMATS = ("text", "json", "markdown")


@dataclass(frozen=True)
class HealthReport:
    """What ``aitrain check`` found on one stack."""

    profile: str
    blueprint: str
    instance_type: str
    suite: str
    nodes: tuple[NodeVerdict, ...]
    allreduce: AllReduceVerdict | None

    @property
    def unhealthy_nodes(self) -> list[NodeVerdict]:
        """Nodes with a failed check, and the all-reduce's suspects."""
        suspects = set(self.allreduce.suspects) if self.allreduce else set()
        return [n for n in self.nodes if not n.healthy or n.node in suspects]

    @property
    def healthy(self) -> bool:
        """Every node healthy and the all-reduce not below its threshold."""
        return not self.unhealthy_nodes and (self.allreduce is None or self.allreduce.status != "fail")


def _node_reasons(report: HealthReport, node: NodeVerdict) -> list[str]:
    reasons = node.reasons
    if report.allreduce and node.node in report.allreduce.suspects:
        reasons = [*reasons, "allreduce: every pair test with this node was slow"]
    return reasons


def as_json(report: HealthReport) -> dict[str, object]:
    """The versioned JSON document (``aitrain_check`` v1)."""
    ar = report.allreduce
    return {
        "aitrain_check": CHECK_VERSION,
        "profile": report.profile,
        "blueprint": report.blueprint,
        "instance_type": report.instance_type,
        "suite": report.suite,
        "healthy": report.healthy,
        "unhealthy_nodes": [n.node for n in report.unhealthy_nodes],
        "nodes": [
            {
                "node": n.node,
                "host": n.host,
                "ip": n.ip,
                "healthy": not _node_reasons(report, n),
                "reasons": _node_reasons(report, n),
                "checks": [{"name": r.name, "status": r.status, "detail": r.detail} for r in n.results],
            }
            for n in report.nodes
        ],
        "allreduce": None
        if ar is None
        else {
            **ar.threshold.as_output(),
            "busbw_definition": BUSBW_SOURCE,
            "nodes": list(ar.nodes),
            "busbw_gbps": ar.busbw_gbps,
            "algbw_gbps": ar.algbw_gbps,
            "status": ar.status,
            "detail": ar.detail,
            "suspects": list(ar.suspects),
            "pairs": [{"nodes": [a, b], "busbw_gbps": bw} for a, b, bw in ar.pairs],
        },
    }


def _threshold_line(ar: AllReduceVerdict) -> str:
    t = ar.threshold
    if t.threshold_gbps is None:
        return f"threshold: unknown ({t.fabric}) - {t.source}"
    return f"threshold: {t.threshold_gbps:g} Gbit/s busbw ({t.fabric}, expected {t.expected_busbw_gbps:g}) - {t.source}"


def render_text(report: HealthReport) -> str:
    """Plain text: the verdict, each node with its failing checks, then the all-reduce with threshold and source."""
    verdict = "healthy" if report.healthy else "UNHEALTHY"
    lines = [
        f"aitrain check ({report.suite}): {report.profile} ({report.blueprint}, {report.instance_type}), "
        f"{len(report.nodes)} node{'s' if len(report.nodes) != 1 else ''}: {verdict}"
    ]
    for n in report.nodes:
        reasons = _node_reasons(report, n)
        name = n.node + (f" ({n.host})" if n.host else "")
        lines.append(f"  {name}: {'ok' if not reasons else 'FAIL'}")
        lines += [f"    - {r}" for r in reasons]
        lines += [f"    ~ {r.name}: {r.detail}" for r in n.results if r.status == "warn"]
    ar = report.allreduce
    if ar is not None:
        lines.append(f"  allreduce: {ar.status} - {ar.detail}")
        lines.append(f"    {_threshold_line(ar)}")
        lines.append(f"    busbw = algbw x 2(n-1)/n ({BUSBW_SOURCE})")
        for a, b, bw in ar.pairs:
            lines.append(f"    pair {a} + {b}: " + ("no result" if bw is None else f"busbw {bw:.2f} Gbit/s"))
        if ar.suspects:
            lines.append(f"    slow node(s): {', '.join(ar.suspects)}")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: HealthReport) -> str:
    """Markdown: a table of nodes (status, reasons) and the all-reduce section."""
    lines = [
        f"## aitrain check: {_cell(report.profile)} - {'healthy' if report.healthy else '**unhealthy**'}",
        "",
        f"Suite **{report.suite}** on {len(report.nodes)} node(s) of `{report.instance_type}` ({report.blueprint}).",
        "",
        "| node | host | status | reasons |",
        "|---|---|---|---|",
    ]
    for n in report.nodes:
        reasons = _node_reasons(report, n)
        lines.append(
            f"| `{n.node}` | {_cell(n.host or '')} | {'ok' if not reasons else '**fail**'} | "
            f"{_cell('; '.join(reasons)) or '-'} |"
        )
    ar = report.allreduce
    if ar is not None:
        lines += ["", f"**All-reduce**: {ar.status} - {_cell(ar.detail)}", "", f"- {_cell(_threshold_line(ar))}"]
        lines.append(f"- busbw = algbw x 2(n-1)/n ({BUSBW_SOURCE})")
        if ar.suspects:
            lines.append(f"- slow node(s): {', '.join(f'`{s}`' for s in ar.suspects)}")
    return "\n".join(lines)


def render(report: HealthReport, fmt: str) -> str:
    """The report in ``fmt`` (one of FORMATS)."""
    if fmt == "json":
        return json.dumps(as_json(report), indent=2, sort_keys=False)
    if fmt == "markdown":
        return render_markdown(report)
    return render_text(report)
