"""Regressions found by the profile fuzzer (``bench/fuzz.py``): each case once crashed or was accepted unsafely."""

from __future__ import annotations

import datetime as dt
import ipaddress

import pytest

from blueprints.architectures import profile_models
from blueprints.core import yamlsafe
from blueprints.core.errors import UserInputError
from blueprints.core.layout import off_hours_tasks, vswitch_cidr
from blueprints.profile.stackconfig import parse_overrides
from blueprints.testing import offline_plan

TODAY = dt.date(2026, 11, 30)
ZONES = ("cn-shanghai-a", "cn-shanghai-b", "cn-shanghai-c")


# --- crash: a control character in YAML text raised yaml.ReaderError (not a UserInputError) -----------------


def test_set_value_with_a_control_character_is_kept_as_text_not_a_reader_crash():
    # `--set cost.spot=<ESC>]0;title<BEL>True`: PyYAML's reader refuses BEL while it is constructed.
    assert parse_overrides(["cost.spot=\x1b]0;title\x07True"], profile_models()) == [
        ("cost.spot", "\x1b]0;title\x07True")
    ]


def test_set_value_with_a_control_character_is_then_refused_by_the_field():
    with pytest.raises(UserInputError) as caught:
        offline_plan(
            "medical-imaging", overrides=dict(parse_overrides(["cost.spot=\x07true"], profile_models())), today=TODAY
        )
    assert "cost.spot" in caught.value.render()


def test_stack_text_with_a_control_character_is_a_user_error_naming_the_source():
    with pytest.raises(UserInputError) as caught:
        yamlsafe.load("config:\n  aitrain:preset: medical\x07imaging\n", "stack config Pulumi.dev.yaml")
    message = caught.value.render()
    assert "stack config Pulumi.dev.yaml" in message and "is not valid YAML" in message and "#x0007" in message


# --- unsafe: a /8–/12 VPC gave vSwitches of /12–/16 masks; Alibaba Cloud takes /16–/29 ----------------------


@pytest.mark.parametrize(
    ("vpc", "expected"),
    [
        ("10.0.0.0/8", "10.1.0.0/16"),
        ("10.128.0.0/9", "10.129.0.0/16"),
        ("10.0.0.0/12", "10.1.0.0/16"),
        ("10.0.0.0/13", "10.0.128.0/17"),
    ],
)
def test_vswitch_mask_stays_inside_16_to_29(vpc, expected):
    cidr = vswitch_cidr(vpc, "cn-shanghai-b", ZONES)
    assert cidr == expected
    assert ipaddress.ip_network(cidr).subnet_of(ipaddress.ip_network(vpc))


def test_plan_with_a_slash_8_vpc_has_slash_16_vswitches():
    plan = offline_plan("medical-imaging", overrides={"network.vpc_cidr": "10.0.0.0/8"}, today=TODAY)
    masks = {ipaddress.ip_network(r.inputs["cidrBlock"]).prefixlen for r in plan.find("vpc.Switch")}
    assert masks == {16}


# --- unsafe: off-hours tasks repeated until start_date + 364 days, past ESS's 365 days after creation --------


def test_recurrence_ends_364_days_after_creation_even_for_the_latest_start():
    latest_start = TODAY + dt.timedelta(days=89)
    wake, sleep = off_hours_tasks(latest_start, "Asia/Shanghai", "09:00", "19:00", True, created=TODAY)
    for task in (wake, sleep):
        end = dt.datetime.strptime(task.recurrence_end_time, "%Y-%m-%dT%H:%M:%SZ").date()
        assert end == TODAY + dt.timedelta(days=364)
        assert task.launch_time.startswith(latest_start.isoformat())


def test_plan_with_a_pinned_start_keeps_the_recurrence_end_inside_365_days():
    start = (TODAY + dt.timedelta(days=89)).isoformat()
    plan = offline_plan("autoscaling-training", overrides={"cost.off_hours.start_date": start}, today=TODAY)
    tasks = plan.find("ess.ScheduledTask")
    assert len(tasks) == 2
    assert {t.inputs["recurrenceEndTime"][:10] for t in tasks} == {"2027-11-29"}


# --- unsafe: Extreme NAS standard accepted 1 PiB; the catalog (and the cloud) stop at 256 TiB ---------------


def test_capacity_beyond_the_tiers_maximum_is_refused_with_the_range():
    with pytest.raises(UserInputError) as caught:
        offline_plan("medical-imaging", overrides={"storage.capacity_gib": 1_048_576}, today=TODAY)
    assert "capacity_gib 1,048,576 is outside extreme_nas standard's 100–262,144 GiB" in caught.value.render()


def test_capacity_at_the_tiers_maximum_is_accepted():
    plan = offline_plan("medical-imaging", overrides={"storage.capacity_gib": 262_144}, today=TODAY)
    assert plan.find("nas.FileSystem")[0].inputs["capacity"] == 262_144


# --- unsafe: start_date ≤ today + 89 left no margin for zones behind UTC (first run past ESS's 90 days) ------


def test_last_start_day_behind_utc_is_refused_with_the_latest_day_that_works():
    late = {
        "cost.off_hours.timezone": "Pacific/Pago_Pago",
        "cost.off_hours.work_end": "23:59",
        "cost.off_hours.start_date": "2027-02-27",
    }
    with pytest.raises(UserInputError) as caught:
        offline_plan("autoscaling-training", overrides=late, today=TODAY)
    message = caught.value.render()
    assert "first runs at 2027-02-28T10:59Z (UTC), more than 90 days after today (2026-11-30)" in message
    assert "give a start_date up to 2027-02-26" in message
    plan = offline_plan(
        "autoscaling-training", overrides={**late, "cost.off_hours.start_date": "2027-02-26"}, today=TODAY
    )
    assert max(t.inputs["launchTime"] for t in plan.find("ess.ScheduledTask")) == "2027-02-27T10:59Z"


def test_last_start_day_ahead_of_utc_is_still_accepted():
    plan = offline_plan("autoscaling-training", overrides={"cost.off_hours.start_date": "2027-02-27"}, today=TODAY)
    assert sorted(t.inputs["launchTime"] for t in plan.find("ess.ScheduledTask")) == [
        "2027-02-27T01:00Z",
        "2027-02-27T11:00Z",
    ]
