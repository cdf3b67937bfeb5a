"""The policy pack's configuration, written from a Plan (pure): skipped rules and the summary facts rules read.

A policy pack sees the resources of a stack but not its aitrain profile. ``aitrain policy config`` plans the same
profile offline and writes this file, so ``pulumi preview --policy-pack policy --policy-pack-config FILE`` skips the
rules the profile skips (with the profile's reason) and judges the facts the plan's summary carries.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from blueprints.review.guardrails import RULES, Rule
from blueprints.review.plan import Plan

# The plan-summary keys the rules read (guardrails/*.py ``plan.summary``); tests keep this list complete.
SUMMARY_FACTS = ("admin_cidr", "blueprint", "bucket", "scratch_gib_per_node", "memory_gib_per_node")

# Where, inside each policy's config object, the facts and the skip reason go (keys of the pack's config schema).
FACTS_KEY = "facts"
REASON_KEY = "skipReason"


def policy_name(rule: Rule) -> str:
    """The pack's policy name of a rule: the id in lower case plus a slug of its title (``ait001-no-public-ip…``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", rule.title.lower()).strip("-")
    return f"{rule.id.lower()}-{slug}"[:100].rstrip("-")


def facts(plan: Plan) -> dict[str, Any]:
    """The summary facts of ``plan`` the rules read, those present only (JSON values)."""
    return {key: plan.summary[key] for key in SUMMARY_FACTS if plan.summary.get(key) is not None}


def pack_config(plan: Plan) -> dict[str, Any]:
    """The ``--policy-pack-config`` object for ``plan``: per policy, its facts, and for a skipped rule
    ``enforcementLevel: disabled`` with the profile's reason."""
    reasons = {s["rule"]: s["reason"] for s in plan.skipped}
    known = facts(plan)
    config: dict[str, Any] = {}
    for rule in RULES:
        entry: dict[str, Any] = {FACTS_KEY: known}
        if rule.id in reasons:
            entry = {"enforcementLevel": "disabled", REASON_KEY: reasons[rule.id], **entry}
        config[policy_name(rule)] = entry
    return config


def pack_config_json(plan: Plan) -> str:
    """``pack_config`` as deterministic JSON text."""
    return json.dumps(pack_config(plan), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def facts_from_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The facts in one policy's config (as the pack receives it); empty without a config file."""
    value = (config or {}).get(FACTS_KEY)
    return {k: v for k, v in value.items() if k in SUMMARY_FACTS} if isinstance(value, Mapping) else {}
