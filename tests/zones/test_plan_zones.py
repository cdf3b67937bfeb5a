"""End to end: after `aitrain zones --write`, the offline plan's get_zones answers from the written rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from blueprints.catalog import load_catalog
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
    assert not any("does not say which zones" in note for note in plan.notes)
