"""End to end: after `aitrain zones --write`, the offline plan's get_zones answers from the written rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from blueprints.catalog import load_catalog
from blueprints.catalog.availability import ASSUMPTION, region_availability, zone_source_note
from blueprints.engine.preview import preview
from blueprints.preflight.zones import ask
from blueprints.preflight.zones_write import write
from blueprints.profile.stackconfig import with_cli_inputs
from tests.zones.replay import ZonesReplay


def test_plan_places_compute_in_the_zones_the_answer_listed(catalog_copy: Path) -> None:
    types = sorted(t for t, it in load_catalog(catalog_copy).instance_types.items() if it.is_gpu)
    reader = ZonesReplay()
    write(catalog_copy, ask(["cn-beijing", "cn-shanghai"], types, lambda _: reader), types, "2026-11-30")
    # autoscaling-training: ecs.gn7i-c32g1.8xlarge in cn-shanghai; the recording lists it in cn-shanghai-b and -e.
    plan = preview(
        with_cli_inputs({}, "autoscaling-training", []), catalog=load_catalog(catalog_copy), today=dt.date(2026, 11, 30)
    )
    assert plan.outputs["compute_zone_ids"] == ["cn-shanghai-b", "cn-shanghai-e"]
    assert not any("not its zones" in note or "No source in the catalog" in note for note in plan.notes)


def test_plan_note_names_the_document_when_it_gives_the_region_not_the_zones() -> None:
    # medical-imaging: ecs.gn7e-c16g1.32xlarge in cn-shanghai, named there by the shipped 2023-06 price listing.
    plan = preview(with_cli_inputs({}, "medical-imaging", []), catalog=load_catalog(), today=dt.date(2026, 11, 30))
    (note,) = [n for n in plan.notes if "ecs.gn7e-c16g1.32xlarge" in n and "zones" in n]
    assert "2023-06-17-gpu-prices.md" in note and "(2023-06) names cn-shanghai" in note and "not its zones" in note
    assert "assumes every zone of the region" in note and "aitrain zones --write" in note


def test_plan_note_says_when_no_source_names_a_region(catalog_copy: Path) -> None:
    catalog = load_catalog(catalog_copy)
    assert zone_source_note(catalog, "ecs.ebmgn7ex.32xlarge", "cn-shanghai") == (
        f"No source in the catalog names a region or zone for ecs.ebmgn7ex.32xlarge: {ASSUMPTION}"
    )
    # Named in cn-shanghai only: Beijing is not ruled out, and the note says which regions the sources name.
    assert zone_source_note(catalog, "ecs.gn7e-c16g1.32xlarge", "cn-beijing") == (
        "No source in the catalog names cn-beijing for ecs.gn7e-c16g1.32xlarge (they name cn-shanghai, "
        f"which does not rule cn-beijing out): {ASSUMPTION}"
    )
    gn7e = catalog.instance_types["ecs.gn7e-c16g1.32xlarge"]
    assert region_availability(catalog, gn7e, "cn-beijing") == (
        "ecs.gn7e-c16g1.32xlarge: the catalog's sources name cn-shanghai, not cn-beijing; "
        "check the console (or `aitrain zones`) before applying"
    )
    assert "sold in cn-shanghai per ArthurChiao" in (region_availability(catalog, gn7e, "cn-shanghai") or "")
    # Once the zones are known there is nothing to say.
    reader = ZonesReplay()
    types = sorted(t for t, it in catalog.instance_types.items() if it.is_gpu)
    write(catalog_copy, ask(["cn-beijing"], types, lambda _: reader), types, "2026-11-30")
    after = load_catalog(catalog_copy)
    assert zone_source_note(after, "ecs.gn7e-c16g1.32xlarge", "cn-beijing") is None
    assert region_availability(after, after.instance_types["ecs.gn7e-c16g1.32xlarge"], "cn-beijing") is None


def test_a_document_naming_shanghai_never_rules_beijing_out_for_the_advisor() -> None:
    from blueprints.advisor.job import parse_job
    from blueprints.advisor.options import enumerate_options

    catalog = load_catalog()
    job = parse_job(
        {
            "name": "beijing-job",
            "model_kind": "transformer",
            "params": 1e9,
            "tokens": 1e11,
            "max_nodes": 2,
            "precision": "fp16",
            "region": "cn-beijing",
        }
    )
    options = enumerate_options(job, catalog)
    named_in_shanghai = {z.instance_type for z in catalog.instance_zones if z.region == "cn-shanghai"}
    considered = {o.instance_type for o in options}
    assert named_in_shanghai & considered
    assert not [o.instance_type for o in options if o.has("region")]
