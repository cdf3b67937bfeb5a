"""A Mermaid flowchart of a plan: region → VPC → vSwitch per zone → compute → file system and bucket, NAT/EIP.

Resources are drawn in groups, never one node each: a group is every custom resource of one type under one
component (and in one zone, when the resource names one), so 256 per-node ``ecs.Instance`` resources are one node
"256 × ecs.Instance". Every group appears (inside a subgraph per component); edges follow the references between
inputs (``${name.attr}``) that make the network → compute → storage path. Output is deterministic: groups in plan
order, ids derived from their key. Pure: reads plan resource dicts (``Plan.to_dict()["resources"]``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from blueprints.core.text import plain
from blueprints.core.tokens import referenced_names, short_type
from blueprints.kinds import Role, has_role

# Diff actions → Mermaid class; the worst action of a group's resources colours its node.
MARK_CLASSES: dict[str, str] = {
    "refused": "refused",
    "replace-delete-first": "replace",
    "replace": "replace",
    "delete": "delete",
    "update": "update",
    "create": "create",
}
_SEVERITY = ("refused", "replace-delete-first", "replace", "delete", "update", "create")
_CLASS_DEFS = {
    "create": "fill:#dafbe1,stroke:#1a7f37,color:#0b3d1a",
    "update": "fill:#fff8c5,stroke:#9a6700,color:#3b2300",
    "replace": "fill:#ffebe9,stroke:#cf222e,color:#5c0a0f,stroke-width:2px",
    "refused": "fill:#ffebe9,stroke:#82071e,color:#5c0a0f,stroke-width:3px,stroke-dasharray:4 2",
    "delete": "fill:#eaeef2,stroke:#6e7781,color:#24292f,stroke-dasharray:3 3",
}
# More groups than this and the diagram regroups coarser (type per component, then type), then truncates.
MAX_NODES = 60
_ID_RE = re.compile(r"[^A-Za-z0-9_]")


def label(text: str) -> str:
    """Text safe inside a Mermaid ``"..."`` label: quotes, angle brackets, ``#`` and backticks as entity codes."""
    # ``#`` first: the entity codes added next start with it.
    return (
        plain(text)
        .replace("#", "#35;")
        .replace('"', "#quot;")
        .replace("<", "#lt;")
        .replace(">", "#gt;")
        .replace("`", "#96;")
    )


def node_id(prefix: str, key: str, taken: set[str]) -> str:
    """A Mermaid id from ``key``: ``[A-Za-z0-9_]`` only, prefixed
    (never a keyword such as ``end``), unique in ``taken``."""
    base = prefix + "_" + _ID_RE.sub("_", key)
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


def _zone(inputs: Mapping[str, Any]) -> str:
    zone = inputs.get("zoneId", inputs.get("availabilityZone"))
    return zone if isinstance(zone, str) else ""


class _Groups:
    """Custom resources grouped at one level of detail: 0 = component+type+zone, 1 = component+type, 2 = type."""

    def __init__(self, resources: Sequence[Mapping[str, Any]], level: int) -> None:
        by_name = {str(r["name"]): r for r in resources}
        self.component: dict[str, str] = {}
        self.members: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
        self.of: dict[str, tuple[str, str, str]] = {}
        # Component type of each custom resource's owner (kept at every level: a login node's instance is not compute).
        self.owner_type: dict[str, str] = {}
        for r in resources:
            if not r.get("custom", True):
                continue
            owner = self._component(r, by_name)
            self.owner_type[str(r["name"])] = short_type(str(by_name[owner]["type"])) if owner else ""
            comp = owner if level < 2 else ""
            key = (comp, short_type(str(r["type"])), _zone(r.get("inputs", {})) if level == 0 else "")
            self.members.setdefault(key, []).append(r)
            self.of[str(r["name"])] = key

    @staticmethod
    def _component(r: Mapping[str, Any], by_name: Mapping[str, Mapping[str, Any]]) -> str:
        cursor, seen = r.get("parent"), set()
        while isinstance(cursor, str) and cursor in by_name and cursor not in seen:
            seen.add(cursor)
            if not by_name[cursor].get("custom", True):
                return cursor
            cursor = by_name[cursor].get("parent")
        return ""


def _group_label(key: tuple[str, str, str], members: Sequence[Mapping[str, Any]]) -> str:
    comp, kind, zone = key
    lines = [kind if len(members) == 1 else f"{len(members)} × {kind}"]
    if len(members) == 1:
        lines.append(str(members[0]["name"]))
    if kind == "ecs.EcsInstanceSet":
        amounts = [m.get("inputs", {}).get("amount") for m in members]
        if all(isinstance(a, int) for a in amounts):
            lines.append(f"{sum(a for a in amounts if isinstance(a, int))} nodes")
    if kind == "ess.ScalingGroup" and len(members) == 1:
        inputs = members[0].get("inputs", {})
        lines.append(f"{inputs.get('minSize', '?')} to {inputs.get('maxSize', '?')} nodes")
    if zone:
        lines.append(zone)
    return "<br/>".join(label(line) for line in lines)


