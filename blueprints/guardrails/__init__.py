"""Guardrails: security and data-safety rules checked over a Plan (pure; no Pulumi objects).

Each rule is a function of the plan alone, so the same functions run in the offline plan, in the Pulumi policy pack
(``policy/``) and over the recorded resources of a user's own stack (``blueprints.testing``).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from blueprints.guardrails.bucket import bucket_safety
from blueprints.guardrails.compute import disk_encryption, imdsv2, scratch_ratio
from blueprints.guardrails.identity import bucket_policy_scope, role_trust
from blueprints.guardrails.inputs import NODE_TYPES, PUBLIC_CIDRS, STATEFUL_TYPES
from blueprints.guardrails.model import LEVELS, Finding, Rule, Skip, at_or_above
from blueprints.guardrails.network import LOGIN_TAG, node_public_ip, public_ingress, ssh_only_via_login
from blueprints.guardrails.storage import nas_access_vpc_only, storage_encrypted, storage_protected, unencrypted_storage
from blueprints.plan import Plan

__all__ = ["LEVELS", "LOGIN_TAG", "NODE_TYPES", "PUBLIC_CIDRS", "RULES", "STATEFUL_TYPES", "Finding", "Rule", "Skip", "at_or_above", "check", "rule_ids", "with_findings"]

RULES: tuple[Rule, ...] = (
    Rule("AIT001", "error", "training nodes have no public IP (EIPs only on the login node and the NAT)", node_public_ip),
    Rule("AIT002", "error", "no security-group ingress from the internet", public_ingress),
    Rule("AIT003", "error", "node system and data disks are encrypted", disk_encryption),
    Rule("AIT004", "error", "stateful storage is protected and retained", storage_protected),
    Rule("AIT005", "error", "NAS standard and extreme file systems are encrypted", storage_encrypted),
    Rule("AIT006", "error", "NAS access is limited to the VPC", nas_access_vpc_only),
    Rule("AIT007", "error", "node roles trust only the ECS service", role_trust),
    Rule("AIT008", "warning", "instance metadata requires tokens", imdsv2),
    Rule("AIT009", "warning", "all stored data is encrypted at rest", unencrypted_storage),
    Rule("AIT010", "error", "OSS buckets are private, versioned, encrypted and HTTPS-only", bucket_safety),
    Rule("AIT011", "error", "node OSS policies name only the plan's bucket", bucket_policy_scope),
    Rule("AIT012", "error", "SSH from an address range reaches only the login node", ssh_only_via_login),
    Rule("AIT013", "warning", "local scratch is at least 3 × memory per node", scratch_ratio),
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
    return [Finding(rule.id, rule.level, name, message) for rule in RULES if rule.id not in skipped for name, message in rule.check(plan)]


def with_findings(plan: Plan, skip: Iterable[Skip] = ()) -> Plan:
    """``plan`` with its ``findings`` filled in from ``check`` and its ``skipped`` rules listed with their reasons."""
    skips = tuple(skip)
    titles = {rule.id: rule.title for rule in RULES}
    return dataclasses.replace(
        plan,
        findings=tuple(dataclasses.asdict(f) for f in check(plan, skips)),
        skipped=tuple({"rule": s.rule, "title": titles[s.rule], "reason": s.reason} for s in skips),
    )
