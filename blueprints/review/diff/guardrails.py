"""What a change does to the guardrails: findings that appear or go away, and rules newly skipped or restored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LEVEL_ORDER = ("error", "warning", "info")


@dataclass(frozen=True)
class GuardrailDiff:
    """Findings and skips of the new plan against the old one (findings matched by rule, resource and message)."""

    new_findings: tuple[dict[str, Any], ...]
    resolved_findings: tuple[dict[str, Any], ...]
    kept_findings: int
    new_skips: tuple[dict[str, Any], ...]
    restored_skips: tuple[dict[str, Any], ...]
    # Every rule the new plan skips (new ones included), so a reviewer always sees what is off and why.
    skipped: tuple[dict[str, Any], ...]

    @property
    def changed(self) -> bool:
        """Whether anything about the guardrails differs."""
        return bool(self.new_findings or self.resolved_findings or self.new_skips or self.restored_skips)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (part of ``aitrain.plandiff/v2``)."""
        return {
            "new_findings": list(self.new_findings),
            "resolved_findings": list(self.resolved_findings),
            "kept_findings": self.kept_findings,
            "new_skips": list(self.new_skips),
            "restored_skips": list(self.restored_skips),
            "skipped": list(self.skipped),
        }


def guardrail_diff(old: dict[str, Any], new: dict[str, Any]) -> GuardrailDiff:
    """Compare the ``findings`` and ``skipped`` of two plan dicts (absent keys read as none)."""
    before, after = _findings(old), _findings(new)
    old_skips = {s["rule"]: s for s in old.get("skipped") or ()}
    new_skips = {s["rule"]: s for s in new.get("skipped") or ()}
    return GuardrailDiff(
        new_findings=tuple(sorted((f for key, f in after.items() if key not in before), key=_severity)),
        resolved_findings=tuple(sorted((f for key, f in before.items() if key not in after), key=_severity)),
        kept_findings=sum(1 for key in after if key in before),
        new_skips=tuple(s for rule, s in new_skips.items() if rule not in old_skips),
        restored_skips=tuple(s for rule, s in old_skips.items() if rule not in new_skips),
        skipped=tuple(new_skips.values()),
    )


def _findings(plan: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(f["rule"], f["resource"], f["message"]): f for f in plan.get("findings") or ()}


def _severity(finding: dict[str, Any]) -> tuple[int, str, str]:
    level = finding.get("level")
    return (
        LEVEL_ORDER.index(level) if level in LEVEL_ORDER else len(LEVEL_ORDER),
        finding["rule"],
        finding["resource"],
    )
