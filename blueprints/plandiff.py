"""Diff two plans (their JSON form): what a change adds, removes and modifies, and which changes put data at risk."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from blueprints.errors import MISSING, Problem, UserInputError, read_text_file
from blueprints.guardrails import STATEFUL_TYPES
from blueprints.plan import PLAN_SCHEMA, PlannedResource
from blueprints.text import md_code, plain

_K = TypeVar("_K")

DIFF_SCHEMA = "aitrain.plandiff/v1"
SAFETY_OPTIONS = ("protect", "retain_on_delete", "delete_before_replace", "ignore_changes")

# Inputs the cloud cannot change in place: a new value makes the provider replace the resource. Listed for the
# stateful types and for what stateful storage is bound to. Sources: the "Update allowed"/"Editable" column of
# ROS ALIYUN::NAS::FileSystem (https://www.alibabacloud.com/help/en/ros/developer-reference/aliyun-nas-filesystem),
# ALIYUN::ECS::VSwitch (https://www.alibabacloud.com/help/en/ros/developer-reference/aliyun-ecs-vswitch) and the
# ForceNew marks of Terraform alicloud_nas_file_system (https://help.aliyun.com/zh/terraform/alicloud-nas-file-system-1).
# NAS `capacity`, `description` and `tags` change in place.
REPLACING_INPUTS: dict[str, tuple[str, ...]] = {
    "nas.FileSystem": ("fileSystemType", "protocolType", "storageType", "zoneId", "encryptType", "kmsKeyId", "vpcId", "vswitchId", "snapshotId"),
    "vpc.Switch": ("vpcId", "zoneId", "cidrBlock"),
}
# The classes `aitrain diff --fail-on` can fail on, narrowest first.
FAIL_ON = ("data-risk", "replace", "any")

# Inputs that never replace anything; for types not in REPLACING_INPUTS any other changed input *may* replace.
IN_PLACE_INPUTS = ("tags", "description")

# What a plan file must look like for a diff: (key, JSON type name, Python types, required).
_RESOURCE_FIELDS = (
    ("type", "a string", (str,), True),
    ("name", "a string", (str,), True),
    ("inputs", "an object", (dict,), True),
    ("protect", "true or false", (bool,), False),
    ("retain_on_delete", "true or false", (bool,), False),
    ("delete_before_replace", "true or false", (bool,), False),
    ("ignore_changes", "a list", (list,), False),
    ("depends_on", "a list", (list,), False),
)


@dataclass(frozen=True)
class ResourceChange:
    """One resource that differs between the plans: ``action`` is added, removed or changed."""

    action: str
    type: str
    name: str
    inputs: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key → (old, new); missing side is None
    options: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    risks: tuple[str, ...] = ()
    replacing: tuple[str, ...] = ()  # changed inputs that force (or, for types not in REPLACING_INPUTS, may force) a replacement


@dataclass(frozen=True)
class PlanDiff:
    """The differences between two plans, summary first."""

    summary: dict[str, tuple[Any, Any]]
    changes: tuple[ResourceChange, ...]

    def fails_on(self, kind: str) -> bool:
        """Whether the diff holds a change of class ``kind`` (one of FAIL_ON): what `aitrain diff --fail-on` exits 1 on."""
        if kind == "data-risk":
            return bool(self.risks)
        if kind == "replace":
            return any(c.replacing or c.action == "removed" for c in self.changes)
        if kind == "any":
            return bool(self.changes)
        raise ValueError(f"unknown fail-on class {kind!r}; one of {', '.join(FAIL_ON)}")

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
        found = data.get("schema", "(missing)") if isinstance(data, dict) else type(data).__name__
        raise UserInputError("invalid plan file", [Problem(f"{path}: schema", found, f"expected '{PLAN_SCHEMA}' (from `aitrain plan --format json`)")])
    problems = plan_shape_problems(data, str(path))
    if problems:
        raise UserInputError("invalid plan file", problems)
    return data


def empty_plan() -> dict[str, Any]:
    """The plan of a stack that does not exist (yet, or any more): diffing against it shows all-create or all-delete."""
    return {"schema": PLAN_SCHEMA, "summary": {}, "resources": [], "costs": {}}


def plan_shape_problems(data: dict[str, Any], where: str, limit: int = 10) -> list[Problem]:
    """What makes ``data`` unusable for a diff (at most ``limit``), each located by its path in the JSON."""
    problems: list[Problem] = []
    hint = "write the plan with `aitrain plan --format json --out FILE`"
    if not isinstance(data.get("summary", MISSING), dict):
        problems.append(Problem(f"{where}: summary", data.get("summary", MISSING), _must(data.get("summary", MISSING), "an object"), hint))
    resources = data.get("resources", MISSING)
    if not isinstance(resources, list):
        return problems + [Problem(f"{where}: resources", resources, _must(resources, "a list of resource objects"), hint)]
    seen: dict[tuple[Any, Any], int] = {}
    for index, item in enumerate(resources):
        at = f"{where}: resources[{index}]"
        if not isinstance(item, dict):
            problems.append(Problem(at, item, "must be an object with type, name and inputs", hint))
            continue
        for field_name, expected, types, required in _RESOURCE_FIELDS:
            value = item.get(field_name, MISSING)
            if value is MISSING and not required:
                continue
            if not isinstance(value, types):
                problems.append(Problem(f"{at}.{field_name}", value, _must(value, expected), hint))
        identity = (item.get("type"), item.get("name"))
        if isinstance(identity[0], str) and isinstance(identity[1], str):
            if identity in seen:
                problems.append(Problem(f"{at}.name", identity[1], f"duplicates resources[{seen[identity]}] (same type and name)"))
            seen.setdefault(identity, index)
    return problems[:limit]


def _must(value: Any, expected: str) -> str:
    return f"is missing; must be {expected}" if value is MISSING else f"must be {expected}"


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    """Compare two plan dicts resource by resource (keyed by type and logical name)."""
    summary = {k: (old["summary"].get(k), new["summary"].get(k)) for k in _ordered_keys(old["summary"], new["summary"]) if old["summary"].get(k) != new["summary"].get(k)}
    before = {(r["type"], r["name"]): r for r in old["resources"]}
    after = {(r["type"], r["name"]): r for r in new["resources"]}
    stateful = [r for r in old["resources"] if _is_stateful(r)]
    changes = []
    for key in _ordered_keys(before, after):
        a, b = before.get(key), after.get(key)
        if a is None:
            assert b is not None  # every key comes from one side or the other
            changes.append(ResourceChange("added", b["type"], b["name"]))
        elif b is None:
            risks = _removal_risks(a) + _bound_storage_risks(a["name"], "removes", stateful)
            changes.append(ResourceChange("removed", a["type"], a["name"], risks=risks))
        else:
            inputs = _changed(a["inputs"], b["inputs"])
            options = {k: (a.get(k), b.get(k)) for k in SAFETY_OPTIONS if a.get(k) != b.get(k)}
            if inputs or options:
                replacing = _replacing(a, inputs)
                risks = _change_risks(a, b, inputs, replacing)
                if replacing:
                    verb = f"{'replaces' if _short_type(a) in REPLACING_INPUTS else 'may replace'} ({', '.join(replacing)})"
                    risks += _bound_storage_risks(a["name"], verb, stateful)
                changes.append(ResourceChange("changed", a["type"], a["name"], inputs, options, risks, replacing))
    return PlanDiff(summary, tuple(changes))


def render_diff(diff: PlanDiff, markdown: bool = False) -> str:
    """Text (or Markdown for a pull request) listing the summary changes, each resource change and the risks."""
    # Values come from plan files anyone can write: escaped for Markdown, stripped of control codes for a terminal.
    code: Callable[[object], str] = md_code if markdown else plain
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
                mark = _mark(c, k)
                lines.append(f"    {k}: {code(_short(old))} → {code(_short(new))}{mark}")
    if diff.risks:
        lines += ["", "**Data-safety risks:**" if markdown else "Data-safety risks:"]
        lines += [f"- {risk}" for risk in diff.risks]
    return "\n".join(lines) + "\n"


def _mark(change: ResourceChange, key: str) -> str:
    """Replacement marks only where the plan knows (storage and REPLACING_INPUTS types), to keep compute diffs quiet."""
    known = {"type": change.type, "name": change.name}
    if _short_type(known) not in REPLACING_INPUTS or key not in change.inputs:
        return ""
    return "  [forces replacement]" if key in change.replacing else "  [in place]"


def _removal_risks(resource: dict[str, Any]) -> tuple[str, ...]:
    if resource.get("protect"):
        return ("removed while protected: `pulumi up` will refuse until it is unprotected on purpose",)
    if resource.get("retain_on_delete"):
        return ()
    if _is_stateful(resource):
        return ("removed stateful resource without retain_on_delete: its data would be deleted",)
    return ()


def _change_risks(old: dict[str, Any], new: dict[str, Any], inputs: dict[str, tuple[Any, Any]], replacing: tuple[str, ...]) -> tuple[str, ...]:
    risks = []
    if _is_stateful(old) and replacing:
        risks.append(
            f"replacing change of stored data ({', '.join(replacing)}): the provider would replace it and its data with it; "
            "protect makes `pulumi up` fail instead — move the data or create new storage on purpose"
        )
    for option in ("protect", "retain_on_delete"):
        if old.get(option) and not new.get(option):
            risks.append(f"{option} is switched off")
    if new.get("delete_before_replace") and not old.get("delete_before_replace") and _is_stateful(new):
        risks.append("delete_before_replace is switched on for stored data")
    return tuple(risks)


def _replacing(resource: dict[str, Any], inputs: dict[str, tuple[Any, Any]]) -> tuple[str, ...]:
    """Changed inputs that force a replacement (known types) or may (other types; any input but tags/description)."""
    known = REPLACING_INPUTS.get(_short_type(resource))
    if known is not None:
        return tuple(k for k in inputs if k in known)
    return tuple(k for k in inputs if k not in IN_PLACE_INPUTS)


def _bound_storage_risks(name: str, verb: str, stateful: list[dict[str, Any]]) -> tuple[str, ...]:
    """Stateful resources whose inputs reference ``name`` (``${name.…}``) lose what they are bound to."""
    marker = f"${{{name}."
    return tuple(
        f"this change {verb} a resource stateful {s['name']} is bound to ({', '.join(keys)}): the storage would have to be "
        "replaced with it; protect makes `pulumi up` fail instead"
        for s in stateful
        if (keys := [k for k, v in s["inputs"].items() if marker in json.dumps(v)])
    )


def _short_type(resource: dict[str, Any]) -> str:
    return PlannedResource(resource["type"], resource["name"], None, True, {}).short_type


def _is_stateful(resource: dict[str, Any]) -> bool:
    return _short_type(resource) in STATEFUL_TYPES


def _changed(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (old.get(k), new.get(k)) for k in _ordered_keys(old, new) if old.get(k) != new.get(k)}


def _ordered_keys(a: Mapping[_K, Any], b: Mapping[_K, Any]) -> list[_K]:
    """Keys of ``a`` in order, then the keys only ``b`` has."""
    return list(a) + [k for k in b if k not in a]


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
