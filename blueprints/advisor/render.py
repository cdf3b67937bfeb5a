"""Render recommendations and estimates as a terminal table,
Markdown or versioned JSON (deterministic: no timestamps)."""

from __future__ import annotations

import json
from typing import Any

from blueprints.advisor import sizing
from blueprints.advisor.choice import Considered, Recommendation
from blueprints.advisor.lingjun import HEADING as LINGJUN_HEADING
from blueprints.advisor.options import Option
from blueprints.advisor.stack import profile_dict
from blueprints.advisor.storage import StorageChoice
from blueprints.advisor.teams import HEADERS as TEAM_HEADERS
from blueprints.advisor.teams import NUMERIC as TEAM_NUMERIC
from blueprints.advisor.yearly import YearlyCost, runs_text, yearly_dict
from blueprints.advisor.yearly import lines as yearly_lines
from blueprints.advisor.yearly import rows as yearly_rows
from blueprints.core.text import md_cell, md_table, md_text, plain, table

RECOMMENDATION_SCHEMA = "aitrain.recommendation/v1"
ESTIMATE_SCHEMA = "aitrain.estimate/v1"

_STATUS = {
    "region": "other region",
    "gpu_unknown": "GPU unnamed",
    "precision": "no peak",
    "memory": "memory",
    "no_anchor": "no anchor",
    "unpriced": "no price",
    "deadline": "too slow",
    "budget_run": "over budget",
    "budget_year": "over budget",
}


