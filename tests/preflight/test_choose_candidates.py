"""The candidates `preflight --choose` walks: the settings that pin each, what each changes, the walk's order and stop,
and the one-line reason of each outcome (pure: no plan, no cloud)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from blueprints.architectures import profile_models
from blueprints.catalog import instance_price, load_catalog
from blueprints.preflight.checks import OK, SHORT, UNKNOWN, Check
from blueprints.preflight.choose import Candidate, Tried, candidates, walk
from blueprints.preflight.needs import Needs
from blueprints.preflight.report import Report
from blueprints.profile.parse import parse_profile
from blueprints.profile.stackconfig import load_preset, merge

CATALOG = load_catalog()
GN7E = "ecs.gn7e-c16g1.32xlarge"


def profile(fallbacks: list[dict[str, Any]], **more: Any) -> Any:
    data = merge(load_preset("medical-imaging"), {"capacity": {"fallbacks": fallbacks}, **more})
    return parse_profile(data, models=profile_models(), catalog=CATALOG, today=dt.date(2026, 12, 1))


def settings(fallbacks: list[dict[str, Any]], **more: Any) -> list[tuple[tuple[str, Any], ...]]:
    return [c.settings for c in candidates(profile(fallbacks, **more), CATALOG)]


def test_each_fallback_pins_only_what_it_changes() -> None:
    assert settings(
        [
            {"zone": "cn-shanghai-b"},
            {"instance_type": "ecs.ebmgn7e.32xlarge"},
            {"spot": True},
            {"region": "cn-beijing"},
            {"region": "cn-beijing", "zone": "cn-beijing-d"},
        ]
    ) == [
        (),
        (("network.zones", ("cn-shanghai-b",)),),
        (("compute.instance_type", "ecs.ebmgn7e.32xlarge"),),
        (("cost.spot", True),),
        # A new region: the file system's zone is pinned there (the region's first zone), compute zones left open.
        (("region", "cn-beijing"), ("storage.zone", CATALOG.zones("cn-beijing")[0]), ("network.zones", ())),
        (("region", "cn-beijing"), ("storage.zone", "cn-beijing-d"), ("network.zones", ("cn-beijing-d",))),
    ]


def test_a_fallback_equal_to_the_pinned_shape_is_not_tried_again() -> None:
    found = candidates(
        profile([{"zone": "cn-shanghai-b"}, {"zone": "cn-shanghai-c"}], network={"zones": ["cn-shanghai-b"]}),
        CATALOG,
    )
    assert [c.name for c in found] == ["the profile's own shape", "capacity.fallbacks[1]"]


def test_what_each_candidate_changes() -> None:
    own, zone, typed, spot = candidates(
        profile([{"zone": "cn-shanghai-b"}, {"instance_type": "ecs.ebmgn7e.32xlarge"}, {"spot": True}]), CATALOG
    )
    hourly = instance_price(CATALOG, GN7E, "cn-shanghai").cny
    assert hourly is not None
    assert own.changes == ("as configured",)
    assert zone.changes == (
        "compute zone cn-shanghai-a (network.zones empty: the storage zone first) → cn-shanghai-b (a new vSwitch; "
        "the file system stays in cn-shanghai-a, reached across zones)",
        f"price unchanged, ¥{hourly * 12:,.2f}/h for 12 nodes",
    )
    old, new = CATALOG.instance_type(GN7E), CATALOG.instance_type("ecs.ebmgn7e.32xlarge")
    assert typed.changes[1] == f"fabric TCP {old.network_gbps:g} Gbit/s → TCP {new.network_gbps:g} Gbit/s"
    assert typed.changes[2].startswith(f"time: the same 8 × {new.gpu_model} per node")
    assert spot.changes == (
        f"price ¥{hourly * 12:,.2f}/h → at most ¥{hourly * 12:,.2f}/h for 12 nodes",
        "spot: nodes can be reclaimed mid-run (the run resumes from its last checkpoint, so time grows with each "
        "preemption)",
    )


def test_a_region_switch_says_the_data_stays_behind() -> None:
    (_, region) = candidates(profile([{"region": "cn-beijing"}]), CATALOG)
    assert region.changes[0] == (
        "region cn-shanghai → cn-beijing: a new network, file system and bucket there; the data in cn-shanghai does "
        "not move"
    )


def test_settings_dict_nests_the_dotted_paths() -> None:
    candidate = Candidate(
        1, candidates(profile([]), CATALOG)[0].shape, (("network.zones", ("z",)), ("cost.spot", False)), ()
    )
    assert candidate.settings_dict() == {"network": {"zones": ["z"]}, "cost": {"spot": False}}


# ---- the walk and its reasons ----


def check(status: str, detail: str, check_id: str = "stock.t.z") -> Check:
    return Check(check_id, "t in z", status, 1, None, "nodes", detail, "ecs.DescribeAvailableResource")


def report(*checks: Check, accepted: tuple[str, ...] = ()) -> Report:
    return Report(Needs("p", "fixed-cluster", "cn-shanghai", (), None), checks, "env", accepted)


@pytest.mark.parametrize(
    ("tried", "reason", "fits"),
    [
        (Tried(None, None, refused="profile = <missing>: bad"), "no plan: profile = <missing>: bad", False),  # type: ignore[arg-type]
        (Tried(None, report(check(OK, "ok"))), "fits: nothing short", True),  # type: ignore[arg-type]
        (
            Tried(None, report(check(UNKNOWN, "Forbidden"), accepted=("stock",))),  # type: ignore[arg-type]
            "fits: nothing short, 1 unanswered check(s) accepted",
            True,
        ),
        (Tried(None, report(check(SHORT, "SoldOut"), check(OK, "ok"))), "t in z: SoldOut", False),  # type: ignore[arg-type]
        (
            Tried(None, report(check(UNKNOWN, "Forbidden.RAM: no"))),  # type: ignore[arg-type]
            "unanswered, so nothing proves it fits: t in z: Forbidden.RAM: no",
            False,
        ),
    ],
)
def test_each_outcome_has_its_one_line_reason(tried: Tried, reason: str, fits: bool) -> None:
    assert (tried.reason(), tried.fits) == (reason, fits)


def test_the_walk_stops_at_the_first_that_fits() -> None:
    found = candidates(profile([{"zone": "cn-shanghai-b"}, {"zone": "cn-shanghai-c"}]), CATALOG)
    asked: list[str] = []

    def evaluate(candidate: Candidate) -> Tried:
        asked.append(candidate.name)
        status = OK if candidate.index == 0 else SHORT
        return Tried(candidate, report(check(status, "x")))

    tried = walk(found, evaluate)
    assert asked == ["the profile's own shape", "capacity.fallbacks[0]"]
    assert [t.fits for t in tried] == [False, True]


def test_an_erdma_alternative_names_its_fabric() -> None:
    (_, erdma) = candidates(profile([{"instance_type": "ecs.ebmgn7ex.32xlarge"}]), CATALOG)
    rdma = CATALOG.instance_type("ecs.ebmgn7ex.32xlarge").rdma_gbps
    assert f"fabric TCP 64 Gbit/s → eRDMA {rdma:g} Gbit/s" in erdma.changes


def test_an_unknown_price_is_said_never_zero() -> None:
    (_, unpriced) = candidates(profile([{"instance_type": "ecs.ebmgn7ex.32xlarge"}]), CATALOG)
    assert unpriced.changes[0].startswith("price unknown for 12 × ecs.ebmgn7ex.32xlarge in cn-shanghai (no price for")
    (_, priced) = candidates(
        profile([{"instance_type": GN7E}], compute={"instance_type": "ecs.ebmgn7ex.32xlarge", "scratch_gib": 3072}),
        CATALOG,
    )
    hourly = instance_price(CATALOG, GN7E, "cn-shanghai").cny
    assert hourly is not None
    assert priced.changes[0] == f"price ¥{hourly * 12:,.2f}/h for 12 nodes (the current shape's is unknown)"
