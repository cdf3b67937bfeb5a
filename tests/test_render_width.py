"""The terminal plan at 80 columns: every line fits, and no resource name, type or safety flag is cut."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.review.render import render_table


def flat(text: str) -> str:
    """The text with every run of blanks and line breaks as one space (wrapped words joined)."""
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("fixture", ["medical_plan", "autoscaling_plan"])
def test_at_80_columns_every_line_fits_and_every_safety_flag_and_name_is_whole(fixture, request):
    plan = request.getfixturevalue(fixture)
    text = render_table(plan, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text  # rich's ellipsis: something was cut
    joined = flat(text)
    for r in plan.resources:
        assert r.name in text, r.name
        assert r.short_type in joined, r.short_type
    stateful = [r for r in plan.resources if r.protect and r.retain_on_delete]
    assert stateful
    for r in stateful:
        assert f"{r.name} {r.short_type} [protect retain-on-delete" in joined, r.name
    assert "medical-imaging-cluster-nodes-0" not in joined or "[delete-before-replace]" in joined


def test_at_80_columns_each_cost_line_keeps_its_item_and_amounts(medical_plan):
    text = render_table(medical_plan, width=80)
    assert "    12 × ecs.gn7e-c16g1.32xlarge: ¥3,335.16/h, ¥2,434,666.80/month (list)" in text
    for line in medical_plan.costs["lines"]:
        assert line["item"] in flat(text), line["item"]


def test_the_wide_table_is_unchanged_at_160(medical_plan):
    assert re.search(
        r"medical-imaging-cluster-nodes-0\s+12 × ecs\.gn7e-c16g1\.32xlarge\s+¥3,335\.16", render_table(medical_plan)
    )


def test_the_width_option_reaches_the_table():
    result = CliRunner().invoke(app, ["plan", "medical-imaging", "--width", "80"])
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert CliRunner().invoke(app, ["plan", "medical-imaging", "--width", "10"]).exit_code == 2


def test_a_cost_table_wider_than_the_terminal_becomes_the_list():
    """The access-log bucket's long item made the 160-column cost table wrap every row in two."""
    from blueprints.review.render.costs import cost_text

    long_item = {
        "resource": "r",
        "type": "oss.Bucket",
        "item": "x" * 150,
        "cny_per_hour": None,
        "cny_per_month": None,
        "status": "list",
    }
    text = cost_text({"lines": [long_item], "totals": {}}, width=160)
    assert max(len(line) for line in text.splitlines()) <= 160 or "x" * 150 in text
    assert f"    {'x' * 150}: unknown/h, unknown/month (list)" in text
