"""Selection on a small hand-made catalog: chosen option, reasons, what to relax, tiers, storage."""

from __future__ import annotations

import functools
import math

import pytest

from blueprints.advisor import choice
from blueprints.advisor.choice import estimate
from blueprints.advisor.data import limits
from blueprints.advisor.job import parse_job
from blueprints.advisor.options import enumerate_options
from blueprints.advisor.storage import choose_storage
from blueprints.advisor.tiers import tier_for
from blueprints.architectures import budget_tiers

from .fakes import fake_catalog

CAT = fake_catalog()
TIERS = budget_tiers(limits())
recommend = functools.partial(choice.recommend, tiers=TIERS)
# TCP heavy row: loss per doubling = (1 − 0.68) / log2(128) = 0.045714
LOSS = 0.32 / 7


def job(**kw):
    # mfu 0.40 from the job keeps the hand arithmetic below independent of data/mfu.csv (a job's mfu applies
    # to every GPU and collapses the range); test_ranges.py covers the anchored defaults.
    base = {
        "name": "test-job",
        "model_kind": "transformer",
        "params": 1e9,
        "tokens": 1e11,
        "max_nodes": 32,
        "mfu": 0.40,
    }
    base.update(kw)
    return parse_job(base)


def test_cheapest_without_deadline_is_one_big_node():
    # FLOPs 6e20. ecs.a8 × 1: 6e20 / (8 × 312e12 × 0.40) / 3600 = 166.934 h × ¥240 = ¥40,064.10.
    # ecs.a1 × 1 costs ¥40 per GPU-hour against ¥30 on ecs.a8, so a8 × 1 is cheapest.
    rec = recommend(job(), CAT)
    c = rec.chosen
    assert (c.instance_type, c.nodes, c.gpus) == ("ecs.a8.32xlarge", 1, 8)
    assert c.estimated_hours == pytest.approx(166.93376, rel=1e-6)
    assert c.cost_cny_per_run == pytest.approx(40064.10, rel=1e-6)


def test_deadline_forces_more_nodes():
    # 3-day deadline = 72 h. a8 × 2: eff 1 − LOSS = 0.954286 → 166.934/2/0.954286 = 87.47 h (too slow).
    # a8 × 3: eff 1 − LOSS × log2(3) = 0.927545 → 59.99 h, cost 3 × 240 × 59.99 = ¥43,193.72.
    # a1 needs 24 nodes (eff 0.79040 → 70.40 h) at 24 × 40 × 70.40 = ¥67,584.37: dearer.
    rec = recommend(job(deadline_days=3), CAT)
    c = rec.chosen
    assert (c.instance_type, c.nodes) == ("ecs.a8.32xlarge", 3)
    assert c.scaling_efficiency == pytest.approx(1 - LOSS * math.log2(3))
    assert c.estimated_hours == pytest.approx(59.99128, rel=1e-6)
    assert c.cost_cny_per_run == pytest.approx(43193.72, rel=1e-6)


def test_objective_time_takes_the_most_nodes_within_budget():
    # No budget: the fastest is the most GPUs; a8 × 32 (256 GPUs) beats a1 × 32 (32 GPUs).
    rec = recommend(job(), CAT, objective="time")
    assert (rec.chosen.instance_type, rec.chosen.nodes) == ("ecs.a8.32xlarge", 32)


def test_reasons_are_specific():
    options = {
        (o.instance_type, o.nodes): o for o in enumerate_options(job(deadline_days=3, budget_cny_per_run=42000), CAT)
    }
    assert [r.code for r in options[("ecs.x8.32xlarge", 1)].reasons] == ["unpriced", "deadline"]
    assert "can be planned but not priced" in options[("ecs.x8.32xlarge", 1)].reasons[0].message
    assert [r.code for r in options[("ecs.a8.32xlarge", 3)].reasons] == ["budget_run"]
    v100 = options[("ecs.v8.24xlarge", 1)]
    assert v100.reasons[0].code == "precision" and "fp16" in v100.reasons[0].message


def test_memory_reason():
    # 70e9 × 16 B / 8 GPUs = 130.4 GiB > 80 GiB; unsharded it never fits.
    options = {(o.instance_type, o.nodes): o for o in enumerate_options(job(params=70e9, tokens=1e9), CAT)}
    assert options[("ecs.a8.32xlarge", 1)].has("memory")
    assert not options[("ecs.a8.32xlarge", 2)].has("memory")  # 65.2 GiB
    assert "130.4 GiB per GPU" in options[("ecs.a8.32xlarge", 1)].reasons[0].message


def test_considered_has_one_row_per_gpu_model_and_a_chosen_mark():
    rec = recommend(job(deadline_days=3), CAT)
    models = [c.option.gpu_model for c in rec.considered]
    assert sorted(models) == ["A100-SXM4-80GB", "V100-SXM2-32GB"]
    assert [c.chosen for c in rec.considered].count(True) == 1 and rec.considered[0].chosen


