"""Property tests of selection on the hand-made catalog (few nodes, modest example counts, so the suite stays fast).

Properties, stated precisely:
1. objective=cost: the chosen option costs no more per run than any feasible option (considered or not).
2. objective=time: the chosen option is no slower than any feasible option.
3. A chosen option meets every constraint it was given (deadline, per-run and per-year budget).
4. Raising a budget only adds feasible options (budgets are upper bounds), so with objective=cost the chosen
   option never gets more expensive, and with objective=time it never gets slower. (With objective=cost it may
   get *slower*: a cheaper, slower option can become affordable — that is not a bug.)
5. An infeasible job always gets at least one "what to relax" line with a number in it.
6. The tier is of the highest jobs-in-parallel level the job reaches, and the year bills every parallel job's runs.
"""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprints.advisor import choice
from blueprints.advisor.data import limits
from blueprints.advisor.job import parse_job
from blueprints.advisor.options import enumerate_options
from blueprints.architectures import budget_tiers

from .fakes import fake_catalog

CAT = fake_catalog()
TIERS = budget_tiers(limits())
recommend = functools.partial(choice.recommend, tiers=TIERS)
SETTINGS = settings(max_examples=40, deadline=None)

jobs = st.fixed_dictionaries(
    {
        "model_kind": st.just("transformer"),
        "params": st.floats(1e7, 2e11),
        "tokens": st.floats(1e8, 1e13),
        "max_nodes": st.integers(1, 12),
        "runs_per_year": st.floats(0.5, 50),
        "sharding": st.booleans(),
    },
    optional={
        "deadline_days": st.floats(0.05, 400),
        "budget_cny_per_run": st.floats(100, 1e8),
        "budget_cny_per_year": st.floats(1000, 1e9),
        "jobs_in_parallel": st.integers(1, 5),
    },
)


def _job(data):
    return parse_job(dict(data, name="prop-job"))


@SETTINGS
@given(jobs, st.sampled_from(["cost", "time"]))
def test_chosen_is_optimal_and_meets_constraints(data, objective):
    job = _job(data)
    options = enumerate_options(job, CAT)
    rec = recommend(job, CAT, objective, options=options)
    feasible = [o for o in options if o.feasible]
    if rec.chosen is None:
        assert not feasible
        return
    c = rec.chosen
    if objective == "cost":
        assert all(c.cost_cny_per_run <= o.cost_cny_per_run + 1e-9 for o in feasible)
        assert all(
            c.cost_cny_per_run <= item.option.cost_cny_per_run + 1e-9 for item in rec.considered if item.option.feasible
        )
    else:
        assert all(c.estimated_hours <= o.estimated_hours + 1e-9 for o in feasible)
    if job.deadline_hours is not None:
        assert c.estimated_hours <= job.deadline_hours
    if job.budget_cny_per_run is not None:
        assert c.cost_cny_per_run <= job.budget_cny_per_run
    if job.budget_cny_per_year is not None:
        assert c.cost_cny_per_year <= job.budget_cny_per_year


@SETTINGS
@given(jobs, st.floats(1.0, 100.0), st.sampled_from(["cost", "time"]))
def test_raising_the_budget_never_makes_the_choice_worse(data, factor, objective):
    job = _job(data)
    before = recommend(job, CAT, objective)
    raised = dict(data)
    for key in ("budget_cny_per_run", "budget_cny_per_year"):
        if key in raised:
            raised[key] = raised[key] * factor
    after = recommend(_job(raised), CAT, objective)
    if before.chosen is None:
        return
    assert after.chosen is not None
    if objective == "cost":
        assert after.chosen.cost_cny_per_run <= before.chosen.cost_cny_per_run + 1e-9
    else:
        assert after.chosen.estimated_hours <= before.chosen.estimated_hours + 1e-9


@SETTINGS
@given(jobs)
def test_infeasible_jobs_get_numeric_relax_advice(data):
    rec = recommend(_job(data), CAT)
    if rec.chosen is not None:
        assert rec.relax == ()
        return
    assert rec.relax
    assert any(re.search(r"\d", line) for line in rec.relax)


@SETTINGS
@given(jobs)
def test_the_tier_serves_the_jobs_in_parallel_and_its_year_counts_them_all(data):
    """6. The tier is of the highest jobs-in-parallel level the job reaches, and the year bills every job's runs."""
    job = _job(data)
    rec = recommend(job, CAT)
    if rec.chosen is None:
        return
    levels = [t.min_jobs_in_parallel for t in TIERS if t.min_jobs_in_parallel <= job.jobs_in_parallel]
    assert rec.tier.min_jobs_in_parallel == max(levels)
    c = rec.chosen
    assert c.cost_cny_per_year == pytest.approx(c.cost_cny_per_run * job.runs_per_year * job.jobs_in_parallel)
    if rec.yearly.mode.node_hours is not None and rec.yearly.mode.name != "always on":
        assert rec.yearly.mode.node_hours == pytest.approx(
            c.estimated_hours * job.runs_per_year * job.jobs_in_parallel * c.nodes
        )
