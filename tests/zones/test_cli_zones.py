"""`aitrain zones`: exit codes 0 / 1 / 2 / 3, the printed answer, and --write into a catalog copy only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints.catalog import load_catalog
from blueprints.catalog.loader import CATALOG_DIR
from blueprints.cli.main import app
from blueprints.preflight import aliyun
from blueprints.preflight.checks import CloudError
from tests.cloud_env import CREDS, NO_CREDS, replay_sdk
from tests.zones.replay import ZonesReplay

runner = CliRunner()
GN7E = "ecs.gn7e-c16g1.32xlarge"
GPU_TYPES = sum(1 for it in load_catalog(CATALOG_DIR).instance_types.values() if it.is_gpu)


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ZonesReplay:
    """The CLI's SDK reader replaced by the recorded answers; the SDK clients are never built."""
    return replay_sdk(monkeypatch, tmp_path, ZonesReplay())


def test_no_credentials_exits_3_before_any_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    def explode(*_: Any, **__: Any) -> Any:
        raise AssertionError("must not be reached without credentials")

    monkeypatch.setattr(aliyun, "SdkReader", explode)
    result = runner.invoke(app, ["zones", "--region", "cn-beijing"], env=NO_CREDS)
    assert result.exit_code == 3, result.output
    assert "no Alibaba Cloud credentials found" in result.output and "ALIBABA_CLOUD_ACCESS_KEY_ID" in result.output


def test_prints_the_answer_and_exits_0(replay: ZonesReplay) -> None:
    result = runner.invoke(
        app, ["zones", "--region", "cn-beijing", "--region", "cn-shanghai", "--today", "2026-11-30"], env=CREDS
    )
    assert result.exit_code == 0, result.output
    assert f"{GN7E}  cn-beijing-b, cn-beijing-h  (sold out now: cn-beijing-b)" in result.output
    assert (
        "cn-shanghai (DescribeAvailableResource, cn-shanghai, 2026-11-30, PostPaid): 2 zones answered, 1 of "
        f"{GPU_TYPES} catalog GPU types offered" in result.output
    )
    assert f"not offered in any region asked ({GPU_TYPES - 2}; the catalog keeps them as unknown)" in result.output
    assert replay.readers_built == ["cn-beijing", "cn-shanghai"]
    assert result.output.startswith("credentials: environment (ALIBABA_CLOUD_ACCESS_KEY_ID)\n")


def test_missing_sdk_exits_2_with_the_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def missing() -> Any:
        raise aliyun.SdkMissing(f"alibabacloud_ecs20140526: {aliyun.INSTALL_HINT}")

    monkeypatch.setattr(aliyun, "sdk_client_classes", missing)
    monkeypatch.setenv("HOME", str(tmp_path))
    result = runner.invoke(app, ["zones", "--region", "cn-beijing"], env=CREDS)
    assert result.exit_code == 2, result.output
    assert (
        "aitrain zones needs the Alibaba Cloud SDKs" in result.output
        and "pip install 'aitrain[preflight]'" in result.output
    )


def test_default_asks_every_catalog_region(replay: ZonesReplay) -> None:
    result = runner.invoke(app, ["zones", "--today", "2026-11-30"], env=CREDS)
    assert replay.readers_built == list(load_catalog(CATALOG_DIR).regions)
    assert result.exit_code == 1  # regions without a recording fail like an unanswered call
    assert "cn-zhangjiakou: not answered (NoRecording" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--region", "cn-mars"], "--region = 'cn-mars': must be a region_id"),
        (["--region", "cn-beijing", "--write"], "--write needs a catalog copy"),
        (["--region", "cn-beijing", "--today", "30.11.2026"], "must be a date written YYYY-MM-DD"),
    ],
)
def test_bad_input_exits_2_with_one_message(replay: ZonesReplay, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["zones", *args], env=CREDS)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert replay.calls == []


