"""Diff two plans (their JSON form): what `pulumi up` would do to each resource, and which changes put data at risk.

Every changed resource gets exactly one action (ACTIONS): ``create``, ``update`` (in place), ``replace``
(create-before-delete), ``replace-delete-first`` (``delete_before_replace``: down until the new one is up),
``delete``, or ``refused`` (a protected resource would be replaced or deleted: `pulumi up` stops). Which input
changes replace a resource comes from blueprints/data/replacing_inputs.csv (blueprints.review.diff.replacement); a
replacement propagates to resources whose replacing inputs reference it (``${X.id}`` becomes a new ID), and a new
provider (a region move renames it) replaces every resource of it. Pure: no Pulumi.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TypeVar

from blueprints.core.errors import MISSING, Problem, UserInputError, read_text_file
from blueprints.core.tokens import referenced_names, short_type
from blueprints.kinds import Role, kind_of
from blueprints.review.diff.costs import CostDiff, cost_diff
from blueprints.review.diff.guardrails import GuardrailDiff, guardrail_diff
from blueprints.review.diff.quota import QuotaCut, quota_cuts
from blueprints.review.diff.reboot import Reboot, reboots
from blueprints.review.diff.reboot import headline as reboot_headline
from blueprints.review.diff.reimage import Reimage, image_changes
from blueprints.review.diff.replacement import ReplacementTable, replacement_table
from blueprints.review.diff.retention import retention_cuts
from blueprints.review.diff.shape import MAX_DEPTH, review_shape_problems, too_deep
from blueprints.review.diff.text import text_diff
from blueprints.review.plan import PLAN_SCHEMA

_K = TypeVar("_K")

DIFF_SCHEMA = "aitrain.plandiff/v2"
SAFETY_OPTIONS = ("protect", "retain_on_delete", "delete_before_replace", "ignore_changes", "replace_on_changes")
# What `pulumi up` would do to a resource, in the order a reviewer reads them (worst last).
ACTIONS = ("create", "update", "replace", "replace-delete-first", "delete", "refused")
# The classes `aitrain diff --fail-on` can fail on, narrowest first.
FAIL_ON = ("data-risk", "replace", "any")
# Inputs that never replace anything; for types not in the replacement table any other changed input *may* replace.
IN_PLACE_INPUTS = ("tags", "description")
_REFUSAL = "protected: `pulumi up` will refuse until it is unprotected on purpose"

# What a plan file must look like for a diff: (key, JSON type name, Python types, required).
_RESOURCE_FIELDS = (
    ("type", "a string", (str,), True),
    ("name", "a string", (str,), True),
    ("inputs", "an object", (dict,), True),
    ("protect", "true or false", (bool,), False),
    ("retain_on_delete", "true or false", (bool,), False),
    ("delete_before_replace", "true or false", (bool,), False),
    ("ignore_changes", "a list", (list,), False),
    ("replace_on_changes", "a list", (list,), False),
    ("depends_on", "a list", (list,), False),
)


@dataclass(frozen=True)
class ResourceChange:
    """One resource that `pulumi up` would touch: its action (one of ACTIONS), what changes and why."""

    action: str
    type: str
    name: str
    inputs: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key → (old, new); missing side is None
    options: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    risks: tuple[str, ...] = ()
    replacing: tuple[
        str, ...
    ] = ()  # changed inputs that force (or, for types not in the table, may force) a replacement
    reasons: tuple[str, ...] = ()  # why it is replaced or updated beyond its own inputs (a reference, its provider)
    certain: bool = True  # False: the type is not in the replacement table, so "may replace"
    downtime: str | None = None  # replace-delete-first: what goes down and for how long
    would: str | None = None  # refused: the action `pulumi up` refuses (replace or delete)
    text_diffs: dict[str, str] = field(default_factory=dict)  # encoded input → unified diff of its decoded text

    @property
    def short_type(self) -> str:
        """``alicloud:ecs/ecsInstanceSet:EcsInstanceSet`` → ``ecs.EcsInstanceSet``."""
        return short_type(self.type)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of one change."""
        return {
            "action": self.action,
            "type": self.type,
            "name": self.name,
            "inputs": {k: {"old": old, "new": new} for k, (old, new) in self.inputs.items()},
            "options": {k: {"old": old, "new": new} for k, (old, new) in self.options.items()},
            "replacing": list(self.replacing),
            "certain": self.certain,
            "reasons": list(self.reasons),
            "downtime": self.downtime,
            "would": self.would,
            "text_diffs": dict(self.text_diffs),
            "risks": list(self.risks),
        }