def test_relax_deadline_and_budget_with_numbers():
    # Deadline 3 days needs a8 × 3 at ¥43,193.72; a budget of ¥20,000 per run pays for
    # 20,000 / (¥30 per GPU-hour × 72 h) = 9 GPUs. The cheapest option at any deadline, a8 × 1, costs ¥40,064.
    rec = recommend(job(deadline_days=3, budget_cny_per_run=20000), CAT)
    assert rec.chosen is None
    text = "\n".join(rec.relax)
    assert "needs ≥ 24 A100-SXM4-80GB" in text
    assert "the budget pays for 9 of them for 3 days" in text
    assert "raise the per-run budget from ¥20,000 to ¥43,194" in text
    assert "costs ¥40,064 per run" in text


def test_relax_deadline_only():
    # 32 × a8 is the fastest: eff 1 − LOSS × 5 = 0.771429 → 166.934
    # / 32 / 0.771429 = 6.762 h; a 0.1-day (2.4 h) deadline fails.
    rec = recommend(job(deadline_days=0.1), CAT)
    text = "\n".join(rec.relax)
    assert "extend the deadline to 0.3 days" in text  # 6.762 h = 0.28 days, rounded up to a tenth
    assert "raise max_nodes above 32" in text


def test_relax_yearly_budget_suggests_fewer_runs():
    # a8 × 1: ¥40,064 per run; 10 runs = ¥400,641 a year; budget ¥100,000 → 2.49 runs a year.
    rec = recommend(job(runs_per_year=10, budget_cny_per_year=100000), CAT)
    text = "\n".join(rec.relax)
    assert "raise the yearly budget from ¥100,000 to ¥400,642" in text
    assert "run 2.49 times a year instead of 10" in text


def test_relax_memory_without_sharding():
    rec = recommend(job(params=70e9, tokens=1e9, sharding=False), CAT)
    assert rec.chosen is None
    assert "set sharding: true" in rec.relax[0]


@pytest.mark.parametrize(
    "yearly, spot, tier, blueprint, spot_out",
    [
        (600000, False, "dedicated", "fixed-cluster", False),
        (500000, True, "dedicated", "fixed-cluster", False),  # boundary: ≥ 500k is dedicated
        (499999, True, "pool", "autoscaling-pool", True),  # the article's 300k–500k gap → pool
        (250000, False, "pool", "autoscaling-pool", False),
        (100000, True, "pool", "autoscaling-pool", True),  # boundary: ≥ 100k is the pool
        (99999, True, "single-node", "fixed-cluster", True),
        (None, True, "dedicated", "fixed-cluster", False),  # an unknown year goes to the highest tier
    ],
)
def test_budget_tiers(yearly, spot, tier, blueprint, spot_out):
    """The tier follows the year's cost (``blueprints.advisor.yearly``), boundaries from data/limits.csv."""
    rec = recommend(job(spot_allowed=spot), CAT)
    t = tier_for(rec.job, rec.chosen, TIERS, yearly, "a test year")
    assert (t.name, t.blueprint, t.spot, t.basis_cny_per_year, t.basis) == (
        tier,
        blueprint,
        spot_out,
        yearly,
        "a test year",
    )


def test_storage_grows_capacity_for_throughput():
    # Needs 2,000 MB/s: Extreme NAS tops out at 1,200 → CPFS advance_200: 2,000 / 200 × 1024 = 10,240 GiB.
    s = choose_storage(CAT, 2000, 1, "cn-shanghai")
    assert (s.kind, s.tier, s.capacity_gib, s.shortfall_mb_s) == ("cpfs", "advance_200", 10240, None)
    # Needs 250 MB/s with a 0.2 TB dataset (187 GiB): Extreme NAS needs 500 GiB for 300 MB/s.
    s = choose_storage(CAT, 250, 0.2, "cn-shanghai")
    assert (s.kind, s.capacity_gib, s.throughput_mb_s) == ("extreme_nas", 500, 300)


def test_storage_shortfall_is_reported():
    s = choose_storage(CAT, 50000, 1, "cn-shanghai")
    assert s.kind == "cpfs" and s.throughput_mb_s == 45000 and s.shortfall_mb_s == pytest.approx(5000)


def test_data_path_finding_has_numbers():
    # 100 TB read over 166.93 h = 1e14 / 600,961.5 s = 166.4 MB/s; ingest 100 TB/day = 1,157.4 MB/s.
    option, storage, findings = estimate(job(dataset_tb=100, ingest_tb_per_day=100), CAT, "ecs.a8.32xlarge", 1)
    line = next(f for f in findings if f.startswith("data path"))
    assert "read 166 MB/s" in line and "write 1,157 MB/s" in line
    assert storage.kind == "cpfs"


def test_estimate_unpriced_type_keeps_time():
    option, _, _ = estimate(job(), CAT, "ecs.x8.32xlarge", 1)
    assert option.cost_cny_per_run is None and option.estimated_hours == pytest.approx(166.93376, rel=1e-6)
    assert option.reasons[0].code == "unpriced"
