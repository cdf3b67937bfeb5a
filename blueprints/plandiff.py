"""Diff two plans (their JSON form): what a change adds, removes and modifies, and which changes put data at risk."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from blueprints.errors import Problem, UserInputError, read_text_file
from blueprints.guardrails import STATEFUL_TYPES
from blueprints.plan import PLAN_SCHEMA, PlannedResource

DIFF_SCHEMA = "aitrain.plandiff/v1"
SAFETY_OPTIONS = ("protect", "retain_on_delete", "delete_before_replace", "ignore_changes")


@dataclass(frozen=True)
class ResourceChange:
    """One resource that differs between the plans: ``action`` is added, removed or changed."""

    action: str
    type: str
    name: str
    inputs: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key → (old, new); missing side is None
    options: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    risks: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanDiff:
    """The differences between two plans, summary first."""

    summary: dict[str, tuple[Any, Any]]
    changes: tuple[ResourceChange, ...]

    @property
    def risks(self) -> list[str]:
        """Every data-safety risk, prefixed by its resource."""
        return [f"{c.name}: {risk}" for c in self.changes for risk in c.risks]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema ``aitrain.plandiff/v1``)."""
        return {
            "schema": DIFF_SCHEMA,
            "summary": {k: {"old": old, "new": new} for k, (old, new) in self.summary.items()},
            "changes": [
                {
                    **{k: v for k, v in asdict(c).items() if k not in ("inputs", "options", "risks")},
                    "inputs": {k: {"old": old, "new": new} for k, (old, new) in c.inputs.items()},
                    "options": {k: {"old": old, "new": new} for k, (old, new) in c.options.items()},
                    "risks": list(c.risks),
                }
                for c in self.changes
            ],
            "risks": self.risks,
        }


def load_plan_json(path: Path) -> dict[str, Any]:
    """Read a plan written by ``aitrain plan --format json``; reject anything else with a clear error."""
    text = read_text_file(path, "plan file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError("invalid plan file", [Problem(str(path), f"line {exc.lineno}", f"is not JSON ({exc.msg}); write one with `aitrain plan --format json --out FILE`")]) from None
    if not isinstance(data, dict) or data.get("schema") != PLAN_SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise UserInputError("invalid plan file", [Problem(f"{path}: schema", found, f"expected '{PLAN_SCHEMA}' (from `aitrain plan --format json`)")])
    return data


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    """Compare two plan dicts resource by resource (keyed by type and logical name)."""
    summary = {k: (old["summary"].get(k), new["summary"].get(k)) for k in _ordered_keys(old["summary"], new["summary"]) if old["summary"].get(k) != new["summary"].get(k)}
    before = {(r["type"], r["name"]): r for r in old["resources"]}
    after = {(r["type"], r["name"]): r for r in new["resources"]}
    changes = []
    for key in _ordered_keys(before, after):
        a, b = before.get(key), after.get(key)
        if a is None:
            changes.append(ResourceChange("added", b["type"], b["name"]))
        elif b is None:
            changes.append(ResourceChange("removed", a["type"], a["name"], risks=_removal_risks(a)))
        else:
            inputs = _changed(a["inputs"], b["inputs"])
            options = {k: (a.get(k), b.get(k)) for k in SAFETY_OPTIONS if a.get(k) != b.get(k)}
            if inputs or options:
                changes.append(ResourceChange("changed", a["type"], a["name"], inputs, options, _change_risks(a, b, inputs)))
    return PlanDiff(summary, tuple(changes))


def render_diff(diff: PlanDiff, markdown: bool = False) -> str:
    """Text (or Markdown for a pull request) listing the summary changes, each resource change and the risks."""
    code = (lambda v: f"`{v}`") if markdown else (lambda v: str(v))
    lines = ["## aitrain plan diff" if markdown else "aitrain plan diff", ""]
    if not diff.summary and not diff.changes:
        return "\n".join(lines + ["No changes."]) + "\n"
    for key, (old, new) in diff.summary.items():
        lines.append(f"- {key}: {code(old)} → {code(new)}")
    if diff.summary:
        lines.append("")
    counts = {action: sum(1 for c in diff.changes if c.action == action) for action in ("added", "changed", "removed")}
    lines.append(", ".join(f"{n} {action}" for action, n in counts.items()))
    for c in diff.changes:
        sign = {"added": "+", "removed": "-", "changed": "~"}[c.action]
        lines.append(f"{sign} {code(c.name)} ({c.type})")
        for k, (old, new) in {**c.inputs, **c.options}.items():
            if k == "userData":
                # Base64 cloud-init says nothing in a diff; the Markdown plan shows it decoded.
                lines.append(f"    {k}: cloud-init changed (see `aitrain plan --format markdown`)")
            else:
                lines.append(f"    {k}: {code(_short(old))} → {code(_short(new))}")
    if diff.risks:
        lines += ["", "**Data-safety risks:**" if markdown else "Data-safety risks:"]
        lines += [f"- {risk}" for risk in diff.risks]
    return "\n".join(lines) + "\n"


def _removal_risks(resource: dict[str, Any]) -> tuple[str, ...]:
    if resource.get("protect"):
        return ("removed while protected: `pulumi up` will refuse until it is unprotected on purpose",)
    if resource.get("retain_on_delete"):
        return ()
    if _is_stateful(resource):
        return ("removed stateful resource without retain_on_delete: its data would be deleted",)
    return ()


def _change_risks(old: dict[str, Any], new: dict[str, Any], inputs: dict[str, tuple[Any, Any]]) -> tuple[str, ...]:
    risks = []
    if _is_stateful(old) and inputs:
        risks.append(
            f"inputs of stored data change ({', '.join(sorted(inputs))}): Pulumi refuses any of them that forces a replacement "
            "(protect); move the data or create new storage on purpose"
        )
    for option in ("protect", "retain_on_delete"):
        if old.get(option) and not new.get(option):
            risks.append(f"{option} is switched off")
    if new.get("delete_before_replace") and not old.get("delete_before_replace") and _is_stateful(new):
        risks.append("delete_before_replace is switched on for stored data")
    return tuple(risks)


def _is_stateful(resource: dict[str, Any]) -> bool:
    short = PlannedResource(resource["type"], resource["name"], None, True, {}).short_type
    return short in STATEFUL_TYPES


def _changed(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (old.get(k), new.get(k)) for k in _ordered_keys(old, new) if old.get(k) != new.get(k)}


def _ordered_keys(a: dict, b: dict) -> list:
    """Keys of ``a`` in order, then the keys only ``b`` has."""
    return list(a) + [k for k in b if k not in a]


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