@dataclass(frozen=True)
class PlanDiff:
    """The differences between two plans, summary first; ``costs`` is None when either plan is not priced."""

    summary: dict[str, tuple[Any, Any]]
    changes: tuple[ResourceChange, ...]
    costs: CostDiff | None = None
    region: str = ""
    # The plan resources a diagram of the diff draws (the new plan's, or the old one's for a removed stack).
    resources: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    # Findings that appear or go away, and skips added or removed (None only for diffs built without plans).
    guardrails: GuardrailDiff | None = None
    # Changed node images: the ones that stop running nodes are downtime risks (blueprints.review.diff.reimage).
    reimage: Reimage = field(default_factory=Reimage)
    # Nodes updated in place that the provider reboots (a changed user data): downtime risks too (diff.reboot).
    reboots: tuple[Reboot, ...] = ()
    # Teams whose Kueue GPU quota shrinks, flagged below one job of the stack's size (blueprints.review.diff.quota).
    quota_cuts: tuple[QuotaCut, ...] = ()

    def downtime_risks(self) -> list[str]:
        """Every downtime risk (re-imaged, then rebooted nodes), prefixed by its resource."""
        return self.reimage.risks() + [f"{r.resource}: {r.message()}" for r in self.reboots]

    def downtime_headline(self) -> str:
        """``stops and re-images 2 nodes; reboots 4 nodes``; empty when no running node stops."""
        return "; ".join(part for part in (self.reimage.headline(), reboot_headline(self.reboots)) if part)

    def fails_on(self, kind: str) -> bool:
        """Whether the diff holds a change of class ``kind`` (one
        of FAIL_ON): what `aitrain diff --fail-on` exits 1 on."""
        if kind == "data-risk":
            return bool(self.risks)
        if kind == "replace":
            # Narrowest first: a data risk (protect switched off, say) fails "replace" too, as it fails "any"; so does
            # a node re-imaged in place, which stops it as a replacement would.
            return (
                bool(self.risks)
                or bool(self.reimage.downtime)
                or bool(self.reboots)
                or any(c.action in ("replace", "replace-delete-first", "refused", "delete") for c in self.changes)
            )
        if kind == "any":
            return bool(self.changes)
        raise ValueError(f"unknown fail-on class {kind!r}; one of {', '.join(FAIL_ON)}")

    @property
    def risks(self) -> list[str]:
        """Every data-safety risk, prefixed by its resource."""
        return [f"{c.name}: {risk}" for c in self.changes for risk in c.risks]

    def counts(self) -> dict[str, int]:
        """How many resources per action (every action, zeros included), in ACTIONS order."""
        return {action: sum(1 for c in self.changes if c.action == action) for action in ACTIONS}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema ``aitrain.plandiff/v2``)."""
        return {
            "schema": DIFF_SCHEMA,
            "summary": {k: {"old": old, "new": new} for k, (old, new) in self.summary.items()},
            "counts": self.counts(),
            "changes": [c.to_dict() for c in self.changes],
            "costs": self.costs.to_dict() if self.costs else None,
            "risks": self.risks,
            "downtime_risks": self.downtime_risks(),
            "reimage": self.reimage.to_dict(),
            "reboots": [r.to_dict() for r in self.reboots],
            "quota_cuts": [
                {
                    "resource": c.resource,
                    "queue": c.queue,
                    "old_gpus": c.old_gpus,
                    "new_gpus": c.new_gpus,
                    "borrowing_limit": c.borrowing_limit,
                    "job_gpus": c.job_gpus,
                    "below_job": c.below_job,
                    "message": c.message(),
                }
                for c in self.quota_cuts
            ],
            "guardrails": self.guardrails.to_dict() if self.guardrails else None,
        }


def load_plan_pair(old: Path, new: Path, missing_as_empty: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both plans of a diff, checked against each other: same schema version, or one clear error.

    With ``missing_as_empty`` a file that does not exist is the empty plan (a new stack: all create; a removed
    stack: all delete); both missing is still an error.
    """
    if missing_as_empty and not old.exists() and not new.exists():
        raise UserInputError("no plans to compare", [Problem(f"{old}, {new}", MISSING, "neither plan file exists")])
    raw = [empty_plan() if missing_as_empty and not path.exists() else _read_json(path) for path in (old, new)]
    schemas = [d.get("schema") if isinstance(d, dict) else None for d in raw]
    if all(isinstance(s, str) and s.startswith("aitrain.plan/") for s in schemas) and schemas[0] != schemas[1]:
        raise UserInputError(
            "plans of different versions",
            [
                Problem(
                    "schema",
                    MISSING,
                    f"old plan is {schemas[0]}, new is {schemas[1]}: plan both "
                    f"with the same aitrain (this one writes {PLAN_SCHEMA})",
                )
            ],
        )
    return _checked(raw[0], old), _checked(raw[1], new)


