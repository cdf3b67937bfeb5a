"""`aitrain catalog refresh`: DescribePrice through the preflight reader, exit codes 0 / 1 / 2 / 3, --write a copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints.catalog import instance_price, load_catalog
from blueprints.catalog.loader import CATALOG_DIR
from blueprints.cli.main import app
from blueprints.preflight import aliyun
from blueprints.preflight.checks import CloudError
from blueprints.preflight.prices import DESCRIBE_PRICE, ask_region, parse, request
from tests.cloud_env import CREDS, NO_CREDS, replay_sdk
from tests.prices.conftest import PriceReplay

runner = CliRunner()
GN7E = "ecs.gn7e-c16g1.32xlarge"
EX = "ecs.ebmgn7ex.32xlarge"  # the Kubernetes preset's type, unpriced in the shipped catalog
TWO = ["--type", GN7E, "--type", EX]


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> PriceReplay:
    """The CLI's SDK reader replaced by the recorded answers; the SDK clients are never built."""
    return replay_sdk(monkeypatch, tmp_path, PriceReplay())


def refresh(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, ["catalog", "refresh", *args, "--today", "2026-12-02"], env=env or CREDS)


def test_no_credentials_exits_3_before_any_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    def explode(*_: Any, **__: Any) -> Any:
        raise AssertionError("must not be reached without credentials")

    monkeypatch.setattr(aliyun, "SdkReader", explode)
    result = refresh("--region", "cn-shanghai", env=NO_CREDS)
    assert result.exit_code == 3, result.output
    assert "no Alibaba Cloud credentials found" in result.output


def test_prints_the_instance_price_alone_and_exits_0(replay: PriceReplay) -> None:
    result = refresh("--region", "cn-shanghai", *TWO)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("credentials: environment (ALIBABA_CLOUD_ACCESS_KEY_ID)\n")
    assert (
        "cn-shanghai (DescribePrice, cn-shanghai, 2026-12-02, pay-as-you-go, per hour): 2 priced, "
        "0 not priced there, 0 failed" in result.output
    )
    # The instanceType item, not the total with the system disk; the trade price beside it.
    assert f"  {GN7E}  250.5 CNY  (your trade price 225.45)" in result.output
    assert f"  {EX}    300.12 CNY\n" in result.output
    assert replay.calls == [request("cn-shanghai", GN7E), request("cn-shanghai", EX)]
    assert replay.calls[0] == {
        "RegionId": "cn-shanghai",
        "ResourceType": "instance",
        "InstanceType": GN7E,
        "PriceUnit": "Hour",
    }


def test_write_records_prices_in_the_copy_and_the_plan_uses_them(replay: PriceReplay, catalog_copy: Path) -> None:
    result = refresh(
        "--region", "cn-shanghai", "--region", "ap-southeast-1", *TWO, "--catalog-dir", str(catalog_copy), "--write"
    )
    assert result.exit_code == 0, result.output
    assert "ap-southeast-1" in result.output and f"not priced there: {EX} (PriceNotFound)" in result.output
    assert "wrote" in result.output and "1 instance_prices.csv rows replaced, 2 added" in result.output
    mine = load_catalog(catalog_copy)
    assert mine.version.endswith("+prices.2026-12-02")
    shanghai = instance_price(mine, GN7E, "cn-shanghai")
    assert (shanghai.cny, shanghai.date, shanghai.status) == (250.5, "2026-12-02", "list")
    assert shanghai.source.startswith("DescribePrice, cn-shanghai, 2026-12-02, high confidence")
    assert instance_price(mine, EX, "cn-shanghai").cny == 300.12  # the Kubernetes preset's type is priced now
    abroad = instance_price(mine, GN7E, "ap-southeast-1")
    rate = mine.price("usd_cny", None, "ap-southeast-1")[0].amount  # type: ignore[index]
    assert abroad.status == "converted" and abroad.cny == pytest.approx(35.2 * rate)
    assert instance_price(mine, EX, "ap-southeast-1").cny is None  # PriceNotFound: nothing recorded
    row = next(p for p in mine.instance_prices if (p.instance_type, p.region) == (GN7E, "cn-shanghai"))
    assert row.notes.endswith("this account's TradePrice 225.45 CNY")
    # The shipped catalog is untouched.
    assert instance_price(load_catalog(CATALOG_DIR), GN7E, "cn-shanghai").cny == 277.93


def test_by_default_every_gpu_type_and_every_priced_type_is_asked(replay: PriceReplay) -> None:
    result = refresh("--region", "cn-shanghai")
    catalog = load_catalog(CATALOG_DIR)
    asked = {c["InstanceType"] for c in replay.calls}
    gpu = {t for t, it in catalog.instance_types.items() if it.is_gpu}
    assert gpu <= asked and "ecs.g7.xlarge" in asked  # a priced CPU type (the Slurm controller's)
    assert not any(catalog.instance_types[t].gpu_count == 0 and not catalog.prices_of(t) for t in asked)
    assert result.exit_code == 1  # the recording answers two of them; the rest fail as unrecorded, and are listed


