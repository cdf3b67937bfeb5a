"""What a guardrail is: a rule (id, level, why, how to fix), the finding it reports, and a reasoned skip."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from blueprints.review.plan import Plan

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

    ``references`` are the numbers of the rules in ``docs/sources/security-and-data-safety.md`` §7 it enforces.
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
