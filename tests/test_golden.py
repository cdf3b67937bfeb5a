"""Golden plans: each preset's JSON and Markdown plan is committed; `make golden` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprints.render import render_markdown

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("preset, fixture", [("medical-imaging", "medical_plan"), ("autoscaling-training", "autoscaling_plan")])
@pytest.mark.parametrize("kind", ["json", "md"])
def test_plan_matches_golden_file(preset, fixture, kind, request, update_golden):
    plan = request.getfixturevalue(fixture)
    text = plan.to_json() if kind == "json" else render_markdown(plan)
    path = GOLDEN / f"{preset}.plan.{kind}"
    if update_golden:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing {path}; run `make golden`"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed; review the diff, then run `make golden`"
