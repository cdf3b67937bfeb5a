"""Guardrails: security and data-safety rules checked over a Plan (pure; no Pulumi objects).

Each rule is a function of the plan alone, so the same functions run in the offline plan, in the Pulumi policy pack
(``policy/``) and over the recorded resources of a user's own stack (``blueprints.testing``).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from blueprints.review.guardrails import (
    access,
    account,
    bucket,
    capacity,
    compute,
    identity,
    known,
    kubernetes,
    metrics,
    network,
    storage,
)
from blueprints.review.guardrails.inputs import PUBLIC_CIDRS
from blueprints.review.guardrails.model import LEVELS, Finding, Rule, Skip, at_or_above
from blueprints.review.guardrails.network import LOGIN_TAG
from blueprints.review.plan import Plan

__all__ = [
    "LEVELS",
    "LOGIN_TAG",
    "PUBLIC_CIDRS",
    "RULES",
    "Finding",
    "Rule",
    "Skip",
    "at_or_above",
    "check",
    "rule_ids",
    "with_findings",
]

# Every module contributes its own rules; the registry orders them by id, so adding a rule touches one module.
RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            *network.RULES,
            *access.RULES,
            *compute.RULES,
            *capacity.RULES,
            *storage.RULES,
            *identity.RULES,
            *bucket.RULES,
            *account.RULES,
            *kubernetes.RULES,
            *known.RULES,
            *metrics.RULES,
        ),
        key=lambda rule: rule.id,
    )
)


def rule_ids() -> tuple[str, ...]:
    """Every rule id, in rule order."""
    return tuple(rule.id for rule in RULES)


def _skipped_ids(skip: Iterable[str | Skip]) -> set[str]:
    skipped = {s.rule if isinstance(s, Skip) else s for s in skip}
    unknown = skipped - set(rule_ids())
    if unknown:
        raise ValueError(f"unknown guardrail ids {sorted(unknown)}; known: {list(rule_ids())}")
    return skipped


def check(plan: Plan, skip: Iterable[str | Skip] = ()) -> list[Finding]:
    """Every finding of every rule not skipped (by id or by ``Skip``), in rule order."""
    skipped = _skipped_ids(skip)
    return [
        Finding(rule.id, rule.level, name, message)
        for rule in RULES
        if rule.id not in skipped
        for name, message in rule.check(plan)
    ]


def with_findings(plan: Plan, skip: Iterable[Skip] = ()) -> Plan:
    """``plan`` with its ``findings`` filled in from ``check`` and its ``skipped`` rules listed with their reasons."""
    skips = tuple(skip)
    titles = {rule.id: rule.title for rule in RULES}
    return dataclasses.replace(
        plan,
        findings=tuple(dataclasses.asdict(f) for f in check(plan, skips)),
        skipped=tuple({"rule": s.rule, "title": titles[s.rule], "reason": s.reason} for s in skips),
    )
