"""Node rules: encrypted disks, IMDSv2, local scratch sized to memory."""

from __future__ import annotations

from typing import Any, Iterator

from blueprints.guardrails.inputs import NODE_TYPES, of_types
from blueprints.guardrails.model import Rule
from blueprints.plan import Plan


def disk_encryption(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT003: every system and data disk a node is built with is encrypted."""
    for r in of_types(plan, ("ecs.EcsLaunchTemplate",)):
        if not (r.inputs.get("systemDisk") or {}).get("encrypted"):
            yield r.name, "launch template system disk is not encrypted"
    for r in of_types(plan, ("ess.ScalingConfiguration",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "scaling configuration system disk is not encrypted"
    for r in of_types(plan, ("ecs.Instance",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "instance system disk is not encrypted"
    # Scratch lives on data disks: every one a node is built with (each of these types takes ``dataDisks[].encrypted``).
    for r in of_types(plan, NODE_TYPES):
        for index, disk in enumerate(r.inputs.get("dataDisks") or []):
            if not (disk or {}).get("encrypted"):
                yield r.name, f"data disk {index} ({disk.get('category') or disk.get('diskCategory') or 'disk'}, {disk.get('size')} GiB) is not encrypted"


def imdsv2(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT008: node metadata requires a session token (IMDSv2)."""
    for r in of_types(plan, ("ecs.EcsLaunchTemplate", "ecs.Instance")):
        if r.inputs.get("httpTokens") != "required":
            yield r.name, "instance metadata must require tokens (IMDSv2: httpTokens=required)"


# ---- local scratch (AIT013) ----

SCRATCH_PER_MEMORY = 3  # the article's "memory : SSD = 1 : 3"


def scratch_ratio(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT013: local scratch per node is at least 3 × its memory."""
    scratch, memory = plan.summary.get("scratch_gib_per_node"), plan.summary.get("memory_gib_per_node")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (scratch, memory)):
        return  # a plan without the figures (a component alone) has nothing to compare
    wanted = SCRATCH_PER_MEMORY * memory  # type: ignore[operator]
    if scratch < wanted:  # type: ignore[operator]
        yield (
            "summary.scratch_gib_per_node",
            (
                f"scratch {_gib(scratch)} GiB per node is below {SCRATCH_PER_MEMORY} × {_gib(memory)} GiB memory = {_gib(wanted)} GiB"
                f" (the article's memory : SSD = 1 : {SCRATCH_PER_MEMORY}); raise compute.scratch_gib to at least {_gib(wanted)}"
            ),
        )


def _gib(value: Any) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


RULES: tuple[Rule, ...] = (
    Rule("AIT003", "error", "node system and data disks are encrypted", disk_encryption),
    Rule("AIT008", "warning", "instance metadata requires tokens", imdsv2),
    Rule("AIT013", "warning", "local scratch is at least 3 × memory per node", scratch_ratio),
)
