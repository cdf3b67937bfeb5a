"""What a guardrail is: a rule (id, level, why, how to fix), the finding it reports, and a reasoned skip."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from blueprints.review.plan import Plan

# Where ``Rule.references`` point, inside the repository: the table of §7 of the security and data-safety reference
# the rules were built from, whose "#" column numbers its rules (the file, and the GitHub anchor of the heading).
REFERENCE_DOC = "docs/sources/security-and-data-safety.md"
REFERENCE_SECTION = "7-rules-the-generator-must-satisfy-by-default-prioritized"
REFERENCE_TABLE = f"{REFERENCE_DOC}#{REFERENCE_SECTION}"

# Most severe first. ``aitrain plan --fail-level L`` fails on a finding at L or above.
LEVELS = ("error", "warning", "info")


def at_or_above(level: str, threshold: str) -> bool:
    """Whether ``level`` is as severe as ``threshold`` or more (``error`` ≥ ``warning`` ≥ ``info``)."""
    return LEVELS.index(level) <= LEVELS.index(threshold)


@dataclass(frozen=True)
class Finding:
    """One rule violated by one resource."""

    rule: str
    level: str  # one of LEVELS
    resource: str
    message: str


@dataclass(frozen=True)
class Rule:
    """A named check with an id, a level, the reason it exists (with its source) and how to fix a finding.

    ``references`` are the rules it enforces: row numbers (the "#" column) of the table at ``REFERENCE_TABLE``
    (``docs/sources/security-and-data-safety.md`` §7); tests/test_guardrail_references.py checks each row exists.
    """

    id: str
    level: str
    title: str
    check: Callable[[Plan], Iterable[tuple[str, str]]]  # yields (resource name, message)
    rationale: str = ""
    fix: str = ""
    references: tuple[int, ...] = ()


@dataclass(frozen=True)
class Skip:
    """A rule a profile turns off on purpose, and why (shown in every plan format)."""

    rule: str
    reason: str
