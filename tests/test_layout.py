"""Pure layout arithmetic: vSwitch CIDRs, zone choice, instance batches, off-hours schedule in UTC."""

from __future__ import annotations

import datetime as dt
import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprints.core.layout import (
    LayoutError,
    choose_compute_zones,
    instance_batches,
    network_zones,
    off_hours_tasks,
    vswitch_cidr,
)

ZONES = ("cn-shanghai-a", "cn-shanghai-b", "cn-shanghai-e", "cn-shanghai-f")


def test_vswitch_cidr_is_numbered_by_the_zone_not_by_how_many_zones_are_used():
    cidrs = [vswitch_cidr("10.20.0.0/16", z, ZONES) for z in ZONES]
    assert cidrs == ["10.20.0.0/20", "10.20.16.0/20", "10.20.32.0/20", "10.20.48.0/20"]
    nets = [ipaddress.ip_network(c) for c in cidrs]
    assert all(n.subnet_of(ipaddress.ip_network("10.20.0.0/16")) for n in nets)
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])


def test_vswitch_prefix_is_capped_at_29_and_slots_run_out_with_a_message():
    assert vswitch_cidr("192.168.0.0/27", "cn-shanghai-b", ZONES) == "192.168.0.8/29"
    with pytest.raises(LayoutError, match="room for 2 vSwitches of /29; zone cn-shanghai-e is number 3"):
        vswitch_cidr("192.168.0.0/28", "cn-shanghai-e", ZONES)
    with pytest.raises(LayoutError, match="not in the catalog's zone list"):
        vswitch_cidr("10.0.0.0/16", "cn-shanghai-x", ZONES)


def choose(available, preferred=(), storage="cn-shanghai-a", count=3):
    return choose_compute_zones(available, preferred, storage, count, region_zones=ZONES, instance_type="t", region="r")


def test_compute_zones_keep_preference_order_and_skip_unavailable():
    available = ["cn-shanghai-b", "cn-shanghai-a", "cn-shanghai-e"]
    assert choose(available, ("cn-shanghai-e", "cn-shanghai-x", "cn-shanghai-a")) == ["cn-shanghai-e", "cn-shanghai-a"]
    assert choose(available, count=2) == ["cn-shanghai-a", "cn-shanghai-b"]


def test_compute_follows_storage_when_the_storage_zone_offers_the_type():
    assert choose(["cn-shanghai-b", "cn-shanghai-e", "cn-shanghai-f"], storage="cn-shanghai-e", count=1) == [
        "cn-shanghai-e"
    ]
    assert choose(["cn-shanghai-b", "cn-shanghai-f"], storage="cn-shanghai-e", count=1) == ["cn-shanghai-b"]


def test_network_zones_always_include_storage_in_region_order():
    assert network_zones("cn-shanghai-e", ["cn-shanghai-f", "cn-shanghai-a"], ZONES) == [
        "cn-shanghai-a",
        "cn-shanghai-e",
        "cn-shanghai-f",
    ]
    assert network_zones("cn-shanghai-a", ["cn-shanghai-a"], ZONES) == ["cn-shanghai-a"]


def test_choose_zones_explains_when_nothing_fits():
    with pytest.raises(LayoutError) as info:
        choose_compute_zones(
            ["cn-shanghai-b"],
            ("cn-shanghai-a",),
            "cn-shanghai-a",
            1,
            region_zones=ZONES,
            instance_type="ecs.gn7e-c16g1.32xlarge",
            region="cn-shanghai",
        )
    message = str(info.value)
    assert "no zone among network.zones ['cn-shanghai-a'] in cn-shanghai offers ecs.gn7e-c16g1.32xlarge" in message
    assert "zones that do: cn-shanghai-b" in message


@pytest.mark.parametrize(
    "nodes, expected", [(1, [1]), (12, [12]), (100, [100]), (101, [51, 50]), (128, [64, 64]), (250, [84, 83, 83])]
)
def test_instance_batches_examples(nodes, expected):
    assert instance_batches(nodes) == expected


@given(st.integers(min_value=1, max_value=2000))
def test_instance_batches_cover_nodes_in_fewest_even_batches(nodes):
    batches = instance_batches(nodes)
    assert sum(batches) == nodes
    assert max(batches) <= 100
    assert len(batches) == -(-nodes // 100)
    assert max(batches) - min(batches) <= 1


def test_off_hours_in_shanghai_convert_to_utc_without_day_shift():
    wake, sleep = off_hours_tasks(
        dt.date(2026, 12, 1), "Asia/Shanghai", "09:00", "19:00", weekdays_only=True, created=dt.date(2026, 11, 30)
    )
    # 09:00 in Shanghai (UTC+8) is 01:00 UTC the same day; Monday–Friday stay 1–5 (ESS: 0 = Sunday).
    assert wake.launch_time == "2026-12-01T01:00Z"
    assert (wake.recurrence_type, wake.recurrence_value) == ("Weekly", "1,2,3,4,5")
    # 19:00 in Shanghai is 11:00 UTC, every day.
    assert sleep.launch_time == "2026-12-01T11:00Z"
    assert (sleep.recurrence_type, sleep.recurrence_value) == ("Daily", "1")
    assert sleep.recurrence_end_time == "2027-11-29T11:00:00Z"  # 364 days after creation, inside ESS's 365-day limit


def test_off_hours_weekday_shift_when_utc_is_the_previous_day():
    wake, _ = off_hours_tasks(
        dt.date(2026, 12, 1), "Asia/Shanghai", "07:00", "19:00", weekdays_only=True, created=dt.date(2026, 11, 30)
    )
    # 07:00 UTC+8 is 23:00 UTC the day before: Monday's wake-up fires on Sunday in UTC.
    assert wake.launch_time == "2026-11-30T23:00Z"
    assert wake.recurrence_value == "0,1,2,3,4"


def test_vswitch_room_counts_reserved_addresses_and_headroom():
    from blueprints.core.layout import LayoutError, check_vswitch_room

    # 192.168.0.0/20 → /24 vSwitches: 256 - 4 reserved = 252 free;
    # 230 nodes + 23 headroom = 253 do not fit, 229 + 23 do.
    check_vswitch_room("192.168.0.0/20", 229, 1)
    with pytest.raises(
        LayoutError,
        match=r"1 × 256 addresses less 4 reserved per vSwitch = 252 free, below 230 nodes \+ 23 headroom = 253",
    ):
        check_vswitch_room("192.168.0.0/20", 230, 1)
    check_vswitch_room("192.168.0.0/20", 230, 2)  # two zones' vSwitches: 504 free
    with pytest.raises(
        LayoutError, match=r"below 1 nodes \+ 8 headroom = 9"
    ):  # a /28 VPC → /29 vSwitches: 8 - 4 = 4 free
        check_vswitch_room("10.0.0.0/28", 1, 1)


def test_a_profile_with_more_nodes_than_its_vswitch_holds_is_refused_in_plan_and_program():
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    result = CliRunner().invoke(
        app, ["plan", "medical-imaging", "--set", "network.vpc_cidr=192.168.0.0/20", "--set", "compute.nodes=370"]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        "network.vpc_cidr 192.168.0.0/20 gives each zone a /24 vSwitch: 1 × 256 addresses less 4 reserved per vSwitch "
        "= 252 free, below 370 nodes + 37 headroom = 407" in result.stderr
    )
