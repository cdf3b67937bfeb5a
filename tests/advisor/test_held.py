"""Held capacity in the yearly cost: a reservation of the node count kept all year costs nothing more when the cluster
is always on, and the idle node-hours (what parking saves) when it is parked or autoscaled between runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from blueprints.advisor import choice
from blueprints.advisor.render import recommendation_dict
from blueprints.advisor.yearly import ALWAYS_ON, PARKED, rows, yearly_cost
from tests.advisor.fakes import fake_catalog
from tests.advisor.test_yearly import MEDICAL, app, expected_medical, medical, small_job


def test_parked_between_runs_holding_costs_the_idle_node_hours_and_breaks_the_budget() -> None:
    rec = medical()
    yc = rec.yearly
    assert yc.mode.name == PARKED
    want = expected_medical()
    held = yc.held()
    assert held.cny_per_year == pytest.approx(want["always_on"] - want["compute"], rel=1e-9)
    text = dict(rows(yc))["held capacity"]
    assert f"¥{held.cny_per_year:,.0f} a year on top, what 'parked between runs' saves" in text
    assert f"with it the year is ¥{yc.total() + held.cny_per_year:,.0f}, over the ¥2,000,000 budget" in text
    doc = recommendation_dict(rec)["yearly_cost"]["held_capacity"]
    assert doc["cny_per_year"] == pytest.approx(held.cny_per_year, abs=0.01)


def test_always_on_holding_costs_nothing_more() -> None:
    cat = fake_catalog()
    job = small_job(runs_per_year=60)  # fills the year: always on
    option, storage, _ = choice.estimate(job, cat, "ecs.a8.32xlarge", 1)
    yc = yearly_cost(job, cat, option, storage)
    assert yc.mode.name == ALWAYS_ON
    assert yc.held().cny_per_year == 0.0
    assert dict(rows(yc))["held capacity"].startswith("a capacity reservation of the node count")


def test_unpriced_nodes_leave_holding_unknown_not_zero() -> None:
    cat = fake_catalog()
    option, storage, _ = choice.estimate(small_job(), cat, "ecs.x8.32xlarge", 1)
    held = yearly_cost(small_job(), cat, option, storage).held()
    assert held.cny_per_year is None and held.text.startswith("unknown: the nodes' price is unknown")


def test_estimate_json_carries_held_capacity() -> None:
    result = CliRunner().invoke(
        app,
        ["estimate", str(MEDICAL), "--instance-type", "ecs.gn7-c13g1.26xlarge", "--nodes", "3", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    held = json.loads(result.stdout)["yearly_cost"]["held_capacity"]
    assert held["cny_per_year"] > 0 and "node-hours no run uses" in held["text"]
