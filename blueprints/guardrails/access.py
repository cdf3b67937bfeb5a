"""How nodes are reached and what they reach: key-pair logins, egress, addresses, tags."""

from __future__ import annotations

from blueprints.guardrails.model import Rule

RULES: tuple[Rule, ...] = ()