def _r(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def status(item: Considered) -> str:
    """Short status for the table: CHOSEN, feasible, or the first reasons."""
    if item.chosen:
        return "CHOSEN"
    if item.option.feasible:
        return "feasible"
    labels: list[str] = []
    for reason in item.option.reasons:
        label = _STATUS.get(reason.code, reason.code)
        if label not in labels:
            labels.append(label)
    return ", ".join(labels)


def _pair(tuned: float | None, conservative: float | None, digits: int) -> dict[str, float | None] | None:
    """{"tuned": x, "conservative": y}, or None when the range is unknown."""
    if tuned is None and conservative is None:
        return None
    return {"tuned": _r(tuned, digits), "conservative": _r(conservative, digits)}


def option_dict(option: Option) -> dict[str, Any]:
    """JSON form of one option (rounded so output is stable and readable)."""
    return {
        "instance_type": option.instance_type,
        "gpu_model": option.gpu_model,
        "gpu_model_confidence": option.gpu_model_confidence,
        "nodes": option.nodes,
        "gpus": option.gpus,
        "estimated_hours": _r(option.estimated_hours, 3),
        "estimated_hours_range": _pair(option.hours_tuned, option.hours_conservative, 3),
        "estimated_days": _r(None if option.estimated_hours is None else option.estimated_hours / 24, 3),
        "gpu_hours": _r(option.gpu_hours, 1),
        "cost_cny_per_run": _r(option.cost_cny_per_run, 2),
        "cost_cny_per_run_range": _pair(option.cost_cny_per_run_tuned, option.cost_cny_per_run_conservative, 2),
        "cost_cny_per_year": _r(option.cost_cny_per_year, 2),
        "price_cny_per_node_hour": option.price_cny_per_hour,
        "peak_tflops": option.peak_tflops,
        "mfu": _r(option.mfu, 4),
        "mfu_range": _pair(option.mfu_tuned, option.mfu_conservative, 4),
        "mfu_confidence": option.mfu_confidence,
        "mfu_anchor": option.mfu_anchor,
        "scaling_efficiency": _r(option.scaling_efficiency, 4),
        "memory_gib_per_gpu": _r(option.memory_gib_per_gpu, 2),
        "gpu_memory_gib": option.gpu_memory_gib,
        "feasible": option.feasible,
        "reasons": [{"code": r.code, "message": r.message} for r in option.reasons],
    }


def storage_dict(storage: StorageChoice | None) -> dict[str, Any] | None:
    """JSON form of the storage choice (price in its own currency; not added to CNY totals)."""
    if storage is None:
        return None
    return {
        "kind": storage.kind,
        "throughput_tier": storage.profile_tier,
        "capacity_gib": storage.capacity_gib,
        "throughput_mb_s": _r(storage.throughput_mb_s, 1),
        "needed_mb_s": _r(storage.needed_mb_s, 1),
        "shortfall_mb_s": _r(storage.shortfall_mb_s, 1),
        "price_per_month": _r(storage.price_per_month, 2),
        "price_currency": storage.price_currency,
    }


def recommendation_dict(rec: Recommendation, catalog_version: str | None = None) -> dict[str, Any]:
    """The ``aitrain.recommendation/v1`` document."""
    chosen = rec.chosen
    tier = rec.tier
    return {
        "schema": RECOMMENDATION_SCHEMA,
        "catalog_version": catalog_version,
        "objective": rec.objective,
        "feasible": chosen is not None,
        "instance_type": chosen.instance_type if chosen else None,
        "gpu_model": chosen.gpu_model if chosen else None,
        "gpu_model_confidence": chosen.gpu_model_confidence if chosen else None,
        "nodes": chosen.nodes if chosen else None,
        "gpus": chosen.gpus if chosen else None,
        "estimated_hours": _r(chosen.estimated_hours, 3) if chosen else None,
        "estimated_hours_range": _pair(chosen.hours_tuned, chosen.hours_conservative, 3) if chosen else None,
        "estimated_days": _r((chosen.estimated_hours or 0) / 24, 3) if chosen else None,
        "cost_cny_per_run": _r(chosen.cost_cny_per_run, 2) if chosen else None,
        "cost_cny_per_year": _r(chosen.cost_cny_per_year, 2) if chosen else None,
        "mfu": _r(chosen.mfu, 4) if chosen else None,
        "scaling_efficiency": _r(chosen.scaling_efficiency, 4) if chosen else None,
        "blueprint": tier.blueprint if tier else None,
        "tier": (
            {
                "name": tier.name,
                "spot": tier.spot,
                "basis": tier.basis,
                "basis_cny_per_year": _r(tier.basis_cny_per_year, 2),
                "note": tier.note,
                "min_jobs_in_parallel": tier.min_jobs_in_parallel,
                "reasons": list(rec.tier_reasons),
            }
            if tier
            else None
        ),
        "storage": storage_dict(rec.storage),
        "yearly_cost": yearly_dict(rec.yearly),
        "training_flops": float(f"{sizing.training_flops(rec.job):.6g}"),
        "options_evaluated": rec.options_evaluated,
        "feasible_options": rec.feasible_count,
        "considered": [
            dict(option_dict(c.option), chosen=c.chosen, status=status(c), why=c.why) for c in rec.considered
        ],
        "relax": list(rec.relax),
        "findings": list(rec.findings),
        "lingjun": list(rec.lingjun),
        "profile": profile_dict(rec),
        "job": rec.job.model_dump(mode="json"),
    }


def estimate_dict(
    job: Any,
    option: Option,
    storage: StorageChoice | None,
    findings: list[str],
    catalog_version: str | None = None,
    yearly: YearlyCost | None = None,
) -> dict[str, Any]:
    """The ``aitrain.estimate/v1`` document for a fixed configuration."""
    return dict(
        {
            "schema": ESTIMATE_SCHEMA,
            "catalog_version": catalog_version,
            "training_flops": float(f"{sizing.training_flops(job):.6g}"),
        },
        **option_dict(option),
        storage=storage_dict(storage),
        yearly_cost=yearly_dict(yearly),
        findings=list(findings),
        job=job.model_dump(mode="json"),
    )


def to_json(document: dict[str, Any]) -> str:
    """Stable JSON text (key order as built, two-space indent, UTF-8 characters kept)."""
    return json.dumps(document, indent=2, ensure_ascii=False)


# --- text ---------------------------------------------------------------------------------------


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"¥{value:,.0f}"


def _num(value: float | None, fmt: str) -> str:
    return "unknown" if value is None else format(value, fmt)


def _days(option: Option) -> str:
    return "unknown" if option.estimated_hours is None else f"{option.estimated_hours / 24:,.1f}"


def _hours_range(option: Option) -> str:
    """ "120.0–190.0" (tuned–conservative hours), or "unknown"."""
    found = option.hours_range
    return "unknown" if found is None else f"{found[0]:,.1f}–{found[1]:,.1f}"


def hours_text(option: Option) -> str:
    """ "146.2 h, range 120.0–190.0 h (tuned–conservative)" — the typical time and its range."""
    if option.estimated_hours is None:
        return "unknown"
    return f"{option.estimated_hours:,.1f} h, range {_hours_range(option)} h (tuned–conservative)"


def by_team_text(yearly: YearlyCost | None) -> list[str]:
    """The terminal's "By team" table after the yearly cost (nothing when the job names no teams)."""
    split = None if yearly is None else yearly.by_team()
    if split is None:
        return []
    unknown = split.unknown_text()
    return [
        "",
        plain(f"By team: {split.basis()}:"),
        *table(TEAM_HEADERS, split.rows(), right=TEAM_NUMERIC).split("\n"),
        *([] if unknown is None else [plain(unknown[:1].upper() + unknown[1:])]),
    ]


def by_team_markdown(yearly: YearlyCost | None) -> list[str]:
    """The Markdown "By team" section after the yearly cost (nothing when the job names no teams)."""
    split = None if yearly is None else yearly.by_team()
    if split is None:
        return []
    basis, unknown = split.basis(), split.unknown_text()
    return [
        "",
        "### By team",
        "",
        md_text(basis[:1].upper() + basis[1:] + "."),
        "",
        md_table(TEAM_HEADERS, split.rows(), right=TEAM_NUMERIC),
        *([] if unknown is None else ["", md_text(unknown[:1].upper() + unknown[1:] + ".")]),
    ]


def _rows(rec: Recommendation) -> list[list[str]]:
    rows = []
    for item in rec.considered:
        o = item.option
        rows.append(
            [
                "*" if item.chosen else "",
                o.gpu_label,
                f"{o.nodes} × {o.instance_type}",
                str(o.gpus),
                _num(o.estimated_hours, ",.1f"),
                _hours_range(o),
                _days(o),
                _money(o.cost_cny_per_run),
                _money(o.cost_cny_per_year),
                _num(o.mfu, ".3f"),
                _num(o.scaling_efficiency, ".2f"),
                status(item),
            ]
        )
    return rows


_HEADERS = [
    "",
    "GPU",
    "configuration",
    "GPUs",
    "hours",
    "tuned–cons. h",
    "days",
    "CNY/run",
    "CNY/year",
    "MFU",
    "scaling",
    "status",
]
_NUMERIC = (3, 4, 5, 6, 7, 8, 9, 10)


def _summary_lines(rec: Recommendation) -> list[str]:
    job = rec.job
    flops = sizing.training_flops(job)
    lines = [
        f"Job {job.name}: {job.model_kind}, {job.params:.3g} parameters, "
        f"{flops:.3g} training FLOPs, {job.precision}, region {job.region}"
    ]
    limits = []
    if job.deadline_days is not None:
        limits.append(f"deadline {job.deadline_days:g} days")
    if job.budget_cny_per_run is not None:
        limits.append(f"budget ¥{job.budget_cny_per_run:,.0f} per run")
    if job.budget_cny_per_year is not None:
        limits.append(f"budget ¥{job.budget_cny_per_year:,.0f} a year")
    limits.append(f"{runs_text(job)} a year")
    lines.append("Constraints: " + ", ".join(limits) + f"; objective: {rec.objective}")
    c = rec.chosen
    if c is None:
        lines.append(f"No feasible option among {rec.options_evaluated:,} evaluated. What to relax:")
        lines += [f"  - {r}" for r in rec.relax]
        return lines
    lines.append(
        f"CHOSEN: {c.nodes} × {c.instance_type} = {c.gpus} × {c.gpu_label}; {hours_text(c)} per run "
        f"({(c.estimated_hours or 0) / 24:,.1f} days); "
        f"{_money(c.cost_cny_per_run)} per run "
        f"({_money(c.cost_cny_per_run_tuned)}–{_money(c.cost_cny_per_run_conservative)}), "
        f"{_money(c.cost_cny_per_year)} a year (pay-as-you-go)"
    )
    lines.append(
        f"Why: MFU {c.mfu:.3f} ({c.mfu_confidence}), scaling efficiency {c.scaling_efficiency:.2f}; "
        f"{rec.feasible_count:,} of {rec.options_evaluated:,} options feasible"
    )
    if rec.tier is not None:
        t = rec.tier
        basis = "unknown" if t.basis_cny_per_year is None else f"¥{t.basis_cny_per_year:,.0f}"
        lines.append(
            f"Blueprint: {t.blueprint} (tier '{t.name}', from {t.basis} "
            f"{basis}; spot {'on' if t.spot else 'off'}): {t.note}"
        )
        if rec.tier_reasons:
            lines.append("Why this blueprint:")
            lines += [f"  - {r}" for r in rec.tier_reasons]
    if rec.storage is not None:
        s = rec.storage
        price = (
            ""
            if s.price_per_month is None
            else f", {s.price_per_month:,.0f} {s.price_currency}/month (not in the CNY totals)"
        )
        lines.append(f"Storage: {s.kind} {s.profile_tier}, {s.capacity_gib:,} GiB{price}")
    if rec.yearly is not None:
        lines += yearly_lines(rec.yearly)
    return lines


def render_table(rec: Recommendation) -> str:
    """Terminal text: summary, the considered options (CHOSEN marked *), why each was not chosen, findings."""
    lines = [plain(line) for line in _summary_lines(rec)]
    lines += by_team_text(rec.yearly)
    # Cells are made plain before the table is laid out: plain() turns line breaks into spaces, so the table's
    # own lines must not pass through it.
    cells = [[plain(cell) for cell in row] for row in _rows(rec)]
    lines += [
        "",
        "Considered (best option of each GPU model):",
        *table(_HEADERS, cells, right=_NUMERIC).split("\n"),
    ]
    if rec.lingjun:
        lines += ["", LINGJUN_HEADING] + [plain(f"  - {line}") for line in rec.lingjun]
    lines += ["", "Why not chosen:"]
    for item in rec.considered:
        lines.append(
            plain(f"  {item.option.gpu_label} — {item.option.nodes} × {item.option.instance_type}: {item.why}")
        )
    if rec.findings:
        lines += ["", "Findings:"] + [plain(f"  - {f}") for f in rec.findings]
    return "\n".join(lines)


def render_markdown(rec: Recommendation) -> str:
    """Markdown for a pull request or a doc: summary, considered table with a why column, findings."""
    lines = ["## aitrain recommendation", ""]
    lines += [
        md_text(line) if not line.startswith("  - ") else "- " + md_text(line[4:]) for line in _summary_lines(rec)
    ]
    lines = [lines[0], lines[1]] + [line if line.startswith("- ") else line + "  " for line in lines[2:]]
    # A line right after a list item would continue it: a blank line ends each list.
    lines = [
        x
        for i, line in enumerate(lines)
        for x in ([line] if i == 0 or lines[i - 1].startswith("- ") <= line.startswith("- ") else ["", line])
    ]
    lines += by_team_markdown(rec.yearly)
    lines += [
        "",
        "| | GPU | configuration | GPUs | hours | tuned–cons. h | days | CNY/run | CNY/year | MFU | scaling | why |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for row, item in zip(_rows(rec), rec.considered, strict=True):
        cells = ["**CHOSEN**" if item.chosen else ""] + row[1:11] + [item.why]
        # The CHOSEN marker is our own Markdown; every other cell is escaped.
        lines.append("| " + " | ".join(c if i == 0 else md_cell(c) for i, c in enumerate(cells)) + " |")
    if rec.findings:
        lines += ["", "### Findings", ""] + [f"- {md_text(f)}" for f in rec.findings]
    return "\n".join(lines)


def render_estimate_text(
    job: Any,
    option: Option,
    storage: StorageChoice | None,
    findings: list[str],
    markdown: bool = False,
    yearly: YearlyCost | None = None,
) -> str:
    """Text (or Markdown) for ``aitrain estimate``."""
    flops = sizing.training_flops(job)
    rows = [
        ("configuration", f"{option.nodes} × {option.instance_type} = {option.gpus} × {option.gpu_label}"),
        ("training FLOPs", f"{flops:.3g}"),
        (
            "peak per GPU",
            "unknown" if option.peak_tflops is None else f"{option.peak_tflops:g} TFLOPS ({job.precision})",
        ),
        (
            "MFU (one node)",
            "unknown"
            if option.mfu is None
            else (
                f"{option.mfu:.3f} ({option.mfu_confidence}), range "
                f"{option.mfu_tuned or 0:.3f}–{option.mfu_conservative or 0:.3f} (tuned–conservative)"
            ),
        ),
        ("scaling efficiency", f"{option.scaling_efficiency:.3f}"),
        (
            "estimated time",
            "unknown"
            if option.estimated_hours is None
            else f"{hours_text(option)}; {option.estimated_hours / 24:,.2f} days",
        ),
        ("GPU-hours", _num(option.gpu_hours, ",.0f")),
        (
            "cost per run",
            _money(option.cost_cny_per_run)
            + (
                ""
                if option.cost_cny_per_run is None
                else (
                    f", range {_money(option.cost_cny_per_run_tuned)}–{_money(option.cost_cny_per_run_conservative)} "
                    "(pay-as-you-go list price)"
                )
            ),
        ),
        ("cost per year", _money(option.cost_cny_per_year) + f" ({runs_text(job)})"),
        (
            "model state per GPU",
            f"{option.memory_gib_per_gpu:,.2f} GiB of "
            f"{option.gpu_memory_gib if option.gpu_memory_gib is not None else 'unknown'} GiB",
        ),
        ("feasible", "yes" if option.feasible else "no: " + "; ".join(r.message for r in option.reasons)),
    ]
    if storage is not None:
        rows.append(
            (
                "storage",
                f"{storage.kind} {storage.profile_tier}, {storage.capacity_gib:,} GiB, "
                f"{_num(storage.throughput_mb_s, ',.0f')} MB/s",
            )
        )
    if yearly is not None:
        rows += yearly_rows(yearly)
    if markdown:
        lines = ["## aitrain estimate", "", "| | |", "|---|---|"] + [f"| {k} | {md_cell(v)} |" for k, v in rows]
        lines += by_team_markdown(yearly)
        if findings:
            lines += ["", "### Findings", ""] + [f"- {md_text(f)}" for f in findings]
        return "\n".join(lines)
    width = max(len(k) for k, _ in rows)
    lines = [plain(f"{k.ljust(width)}  {v}") for k, v in rows]
    lines += by_team_text(yearly)
    if findings:
        lines += ["", "Findings:"] + [plain(f"  - {f}") for f in findings]
    return "\n".join(lines)
