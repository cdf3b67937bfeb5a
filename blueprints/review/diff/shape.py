"""The parts of a plan document ``aitrain diff`` reads beyond its resources, checked before any is read.

A plan is untrusted review input (a pull request can carry any file), so its nesting depth is bounded before
``json.loads`` recurses, and the guardrail and cost sections must have the fields the diff and its renderers index.
"""

from __future__ import annotations

from typing import Any

from blueprints.core.errors import MISSING, Problem

# aitrain's own plans nest about 10 deep (resource inputs inside resources); 64 leaves room for any real input and
# stays far below Python's recursion limit, where json.loads would fail with RecursionError.
MAX_DEPTH = 64
_HINT = "write the plan with `aitrain plan --format json --out FILE`"
_FINDING_FIELDS = ("rule", "resource", "message", "level")
_SKIP_FIELDS = (("rule", True), ("title", False), ("reason", False))


def too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line where JSON ``text`` first nests deeper than ``limit`` (arrays and objects), or None."""
    depth, line, in_string, escaped = 0, 1, False, False
    for char in text:
        if char == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line
        elif char in "]}":
            depth -= 1
    return None


def review_shape_problems(data: dict[str, Any], where: str) -> list[Problem]:
    """What in ``findings``, ``skipped`` and ``costs`` the diff could not read, each located by its JSON path."""
    problems: list[Problem] = []
    for key, fields in (("findings", tuple((f, True) for f in _FINDING_FIELDS)), ("skipped", _SKIP_FIELDS)):
        items = data.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            problems.append(Problem(f"{where}: {key}", items, "must be a list of objects", _HINT))
            continue
        for index, item in enumerate(items):
            at = f"{where}: {key}[{index}]"
            if not isinstance(item, dict):
                problems.append(Problem(at, item, f"must be an object with {', '.join(f for f, _ in fields)}", _HINT))
                continue
            for name, required in fields:
                value = item.get(name, MISSING)
                if (value is not MISSING or required) and not isinstance(value, str):
                    problems.append(
                        Problem(
                            f"{at}.{name}",
                            value,
                            "is missing; must be a string" if value is MISSING else "must be a string",
                            _HINT,
                        )
                    )
    costs = data.get("costs") or {}
    if isinstance(costs, dict):
        lines, totals = costs.get("lines"), costs.get("totals")
        if lines is not None and not (isinstance(lines, list) and all(isinstance(line, dict) for line in lines)):
            problems.append(Problem(f"{where}: costs.lines", lines, "must be a list of objects", _HINT))
        if totals is not None and not isinstance(totals, dict):
            problems.append(Problem(f"{where}: costs.totals", totals, "must be an object", _HINT))
        elif isinstance(totals, dict) and not isinstance(totals.get("unknown") or [], list):
            problems.append(Problem(f"{where}: costs.totals.unknown", totals.get("unknown"), "must be a list", _HINT))
    return problems
