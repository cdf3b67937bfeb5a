"""`aitrain preflight`: exit codes 0 / 1 / 2 / 3, text and JSON output, credentials checked before anything else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints import preflight
from blueprints.cli import app
from blueprints.preflight import aliyun
from tests.preflight.replay import ReplayReader

runner = CliRunner()
CREDS = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret"}
NO_CREDS = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "", "ALIBABA_CLOUD_ROLE_ARN": "", "ALIBABA_CLOUD_ECS_METADATA": "",
            "ALIBABA_CLOUD_CREDENTIALS_FILE": "", "ALIBABA_CLOUD_CREDENTIALS_URI": "", "ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true"}


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ReplayReader:
    """The CLI's SDK reader replaced by the recorded responses; the SDK classes are never built."""
    reader = ReplayReader()
    monkeypatch.setattr(aliyun, "sdk_client_classes", lambda: {})
    monkeypatch.setattr(aliyun, "SdkReader", lambda region, **_: reader)
    monkeypatch.setenv("HOME", str(tmp_path))
    return reader


def test_no_credentials_exits_3_before_any_plan_or_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    def explode(*_: Any, **__: Any) -> Any:
        raise AssertionError("must not be reached without credentials")

    monkeypatch.setattr("blueprints.preview.preview", explode)
    monkeypatch.setattr(aliyun, "SdkReader", explode)
    result = runner.invoke(app, ["preflight", "medical-imaging"], env=NO_CREDS)
    assert result.exit_code == 3, result.output
    assert "no Alibaba Cloud credentials found" in result.output and "ALIBABA_CLOUD_ACCESS_KEY_ID" in result.output


def test_short_plan_exits_1_with_numbers(replay: ReplayReader) -> None:
    result = runner.invoke(app, ["preflight", "medical-imaging", "--today", "2026-11-30"], env=CREDS)
    assert result.exit_code == 1, result.output
    assert "quota 1000, in use 200, free 800; the plan starts 1536 (short by 736" in result.output
    assert "credentials: environment (ALIBABA_CLOUD_ACCESS_KEY_ID)" in result.output
    assert [api for api, _ in replay.calls] == ["ecs.DescribeAccountAttributes", "quotas.ListProductQuotas", "ecs.DescribeAvailableResource", "nas.DescribeZones"]


def test_fitting_plan_exits_0_and_json_schema(replay: ReplayReader, tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.pool.yaml"
    stack.write_text("config:\n  aitrain:preset: autoscaling-training\n")
    result = runner.invoke(app, ["preflight", "--stack-config", str(stack), "--format", "json", "--today", "2026-11-30"], env=CREDS)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["schema"] == preflight.SCHEMA and data["short"] is False
    assert data["needs"]["compute"][0]["nodes"] == 8 and data["needs"]["totals"]["postpaid_vcpus"] == 256
    assert {c["status"] for c in data["checks"]} == {"ok", "warn", "unknown"}


def test_bad_input_exits_2(replay: ReplayReader, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["preflight", "--stack-config", str(tmp_path / "nope.yaml")], env=CREDS)
    assert missing.exit_code == 2 and "nope.yaml" in missing.output and "Traceback" not in missing.output
    bad = runner.invoke(app, ["preflight", "medical-imaging", "--set", "storage.kind=tape"], env=CREDS)
    assert bad.exit_code == 2 and "storage.kind" in bad.output and "tape" in bad.output
    nothing = runner.invoke(app, ["preflight"], env=CREDS)
    assert nothing.exit_code == 2 and "name a preset" in nothing.output
    assert replay.calls == []  # no API call on bad input


def test_missing_sdk_is_one_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    def missing() -> Any:
        raise aliyun.SdkMissing(f"alibabacloud_ecs20140526: {aliyun.INSTALL_HINT}")

    monkeypatch.setattr(aliyun, "sdk_client_classes", missing)
    result = runner.invoke(app, ["preflight", "medical-imaging", "--today", "2026-11-30"], env=CREDS)
    assert result.exit_code == 2 and "aitrain[preflight]" in result.output


def test_help_documents_exit_codes() -> None:
    result = runner.invoke(app, ["preflight", "--help"], terminal_width=200)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for phrase in ("0 nothing short", "1 something is short", "2 invalid input", "3 no credentials found"):
        assert phrase in text