def test_write_refuses_the_shipped_catalog(
    replay: ZonesReplay, catalog_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The copy stands in for the shipped folder: if the guard were ever lost (a mutation run deletes lines),
    # only the temporary copy could be written, never blueprints/catalog/data.
    from blueprints.preflight import zones_write

    monkeypatch.setattr(zones_write, "CATALOG_DIR", catalog_copy)
    before = {p.name: p.read_bytes() for p in catalog_copy.iterdir()}
    result = runner.invoke(
        app, ["zones", "--region", "cn-beijing", "--write", "--catalog-dir", str(catalog_copy)], env=CREDS
    )
    assert result.exit_code == 2, result.output
    assert "refusing to write the shipped catalog" in result.output and replay.calls == []
    assert {p.name: p.read_bytes() for p in catalog_copy.iterdir()} == before


def test_unknown_region_lists_the_allowed_ones(replay: ZonesReplay) -> None:
    result = runner.invoke(app, ["zones", "--region", "cn-hongkong"], env=CREDS)
    assert result.exit_code == 2
    assert "must be a region_id in the catalog's regions.csv" in result.output and "cn-wulanchabu" in result.output


def test_write_fills_the_copy_and_the_filter_follows(replay: ZonesReplay, catalog_copy: Path) -> None:
    args = [
        "zones",
        "--region",
        "cn-beijing",
        "--region",
        "cn-shanghai",
        "--catalog-dir",
        str(catalog_copy),
        "--write",
        "--today",
        "2026-11-30",
    ]
    result = runner.invoke(app, args, env=CREDS)
    assert result.exit_code == 0, result.output
    assert "3 instance_zones.csv rows, 2 regions cells changed" in result.output
    assert "regions.csv cn-beijing: added zones cn-beijing-b" in result.output
    assert "never asked: ap-southeast-1, cn-hangzhou, cn-shenzhen, cn-wulanchabu, cn-zhangjiakou" in result.output
    catalog = load_catalog(catalog_copy)
    assert GN7E not in [it.instance_type for it in catalog.query(region="cn-shanghai")]
    assert GN7E in [it.instance_type for it in catalog.query(region="cn-beijing")]


def test_failed_region_exits_1_and_writes_the_others(replay: ZonesReplay, catalog_copy: Path) -> None:
    replay.failing["cn-shanghai"] = CloudError(
        "ecs.DescribeAvailableResource", "Forbidden.RAM", "User not authorized to operate on the specified resource."
    )
    args = [
        "zones",
        "--region",
        "cn-beijing",
        "--region",
        "cn-shanghai",
        "--catalog-dir",
        str(catalog_copy),
        "--write",
        "--today",
        "2026-11-30",
    ]
    result = runner.invoke(app, args, env=CREDS)
    assert result.exit_code == 1, result.output
    assert "cn-shanghai: not answered (Forbidden.RAM: User not authorized" in result.output
    assert (
        "cn-shanghai (DescribeAvailableResource" not in result.output
    )  # no zone count for a region that did not answer
    after = load_catalog(catalog_copy).instance_zones
    assert {z.region for z in after if z.source.startswith("DescribeAvailableResource")} == {"cn-beijing"}
    # The region that did not answer keeps the rows the catalog had (the shipped cn-shanghai rows from a document).
    assert {z for z in after if z.region == "cn-shanghai"} == {
        z for z in load_catalog().instance_zones if z.region == "cn-shanghai"
    }


def test_invalid_catalog_copy_exits_2(replay: ZonesReplay, catalog_copy: Path) -> None:
    (catalog_copy / "VERSION").write_text("")
    result = runner.invoke(
        app, ["zones", "--region", "cn-beijing", "--catalog-dir", str(catalog_copy), "--write"], env=CREDS
    )
    assert result.exit_code == 2 and "VERSION" in result.output


def test_answer_contradicting_a_document_says_so_and_write_drops_the_rows(
    replay: ZonesReplay, catalog_copy: Path
) -> None:
    # The shipped cn-shanghai rows come from a 2023 price listing; the recorded answer lists only two GPU types there.
    documented = {z.instance_type for z in load_catalog(catalog_copy).instance_zones if z.region == "cn-shanghai"}
    args = ["zones", "--region", "cn-shanghai", "--catalog-dir", str(catalog_copy), "--write", "--today", "2026-11-30"]
    result = runner.invoke(app, args, env=CREDS)
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith("cn-shanghai: the catalog's documents name"))
    stale = line.rsplit(": ", 1)[1].split(", ")
    assert stale and set(stale) <= documented and GN7E in stale
    after = load_catalog(catalog_copy)
    # The answer wins: the documents' rows for the types it does not list are gone, the listed ones have zones now.
    assert not any(after.zone_row(t, "cn-shanghai") for t in stale)
    shanghai = [z for z in after.instance_zones if z.region == "cn-shanghai"]
    assert shanghai and all(z.zones and z.source.startswith("DescribeAvailableResource") for z in shanghai)
