"""The guardrail part of every plan rendering: findings by level, the rules that hold, and the rules skipped on purpose."""

from __future__ import annotations

from typing import Any

from blueprints.guardrails import LEVELS, RULES
from blueprints.plan import Plan


def ordered_findings(plan: Plan) -> list[dict[str, Any]]:
    """Findings most severe first (rule order within a level), so a summarised comment drops info before errors."""
    return sorted(plan.findings, key=lambda f: LEVELS.index(f["level"]) if f.get("level") in LEVELS else len(LEVELS))


def level_counts(plan: Plan) -> str:
    """"1 error, 0 warnings, 4 info": how many findings at each level (every level named, so 0 errors reads as such)."""
    counts = {level: sum(1 for f in plan.findings if f.get("level") == level) for level in LEVELS}
    words = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("info", "info")}
    return ", ".join(f"{n} {words[level][n != 1]}" for level, n in counts.items())


def guardrails_holding(plan: Plan) -> list[tuple[str, str]]:
    """(rule id, claim) of every guardrail that ran and found nothing: the only claims a summary may make.

    A skipped rule did not run, so it holds nothing; it is listed apart with its reason (``skipped_rules``).
    """
    fired = {f["rule"] for f in plan.findings}
    skipped = {s["rule"] for s in plan.skipped}
    return [(rule.id, rule.title) for rule in RULES if rule.id not in fired and rule.id not in skipped]


def skipped_rules(plan: Plan) -> list[tuple[str, str, str]]:
    """(rule id, title, reason) of every rule the profile skips, in rule order."""
    order = {rule.id: index for index, rule in enumerate(RULES)}
    return [(s["rule"], s.get("title", ""), s.get("reason", "")) for s in sorted(plan.skipped, key=lambda s: order.get(s["rule"], len(order)))]


def rules_markdown() -> str:
    """Every guardrail as a Markdown table: id, level, what holds, why (with its source), how to fix a finding."""
    from blueprints.text import md_cell

    lines = [
        "| Rule | Level | Holds when | Why (source) | Fix | §7 |",
        "|---|---|---|---|---|---|",
    ]
    for rule in RULES:
        refs = ", ".join(str(n) for n in rule.references)
        lines.append(f"| {rule.id} | {rule.level} | {md_cell(rule.title)} | {md_cell(rule.rationale)} | {md_cell(rule.fix)} | {refs} |")
    return "\n".join(lines) + "\n"


def rules_text() -> str:
    """Every guardrail for a terminal: one block per rule."""
    blocks = []
    for rule in RULES:
        refs = f" (§7 {', '.join(str(n) for n in rule.references)})" if rule.references else ""
        blocks.append(f"{rule.id} [{rule.level}] {rule.title}{refs}\n  why: {rule.rationale}\n  fix: {rule.fix}")
    return "\n".join(blocks) + "\n"


def rules_json() -> list[dict[str, Any]]:
    """Every guardrail as plain data."""
    return [{"id": r.id, "level": r.level, "title": r.title, "rationale": r.rationale, "fix": r.fix, "references": list(r.references)} for r in RULES]
