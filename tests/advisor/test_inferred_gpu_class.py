"""Types whose GPU Alibaba does not name: an inferred class is used and said to be inferred; an unknown one is never
picked (catalog README "Inferred GPU models")."""

from __future__ import annotations

import dataclasses
import functools
import json

from blueprints.advisor import choice
from blueprints.advisor.choice import estimate
from blueprints.advisor.data import limits
from blueprints.advisor.job import parse_job
from blueprints.advisor.render import estimate_dict, recommendation_dict, render_estimate_text, render_table
from blueprints.architectures import budget_tiers
from blueprints.catalog import Catalog, GpuModel, load_catalog

from .fakes import A100, fake_catalog, instance, price

INFERRED_NOTE = "so the GPU class is inferred"
recommend = functools.partial(choice.recommend, tiers=budget_tiers(limits()))
# The job's own MFU applies to every GPU class, so no anchor decides the choice (mfu.csv has none for H20 today).
JOB = parse_job(
    {"name": "h20-job", "model_kind": "transformer", "params": 7e9, "tokens": 1e11, "max_nodes": 8, "mfu": 0.35}
)


def test_an_estimate_on_an_h20_class_type_says_the_class_is_inferred():
    catalog = load_catalog()
    option, storage, findings = estimate(JOB, catalog, "ecs.ebmgn8v.48xlarge", 2)
    assert option.gpu_model == "H20" and option.gpu_model_confidence == "inferred"
    assert option.peak_tflops == catalog.gpus["H20"].bf16_tflops  # the inferred class's peak is the one used
    note = next(f for f in findings if f.startswith("GPU: H20 is inferred"))
    assert INFERRED_NOTE in note
    text = render_estimate_text(JOB, option, storage, findings)
    assert "16 × H20 (inferred)" in text and INFERRED_NOTE in text
    doc = json.loads(json.dumps(estimate_dict(JOB, option, storage, findings)))
    assert doc["gpu_model_confidence"] == "inferred" and any(INFERRED_NOTE in f for f in doc["findings"])


def _catalog_of(*types, gpus, prices):
    base = fake_catalog()
    return Catalog(
        version="test",
        instance_types={t.instance_type: t for t in types},
        gpus={g.gpu_model: g for g in gpus},
        regions=base.regions,
        storage=base.storage,
        aliases={},
        images=(),
        instance_prices=[price(name, cny) for name, cny in prices.items()],
    )


H20 = GpuModel("H20", 96, "HBM3", 4000, 44, 74, 148, 148, 296, 900, 400, "test", "2026-01-01")


def test_a_recommendation_that_picks_an_inferred_type_says_so():
    # An A100 type priced far above an inferred-H20 type, so the cheapest run is on the inferred one.
    a100 = instance("ecs.a8.32xlarge", A100, 8, 64.0)
    h20 = instance("ecs.h8.48xlarge", H20, 8, 100.0)
    prices = {"ecs.a8.32xlarge": 240.0, "ecs.h8.48xlarge": 1.0}
    inferred = dataclasses.replace(h20, gpu_model_confidence="inferred")
    rec = recommend(JOB, _catalog_of(a100, inferred, gpus=(A100, H20), prices=prices))
    assert rec.chosen is not None and rec.chosen.instance_type == "ecs.h8.48xlarge"
    assert any(f.startswith("GPU: H20 is inferred") and INFERRED_NOTE in f for f in rec.findings)
    assert "H20 (inferred)" in render_table(rec)
    assert recommendation_dict(rec)["gpu_model_confidence"] == "inferred"
    # The same choice on a stated H20 carries no such line: the note follows the marking, not the model.
    stated = recommend(JOB, _catalog_of(a100, h20, gpus=(A100, H20), prices=prices))
    assert stated.chosen is not None and stated.chosen.instance_type == "ecs.h8.48xlarge"
    assert not any(INFERRED_NOTE in f for f in stated.findings)


def test_a_type_whose_gpu_is_unknown_is_never_picked():
    catalog = load_catalog()
    unknown = sorted(it.instance_type for it in catalog.instance_types.values() if it.is_gpu and not it.gpu_model)
    assert unknown == ["ecs.gn5-c8g1.14xlarge"]
    option, _, _ = estimate(JOB, catalog, unknown[0], 1)
    assert not option.feasible and "gpu_unknown" in [r.code for r in option.reasons]
    assert option.estimated_hours is None and option.gpu_label == "(unnamed)"
    # Even as the only, and nearly free, type of a catalog an unnamed GPU is not chosen: its peak is unknown.
    rec = recommend(
        JOB, _catalog_of(instance("ecs.gn5.14xlarge", None, 8, 25.0), gpus=(A100,), prices={"ecs.gn5.14xlarge": 0.01})
    )
    assert rec.chosen is None and rec.feasible_count == 0
