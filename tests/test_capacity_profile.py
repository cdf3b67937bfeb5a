"""The profile's capacity section: every bad fallback or reservation is refused naming its entry, with what is allowed;
a good one is taken as written."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from blueprints.architectures import profile_models
from blueprints.catalog import load_catalog
from blueprints.core.errors import UserInputError
from blueprints.profile.capacity import Alternative, Shape
from blueprints.profile.parse import parse_profile
from blueprints.profile.stackconfig import load_preset, merge

CATALOG = load_catalog()
MED = load_preset("medical-imaging")


def parse(capacity: dict[str, Any], **more: Any) -> Any:
    data = merge(MED, {"capacity": capacity, **more})
    return parse_profile(data, models=profile_models(), catalog=CATALOG, today=dt.date(2026, 12, 1))


def refusal(capacity: dict[str, Any], **more: Any) -> str:
    with pytest.raises(UserInputError) as caught:
        parse(capacity, **more)
    text = caught.value.render()
    assert text.count("\n  - ") == 1, text  # one problem, one paragraph
    return text


def test_good_fallbacks_are_taken_in_order() -> None:
    profile = parse(
        {
            "fallbacks": [
                {"zone": "cn-shanghai-b"},
                {"instance_type": "ecs.ebmgn7e.32xlarge"},
                {"region": "cn-beijing", "zone": "cn-beijing-c"},
                {"spot": True},
            ]
        }
    )
    assert [a.label() for a in profile.capacity.fallbacks] == [
        "zone cn-shanghai-b",
        "instance_type ecs.ebmgn7e.32xlarge",
        "region cn-beijing, zone cn-beijing-c",
        "spot true",
    ]
    # An entry equal to the profile's own shape is what the last `preflight --choose` pinned: allowed.
    assert parse({"fallbacks": [{"zone": "cn-shanghai-b"}]}, network={"zones": ["cn-shanghai-b"]}).capacity.fallbacks


@pytest.mark.parametrize(
    ("capacity", "needle"),
    [
        (
            {"fallbacks": [{"instance_type": "ecs.gn7-c13g1.26xlarge"}]},
            "capacity.fallbacks[0].instance_type = 'ecs.gn7-c13g1.26xlarge': has 8 × A100-SXM4-40GB per node, not "
            "8 × A100-SXM4-80GB as ecs.gn7e-c16g1.32xlarge",
        ),
        ({"fallbacks": [{"instance_type": "ecs.gn7e-c16g1.16xlarge"}]}, "'ecs.ebmgn7e.32xlarge'"),
        ({"fallbacks": [{"instance_type": "ecs.gn7e-c16g1.32xlarg"}]}, "is not a real instance type in the catalog"),
        ({"fallbacks": [{"instance_type": "m6i.32xlarge"}]}, "article aliases are not taken here"),
        ({"fallbacks": [{"region": "cn-shangai"}]}, "did you mean 'cn-shanghai'?"),
        ({"fallbacks": [{"zone": "cn-beijing-c"}]}, "capacity.fallbacks[0].zone = 'cn-beijing-c': is not a zone of"),
        ({"fallbacks": [{"region": "cn-beijing", "zone": "cn-shanghai-b"}]}, "is not a zone of region cn-beijing"),
        (
            {"fallbacks": [{"zone": "cn-shanghai-b"}, {"zone": "cn-shanghai-c"}, {"zone": "cn-shanghai-b"}]},
            "capacity.fallbacks[2] = 'zone cn-shanghai-b': gives the same shape as capacity.fallbacks[0] "
            "(ecs.gn7e-c16g1.32xlarge in cn-shanghai (cn-shanghai-b), pay-as-you-go)",
        ),
        ({"fallbacks": [{}]}, "changes nothing: give at least one of zone, instance_type, region, spot"),
        (
            {"fallbacks": [{"spot": True}], "reservation": {"kind": "capacity_reservation"}},
            "capacity.fallbacks[0].spot = True: cannot go with capacity.reservation",
        ),
        ({"reservation": {"kind": "elasticity_assurance"}}, "is required for an elasticity_assurance"),
        ({"reservation": {"kind": "elasticity_assurance", "term_months": 61}}, "less than or equal to 60"),
        ({"reservation": {"kind": "capacity_reservation", "nodes": 1001}}, "less than or equal to 1000"),
        ({"fallbacks": [{"zone": f"cn-shanghai-{z}"} for z in "bcdefgklmna"]}, "at most 10 items"),
    ],
)
def test_bad_capacity_is_refused_naming_the_entry(capacity: dict[str, Any], needle: str) -> None:
    assert needle in refusal(capacity)


def test_a_region_switch_drops_zones_it_does_not_name() -> None:
    primary = Shape("cn-shanghai", ("cn-shanghai-a",), "ecs.gn7e-c16g1.32xlarge", False)
    assert primary.with_alternative(Alternative(region="cn-beijing")).zones == ()
    assert primary.with_alternative(Alternative(region="cn-beijing", zone="cn-beijing-c")).zones == ("cn-beijing-c",)
    assert primary.with_alternative(Alternative(spot=True)) == Shape(
        "cn-shanghai", ("cn-shanghai-a",), "ecs.gn7e-c16g1.32xlarge", True
    )
