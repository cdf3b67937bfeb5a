"""What a preset says of its own compute (its description, the hours of one run) holds only while that compute does."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprints.review.render import render_markdown
from blueprints.testing import offline_plan

ROOT = Path(__file__).resolve().parents[1]


def first_note(plan) -> str:
    return plan.notes[0]


def test_an_untouched_preset_keeps_its_description_and_run_hours(medical_plan):
    assert first_note(medical_plan).startswith("The article's 3 × m6i.32xlarge")
    assert medical_plan.costs["totals"]["run_hours"] is not None


def test_the_example_stack_with_two_nodes_does_not_claim_the_presets_twelve():
    """Pulumi.example.yaml (compute.nodes: 2): the PR comment's first line said "12 × …: the same 96 A100 GPUs"."""
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    result = CliRunner().invoke(
        app, ["plan", "--stack-config", str(ROOT / "Pulumi.example.yaml"), "--format", "markdown"]
    )
    assert result.exit_code == 0, result.output
    quote = [line for line in result.output.splitlines() if line.startswith("> ")][0]
    assert quote == "> The medical-imaging preset with compute.nodes 12 → 2 (its own description no longer applies)."
    assert "96 A100" not in result.output and "12 ×" not in quote


@pytest.mark.parametrize(
    "overrides, expected",
    [
        (
            {"compute.nodes": 0},
            "The medical-imaging preset with compute.nodes 12 → 0 (its own description no longer applies).",
        ),
        (
            {"compute.instance_type": "ecs.gn7-c13g1.26xlarge"},
            "The medical-imaging preset with compute.instance_type ecs.gn7e-c16g1.32xlarge → ecs.gn7-c13g1.26xlarge "
            "(its own description no longer applies).",
        ),
    ],
)
def test_a_changed_compute_replaces_the_description_and_drops_the_presets_run_hours(overrides, expected):
    plan = offline_plan("medical-imaging", overrides=overrides)
    assert first_note(plan) == expected
    # 39.1 h was one run on the preset's 12 nodes: on other compute it would price a run that is not this one.
    assert plan.costs["totals"]["run_hours"] is None and plan.costs["totals"]["cny_per_run"] is None
    assert "per run: no run length given" in render_markdown(plan)


def test_a_description_or_run_hours_given_with_the_override_are_kept():
    plan = offline_plan(
        "medical-imaging", overrides={"compute.nodes": 2, "description": "Two-node dev cluster.", "cost.run_hours": 200}
    )
    assert first_note(plan) == "Two-node dev cluster." and plan.costs["totals"]["run_hours"] == 200


def test_changes_outside_what_the_description_speaks_of_keep_it():
    plan = offline_plan("medical-imaging", overrides={"storage.zone": "cn-shanghai-b"})
    assert first_note(plan).startswith("The article's 3 × m6i.32xlarge")
