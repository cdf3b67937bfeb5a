"""Account- and VPC-wide controls: audit trail, flow logs, monitoring, customer-managed keys."""

from __future__ import annotations

from blueprints.guardrails.model import Rule

RULES: tuple[Rule, ...] = ()
