"""How ``aitrain queue`` shows its report: a plain-text table of the teams' queues and their jobs, or a JSON document
(``--json``, for tools). Pure: the text is returned, not printed.
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import asdict
from typing import Any

from blueprints.launch.queue import QueueReport

__all__ = ["queue_json", "render_queue"]


def queue_json(report: QueueReport) -> dict[str, Any]:
    """The report as a JSON document (``--json``): ``queues`` per team and ``jobs``, with Kueue's own reasons."""
    return {
        "namespace": report.namespace,
        "team": report.team,
        "now": report.now,
        "queues": [{**asdict(q), "notes": list(q.notes)} for q in report.queues],
        "jobs": [asdict(j) for j in report.jobs],
    }


def _age(since: str | None, now: str | None) -> str:
    if since is None or now is None:
        return "-"
    try:
        start = dt.datetime.strptime(since, "%Y-%m-%dT%H:%M:%SZ")
        end = dt.datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return "-"
    seconds = max(0, int((end - start).total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d{hours}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def _gpus(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def render_queue(report: QueueReport, width: int = 160) -> str:
    """The teams' queues, then one line per job with its state and Kueue's reason it waits, as plain text."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, record=True)
    title = f"aitrain queue: namespace {report.namespace}" + (f", team {report.team}" if report.team else "")
    queues = Table(title=Text(title), box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("team", "queue", "cluster queue"):
        queues.add_column(name, no_wrap=True)
    for name in ("GPUs in use", "quota", "borrowed", "may borrow", "reserved", "pending", "admitted"):
        queues.add_column(name, no_wrap=True, justify="right")
    for q in report.queues:
        if not q.found:
            limit = "-"
        elif q.cohort is None:
            limit = "0 (no cohort)"
        else:
            limit = "no limit" if q.borrowing_limit_gpus is None else _gpus(q.borrowing_limit_gpus)
        cells = [
            q.team + (" (default)" if q.default else ""),
            q.local_queue,
            q.cluster_queue + ("" if q.found else " (missing)"),
            _gpus(q.used_gpus) if q.found else "-",
            _gpus(q.nominal_gpus),
            _gpus(q.borrowed_gpus) if q.found else "-",
            limit,
            _gpus(q.reserved_gpus) if q.found else "-",
            str(q.pending_workloads) if q.found else "-",
            str(q.admitted_workloads) if q.found else "-",
        ]
        queues.add_row(*(Text(c) for c in cells))
    console.print(queues)
    jobs = Table(
        box=box.SIMPLE_HEAD,
        title=Text(f"{len(report.jobs)} job{'s' if len(report.jobs) != 1 else ''}"),
        title_justify="left",
    )
    jobs.add_column("job", no_wrap=True)
    jobs.add_column("team", no_wrap=True)
    jobs.add_column("GPUs", justify="right", no_wrap=True)
    jobs.add_column("state", no_wrap=True)
    jobs.add_column("for", justify="right", no_wrap=True)
    jobs.add_column("why (Kueue's words)", overflow="fold", ratio=1)
    for j in report.jobs:
        team = j.team or f"? (queue {j.local_queue or 'none'})"
        why = j.why or "-"
        if j.reason and j.state != "running":
            why = f"[{j.reason}] {why}"
        jobs.add_row(
            Text(f"{j.job_kind}/{j.job_name}"), Text(team), Text(_gpus(j.gpus)), Text(j.state),
            Text(_age(j.since, report.now)), Text(why),
        )  # fmt: skip
    if report.jobs:
        console.print(jobs)
    else:
        console.print(
            Text(f"no jobs in namespace {report.namespace}" + (f" for team {report.team}" if report.team else ""))
        )
    for q in report.queues:
        for note in q.notes:
            console.print(Text(f"note: {note}"))
    strays = sorted({j.local_queue or "(none)" for j in report.jobs if j.team is None})
    if strays:
        console.print(
            Text(
                f"note: queue {', '.join(strays)} is not one of the stack's teams' queues "
                f"({', '.join(q.local_queue for q in report.queues)}): such a job waits in no team's quota"
            )
        )
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"