def test_a_failed_call_exits_1_and_keeps_the_rows(
    monkeypatch: pytest.MonkeyPatch, replay: PriceReplay, catalog_copy: Path
) -> None:
    replay.failing[("cn-shanghai", GN7E)] = CloudError(
        DESCRIBE_PRICE, "Throttling", "Request was denied due to request throttling."
    )
    before = (catalog_copy / "instance_prices.csv").read_text(encoding="utf-8")
    result = refresh("--region", "cn-shanghai", "--type", GN7E, "--catalog-dir", str(catalog_copy), "--write")
    assert result.exit_code == 1, result.output
    assert (
        f"failed: {GN7E} (Throttling: Request was denied due to request throttling.); its rows are kept"
        in result.output
    )
    assert (catalog_copy / "instance_prices.csv").read_text(encoding="utf-8") == before


def test_an_answer_without_the_instance_item_is_a_failure_not_a_price(replay: PriceReplay) -> None:
    result = refresh("--region", "cn-beijing", "--type", GN7E)
    assert result.exit_code == 1, result.output
    assert (
        "UnexpectedAnswer: no hourly instanceType price in CNY or USD (currency CNY, no instanceType item)"
        in result.output
    )


@pytest.mark.parametrize(
    "args, field",
    [
        (["--write"], "--catalog-dir"),
        (["--region", "mars-north-1"], "--region"),
        (["--type", "ecs.gn7e-c16g1.32xlargee"], "--type"),
        (["--catalog-dir", str(CATALOG_DIR), "--write"], "--catalog-dir"),
    ],
)
def test_invalid_input_exits_2_naming_the_field(replay: PriceReplay, args: list[str], field: str) -> None:
    result = refresh(*args)
    assert result.exit_code == 2, result.output
    assert field in result.output and replay.calls == []


def test_unknown_type_suggests_the_close_one(replay: PriceReplay) -> None:
    result = refresh("--type", "ecs.gn7e-c16g1.32xlargee")
    assert f"did you mean '{GN7E}'?" in result.output


def test_missing_sdk_exits_2_with_the_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def missing() -> Any:
        raise aliyun.SdkMissing(f"alibabacloud_ecs20140526: {aliyun.INSTALL_HINT}")

    monkeypatch.setattr(aliyun, "sdk_client_classes", missing)
    monkeypatch.setenv("HOME", str(tmp_path))
    result = refresh("--region", "cn-shanghai", "--type", GN7E)
    assert result.exit_code == 2, result.output
    assert (
        "aitrain catalog refresh needs the Alibaba Cloud SDKs" in result.output and aliyun.INSTALL_HINT in result.output
    )


def test_the_listing_still_runs_without_a_subcommand() -> None:
    result = runner.invoke(app, ["catalog", "--gpu", "A100", "--format", "json"], env={"AITRAIN_CATALOG_DIR": ""})
    assert result.exit_code == 0, result.output
    assert '"price_region": "cn-shanghai"' in result.output


# --- the request and the answer, as the SDK maps them ---------------------------------------------


def test_the_sdk_request_carries_the_documented_parameters() -> None:
    product, method, sdk_request = aliyun.build_request(DESCRIBE_PRICE, request("cn-shanghai", GN7E))
    assert (product, method) == ("ecs", "describe_price")
    assert {k: v for k, v in sdk_request.to_map().items() if v != []} == {
        "RegionId": "cn-shanghai",
        "ResourceType": "instance",
        "InstanceType": GN7E,
        "PriceUnit": "Hour",
    }


def test_the_answer_parses_as_the_sdk_model_maps_it() -> None:
    from alibabacloud_ecs20140526 import models as ecs

    body = ecs.DescribePriceResponseBody().from_map(PriceReplay().call(DESCRIBE_PRICE, request("cn-shanghai", GN7E)))
    quote = parse(GN7E, body.to_map())
    assert (quote.original, quote.trade, quote.currency) == (250.5, 225.45, "CNY")


def test_a_region_collects_quotes_unpriced_types_and_failures() -> None:
    reader = PriceReplay(
        {("ap-southeast-1", "ecs.g7.large"): CloudError(DESCRIBE_PRICE, "Forbidden.RAM", "no permission")}
    )
    answer = ask_region("ap-southeast-1", [GN7E, EX, "ecs.g7.large"], reader)
    assert [q.instance_type for q in answer.quotes] == [GN7E]
    assert answer.not_priced == ((EX, "PriceNotFound"),)
    assert [(t, e.code) for t, e in answer.failures] == [("ecs.g7.large", "Forbidden.RAM")]
