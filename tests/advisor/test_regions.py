"""`aitrain recommend --regions [--check-stock]`: each region's own recommendation, the cheapest among the regions
with stock (recorded DescribeAvailableResource answers, no SDK), and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.preflight.checks import AVAILABLE_RESOURCE, zones_with_stock
from tests.cloud_env import NO_CREDS, replay_sdk
from tests.preflight.replay import DATA

runner = CliRunner()
CREDS = {**NO_CREDS, "ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret"}
JOB = str(Path(__file__).resolve().parents[2] / "examples" / "medical-imaging.yaml")
RECORDED = json.loads((DATA / "choose" / "regions_stock.json").read_text(encoding="utf-8"))["responses"]


class StockReader:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.readers_built: list[str] = []

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        assert api == AVAILABLE_RESOURCE
        self.calls.append(dict(params))
        for item in RECORDED:
            if all(params.get(k) == v for k, v in item["request"].items()):
                return dict(item["body"])
        raise AssertionError(f"no recording for {dict(params)}")


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> StockReader:
    return replay_sdk(monkeypatch, tmp_path, StockReader())


def test_zones_with_stock_reads_available_and_not_without_stock() -> None:
    assert zones_with_stock(RECORDED[0]["body"], "ecs.gn7-c13g1.26xlarge") == ()
    assert zones_with_stock(RECORDED[1]["body"], "ecs.gn7-c13g1.26xlarge") == ("cn-beijing-b",)
    assert zones_with_stock(RECORDED[1]["body"], "ecs.other") == ()


def test_the_cheapest_region_with_stock_is_chosen(reader: StockReader) -> None:
    result = runner.invoke(app, ["recommend", JOB, "--regions", "cn-shanghai,cn-beijing", "--check-stock"], env=CREDS)
    assert result.exit_code == 0, result.output
    assert "none in stock in any zone" in result.output
    assert "CHOSEN cn-beijing" in result.output and "in stock in cn-beijing-b" in result.output
    assert "cheapest per run among the regions found in stock: cn-beijing" in result.output
    assert [c["RegionId"] for c in reader.calls] == ["cn-shanghai", "cn-beijing"]
    assert all("ZoneId" not in c and c["SpotStrategy"] == "NoSpot" for c in reader.calls)


def test_json_lists_every_region_with_its_price_basis(reader: StockReader) -> None:
    result = runner.invoke(
        app, ["recommend", JOB, "--regions", "cn-shanghai", "--regions", "cn-beijing", "--format", "json"], env=CREDS
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["regions"]
    assert [r["region"] for r in rows] == ["cn-shanghai", "cn-beijing"]
    assert all(r["stock"] == "not checked" for r in rows)
    assert "applied to cn-beijing" in rows[1]["price_basis"]
    assert rows[0]["cny_per_run"] == rows[1]["cny_per_run"]  # one mainland price, applied (and said so)
    assert reader.calls == []  # stock not asked without --check-stock


def test_no_region_in_stock_recommends_nothing_and_exits_1(reader: StockReader) -> None:
    result = runner.invoke(app, ["recommend", JOB, "--regions", "cn-shanghai", "--check-stock"], env=CREDS)
    assert result.exit_code == 1, result.output
    assert "no region has a feasible, priced choice found in stock" in result.output


@pytest.mark.parametrize(
    ("args", "env", "code", "needle"),
    [
        (["--check-stock"], CREDS, 2, "--check-stock = True: goes with --regions"),
        (["--regions", "cn-shangai"], CREDS, 2, "did you mean 'cn-shanghai'?"),
        (["--regions", "cn-shanghai", "--check-stock"], NO_CREDS, 3, "no Alibaba Cloud credentials found"),
    ],
)
def test_bad_region_options(reader: StockReader, args: list[str], env: dict[str, str], code: int, needle: str) -> None:
    result = runner.invoke(app, ["recommend", JOB, *args], env=env)
    assert result.exit_code == code, result.output
    assert needle in result.output
    assert reader.calls == []
