"""Operating mode and yearly cost: parked time counted, currencies kept apart, unknown prices listed, budget verdict honest."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.advisor import choice
from blueprints.advisor.data import limits, standing_row
from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.advisor.render import recommendation_dict, render_markdown, render_table
from blueprints.advisor.yearly import ALWAYS_ON, PARKED, POOL, CostItem, standing_items, totals_by_currency, yearly_cost
from blueprints.architectures import budget_tiers
from blueprints.catalog import load_catalog
from blueprints.cli_advisor import register

from .fakes import fake_catalog

ROOT = Path(__file__).resolve().parents[2]
MEDICAL = ROOT / "examples" / "medical-imaging.yaml"
CATALOG = load_catalog()
TIERS = budget_tiers(limits())
recommend = functools.partial(choice.recommend, tiers=TIERS)
app = typer.Typer()
register(app)
# Official list price, https://www.alibabacloud.com/help/en/nat-gateway/latest/billing-of-internet-nat-gateways (cn-shanghai).
NAT_USD_PER_HOUR = 0.034


def medical_job(**overrides):
    data = load_job_dict(MEDICAL)
    data.update(overrides)
    return parse_job(data, source="job", regions=CATALOG.regions)


@functools.lru_cache(maxsize=None)
def medical():
    return recommend(medical_job(), CATALOG)


def expected_medical():
    """The figures from the catalog's prices and the chosen option's hours, computed here rather than copied from output."""
    rec = medical()
    c = rec.chosen
    price = CATALOG.instance_types[c.instance_type].price_cny_per_hour
    compute = price * c.nodes * c.estimated_hours * 12
    oss = CATALOG.storage_tier("oss", "standard")
    assert oss.price_currency == "CNY"
    bucket = math.ceil(100e12 / 2**30) * oss.price_per_gib_month * 12
    always_on = price * c.nodes * 8760
    return {"compute": compute, "bucket": bucket, "nat": NAT_USD_PER_HOUR * 8760, "always_on": always_on}


def test_medical_imaging_is_parked_between_runs_within_budget():
    rec = medical()
    want = expected_medical()
    yc = rec.yearly
    assert (rec.chosen.instance_type, rec.chosen.nodes) == ("ecs.gn7-c13g1.26xlarge", 3)
    assert rec.tier.blueprint == "fixed-cluster"
    assert yc.mode.name == PARKED and yc.mode.shape == "fixed cluster"
    assert yc.mode.node_hours == pytest.approx(12 * rec.chosen.estimated_hours * 3)
    assert yc.mode.compute.amount == pytest.approx(want["compute"], rel=1e-9)
    assert yc.mode.compute.amount == pytest.approx(1_330_011, abs=1)  # the figure in the note
    totals = yc.totals()
    # Compute and the OSS estimate are CNY; the NAT gateway is USD and is never added to them.
    assert set(totals) == {"CNY", "USD"}
    assert totals["CNY"] == pytest.approx(want["compute"] + want["bucket"], rel=1e-9)
    assert totals["USD"] == pytest.approx(want["nat"], rel=1e-9)
    assert yc.over_by_cny() == pytest.approx(want["compute"] + want["bucket"] - 2_000_000, rel=1e-9)
    assert yc.over_by_cny() < 0


def test_medical_imaging_lists_unknown_prices_as_unknown_never_zero():
    yc = medical().yearly
    unknown = {i.what for i in yc.unknown()}
    assert unknown == {"cpfs advance_100 file system (93,133 GiB)", "NAT gateway traffic/CU fees", "EIP bound to the NAT gateway"}
    assert all(i.amount is None and i.currency is None for i in yc.unknown())
    assert not any(i.amount == 0 for i in yc.items())
    bucket = next(i for i in yc.items() if i.what.startswith("OSS bucket"))
    assert bucket.status == "estimate" and "third-party" in bucket.basis


def test_medical_imaging_alternatives_show_their_yearly_cost():
    yc = medical().yearly
    want = expected_medical()
    alts = {m.name: m for m in yc.alternatives}
    assert set(alts) == {ALWAYS_ON, POOL}
    assert alts[ALWAYS_ON].compute.amount == pytest.approx(want["always_on"], rel=1e-9)
    assert yc.over_by_cny(alts[ALWAYS_ON]) == pytest.approx(want["always_on"] + want["bucket"] - 2_000_000, rel=1e-9)
    assert alts[POOL].compute.amount == pytest.approx(want["compute"], rel=1e-9)


def test_medical_imaging_text_states_mode_breakdown_and_verdict():
    rec = medical()
    want = expected_medical()
    text = render_table(rec)
    cny = want["compute"] + want["bucket"]
    assert "Operating mode: parked between runs (fixed cluster)" in text
    assert "compute.nodes: 0 / aitrain park" in text
    assert (
        f"Yearly cost: ¥{want['compute']:,.0f} compute (12 runs) + ¥{want['bucket']:,.0f} OSS bucket (estimate) + USD {want['nat']:,.0f} NAT gateway instance fee, "
        "not converted (no cited exchange rate); unknown: cpfs advance_100 file system (93,133 GiB), NAT gateway traffic/CU fees, EIP bound to the NAT gateway"
    ) in text
    assert f"Budget: within the ¥2,000,000 budget on what is priced in CNY: ¥{cny:,.0f}, of which ¥{want['bucket']:,.0f} is an estimate (¥{2_000_000 - cny:,.0f} to spare)" in text
    assert f"not counted against it, not converted: USD {want['nat']:,.0f} (NAT gateway instance fee)" in text
    assert f"Alternative: always on (fixed cluster): ¥{want['always_on']:,.0f} compute a year + the same standing costs, over the budget by ¥{want['always_on'] + want['bucket'] - 2_000_000:,.0f}" in text
    assert "kept up all year it would cost" not in text  # the old tier note, replaced by the alternative line
    markdown = render_markdown(rec)
    assert "Operating mode: parked between runs" in markdown and "Budget: within the ¥2,000,000 budget" in markdown


def test_medical_imaging_json_has_items_per_currency():
    doc = recommendation_dict(medical(), "test")
    want = expected_medical()
    yearly = doc["yearly_cost"]
    assert yearly["mode"] == PARKED
    assert yearly["totals_by_currency"]["CNY"] == pytest.approx(want["compute"] + want["bucket"], abs=0.01)
    assert yearly["totals_by_currency"]["USD"] == pytest.approx(want["nat"], abs=0.01)
    assert yearly["over_budget_cny"] < 0
    assert [i["status"] for i in yearly["items"]] == ["list price", "unknown", "estimate", "official", "unknown", "unknown"]
    assert {a["mode"]: a["over_budget_cny"] > 0 for a in yearly["alternatives"]} == {POOL: False, ALWAYS_ON: True}
    json.dumps(doc)  # plain data


def test_over_budget_says_by_how_much():
    # ¥1.4 M still admits the ¥1.33 M compute, but compute + the bucket estimate exceeds it.
    rec = recommend(medical_job(budget_cny_per_year=1_400_000), CATALOG)
    want = expected_medical()
    over = want["compute"] + want["bucket"] - 1_400_000
    assert rec.yearly.mode.name == PARKED
    assert rec.yearly.over_by_cny() == pytest.approx(over, rel=1e-9)
    assert f"Budget: over the ¥1,400,000 budget by ¥{over:,.0f} on what is priced in CNY alone" in render_table(rec)


def test_totals_never_add_currencies_and_skip_unknowns():
    items = [
        CostItem("a", 100.0, "USD", "official", ""),
        CostItem("b", 5.0, "CNY", "list price", ""),
        CostItem("c", None, None, "unknown", ""),
        CostItem("d", 7.0, "CNY", "estimate", ""),
    ]
    assert totals_by_currency(items) == {"CNY": 12.0, "USD": 100.0}
    assert list(totals_by_currency(items)) == ["CNY", "USD"]
    assert totals_by_currency([CostItem("c", None, None, "unknown", "")]) == {}


def test_nat_fee_is_the_sourced_row_per_region():
    assert standing_row("nat_gateway_instance", "cn-shanghai").amount == NAT_USD_PER_HOUR
    assert standing_row("nat_gateway_instance", "ap-southeast-1").amount == 0.043
    assert standing_row("nat_gateway_instance", "me-central-1") is None
    assert standing_row("eip", "cn-shanghai").amount is None
    job = parse_job({"name": "riyadh-job", "model_kind": "transformer", "params": 1e9, "tokens": 1e11, "region": "me-central-1"})
    nat = next(i for i in standing_items(job, CATALOG, None) if i.what.startswith("NAT gateway instance"))
    assert nat.amount is None and "me-central-1" in nat.basis


def small_job(**kw):
    base = {"name": "test-job", "model_kind": "transformer", "params": 1e9, "tokens": 1e11, "max_nodes": 32}
    base.update(kw)
    return parse_job(base)


def test_pool_tier_scales_to_zero():
    # ¥200k a year is the pool tier, which the autoscaling-pool blueprint declares scales to zero.
    rec = recommend(small_job(budget_cny_per_year=200_000, runs_per_year=4), fake_catalog())
    assert rec.tier.blueprint == "autoscaling-pool"
    assert rec.yearly.mode.name == POOL
    assert rec.yearly.mode.compute.amount == pytest.approx(rec.chosen.cost_cny_per_run * 4)
    # The hand-made catalog has no OSS price: the bucket is unknown, not 0.
    bucket = next(i for i in rec.yearly.items() if i.what == "OSS bucket")
    assert bucket.amount is None and bucket.basis == "no OSS price in the catalog"


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
    from blueprints.advisor.yearly import verdict

    assert verdict(yc).startswith(f"no yearly budget given; the CNY part is ¥{option.cost_cny_per_run * 2:,.0f}")


def test_unpriced_compute_has_no_verdict():
    cat = fake_catalog()
    job = small_job(budget_cny_per_year=1_000_000)
    option, storage, _ = choice.estimate(job, cat, "ecs.x8.32xlarge", 1)
    yc = yearly_cost(job, cat, option, storage)
    assert yc.mode.compute.amount is None and yc.over_by_cny() is None
    from blueprints.advisor.yearly import verdict

    assert verdict(yc).startswith("compute price unknown, so no verdict against the ¥1,000,000 budget")


def test_estimate_cli_shows_mode_and_yearly_cost():
    result = CliRunner().invoke(app, ["estimate", str(MEDICAL), "--instance-type", "ecs.gn7-c13g1.26xlarge", "--nodes", "3"])
    assert result.exit_code == 0, result.output
    want = expected_medical()
    assert "operating mode       parked between runs (fixed cluster)" in result.stdout
    assert f"yearly cost          ¥{want['compute']:,.0f} compute (12 runs)" in result.stdout
    result = CliRunner().invoke(app, ["estimate", str(MEDICAL), "--instance-type", "ecs.gn7-c13g1.26xlarge", "--nodes", "3", "--format", "json"])
    doc = json.loads(result.stdout)
    assert doc["yearly_cost"]["mode"] == PARKED
    assert doc["yearly_cost"]["totals_by_currency"]["USD"] == pytest.approx(want["nat"], abs=0.01)


def test_recommend_write_keeps_the_node_count(tmp_path):
    # Parking is the user's step (aitrain park); the written config still runs the recommended nodes.
    from blueprints.stackconfig import engine_config, read_settings

    target = tmp_path / "Pulumi.dev.yaml"
    result = CliRunner().invoke(app, ["recommend", str(MEDICAL), "--write", str(target)])
    assert result.exit_code == 0, result.output
    profile = read_settings(engine_config(target), source=str(target)).profile
    assert profile["compute"]["nodes"] == 3
