"""`aitrain preflight --choose`: the first shape with quota and stock is pinned in the stack config, and the plan diff
of the switch touches compute and its vSwitch only, never storage (recorded API responses, no SDK, no sockets)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Mapping

import pytest
from typer.testing import CliRunner

from blueprints.catalog import load_catalog
from blueprints.cli.main import app
from blueprints.engine.preview import preview
from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE
from blueprints.profile.stackconfig import engine_config
from blueprints.review.diff.compare import diff_plans
from tests.cloud_env import NO_CREDS, replay_sdk
from tests.preflight.replay import DATA, ReplayReader

runner = CliRunner()
CREDS = {**NO_CREDS, "ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret"}
DAY = "2026-11-30"
SCENARIO = DATA / "choose"
STACK = """\
# A comment and a secret of another namespace that --choose must keep byte for byte.
encryptionsalt: v1:abc=
config:
  alicloud:secretKey:
    secure: v1:xyz
  aitrain:preset: medical-imaging
  aitrain:profile:
    compute:
      nodes: 12
    capacity:
      fallbacks:
        - zone: cn-shanghai-b
        - zone: cn-shanghai-c
"""


class ScenarioReader(ReplayReader):
    """The zone-sold-out scenario (tests/data/preflight/choose) first, the shared recordings for the other APIs."""

    def __init__(self) -> None:
        super().__init__()
        self.readers_built: list[str] = []

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        files = {
            AVAILABLE_RESOURCE: "describe_available_resource.json",
            ACCOUNT_ATTRIBUTES: "describe_account_attributes.json",
        }
        if api in files:
            self.calls.append((api, dict(params)))
            recorded = json.loads((SCENARIO / files[api]).read_text(encoding="utf-8"))["responses"]
            for item in recorded:
                if all(params.get(k) == v for k, v in item["request"].items()):
                    return dict(item["body"])
            raise AssertionError(f"no recording for {api} {dict(params)}")
        return super().call(api, params)


@pytest.fixture
def scenario(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScenarioReader:
    return replay_sdk(monkeypatch, tmp_path, ScenarioReader())


def plan_dict(stack: Path) -> dict[str, Any]:
    return preview(engine_config(stack), catalog=load_catalog(), today=dt.date.fromisoformat(DAY)).to_dict()


def test_choose_pins_the_second_zone_and_the_diff_leaves_storage_alone(
    scenario: ScenarioReader, tmp_path: Path
) -> None:
    stack = tmp_path / "Pulumi.imaging.yaml"
    stack.write_text(STACK)
    before = plan_dict(stack)

    result = runner.invoke(
        app, ["preflight", "--choose", "--stack-config", str(stack), "--write", "--today", DAY], env=CREDS
    )

    assert result.exit_code == 0, result.output
    assert "no    the profile's own shape" in result.output
    assert (
        "ecs.gn7e-c16g1.32xlarge in cn-shanghai-a (medical-imaging-cluster-nodes-0): SoldOut (WithoutStock)"
        in result.output
    )
    assert "FITS  capacity.fallbacks[0] (network.zones: [cn-shanghai-b])" in result.output
    assert (
        "compute zone cn-shanghai-a (network.zones empty: the storage zone first) → cn-shanghai-b (a new vSwitch; "
        "the file system stays in cn-shanghai-a" in result.output
    )
    assert "not asked: capacity.fallbacks[1]" in result.output
    # Zone c was never asked about: the walk stops at the first shape that fits.
    zones_asked = [p["ZoneId"] for api, p in scenario.calls if api == AVAILABLE_RESOURCE]
    assert zones_asked == ["cn-shanghai-a", "cn-shanghai-b"]

    text = stack.read_text()
    assert text.startswith(STACK.splitlines()[0]) and "secure: v1:xyz" in text and "encryptionsalt: v1:abc=" in text
    assert engine_config(stack)["aitrain:profile"].count("cn-shanghai-b") == 2  # the pin and its fallback entry
    profile = json.loads(engine_config(stack)["aitrain:profile"])
    assert profile["network"]["zones"] == ["cn-shanghai-b"]

    diff = diff_plans(before, plan_dict(stack))
    touched = {(c.short_type, c.action) for c in diff.changes}
    assert ("vpc.Switch", "create") in touched
    # The file system, its mount target and access group, and the bucket are untouched; the share's access rule
    # follows the compute vSwitch's CIDR (the share admits only the compute zones), so it moves from a to b.
    storage = {(c.short_type, c.action, c.name) for c in diff.changes if c.short_type.startswith(("nas.", "oss."))}
    assert storage == {
        ("nas.AccessRule", "delete", "medical-imaging-storage-access-rule-cn-shanghai-a"),
        ("nas.AccessRule", "create", "medical-imaging-storage-access-rule-cn-shanghai-b"),
    }
    assert diff.risks == []
    # Only the zone and what sits in it changed: the nodes, their template, the new vSwitch with its SNAT entry.
    assert {t for t, _ in touched} <= {
        "vpc.Switch",
        "vpc.SnatEntry",
        "ecs.EcsInstanceSet",
        "ecs.EcsLaunchTemplate",
        "nas.AccessRule",
    }, touched


def test_the_profile_that_fits_is_left_as_it_is(scenario: ScenarioReader, tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.b.yaml"
    text = STACK.replace("    compute:\n", "    network:\n      zones: [cn-shanghai-b]\n    compute:\n")
    stack.write_text(text)
    result = runner.invoke(
        app, ["preflight", "--choose", "--stack-config", str(stack), "--write", "--today", DAY], env=CREDS
    )
    assert result.exit_code == 0, result.output
    assert "fits as it is: nothing to change" in result.output
    # The fallback equal to the pinned shape is not asked again; zone c is not asked because b fits.
    assert [p["ZoneId"] for api, p in scenario.calls if api == AVAILABLE_RESOURCE] == ["cn-shanghai-b"]
    assert stack.read_text() == text


def test_nothing_fits_exits_1_with_each_reason_and_writes_nothing(scenario: ScenarioReader, tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.a.yaml"
    text = STACK.replace("        - zone: cn-shanghai-b\n        - zone: cn-shanghai-c\n", "        - spot: true\n")
    stack.write_text(text)
    result = runner.invoke(
        app, ["preflight", "--choose", "--stack-config", str(stack), "--write", "--today", DAY], env=CREDS
    )
    assert result.exit_code == 1, result.output
    assert "NOTHING FITS: 2 shape(s) tried" in result.output
    assert result.output.count("SoldOut (WithoutStock)") == 2
    assert "spot: nodes can be reclaimed mid-run" in result.output
    assert stack.read_text() == text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["medical-imaging", "--choose"], "--choose = True: needs --stack-config"),
        (["medical-imaging", "--write"], "--write = True: goes with --choose"),
        (["--choose", "--stack-config", "S", "--set", "compute.nodes=3"], "--choose plans the stack file as written"),
    ],
)
def test_bad_choose_options_exit_2_before_any_call(
    scenario: ScenarioReader, tmp_path: Path, args: list[str], needle: str
) -> None:
    stack = tmp_path / "S"
    stack.write_text(STACK)
    result = runner.invoke(app, ["preflight", *[str(stack) if a == "S" else a for a in args]], env=CREDS)
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert scenario.calls == []