def load_plan_json(path: Path) -> dict[str, Any]:
    """Read a plan written by ``aitrain plan --format json``; reject anything else with a clear error."""
    return _checked(_read_json(path), path)


def _read_json(path: Path) -> Any:
    text = read_text_file(path, "plan file")
    deep = too_deep(text)
    if deep is not None:
        raise UserInputError(
            "invalid plan file",
            [
                Problem(
                    str(path),
                    f"line {deep}",
                    f"nests arrays/objects deeper than {MAX_DEPTH} levels; an aitrain plan is far shallower",
                )
            ],
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError(
            "invalid plan file",
            [
                Problem(
                    str(path),
                    f"line {exc.lineno}",
                    f"is not JSON ({exc.msg}); write one with `aitrain plan --format json --out FILE`",
                )
            ],
        ) from None


def _checked(data: Any, path: Path) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("schema") != PLAN_SCHEMA:
        found = data.get("schema", "(missing)") if isinstance(data, dict) else type(data).__name__
        raise UserInputError(
            "invalid plan file",
            [Problem(f"{path}: schema", found, f"expected '{PLAN_SCHEMA}' (from `aitrain plan --format json`)")],
        )
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
        problems.append(
            Problem(
                f"{where}: summary",
                data.get("summary", MISSING),
                _must(data.get("summary", MISSING), "an object"),
                hint,
            )
        )
    if not isinstance(data.get("costs", {}), dict):
        problems.append(Problem(f"{where}: costs", data.get("costs"), "must be an object", hint))
    resources = data.get("resources", MISSING)
    if not isinstance(resources, list):
        return problems + [
            Problem(f"{where}: resources", resources, _must(resources, "a list of resource objects"), hint)
        ]
    seen: dict[Any, int] = {}
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
                problems.append(
                    Problem(f"{at}.name", identity[1], f"duplicates resources[{seen[identity]}] (same type and name)")
                )
            seen.setdefault(identity, index)
    return (problems + review_shape_problems(data, where))[:limit]


def _must(value: Any, expected: str) -> str:
    return f"is missing; must be {expected}" if value is MISSING else f"must be {expected}"


@dataclass
class _Pending:
    """A resource on both sides while the diff propagates replacements."""

    old: dict[str, Any]
    new: dict[str, Any]
    inputs: dict[str, tuple[Any, Any]]
    replacing: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    replaced: bool = False
    certain: bool = True


def diff_plans(old: dict[str, Any], new: dict[str, Any], table: ReplacementTable | None = None) -> PlanDiff:
    """Classify every resource of two plan dicts (matched by type and logical name) into one of ACTIONS."""
    table = table or replacement_table()
    summary = {
        k: (old["summary"].get(k), new["summary"].get(k))
        for k in _ordered_keys(old["summary"], new["summary"])
        if old["summary"].get(k) != new["summary"].get(k)
    }
    before = {(r["type"], r["name"]): r for r in old["resources"]}
    after = {(r["type"], r["name"]): r for r in new["resources"]}
    pending = {a["name"]: _own_changes(a, after[key], table) for key, a in before.items() if key in after}
    _propagate(pending, table)
    stateful = [r for r in old["resources"] if _is_stateful(r)]
    changes = []
    for key in _ordered_keys(before, after):
        a, b = before.get(key), after.get(key)
        if a is None:
            assert b is not None  # every key comes from one side or the other
            changes.append(ResourceChange("create", b["type"], b["name"]))
        elif b is None:
            changes.append(_deletion(a, stateful, after))
        else:
            change = _update_or_replace(pending[a["name"]], table)
            if change is not None:
                changes.append(change)
    costs = cost_diff(old.get("costs") or {}, new.get("costs") or {})
    drawn = tuple(new["resources"] or old["resources"])
    reimage = image_changes(changes, after)
    return PlanDiff(
        summary,
        tuple(changes),
        costs,
        str(new.get("region") or old.get("region") or ""),
        drawn,
        guardrail_diff(old, new),
        reimage,
        reboots(changes, after, reimage),
        quota_cuts(old, new),
    )


def _own_changes(a: dict[str, Any], b: dict[str, Any], table: ReplacementTable) -> _Pending:
    """What one resource's own inputs and provider say: changed inputs, which of them replace it."""
    ignored = set(a.get("ignore_changes") or ()) | set(b.get("ignore_changes") or ())
    inputs = {k: v for k, v in _changed(a["inputs"], b["inputs"]).items() if k not in ignored}
    item = _Pending(a, b, inputs)
    kind = _short_type(a)
    known = table.forcing(kind)
    for key in inputs:
        if known is not None and table.forces(kind, key, inputs[key]):
            item.replacing.append(key)
        elif known is None and key not in IN_PLACE_INPUTS:
            item.replacing.append(key)
            item.certain = False
    for path in b.get("replace_on_changes") or ():
        # Pulumi's replace_on_changes (the new program's, as the engine reads it): a change under the path replaces.
        root, *rest = _path_segments(path)
        if root in inputs and _at_path(inputs[root][0], rest) != _at_path(inputs[root][1], rest):
            old_value, new_value = _at_path(inputs[root][0], rest), _at_path(inputs[root][1], rest)
            item.replacing.append(path)
            item.reasons.append(f"replace_on_changes watches {path}: {old_value!r} → {new_value!r}")
    item.replaced = bool(item.replacing)
    if a.get("provider") and b.get("provider") and a["provider"] != b["provider"]:
        item.reasons.append(
            f"its provider changes ({a['provider']} → {b['provider']}): a new provider replaces every resource of it"
        )
        item.replaced, item.certain = True, True
    return item


def _propagate(pending: dict[str, _Pending], table: ReplacementTable) -> None:
    """Spread replacements: a replaced resource gives a new ID to every input that references it (``${X.…}``)."""
    referrers: dict[str, list[tuple[str, str]]] = {}
    for name, item in pending.items():
        for key, value in item.new["inputs"].items():
            if key in (item.new.get("ignore_changes") or ()):
                continue
            for target in set(referenced_names(value)):
                referrers.setdefault(target, []).append((name, key))
        provider = item.new.get("provider")
        if provider:
            referrers.setdefault(provider, []).append((name, "(provider)"))
    queue = [name for name, item in pending.items() if item.replaced]
    while queue:
        target = queue.pop()
        for name, key in referrers.get(target, ()):
            item = pending[name]
            if key == "(provider)":
                reason, replaces, certain = f"its provider {target} is replaced", True, True
            else:
                kind = _short_type(item.old)
                known = table.forcing(kind)
                replaces = table.forces(kind, key) if known is not None else key not in IN_PLACE_INPUTS
                certain = known is not None
                reason = (
                    f"{key} references {target}, which is replaced: "
                    f"{'a new ID forces replacement' if replaces else 'it takes the new ID in place'}"
                )
            # Each (referrer, input) meets each replaced target once:
            # the queue holds a resource only when it becomes replaced.
            item.reasons.append(reason)
            if replaces and not item.replaced:
                item.replaced, item.certain = True, certain
                queue.append(name)


_PATH_SEGMENT = re.compile(r'\.?([A-Za-z_$][A-Za-z0-9_$]*)|\["((?:[^"\\]|\\.)*)"\]|\[([0-9]+)\]')


def _path_segments(path: str) -> list[str | int]:
    """A Pulumi property path (``tags["aitrain-generation"]``, ``systemDisk.size``, ``dataDisks[0]``) as segments."""
    segments: list[str | int] = []
    for match in _PATH_SEGMENT.finditer(path):
        name, quoted, index = match.groups()
        segments.append(int(index) if index is not None else (name if name is not None else quoted))
    return segments


def _at_path(value: Any, segments: list[str | int]) -> Any:
    """The part of an input at ``segments`` (None when absent)."""
    for segment in segments:
        if isinstance(segment, int):
            value = value[segment] if isinstance(value, list) and segment < len(value) else None
        else:
            value = value.get(segment) if isinstance(value, dict) else None
    return value


def _option(resource: Mapping[str, Any], key: str) -> Any:
    """A safety option as the diff compares it; replace_on_changes absent (a plan from before it was recorded) is
    the empty list it means."""
    value = resource.get(key)
    return list(value or []) if key == "replace_on_changes" else value


def _update_or_replace(item: _Pending, table: ReplacementTable) -> ResourceChange | None:
    a, b = item.old, item.new
    options = {k: (_option(a, k), _option(b, k)) for k in SAFETY_OPTIONS if _option(a, k) != _option(b, k)}
    if not (item.inputs or options or item.reasons):
        return None
    texts = {k: d for k, (x, y) in item.inputs.items() if (d := text_diff(k, x, y, a["name"])) is not None}
    risks = []
    if item.replaced and _is_stateful(a):
        why = ", ".join(item.replacing) or "a replaced dependency"
        if _loss(a):
            risks.append(
                f"replacing change ({why}): {_loss(a)} until its "
                "replacement exists; protect makes `pulumi up` fail instead"
            )
        else:
            risks.append(
                f"replacing change of stored data ({why}): the provider would replace it and its data with it; "
                "protect makes `pulumi up` fail instead — move the data or create new storage on purpose"
            )
    risks.extend(retention_cuts(a, b))
    for option in ("protect", "retain_on_delete"):
        if a.get(option) and not b.get(option):
            risks.append(f"{option} is switched off")
    if b.get("delete_before_replace") and not a.get("delete_before_replace") and _is_stateful(b):
        risks.append("delete_before_replace is switched on for stored data")
    action, downtime, would = "update", None, None
    if item.replaced:
        action = "replace-delete-first" if b.get("delete_before_replace") else "replace"
        if action == "replace-delete-first":
            found = table.downtime.get(_short_type(a))
            downtime = (
                found.describe(a["inputs"])
                if found
                else "deleted before its replacement is created: unavailable until then"
            )
        if a.get("protect"):
            action, would = "refused", action
            risks.append(f"would be replaced while {_REFUSAL}")
    return ResourceChange(
        action,
        a["type"],
        a["name"],
        item.inputs,
        options,
        tuple(risks),
        tuple(item.replacing),
        tuple(item.reasons),
        item.certain,
        downtime,
        would,
        texts,
    )


def _deletion(
    a: dict[str, Any], stateful: list[dict[str, Any]], after: Mapping[tuple[str, str], Any]
) -> ResourceChange:
    risks: list[str] = []
    if a.get("protect"):
        risks.append(f"removed while {_REFUSAL}")
    elif _is_stateful(a) and not a.get("retain_on_delete"):
        risks.append(
            f"removed without retain_on_delete: {_loss(a)}"
            if _loss(a)
            else "removed stateful resource without retain_on_delete: its data would be deleted"
        )
    # Storage that stays but references what is removed: it has to be rebuilt elsewhere.
    marker = f"${{{a['name']}."
    for s in stateful:
        keys = [k for k, v in s["inputs"].items() if marker in json.dumps(v)]
        if keys and (s["type"], s["name"]) in after:
            risks.append(
                f"this change removes a resource stateful {s['name']} is "
                f"bound to ({', '.join(keys)}): the storage would have to be "
                "replaced with it; protect makes `pulumi up` fail instead"
            )
    action, would = ("refused", "delete") if a.get("protect") else ("delete", None)
    return ResourceChange(action, a["type"], a["name"], risks=tuple(risks), would=would)


def _short_type(resource: Mapping[str, Any]) -> str:
    return short_type(resource["type"])


def _is_stateful(resource: Mapping[str, Any]) -> bool:
    kind = kind_of(resource["type"])
    return kind is not None and kind.has(Role.STATEFUL)


def _loss(resource: Mapping[str, Any]) -> str:
    """What is lost when a guarded resource goes, where it is not stored data (its kind's ``stateful_loss``)."""
    kind = kind_of(resource["type"])
    return kind.stateful_loss if kind is not None else ""


def _changed(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (old.get(k), new.get(k)) for k in _ordered_keys(old, new) if old.get(k) != new.get(k)}


def _ordered_keys(a: Mapping[_K, Any], b: Mapping[_K, Any]) -> list[_K]:
    """Keys of ``a`` in order, then the keys only ``b`` has."""
    return list(a) + [k for k in b if k not in a]
