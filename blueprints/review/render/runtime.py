"""The plan's "Run time" section: what keeps a run training once it starts, read from the stack outputs.

Each blueprint exports how its nodes are checked (``health_gate``), repaired (``repair``), where runs checkpoint
(``checkpoint_dir``, ``max_restarts``), which metrics exist and who produces them (``metric_producers``) and which
image the nodes run (``node_image``). The same outputs reach ``aitrain check`` and ``aitrain launch`` after
``pulumi up``, so the review shows exactly what the run-time commands will use. Pure: no Pulumi.
"""

from __future__ import annotations

from typing import Any

# The outputs this section shows, in order, with the heading a reader sees.
RUNTIME_OUTPUTS: tuple[tuple[str, str], ...] = (
    ("health_gate", "health gate"),
    ("repair", "repair"),
    ("checkpoint_dir", "checkpoints"),
    ("metric_producers", "metrics"),
    ("node_image", "node image"),
)
MISSING_TEXT = "not declared by this blueprint"


def runtime_lines(outputs: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(heading, lines) per run-time concern; a concern the outputs do not carry says so instead of vanishing."""
    return [(heading, _lines(key, outputs)) for key, heading in RUNTIME_OUTPUTS]


def _lines(key: str, outputs: dict[str, Any]) -> list[str]:
    value = outputs.get(key)
    if value is None:
        return [MISSING_TEXT]
    if key == "health_gate":
        return _health_gate(value)
    if key == "repair":
        return _mapping(value)
    if key == "checkpoint_dir":
        restarts = outputs.get("max_restarts")
        tail = f"; torchrun restarts a failed run up to {restarts} times" if restarts is not None else ""
        return [f"{value} (AITRAIN_CHECKPOINT_DIR; `aitrain launch --resume RUN_ID` continues from it){tail}"]
    if key == "metric_producers":
        return _metrics(value)
    if key == "node_image":
        return _image(value)
    return [str(value)]


def _health_gate(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [str(value)]
    lines = []
    if value.get("command"):
        lines.append(f"command: {value['command']}")
    suite = value.get("suite")
    if isinstance(suite, (list, tuple)) and suite:
        lines.append("checks: " + ", ".join(str(s) for s in suite))
    allreduce = value.get("allreduce")
    if isinstance(allreduce, dict):
        threshold = allreduce.get("threshold_gbps")
        expected = allreduce.get("expected_busbw_gbps")
        bound = (
            f"pass at ≥ {threshold:g} Gbit/s bus bandwidth (expected {expected:g})"
            if isinstance(threshold, (int, float)) and isinstance(expected, (int, float))
            else "no pass threshold (the fabric's bandwidth is unknown): measured and shown only"
        )
        lines.append(f"all-reduce over {allreduce.get('fabric', '?')}: {bound}; source: {allreduce.get('source', '?')}")
    for extra in ("on_failure", "long_suite"):
        if value.get(extra):
            lines.append(f"{extra.replace('_', ' ')}: {value[extra]}")
    return lines or [str(value)]


# Outputs are JSON objects (keys sorted on the way): what a reader needs first comes first again.
_FIRST_KEYS = ("mechanism", "command")


def _mapping(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [str(value)]
    keys = [k for k in _FIRST_KEYS if k in value] + [k for k in value if k not in _FIRST_KEYS]
    return [f"{k.replace('_', ' ')}: {_plain(value[k])}" for k in keys if value[k] not in (None, "", [], {})]


def _plain(value: Any) -> str:
    """A value as a reader writes it: yes/no, ``k=v`` pairs, comma lists (never a Python repr)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    return str(value)


def _metrics(value: Any) -> list[str]:
    if not isinstance(value, (list, tuple)):
        return [str(value)]
    if not value:
        return ["no rule or alarm in this plan reads a metric"]
    lines = []
    for row in value:
        if not isinstance(row, dict):
            lines.append(str(row))
            continue
        readers = row.get("read_by") or []
        read = f"; read by {', '.join(str(r) for r in readers)}" if readers else ""
        lines.append(f"{row.get('metric')} ({row.get('namespace')}) from {row.get('producer')}{read}")
    return lines


def _image(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [str(value)]
    if value.get("image_id") is None:
        return [str(value.get("applies_to") or value)]
    if value.get("pinned"):
        return [f"{value.get('image_id')} (pinned in the profile: a newer image never re-images running nodes)"]
    return [
        f"{value.get('image_id')} (newest matching image at plan time, not pinned: pin it with `aitrain image pin` "
        "so a newer image is a deliberate, reviewed change)"
    ]
