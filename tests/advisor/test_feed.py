"""The input-pipeline check: what the GPUs consume against what the vCPUs decode and augment (advisor/feed.py)."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from blueprints.advisor import feed
from blueprints.advisor.choice import estimate, recommend
from blueprints.advisor.data import limits
from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.advisor.stack import profile_dict
from blueprints.architectures import budget_tiers, parse, profile_models
from blueprints.catalog import instance_price, load_catalog
from blueprints.core.errors import UserInputError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "blueprints" / "advisor" / "data" / "input_pipeline.csv"
MEDICAL = ROOT / "examples" / "medical-imaging.yaml"
ECOMMERCE = ROOT / "examples" / "ecommerce-resnet50.yaml"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _job(path: Path | None = None, **changes):
    return parse_job(load_job_dict(path, changes))


def _recommend(job, catalog):
    return recommend(job, catalog, tiers=budget_tiers(limits()))


def test_every_rate_has_a_source_and_its_derivation_gives_its_value():
    rows = list(csv.DictReader(DATA.open(encoding="utf-8")))
    assert {r["input_kind"] for r in rows} == {"jpeg_images", "raw_text", "pretokenized"}
    for row in rows:
        assert row["source"].strip(), row
        if not row["per_vcpu_per_second"]:
            # Unknown stays unknown: a row without a figure says why, never borrows another kind's.
            assert row["confidence"] in ("unknown", "not_applicable"), row
            continue
        formula = row["derivation"].split(":", 1)[0]
        assert re.fullmatch(r"[0-9./+() ]+", formula), formula
        assert float(row["per_vcpu_per_second"]) == pytest.approx(eval(formula), abs=0.5), row
    levels = {r["level"]: float(r["per_vcpu_per_second"]) for r in rows if r["input_kind"] == "jpeg_images"}
    assert levels["tuned"] > levels["typical"] > levels["conservative"]


def test_medical_imaging_cpus_feed_their_gpus(catalog):
    """1e9 images of 196 tokens on the chosen A100 nodes: the GPUs consume far less than the vCPUs prepare."""
    job = _job(MEDICAL)
    rec = _recommend(job, catalog)
    chosen = rec.chosen
    assert chosen is not None and chosen.estimated_hours is not None
    inst = catalog.instance_types[chosen.instance_type]
    check = feed.check_feed(job, catalog, chosen.instance_type, chosen.nodes, chosen.estimated_hours)
    assert check is not None and check.unit == "images"
    images = 1.96e11 / 196
    assert check.needed_per_node == pytest.approx(images / (chosen.estimated_hours * 3600) / chosen.nodes, rel=1e-9)
    # About 760 images/s per 8-A100 node for a 1.2 B ViT (6·N·D at the typical MFU); a wide band, the model's own.
    assert 500 < check.needed_per_node < 1200
    assert check.pipeline_vcpus == inst.vcpus - inst.gpu_count
    assert check.supply_per_node == pytest.approx(tuple(check.pipeline_vcpus * r for r in (427, 257, 81)))
    assert check.group is None and check.shortfall_per_node == 0 and rec.cpu_group is None
    assert check.ratio == pytest.approx(check.supply_per_node[1] / check.needed_per_node)
    line = next(f for f in rec.findings if f.startswith("input pipeline"))
    assert f"{check.needed_per_node:,.0f} images/s" in line and "SHORTFALL" not in line
    assert "preprocess" not in (profile_dict(rec) or {})


def test_resnet50_on_one_a100_is_cpu_bound_and_gets_a_sized_priced_group(catalog):
    job = _job(ECOMMERCE)
    rec = _recommend(job, catalog)
    chosen = rec.chosen
    assert chosen is not None and chosen.estimated_hours is not None
    check = feed.check_feed(job, catalog, chosen.instance_type, chosen.nodes, chosen.estimated_hours)
    assert check is not None
    needed = job.samples * job.epochs / (chosen.estimated_hours * 3600) / chosen.nodes
    assert check.needed_per_node == pytest.approx(needed, rel=1e-9)
    supply = check.supply_per_node[1]
    assert supply < needed  # ResNet-50 on an A100 eats images faster than 11 vCPUs decode them
    assert check.shortfall_per_node == pytest.approx(needed - supply)
    assert check.cpu_bound_hours == pytest.approx(chosen.estimated_hours * needed / supply)
    group = check.group
    assert group is not None
    cpu = catalog.instance_types[group.instance_type]
    assert not cpu.is_gpu and group.vcpus_per_node == cpu.vcpus
    missing = (needed - supply) * chosen.nodes
    # Enough vCPUs for the gap, one node fewer would not be, and no priced CPU type covers it for less.
    assert group.nodes * cpu.vcpus * 257 >= missing > (group.nodes - 1) * cpu.vcpus * 257

    def price(name: str) -> float | None:
        return instance_price(catalog, name, job.region).cny

    assert group.cny_per_hour == pytest.approx(group.nodes * (price(cpu.instance_type) or 0.0))
    for other in catalog.instance_types.values():
        other_price = None if other.is_gpu else price(other.instance_type)
        if other_price is not None:
            cost = math.ceil(missing / (other.vcpus * 257)) * other_price
            assert cost >= group.cny_per_hour - 1e-9, other.instance_type
    # The conservative rate needs at least as many nodes.
    assert check.group_conservative is not None and check.group_conservative.nodes >= group.nodes
    line = next(f for f in rec.findings if f.startswith("input pipeline"))
    assert "SHORTFALL" in line and f"{group.nodes} × {cpu.instance_type}" in line
    assert f"{check.cpu_bound_hours:,.1f} h instead of {chosen.estimated_hours:,.1f} h" in line
    gpu_price = price(chosen.instance_type) or 0.0
    waiting = chosen.nodes * gpu_price * (check.cpu_bound_hours - chosen.estimated_hours)
    assert f"group costs ¥{group.cny_per_hour * chosen.estimated_hours:,.0f} against ¥{waiting:,.0f}" in line
    # The written profile carries the group, and the blueprint accepts it.
    profile = profile_dict(rec)
    assert profile is not None and profile["preprocess"] == {"instance_type": cpu.instance_type, "nodes": group.nodes}
    import datetime as dt

    parsed = parse(profile, catalog=catalog, today=dt.date(2026, 12, 1))
    assert parsed.preprocess.nodes == group.nodes  # type: ignore[attr-defined]


def test_estimate_names_a_type_with_more_vcpus_per_gpu(catalog):
    """1 × A10 on its smallest type (8 vCPUs): the finding offers the same GPU on the roomiest type, with its supply."""
    job = _job(ECOMMERCE, mfu=0.6)  # a measured-looking MFU high enough to outrun 7 vCPUs
    small = min(
        (t for t in catalog.instance_types.values() if t.gpu_model == "A10" and t.gpu_count == 1),
        key=lambda t: t.vcpus,
    )
    option, _storage, findings = estimate(job, catalog, small.instance_type, 1)
    check = feed.check_feed(job, catalog, small.instance_type, 1, option.estimated_hours)
    assert check is not None and check.group is not None and check.roomier_type is not None
    name, supply = check.roomier_type
    roomy = catalog.instance_types[name]
    assert roomy.gpu_model == "A10" and roomy.gpu_count == 1 and roomy.vcpus > small.vcpus
    assert supply == pytest.approx((roomy.vcpus - 1) * 257)
    assert any(f"or a type with more vCPUs per GPU: {name}" in f for f in findings)


def test_a_measured_rate_replaces_the_published_ones(catalog):
    job = _job(ECOMMERCE, preprocess_per_vcpu=1000)
    assert feed.rates(job) == (1000, 1000, 1000)
    check = feed.check_feed(job, catalog, "ecs.gn7-c12g1.3xlarge", 1, 10.0)
    assert check is not None and check.supply_per_node == (11000, 11000, 11000)
    assert "the job's preprocess_per_vcpu" in feed.feed_findings(job, catalog, "ecs.gn7-c12g1.3xlarge", 1, 10.0)[0]


def test_unknown_rates_stay_unknown(catalog):
    text = _job(MEDICAL, input_kind="raw_text")
    assert feed.rates(text) is None
    (line,) = feed.feed_findings(text, catalog, "ecs.gn7e-c16g1.32xlarge", 12, 30.0)
    assert line.startswith("input pipeline not checked for raw_text: unknown")
    tokens = _job(MEDICAL, input_kind="pretokenized")
    (line,) = feed.feed_findings(tokens, catalog, "ecs.gn7e-c16g1.32xlarge", 12, 30.0)
    assert "not applicable" in line
    # A transformer on images must say how many tokens an image is.
    data = load_job_dict(MEDICAL, {})
    del data["tokens_per_sample"]
    (line,) = feed.feed_findings(parse_job(data), catalog, "ecs.gn7e-c16g1.32xlarge", 12, 30.0)
    assert "needs tokens_per_sample" in line
    # No input_kind: no check, no line.
    del data["input_kind"]
    assert feed.feed_findings(parse_job(data), catalog, "ecs.gn7e-c16g1.32xlarge", 12, 30.0) == []


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("input_kind", "png", "jpeg_images"),
        ("tokens_per_sample", 0, "greater than 0"),
        ("preprocess_per_vcpu", -5, "greater than 0"),
    ],
)
def test_bad_input_names_the_field(field, value, needle):
    with pytest.raises(UserInputError) as caught:
        _job(MEDICAL, **{field: value})
    problems = caught.value.problems
    assert [p.path for p in problems] == [field]
    assert needle in problems[0].message


def test_the_tiers_that_write_a_group_are_the_ones_whose_profiles_take_the_section():
    models = profile_models()
    tiers = budget_tiers(limits())
    assert {t.blueprint for t in tiers if t.cpu_preprocess} == {"fixed-cluster", "autoscaling-pool"}
    for tier in tiers:
        assert tier.cpu_preprocess == ("preprocess" in models[tier.blueprint].model_fields), tier.name
