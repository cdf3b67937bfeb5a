"""Operating mode and yearly cost: parked time counted, every price in CNY through the catalog, unknown prices listed,
the budget tier chosen on the year's cost, and the budget verdict honest."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.advisor import choice
from blueprints.advisor.data import limits
from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.advisor.render import recommendation_dict, render_markdown, render_table
from blueprints.advisor.yearly import (
    ALWAYS_ON,
    PARKED,
    POOL,
    CostItem,
    rows,
    standing_items,
    total_cny,
    verdict,
    yearly_cost,
)
from blueprints.architectures import budget_tiers
from blueprints.catalog import instance_price, load_catalog, price_cny
from blueprints.cli.advisor import register

from .fakes import fake_catalog

ROOT = Path(__file__).resolve().parents[2]
MEDICAL = ROOT / "examples" / "medical-imaging.yaml"
CATALOG = load_catalog()
TIERS = budget_tiers(limits())
recommend = functools.partial(choice.recommend, tiers=TIERS)
app = typer.Typer()
register(app)
HOURS = 8760


def medical_job(**overrides):
    data = load_job_dict(MEDICAL)
    data.update(overrides)
    return parse_job(data, source="job", regions=CATALOG.regions)


@functools.lru_cache(maxsize=None)
def medical():
    return recommend(medical_job(), CATALOG)


def cny(item, tier=None, region="cn-shanghai"):
    return price_cny(CATALOG, item, tier, region).cny


def expected_medical():
    """The figures from the catalog's prices and the chosen option's
    hours, computed here rather than copied from output."""
    rec = medical()
    c = rec.chosen
    price = instance_price(CATALOG, c.instance_type, rec.job.region).cny
    compute = price * c.nodes * c.estimated_hours * 12
    bucket = math.ceil(100e12 / 2**30) * 12 * cny("oss", "Standard")
    nat = HOURS * cny("nat_instance")
    fs = (
        None
        if rec.storage.price_per_gib_month is None
        else rec.storage.capacity_gib * 12 * rec.storage.price_per_gib_month
    )
    eip = [HOURS * p for p in (cny("eip_config"), cny("eip_association")) if p is not None]
    standing = bucket + nat + (fs or 0.0) + sum(eip)
    return {
        "compute": compute,
        "bucket": bucket,
        "nat": nat,
        "fs": fs,
        "standing": standing,
        "always_on": price * c.nodes * HOURS,
    }


def test_medical_imaging_is_parked_between_runs_within_budget():
    rec = medical()
    want = expected_medical()
    yc = rec.yearly
    assert rec.tier.blueprint == "fixed-cluster" and rec.tier.name == "dedicated"
    assert yc.mode.name == PARKED and yc.mode.shape == "fixed cluster"
    assert yc.mode.node_hours == pytest.approx(12 * rec.chosen.estimated_hours * rec.chosen.nodes)
    assert yc.mode.compute.amount == pytest.approx(want["compute"], rel=1e-9)
    # One CNY total: the NAT gateway's USD list price is converted through the catalog's cited rate and marked so.
    assert yc.total() == pytest.approx(want["compute"] + want["standing"], rel=1e-9)
    nat = next(i for i in yc.items() if i.what == "NAT gateway instance fee")
    assert nat.status == "converted" and "CNY/USD" in nat.basis
    assert yc.over_by_cny() == pytest.approx(yc.total() - 2_000_000, rel=1e-9) and yc.over_by_cny() < 0
    # The tier is chosen on that year, not on the ¥2 M budget the job states.
    assert rec.tier.basis_cny_per_year == pytest.approx(yc.total(), rel=1e-9)
    assert rec.tier.basis == "its yearly cost with nodes only during runs"


def test_medical_imaging_lists_unknown_prices_as_unknown_never_zero():
    yc = medical().yearly
    unknown = {i.what for i in yc.unknown()}
    assert "NAT gateway CU fee (usage)" in unknown
    assert all(i.amount is None and i.status == "unknown" for i in yc.unknown())
    assert not any(i.amount == 0 for i in yc.items())
    assert "unknown, so not counted: " + ", ".join(i.what for i in yc.unknown()) in verdict(yc)
    bucket = next(i for i in yc.items() if i.what.startswith("OSS bucket"))
    assert bucket.status == "estimate" and "the dataset alone" in bucket.basis


def test_medical_imaging_alternatives_show_their_yearly_cost():
    yc = medical().yearly
    want = expected_medical()
    alts = {m.name: m for m in yc.alternatives}
    assert set(alts) == {ALWAYS_ON, POOL}
    assert alts[ALWAYS_ON].compute.amount == pytest.approx(want["always_on"], rel=1e-9)
    assert yc.over_by_cny(alts[ALWAYS_ON]) == pytest.approx(want["always_on"] + want["standing"] - 2_000_000, rel=1e-9)
    assert yc.over_by_cny(alts[ALWAYS_ON]) > 0  # kept up all year, the dedicated cluster would break the budget
    assert alts[POOL].compute.amount == pytest.approx(want["compute"], rel=1e-9)


def test_medical_imaging_text_states_mode_breakdown_and_verdict():
    rec = medical()
    want = expected_medical()
    text = render_table(rec)
    total = rec.yearly.total()
    assert "Operating mode: parked between runs (fixed cluster)" in text
    assert "compute.nodes: 0 / aitrain park" in text and "aitrain preflight" in text
    assert (
        f"Yearly cost: ¥{total:,.0f} a year = ¥{want['compute']:,.0f} "
        f"compute (12 runs) + ¥{want['bucket']:,.0f} OSS bucket (estimate)" in text
    )
    assert f"¥{want['nat']:,.0f} NAT gateway instance fee" in text
    assert "; converted from a USD list price at the catalog's cited rate: NAT gateway instance fee" in text
    assert (
        f"Budget: within the ¥2,000,000 budget: ¥{total:,.0f}, of which ¥{want['bucket']:,.0f} is an estimate "
        f"(¥{2_000_000 - total:,.0f} to spare)" in text
    )
    always = want["always_on"] + want["standing"]
    assert (
        f"Alternative: always on (fixed cluster): ¥{always:,.0f} a year (¥{want['always_on']:,.0f} compute + the same "
        f"standing costs), over the budget by ¥{always - 2_000_000:,.0f}" in text
    )
    assert f"tier 'dedicated', from its yearly cost with nodes only during runs ¥{total:,.0f}" in text
    markdown = render_markdown(rec)
    assert "Operating mode: parked between runs" in markdown and "Budget: within the ¥2,000,000 budget" in markdown


def test_medical_imaging_json_has_one_cny_total():
    doc = recommendation_dict(medical(), "test")
    yearly = doc["yearly_cost"]
    assert yearly["mode"] == PARKED
    assert yearly["total_cny_per_year"] == pytest.approx(medical().yearly.total(), abs=0.01)
    assert yearly["over_budget_cny"] < 0
    by_what = {i["what"]: i for i in yearly["items"]}
    assert by_what["compute (12 runs)"]["status"] == "list"
    assert by_what["NAT gateway instance fee"]["status"] == "converted"
    assert by_what["NAT gateway CU fee (usage)"] == {
        "what": "NAT gateway CU fee (usage)",
        "cny_per_year": None,
        "status": "unknown",
        "basis": "billed on connections and traffic, which the job does not state",
    }
    assert yearly["unknown"] == [i["what"] for i in yearly["items"] if i["cny_per_year"] is None]
    assert {a["mode"]: a["over_budget_cny"] > 0 for a in yearly["alternatives"]} == {POOL: False, ALWAYS_ON: True}
    json.dumps(doc)  # plain data


def test_what_stays_up_counts_against_the_yearly_budget():
    # A budget just under the medical year: the same option's compute alone fits, compute + what stays up does not.
    first = medical().chosen
    total = medical().yearly.total()
    assert first.cost_cny_per_year < total - 1
    rec = recommend(medical_job(budget_cny_per_year=total - 1), CATALOG, options=[first])
    assert rec.chosen is None
    reason = next(r for r in rec.considered[0].option.reasons if r.code == "budget_year")
    standing = total - first.cost_cny_per_year
    assert reason.message == (
        f"costs ¥{first.cost_cny_per_year:,.0f} a year in compute + "
        f"¥{standing:,.0f} for what stays up all year (file system, "
        f"bucket, NAT gateway) = ¥{total:,.0f}; the budget is ¥{total - 1:,.0f}"
    )
    assert any(
        r.endswith(
            f"the budget is ¥{total - 1:,.0f}: raise the yearly budget, or size the job's data (dataset_tb) down"
        )
        for r in rec.relax
    )
    # With the whole catalog the advisor moves on to an option whose year fits.
    rec = recommend(medical_job(budget_cny_per_year=total - 1), CATALOG)
    assert rec.chosen is None or rec.yearly.total() <= total - 1


def test_totals_skip_unknowns():
    items = [CostItem("b", 5.0, "list", ""), CostItem("c", None, "unknown", ""), CostItem("d", 7.0, "estimate", "")]
    assert total_cny(items) == 12.0
    assert total_cny([CostItem("c", None, "unknown", "")]) == 0.0


def test_nat_fee_is_the_sourced_row_per_region():
    job = parse_job(
        {"name": "sg-job", "model_kind": "transformer", "params": 1e9, "tokens": 1e11, "region": "ap-southeast-1"}
    )
    nat = next(i for i in standing_items(job, CATALOG, None) if i.what == "NAT gateway instance fee")
    assert nat.amount == pytest.approx(HOURS * cny("nat_instance", region="ap-southeast-1"), rel=1e-9)
    assert nat.amount != pytest.approx(HOURS * cny("nat_instance"), rel=1e-3)  # not the mainland price
    assert "applied to" not in nat.basis
    # A region no row covers gets the first row's price, and says where it was quoted.
    job = parse_job(
        {"name": "far-job", "model_kind": "transformer", "params": 1e9, "tokens": 1e11, "region": "me-central-1"}
    )
    nat = next(i for i in standing_items(job, CATALOG, None) if i.what == "NAT gateway instance fee")
    assert "applied to me-central-1" in nat.basis


def small_job(**kw):
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


def test_pool_tier_scales_to_zero():
    # 4 runs of one ecs.a8 node (¥240/h × 166.93 h = ¥40,064 each) = ¥160,256 a year: the pool tier (¥100k–500k).
    rec = recommend(small_job(runs_per_year=4, deadline_days=7), fake_catalog())
    assert rec.yearly.mode.compute.amount == pytest.approx(rec.chosen.cost_cny_per_run * 4)
    assert 100_000 <= rec.tier.basis_cny_per_year < 500_000
    assert rec.tier.blueprint == "autoscaling-pool" and rec.tier.name == "pool"
    assert rec.yearly.mode.name == POOL
    # The hand-made catalog has no prices.csv: the bucket and the NAT gateway are unknown, not 0.
    assert {i.what for i in rec.yearly.unknown()} >= {"OSS bucket", "NAT gateway instance fee"}


def test_tier_follows_the_yearly_cost_not_the_budget():
    # A ¥3 M budget does not make a ¥40k-a-year job a dedicated cluster.
    rec = recommend(small_job(runs_per_year=1, budget_cny_per_year=3_000_000, deadline_days=7), fake_catalog())
    assert rec.tier.basis_cny_per_year == pytest.approx(rec.yearly.total()) and rec.yearly.total() < 100_000
    assert rec.tier.name == "single-node"
    # Runs that fill the year are priced always on, and that year picks the dedicated tier.
    rec = recommend(small_job(runs_per_year=60, max_nodes=1), fake_catalog())
    assert rec.yearly.mode.name == ALWAYS_ON
    assert rec.tier.basis == "its yearly cost always on" and rec.tier.name == "dedicated"
    assert rec.tier.basis_cny_per_year == pytest.approx(rec.yearly.total())


def test_runs_that_fill_the_year_leave_nothing_to_park():
    # One ecs.a8 node takes 166.93 h per run (test_selection); 60 runs = 10,016 h > 8,760 h.
    cat = fake_catalog()
    job = small_job(runs_per_year=60)
    option, storage, _ = choice.estimate(job, cat, "ecs.a8.32xlarge", 1)
    yc = yearly_cost(job, cat, option, storage)
    assert yc.mode.name == ALWAYS_ON
    assert yc.mode.compute.amount == pytest.approx(240 * 8760)
    assert "nothing to park" in yc.why
    job = small_job(runs_per_year=52)  # 8,680.6 h < 8,760 h
    option, storage, _ = choice.estimate(job, cat, "ecs.a8.32xlarge", 1)
    assert yearly_cost(job, cat, option, storage).mode.name == PARKED


def test_no_budget_gives_no_verdict_but_the_cny_part():
    cat = fake_catalog()
    job = small_job(runs_per_year=2)
    option, storage, _ = choice.estimate(job, cat, "ecs.a8.32xlarge", 1)
    yc = yearly_cost(job, cat, option, storage)
    assert yc.over_by_cny() is None
    assert verdict(yc).startswith(f"no yearly budget given; the known total is ¥{option.cost_cny_per_run * 2:,.0f}")


def test_unpriced_compute_has_no_verdict():
    cat = fake_catalog()
    job = small_job(budget_cny_per_year=1_000_000)
    option, storage, _ = choice.estimate(job, cat, "ecs.x8.32xlarge", 1)
    yc = yearly_cost(job, cat, option, storage)
    assert yc.mode.compute.amount is None and yc.over_by_cny() is None
    assert verdict(yc).startswith("compute price unknown, so no verdict against the ¥1,000,000 budget")


def test_estimate_cli_shows_mode_and_yearly_cost():
    result = CliRunner().invoke(
        app, ["estimate", str(MEDICAL), "--instance-type", "ecs.gn7-c13g1.26xlarge", "--nodes", "3"]
    )
    assert result.exit_code == 0, result.output
    want = expected_medical()
    assert "operating mode       parked between runs (fixed cluster)" in result.stdout
    assert f"¥{want['compute']:,.0f} compute (12 runs)" in result.stdout
    result = CliRunner().invoke(
        app, ["estimate", str(MEDICAL), "--instance-type", "ecs.gn7-c13g1.26xlarge", "--nodes", "3", "--format", "json"]
    )
    doc = json.loads(result.stdout)
    assert doc["yearly_cost"]["mode"] == PARKED
    assert doc["yearly_cost"]["total_cny_per_year"] == pytest.approx(want["compute"] + want["standing"], abs=0.01)


def test_recommend_write_keeps_the_node_count(tmp_path):
    # Parking is the user's step (aitrain park); the written config still runs the recommended nodes.
    from blueprints.profile.stackconfig import engine_config, read_settings

    target = tmp_path / "Pulumi.dev.yaml"
    result = CliRunner().invoke(app, ["recommend", str(MEDICAL), "--write", str(target)])
    assert result.exit_code == 0, result.output
    profile = read_settings(engine_config(target), source=str(target)).profile
    assert profile["compute"]["nodes"] == 3


def test_over_budget_verdict_says_by_how_much():
    yc = medical().yearly
    tight = yearly_cost(medical_job(budget_cny_per_year=1_000_000), CATALOG, medical().chosen, medical().storage)
    over = yc.total() - 1_000_000
    assert tight.over_by_cny() == pytest.approx(over, rel=1e-9)
    estimate = next(i.amount for i in yc.items() if i.status == "estimate")
    assert verdict(tight).startswith(
        f"over the ¥1,000,000 budget by ¥{over:,.0f}: ¥{yc.total():,.0f}, "
        f"of which ¥{estimate:,.0f} is an estimate; unknown"
    )


def test_nothing_chosen_has_no_tier_and_no_year():
    rec = recommend(small_job(deadline_days=0.01), fake_catalog())
    assert rec.chosen is None and rec.tier is None and rec.yearly is None
    assert recommendation_dict(rec, "test")["yearly_cost"] is None
    from blueprints.advisor.tiers import tier_for

    assert tier_for(rec.job, medical().chosen, (), 1.0, "x") is None


def test_single_node_tier_says_when_the_job_needs_more_nodes():
    # A deadline one node cannot meet, on a year under ¥100k: the tier keeps the nodes and says so.
    rec = recommend(small_job(runs_per_year=1, deadline_days=4), fake_catalog())
    assert rec.chosen.nodes > 1 and rec.tier.name == "single-node"
    assert (
        "; the article's under-¥100k tier is one node, but this job "
        f"needs {rec.chosen.nodes} nodes to meet its constraints; pre-configured image: "
    ) in rec.tier.note
    rec = recommend(small_job(runs_per_year=1, deadline_days=30), fake_catalog())
    assert rec.chosen.nodes == 1 and "tier is one node" not in rec.tier.note


def test_unknown_compute_alternatives_say_so_and_one_run_is_singular():
    cat = fake_catalog()
    job = small_job(runs_per_year=1)
    option, storage, _ = choice.estimate(job, cat, "ecs.x8.32xlarge", 1)
    yc = yearly_cost(job, cat, option, storage)
    assert yc.mode.compute.what == "compute (1 run)"
    alternatives = [text for label, text in rows(yc) if label == "alternative"]
    assert alternatives == [
        "autoscaled (autoscaling pool): compute price unknown, plus the same standing costs",
        "always on (fixed cluster): compute price unknown, plus the same standing costs",
    ]


def test_the_data_rate_is_unknown_without_data_and_the_objective_is_checked():
    job = small_job()  # no dataset_tb, no ingest
    assert choice.needed_mb_s(job, 10.0) is None and choice.needed_mb_s(job, None) is None
    ingest_only = small_job(ingest_tb_per_day=0.0864)  # 0.0864e12 B a day = 1 MB/s
    assert choice.needed_mb_s(ingest_only, 10.0) == pytest.approx(1.0)
    assert choice.needed_mb_s(small_job(dataset_tb=1.0), None) is None  # no time, no rate
    with pytest.raises(ValueError, match="objective must be one of"):
        recommend(small_job(), fake_catalog(), "cheapest")
