"""Jobs that share one pool (Job.jobs_in_parallel): tier level,
pool sizing, the year of all jobs, and why, with numbers."""

from __future__ import annotations

import copy
import functools

import pytest
import typer
from typer.testing import CliRunner

from blueprints.advisor import choice
from blueprints.advisor.budget import BudgetTier, StandingCost
from blueprints.advisor.data import limits
from blueprints.advisor.job import parse_job
from blueprints.advisor.tiers import served, tier_for
from blueprints.advisor.yearly import tier_standing_items
from blueprints.architectures import budget_tiers, job_engines
from blueprints.catalog import instance_price, load_catalog
from blueprints.catalog.records import PriceRow
from blueprints.cli.advisor import register
from tests.advisor.fakes import fake_catalog

TIERS = budget_tiers(limits())
CAT = fake_catalog()
HOURS = 8760.0
app = typer.Typer()
register(app)
runner = CliRunner()
LLM = ["--model-kind", "transformer", "--params", "1e9", "--tokens", "1e10"]


def job(**kw):
    """1e9 parameters × 1e10 tokens (6e19 FLOPs), cn-shanghai, with overrides."""
    return parse_job({"params": 1e9, "tokens": 1e10, "region": "cn-shanghai", **kw})


recommend = functools.partial(choice.recommend, tiers=TIERS)


def _catalog_with_ack(amount: float | None):
    """The real catalog with its ack/pro-cluster-fee rows replaced by one CNY row of ``amount`` (None: no row)."""
    cat = copy.copy(load_catalog())
    rows = tuple(p for p in cat.prices if p.item != "ack")
    if amount is not None:
        rows += (
            PriceRow("ack", "pro-cluster-fee", ("*",), amount, "CNY", "hour", "official", "test row", "2026-11-30", ""),
        )
    cat.prices = rows
    return cat


# --- the job field --------------------------------------------------------------------------------


def test_jobs_in_parallel_defaults_to_one_and_accepts_yaml_numbers():
    assert job().jobs_in_parallel == 1
    assert job(jobs_in_parallel=3).jobs_in_parallel == 3
    assert job(jobs_in_parallel="3").jobs_in_parallel == 3  # YAML 1.1 may hand a string
    assert job(jobs_in_parallel=3.0).jobs_in_parallel == 3


