"""The estimate as a range (tuned–typical–conservative), MFU consistent across GPU generations, region and no-anchor
reasons, and the terminal table keeping its lines."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.advisor import choice
from blueprints.advisor.choice import estimate
from blueprints.advisor.data import limits
from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.advisor.options import enumerate_options
from blueprints.advisor.render import render_table, status
from blueprints.architectures import budget_tiers
from blueprints.catalog import load_catalog
from blueprints.cli.advisor import register

from .fakes import fake_catalog

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RESNET = parse_job(load_job_dict(EXAMPLES / "ecommerce-resnet50.yaml"))
A100_NODE = "ecs.gn7e-c16g1.32xlarge"  # 8 × A100-SXM4-80GB, NVLink
V100_NODE = "ecs.gn6v-c8g1.16xlarge"  # 8 × V100-SXM2-16GB, NVLink
recommend = functools.partial(choice.recommend, tiers=budget_tiers(limits()))
app = typer.Typer()
register(app)
runner = CliRunner()

# Same model, same precision, same framework: the fraction of peak should not depend on the GPU generation.
# ResNet-50 mixed, 8 GPUs, MXNet: A100 tuned 0.244 (DLE 26,674 img/s) and typical 0.238 (MLPerf v2.0 3,260.2 img/s/GPU);
# V100 tuned 0.253 (MLPerf v0.7 1,384.6 img/s/GPU) and typical 0.244 (DLE 10,723 img/s). Tolerance: 0.01 of peak (≈ 4%).
GENERATION_TOLERANCE = 0.01


def test_resnet50_mfu_is_the_same_on_a100_and_v100_for_the_same_framework():
    catalog = load_catalog()
    a100, _, _ = estimate(RESNET, catalog, A100_NODE, 1)
    v100, _, _ = estimate(RESNET, catalog, V100_NODE, 1)
    assert (a100.mfu_tuned, v100.mfu_tuned) == pytest.approx((0.244, 0.253), abs=1e-9)
    assert a100.mfu_tuned == pytest.approx(v100.mfu_tuned, abs=GENERATION_TOLERANCE)
    assert a100.mfu == pytest.approx(v100.mfu, abs=GENERATION_TOLERANCE)
    # The conservative end is the slower PyTorch input pipeline (DLE 0.152 vs 0.190): the one pair that differs.
    assert (a100.mfu_conservative, v100.mfu_conservative) == pytest.approx((0.152, 0.190), abs=1e-9)


def test_8_a100_beat_8_v100_by_the_ratio_of_their_published_throughputs():
    catalog = load_catalog()
    a100, _, _ = estimate(RESNET, catalog, A100_NODE, 1)
    v100, _, _ = estimate(RESNET, catalog, V100_NODE, 1)
    # typical: (312 × 0.238) / (125 × 0.244) = 2.43 against DLE MXNet
    # 26,674 / 10,723 = 2.49 and MLPerf 3,260.2 / 1,384.6 = 2.35
    typical = v100.estimated_hours / a100.estimated_hours
    assert typical == pytest.approx(312 * 0.238 / (125 * 0.244), rel=1e-9)
    assert typical == pytest.approx(26674 / 10723, rel=0.05) and typical == pytest.approx(3260.2 / 1384.6, rel=0.05)
    # conservative: DLE PyTorch 16,621 vs 8,322 img/s on 8 GPUs, the same ratio by construction
    assert v100.hours_conservative / a100.hours_conservative == pytest.approx(16621 / 8322, rel=0.01)
    # 2.63e18 FLOPs ÷ (8 × 312e12 × 0.238) ÷ 3600 = 1.23 h on 8 × A100; range 1.20 (0.244) – 1.92 h (0.152)
    flops = 3 * 7.6e9 * 1281167 * 90
    assert a100.estimated_hours == pytest.approx(flops / (8 * 312e12 * 0.238) / 3600, rel=1e-9)
    assert a100.hours_range == pytest.approx(
        (flops / (8 * 312e12 * 0.244) / 3600, flops / (8 * 312e12 * 0.152) / 3600), rel=1e-9
    )


def test_estimate_text_and_json_carry_the_range():
    result = runner.invoke(app, ["estimate", str(EXAMPLES / "ecommerce-resnet50.yaml"), "--instance-type", V100_NODE])
    assert result.exit_code == 0, result.output
    # V100: typical 2.63e18 / (8 × 125e12 × 0.244) / 3600 = 2.99 h; tuned (0.253) 2.89 h; conservative (0.190) 3.84 h
    assert "3.0 h, range 2.9–3.8 h (tuned–conservative)" in result.output
    doc = json.loads(
        runner.invoke(
            app,
            ["estimate", str(EXAMPLES / "ecommerce-resnet50.yaml"), "--instance-type", V100_NODE, "--format", "json"],
        ).output
    )
    assert set(doc["estimated_hours_range"]) == {"tuned", "conservative"}
    assert doc["estimated_hours_range"]["tuned"] < doc["estimated_hours"] < doc["estimated_hours_range"]["conservative"]


def test_job_mfu_collapses_the_range():
    option, _, _ = estimate(RESNET.model_copy(update={"mfu": 0.3}), load_catalog(), A100_NODE, 1)
    assert option.mfu == option.mfu_tuned == option.mfu_conservative == 0.3
    assert option.hours_range == (option.estimated_hours, option.estimated_hours)


def test_deadline_reason_says_when_only_the_tuned_end_meets_it():
    # Fake ecs.a8 (8 × A100) × 1, 6e20 FLOPs: typical 6e20 / (8 × 312e12 × 0.435/0.906960) / 3600 = 139.2 h = 5.8 days;
    # tuned 0.542/0.905052 (Megatron-LM 530B, 280 nodes) → 111.5 h = 4.6 days. A 5.5-day deadline sits between them.
    job = parse_job(
        {
            "name": "range-job",
            "model_kind": "transformer",
            "params": 1e9,
            "tokens": 1e11,
            "max_nodes": 1,
            "deadline_days": 5.5,
        }
    )
    options = {(o.instance_type, o.nodes): o for o in enumerate_options(job, fake_catalog())}
    reason = next(r for r in options[("ecs.a8.32xlarge", 1)].reasons if r.code == "deadline")
    assert reason.message == "typical 5.8 days misses the 5.5-day deadline; only the tuned end (4.6 days) meets it"
    tight = {
        (o.instance_type, o.nodes): o
        for o in enumerate_options(job.model_copy(update={"deadline_days": 4.5}), fake_catalog())
    }
    assert (
        next(r for r in tight[("ecs.a8.32xlarge", 1)].reasons if r.code == "deadline").message
        == "takes 5.8 days (tuned end 4.6 days); the deadline is 4.5 days"
    )


def test_no_anchor_is_shown_not_chosen():
    rec = recommend(RESNET, load_catalog())
    a10 = next(c for c in rec.considered if c.option.gpu_model == "A10")
    assert status(a10) == "no anchor" and a10.option.estimated_hours is None
    assert a10.why.startswith("not chosen: no anchor: no published cnn mixed MFU for A10")


def test_a_type_sold_elsewhere_gets_a_region_reason():
    catalog = fake_catalog(sold_in={"ecs.v8.24xlarge": ("cn-hangzhou", "cn-beijing")})
    job = parse_job(
        {
            "name": "region-job",
            "model_kind": "transformer",
            "params": 1e9,
            "tokens": 1e11,
            "max_nodes": 2,
            "precision": "fp16",
        }
    )
    options = {(o.instance_type, o.nodes): o for o in enumerate_options(job, catalog)}
    v100 = options[("ecs.v8.24xlarge", 1)]
    assert v100.reasons[0].code == "region"
    assert v100.reasons[0].message == "not offered in cn-shanghai; sold in cn-beijing, cn-hangzhou"
    assert not options[("ecs.a8.32xlarge", 1)].has("region")  # no known regions: kept, unknown is not "no"
    considered = [c for c in recommend(job, catalog).considered if c.option.instance_type == "ecs.v8.24xlarge"]
    assert considered and status(considered[0]).startswith("other region")


def test_recommend_table_keeps_its_lines():
    rec = recommend(RESNET, load_catalog())
    lines = render_table(rec).split("\n")
    start = lines.index("Considered (best option of each GPU model):")
    header, rule = lines[start + 1], lines[start + 2]
    assert header.split() == [
        "GPU",
        "configuration",
        "GPUs",
        "hours",
        "tuned–cons.",
        "h",
        "days",
        "CNY/run",
        "CNY/year",
        "MFU",
        "scaling",
        "status",
    ]
    assert set(rule.replace(" ", "")) == {"-"}
    body = lines[start + 3 : start + 3 + len(rec.considered)]
    assert [line.lstrip("* ").split()[0] for line in body] == [c.option.gpu_label.split()[0] for c in rec.considered]
    assert body[0].startswith("*") and body[0].rstrip().endswith("CHOSEN")


def test_a_deadline_the_typical_estimate_meets_but_the_conservative_end_misses_is_flagged():
    catalog = load_catalog()
    job = parse_job(load_job_dict(EXAMPLES / "medical-imaging.yaml"))
    rec = recommend(job, catalog)
    chosen = rec.chosen
    assert chosen is not None and chosen.hours_range is not None and job.deadline_hours is not None
    typical, conservative = chosen.estimated_hours, chosen.hours_range[1]
    # The example's 7-day deadline lies between the two: 121.9 h typical, 171.9 h conservative on 3 × gn7.
    assert typical <= job.deadline_hours < conservative
    line = next(f for f in rec.findings if f.startswith("deadline:"))
    assert f"({typical / 24:,.1f} days) meets the 7-day deadline" in line
    assert f"conservative end of the range ({conservative / 24:,.1f} days) does not" in line
    # On the same configuration, a deadline the conservative end meets too gives no such line.
    roomy = parse_job(load_job_dict(EXAMPLES / "medical-imaging.yaml", {"deadline_days": conservative / 24 + 1}))
    _, _, findings = estimate(roomy, catalog, chosen.instance_type, chosen.nodes)
    assert findings and not any(f.startswith("deadline:") for f in findings)
    _, _, findings = estimate(job, catalog, chosen.instance_type, chosen.nodes)
    assert any(f.startswith("deadline:") for f in findings)
