"""The catalog is passed in everywhere in the advisor: nothing in blueprints/advisor loads it (the CLI layer does)."""

from __future__ import annotations

import ast
from pathlib import Path

ADVISOR = Path(__file__).resolve().parents[2] / "blueprints" / "advisor"
ALLOWED: set[tuple[str, str]] = set()  # recommend/estimate load it in blueprints/cli/advisor.py, case studies in cli.py


def _calls_of_load_catalog(path: Path) -> set[tuple[str, str]]:
    """(file, enclosing top-level function) for every call of ``load_catalog`` in ``path``."""
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.Call)
                and getattr(inner.func, "id", getattr(inner.func, "attr", None)) == "load_catalog"
            ):
                found.add((path.name, getattr(node, "name", "<module>")))
    return found


def test_nothing_in_the_advisor_loads_the_catalog():
    calls = set().union(*(_calls_of_load_catalog(p) for p in sorted(ADVISOR.glob("*.py"))))
    assert calls == ALLOWED


def test_the_walk_sees_a_call_where_there_is_one(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text(
        "from blueprints.catalog import load_catalog\n\ndef f():\n    return load_catalog().version\n", encoding="utf-8"
    )
    assert _calls_of_load_catalog(sample) == {("x.py", "f")}