@pytest.mark.parametrize(
    "value, expected",
    [
        (
            "0",
            "jobs_in_parallel = 0: must be greater than or equal to 1: "
            "jobs_in_parallel is the how many jobs like this one run at the same time",
        ),
        ("2001", "jobs_in_parallel = 2001: must be less than or equal to 2000"),
        ("2.5", "jobs_in_parallel = 2.5"),
        ("three", "jobs_in_parallel"),
    ],
)
def test_bad_jobs_in_parallel_exits_2_naming_the_field(value, expected, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(f"params: 1e9\ntokens: 1e10\njobs_in_parallel: {value}\n", encoding="utf-8")
    result = runner.invoke(app, ["recommend", str(path)])
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output and result.output.count("  - ") == 1


def test_the_flag_overrides_the_file():
    result = runner.invoke(app, ["recommend", *LLM, "--jobs-in-parallel", "0"])
    assert result.exit_code == 2 and "jobs_in_parallel = 0" in result.output


# --- tier level -----------------------------------------------------------------------------------


def _tier(name, level, minimum=0.0):
    return BudgetTier(name, name, minimum, name, lambda t, n, j=1: {"instance_type": t}, min_jobs_in_parallel=level)


def test_highest_level_served_wins_then_the_yearly_rule():
    tiers = [
        _tier("lone-big", 1, 500.0),
        _tier("lone-small", 1),
        _tier("pair", 2),
        _tier("team-big", 4, 500.0),
        _tier("team", 4),
    ]
    assert [t.name for t in served(job(), tiers)] == ["lone-big", "lone-small"]
    assert [t.name for t in served(job(jobs_in_parallel=3), tiers)] == ["pair"]
    assert [t.name for t in served(job(jobs_in_parallel=4), tiers)] == ["team-big", "team"]
    chosen = recommend(job(), CAT).chosen
    assert tier_for(job(jobs_in_parallel=9), chosen, tiers, 499.0, "y").name == "team"
    assert tier_for(job(jobs_in_parallel=9), chosen, tiers, 500.0, "y").name == "team-big"
    assert (
        tier_for(job(jobs_in_parallel=9), chosen, tiers, 500.0, "y").basis
        == "jobs_in_parallel 9 (tiers for jobs sharing one pool), then y"
    )
    assert tier_for(job(), chosen, tiers, 500.0, "y").basis == "y"
    assert tier_for(job(), chosen, [_tier("pair", 2)], 1.0, "y") is None  # nothing serves a lone job


@pytest.mark.parametrize("yearly", [0.0, 99999.0, 250000.0, 600000.0, None])
def test_parallel_jobs_get_the_shared_pool_at_any_cost_and_a_lone_job_never(yearly):
    chosen = recommend(job(), CAT).chosen
    shared = tier_for(job(jobs_in_parallel=2), chosen, TIERS, yearly, "y")
    assert shared.min_jobs_in_parallel == 2 and job_engines()[shared.blueprint] == "kubernetes"
    alone = tier_for(job(), chosen, TIERS, yearly, "y")
    assert alone.min_jobs_in_parallel == 1 and job_engines()[alone.blueprint] == "torchrun"


def test_the_shared_pool_holds_every_parallel_job():
    rec = recommend(job(jobs_in_parallel=3), CAT)
    n = rec.chosen.nodes
    assert rec.tier.compute == {
        "instance_type": rec.chosen.instance_type,
        "min_nodes": 0,
        "max_nodes": 3 * n,
        "nodes_per_job": n,
    }


# --- the year of all jobs -------------------------------------------------------------------------


def test_the_year_counts_every_parallel_jobs_runs():
    one = recommend(job(runs_per_year=4), CAT)
    three = recommend(job(runs_per_year=4, jobs_in_parallel=3), CAT)
    assert three.chosen.instance_type == one.chosen.instance_type and three.chosen.nodes == one.chosen.nodes
    per_run = one.chosen.cost_cny_per_run
    assert three.chosen.cost_cny_per_year == pytest.approx(per_run * 4 * 3, rel=1e-9)
    compute = three.yearly.mode.compute
    assert (
        compute.amount == pytest.approx(per_run * 12, rel=1e-9) and compute.what == "compute (3 parallel jobs × 4 runs)"
    )
    assert three.yearly.mode.node_hours == pytest.approx(
        one.chosen.estimated_hours * 4 * 3 * one.chosen.nodes, rel=1e-9
    )
    # Kept up all year, a cluster that holds the three jobs at once has three times the nodes.
    always = next(m for m in (three.yearly.mode, *three.yearly.alternatives) if m.name == "always on")
    assert always.compute.amount == pytest.approx(one.chosen.price_cny_per_hour * one.chosen.nodes * 3 * HOURS)
    assert always.node_hours == pytest.approx(one.chosen.nodes * 3 * HOURS)


def test_a_yearly_budget_holds_all_jobs():
    cheapest = recommend(job(), CAT).chosen
    per_run = cheapest.cost_cny_per_run
    assert (
        recommend(job(runs_per_year=1, budget_cny_per_year=per_run * 2), CAT).chosen is not None
    )  # one job's run fits
    rec = recommend(job(jobs_in_parallel=3, runs_per_year=1, budget_cny_per_year=per_run * 2), CAT)
    assert rec.chosen is None  # three jobs' runs do not
    best = next(c.option for c in rec.considered if c.option.instance_type == cheapest.instance_type)
    assert (
        f"costs ¥{per_run * 3:,.0f} a year (3 parallel jobs × 1 run); the budget is ¥{per_run * 2:,.0f}"
        in best.reasons[-1].message
    )


def test_parallel_jobs_read_storage_at_once():
    lone = choice.needed_mb_s(job(dataset_tb=10), 10.0)
    assert choice.needed_mb_s(job(dataset_tb=10, jobs_in_parallel=3), 10.0) == pytest.approx(3 * lone)


def test_the_cluster_standing_costs_are_priced_or_unknown_never_zero():
    tier = next(t for t in TIERS if t.min_jobs_in_parallel > 1)
    fee = next(s for s in tier.standing if s.item is not None)
    system = next(s for s in tier.standing if s.instance_type is not None)
    real = load_catalog()
    unknown = {i.what: i for i in tier_standing_items(job(), _catalog_with_ack(None), tier.standing)}
    assert unknown[fee.what].amount is None and unknown[fee.what].status == "unknown"
    price = instance_price(real, system.instance_type, job().region).cny
    assert unknown[system.what].amount == pytest.approx(system.quantity * price * HOURS)
    priced = {i.what: i for i in tier_standing_items(job(), _catalog_with_ack(0.64), tier.standing)}
    assert priced[fee.what].amount == pytest.approx(0.64 * HOURS) and priced[fee.what].status == "list"
    # The API server's load balancer has no recorded price: it is listed as unknown, never counted as 0.
    assert (
        priced["API server load balancer (CLB)"].amount is None
        and priced["API server load balancer (CLB)"].status == "unknown"
    )
    assert all(i.amount is None or i.amount > 0 for i in priced.values())


def test_the_shared_pool_year_includes_the_cluster():
    cat = _catalog_with_ack(0.64)
    data = {"params": 3e9, "tokens": 6e10, "deadline_days": 7, "runs_per_year": 8, "region": "cn-shanghai"}
    rec = choice.recommend(parse_job({**data, "jobs_in_parallel": 3}), cat, tiers=TIERS)
    yc = rec.yearly
    items = {i.what: i.amount for i in yc.items()}
    assert items["ACK Pro cluster management fee"] == pytest.approx(5606.4)
    assert yc.total() == pytest.approx(
        yc.mode.compute.amount + sum(i.amount or 0 for i in yc.standing) + 5606.4 + 2 * 0.96 * 8760
    )
    # The alternatives are fixed clusters: no cluster fee, no system pool.
    for alt in yc.alternatives:
        assert "ACK Pro cluster management fee" not in {i.what for i in yc.items(alt)}
        assert yc.total(alt) == pytest.approx(alt.compute.amount + sum(i.amount or 0 for i in yc.standing))
    alone = choice.recommend(parse_job(data), cat, tiers=TIERS)
    assert "ACK Pro cluster management fee" not in {i.what for i in alone.yearly.items()}


def test_standing_items_need_a_price_source():
    with pytest.raises(AssertionError, match="names neither"):
        tier_standing_items(job(), CAT, (StandingCost("mystery", 1, "h"),))


# --- why, with numbers ----------------------------------------------------------------------------


def test_why_the_shared_pool_says_pool_size_node_hours_shared_cost_and_the_alternative():
    cat = _catalog_with_ack(0.64)
    rec = choice.recommend(
        parse_job({"params": 3e9, "tokens": 6e10, "deadline_days": 7, "runs_per_year": 8, "jobs_in_parallel": 3}),
        cat,
        tiers=TIERS,
    )
    c = rec.chosen
    pool, engine, shared, apart = rec.tier_reasons
    assert pool.startswith(
        f"one pool for all 3 parallel jobs: up to {3 * c.nodes} nodes ({3 * c.gpus} GPUs), {c.nodes} per job"
    )
    assert f"{rec.yearly.mode.node_hours:,.0f} node-hours a year" in pool and f"{3 * c.nodes * 8760:,}" in pool
    assert "queues a job that does not fit" in engine and "restarts failed workers" in engine
    total = 5606.4 + 2 * 0.96 * 8760
    assert f"= ¥{total:,.0f} a year, ¥{total / 3:,.0f} per job" in shared
    assert apart.startswith("against one stack per job: alone, each job gets ")
    assert f"against ¥{rec.yearly.total():,.0f} for the shared pool" in apart


def test_a_lone_job_is_told_why_not_the_shared_pool():
    rec = choice.recommend(
        parse_job({"params": 3e9, "tokens": 6e10, "deadline_days": 7}), _catalog_with_ack(0.64), tiers=TIERS
    )
    (line,) = rec.tier_reasons
    assert "it is for 2 or more jobs sharing one pool and this job runs alone (jobs_in_parallel 1)" in line
    assert f"¥{5606.4 + 2 * 0.96 * 8760:,.0f} a year more" in line


def test_the_yearly_budget_counts_what_the_shared_tier_keeps_up():
    cat = _catalog_with_ack(0.64)
    data = {
        "params": 3e9,
        "tokens": 6e10,
        "deadline_days": 7,
        "runs_per_year": 8,
        "jobs_in_parallel": 3,
        "region": "cn-shanghai",
    }
    fits = choice.recommend(parse_job(data), cat, tiers=TIERS)
    total = fits.yearly.total()
    cluster = 5606.4 + 2 * 0.96 * 8760
    # Enough for the compute and the foundation, but not for the cluster as well: that option is ruled out.
    rec = choice.recommend(
        parse_job({**data, "budget_cny_per_year": total - cluster / 2}), cat, tiers=TIERS, options=[fits.chosen]
    )
    assert rec.chosen is None
    reason = next(r for r in rec.considered[0].option.reasons if r.code == "budget_year")
    assert (
        "(file system, bucket, NAT gateway, ACK Pro cluster management fee, system node pool (2 × ecs.g7.xlarge))"
        in reason.message
    )
    assert f"+ ¥{total - fits.chosen.cost_cny_per_year:,.0f} for what stays up all year" in reason.message


def test_the_data_path_adds_up_the_parallel_jobs_reads():
    data = {
        "params": 3e9,
        "tokens": 6e10,
        "deadline_days": 7,
        "dataset_tb": 30,
        "jobs_in_parallel": 3,
        "region": "cn-shanghai",
    }
    rec = choice.recommend(parse_job(data), load_catalog(), tiers=TIERS)
    line = next(f for f in rec.findings if f.startswith("data path"))
    one = choice.needed_mb_s(parse_job({**data, "jobs_in_parallel": 1}), rec.chosen.estimated_hours)
    assert f"read {3 * one:,.0f} MB/s (3 parallel jobs × {one:,.0f} MB/s:" in line
    assert rec.storage.needed_mb_s == pytest.approx(3 * one)


def test_the_pool_bound_caps_each_jobs_nodes():
    tier = next(t for t in TIERS if t.min_jobs_in_parallel > 1)
    jobs = tier.pool_max_nodes // 2  # each job gets at most 2 nodes of the shared pool
    rec = recommend(job(jobs_in_parallel=jobs, deadline_days=0.1), CAT)
    assert rec.chosen is None and {c.option.nodes for c in rec.considered} <= {1, 2}
    assert rec.options_evaluated == 2 * len(CAT.instance_types)
    assert f"within 2 nodes per job ({jobs} parallel jobs share one pool)" in rec.relax[0] and rec.relax[0].endswith(
        "or run fewer jobs in parallel"
    )
    # A lone job is not capped by a pool it does not use.
    assert recommend(job(deadline_days=0.1), CAT).options_evaluated == 100 * len(CAT.instance_types)