def _edges(
    groups: _Groups, resources: Sequence[Mapping[str, Any]]
) -> list[tuple[tuple[str, str, str], tuple[str, str, str]]]:
    """Group pairs (from, to) along the network → compute → storage path, in a fixed order."""
    kinds = {name: key[1] for name, key in groups.of.items()}
    edges: list[tuple[tuple[str, str, str], tuple[str, str, str]]] = []

    def add(a: str, b: str) -> None:
        pair = (groups.of[a], groups.of[b])
        if pair[0] != pair[1] and pair not in edges:
            edges.append(pair)

    # Compute (its kind a compute group) → where it reads and writes data (a kind of storage access); each placed
    # kind (in a vSwitch) under its vSwitch. The roles are the kinds' (blueprints.kinds).
    grouped = [r for r in resources if str(r["name"]) in kinds]
    compute = [str(r["name"]) for r in grouped if _plays(r, Role.COMPUTE_GROUP) and _is_training(r, groups)]
    targets = [str(r["name"]) for r in grouped if _plays(r, Role.STORAGE_ACCESS)]
    for r in resources:
        name, inputs = str(r["name"]), r.get("inputs", {})
        kind = kinds.get(name)
        if kind is None:
            continue
        if kind == "vpc.Switch":
            for ref in referenced_names(inputs.get("vpcId")):
                if kinds.get(ref) == "vpc.Network":
                    add(ref, name)
        if _plays(r, Role.IN_VSWITCH):
            for ref in referenced_names([inputs.get("vswitchId"), inputs.get("vswitchIds")]):
                if kinds.get(ref) == "vpc.Switch":
                    add(ref, name)
        if kind == "nas.MountTarget":
            for ref in referenced_names(inputs.get("fileSystemId")):
                if ref in kinds:
                    add(name, ref)
        if kind == "ecs.EipAssociation":
            for eip in referenced_names(inputs.get("allocationId")):
                for target in referenced_names(inputs.get("instanceId")):
                    if eip in kinds and target in kinds:
                        add(target, eip)
        if name in compute:
            for target in targets:
                add(name, target)
    return edges


def _plays(r: Mapping[str, Any], role: Role) -> bool:
    return has_role(str(r["type"]), role)


def _is_training(r: Mapping[str, Any], groups: _Groups) -> bool:
    """Compute that trains (mounts storage, reads the bucket):
    not the instance of a login node (``aitrain:access:``)."""
    return not groups.owner_type[str(r["name"])].startswith("aitrain:access:")


def mermaid_flowchart(
    resources: Sequence[Mapping[str, Any]], region: str, marks: Mapping[str, str] | None = None
) -> str:
    """Mermaid ``flowchart TD`` text for plan resources (their JSON form); ``marks`` maps a resource name to its diff
    action (create, update, replace, replace-delete-first, delete, refused) to highlight changed resources."""
    groups = _Groups(resources, 0)
    level = 0
    while len(groups.members) > MAX_NODES and level < 2:
        level += 1
        groups = _Groups(resources, level)
    comp_types = {str(r["name"]): short_type(str(r["type"])) for r in resources if not r.get("custom", True)}
    keys = list(groups.members)
    shown, hidden = (keys, []) if len(keys) <= MAX_NODES else (keys[: MAX_NODES - 1], keys[MAX_NODES - 1 :])
    taken: set[str] = {"region"}
    # Type and zone name a node (the subgraph names its component); a counter keeps repeats apart.
    ids = {key: node_id("g", "_".join(part for part in key[1:] if part), taken) for key in shown}
    lines = ["flowchart TD", f'  region["region {label(region)}"]']
    for comp in dict.fromkeys(key[0] for key in shown):
        inner = [f'{ids[key]}["{_group_label(key, groups.members[key])}"]' for key in shown if key[0] == comp]
        if not comp:
            lines += ["  " + line for line in inner]
            continue
        lines.append(
            f'  subgraph {node_id("c", comp, taken)}["{label(comp_types.get(comp, "component"))}<br/>{label(comp)}"]'
        )
        lines += ["    " + line for line in inner]
        lines.append("  end")
    if hidden:
        count = sum(len(groups.members[key]) for key in hidden)
        lines.append(f'  more["… and {count} more resources in {len(hidden)} groups"]')
        taken.add("more")
    vpcs = [key for key in shown if key[1] == "vpc.Network"]
    lines += [f"  region --> {ids[key]}" for key in vpcs]
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in _edges(groups, resources) if a in ids and b in ids]
    lines += _mark_lines(groups, ids, marks or {})
    return "\n".join(lines) + "\n"


def _mark_lines(groups: _Groups, ids: Mapping[tuple[str, str, str], str], marks: Mapping[str, str]) -> list[str]:
    by_class: dict[str, list[str]] = {}
    for key, node in ids.items():
        actions = [marks[str(m["name"])] for m in groups.members[key] if str(m["name"]) in marks]
        worst = next((a for a in _SEVERITY if a in actions), None)
        if worst is not None:
            by_class.setdefault(MARK_CLASSES[worst], []).append(node)
    lines = [f"  classDef {name} {_CLASS_DEFS[name]}" for name in _CLASS_DEFS if name in by_class]
    return lines + [f"  class {','.join(nodes)} {name}" for name, nodes in sorted(by_class.items())]


def group_count(resources: Iterable[Mapping[str, Any]]) -> int:
    """How many groups (nodes) the finest level would draw: a size check for callers and tests."""
    return len(_Groups(list(resources), 0).members)
