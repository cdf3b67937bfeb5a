"""The Plan: plain, versioned data describing exactly what a blueprint would create (no Pulumi objects)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from blueprints.core.tokens import short_type

# v2 (issue 8): each resource names its provider; the plan carries its monthly cost in CNY (``costs``).
PLAN_SCHEMA = "aitrain.plan/v2"


@dataclass(frozen=True)
class PlannedResource:
    """One resource the program registers: engine type token, logical name, parent and inputs (engine names)."""

    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    protect: bool = False
    retain_on_delete: bool = False
    delete_before_replace: bool = False
    ignore_changes: tuple[str, ...] = ()
    # Property paths whose change replaces this resource (Pulumi's ``replace_on_changes``: the node `aitrain
    # replace-node` names watches ``tags["aitrain-generation"]``); empty for every other resource.
    replace_on_changes: tuple[str, ...] = ()
    # Logical names of the resources this one waits for (``opts.depends_on``); the engine's ordering edges.
    depends_on: tuple[str, ...] = ()
    # Components only: the output keys passed to ``register_outputs`` (sorted); empty for custom resources.
    registered_outputs: tuple[str, ...] = ()
    # Custom resources: the logical name of the provider that manages it (a new provider replaces the resource).
    provider: str | None = None

    @property
    def short_type(self) -> str:
        """``alicloud:vpc/network:Network`` → ``vpc.Network``; components keep their token."""
        return short_type(self.type)


@dataclass(frozen=True)
class Plan:
    """Everything one offline run of the program would create, plus a summary a reviewer reads first."""

    blueprint: str
    region: str
    profile_name: str
    summary: dict[str, Any]
    notes: tuple[str, ...]
    resources: tuple[PlannedResource, ...]
    outputs: dict[str, Any] = field(default_factory=dict)
    findings: tuple[dict[str, str], ...] = ()
    # What the resources cost, in CNY (see ``blueprints.review.costing``): ``currency``, ``lines`` (one per priced item
    # of a resource, unknown prices as null), ``totals`` (hourly, monthly, per run, ``complete`` and the ``unknown``
    # items) and ``scenarios`` (a pool at min, at max and with its off-hours schedule). Empty when not priced.
    costs: dict[str, Any] = field(default_factory=dict)
    # Guardrails the profile skips on purpose: ``rule``, ``title`` and the profile's ``reason`` (never silent).
    skipped: tuple[dict[str, str], ...] = ()
    schema: str = PLAN_SCHEMA

    def count_by_type(self) -> dict[str, int]:
        """How many resources of each short type (custom resources only), sorted by type."""
        counts: dict[str, int] = {}
        for r in self.resources:
            if r.custom:
                counts[r.short_type] = counts.get(r.short_type, 0) + 1
        return dict(sorted(counts.items()))

    def find(self, short_type: str) -> list[PlannedResource]:
        """Resources of one short type (``ecs.EcsInstanceSet``) in plan order."""
        return [r for r in self.resources if r.short_type == short_type]

    def children(self, parent: str | None) -> list[PlannedResource]:
        """Direct children of a resource name (``None``: top level)."""
        return [r for r in self.resources if r.parent == parent]

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form (schema ``aitrain.plan/v2``)."""
        resources = []
        for r in self.resources:
            item = asdict(r)
            item["ignore_changes"] = list(r.ignore_changes)
            item["replace_on_changes"] = list(r.replace_on_changes)
            item["depends_on"] = list(r.depends_on)
            item["registered_outputs"] = list(r.registered_outputs)
            resources.append(item)
        return {
            "schema": self.schema,
            "blueprint": self.blueprint,
            "region": self.region,
            "profile_name": self.profile_name,
            "summary": self.summary,
            "notes": list(self.notes),
            "resource_counts": self.count_by_type(),
            "resources": resources,
            "outputs": self.outputs,
            "findings": list(self.findings),
            "skipped": list(self.skipped),
            "costs": self.costs,
        }

    def to_json(self) -> str:
        """Deterministic JSON text (sorted keys inside inputs, stable resource order)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, ensure_ascii=False, default=str) + "\n"
