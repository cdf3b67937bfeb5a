"""`aitrain preflight`: exit codes 0 / 1 / 2 / 3 / 4, text and JSON output, credentials checked before anything else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints import preflight
from blueprints.cli.main import app
from blueprints.preflight import aliyun
from tests.cloud_env import NO_CREDS
from tests.preflight.replay import ReplayReader, unreachable_client_classes

runner = CliRunner()
CREDS = {**NO_CREDS, "ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret"}
PULUMI_CREDS = {**NO_CREDS, "ALICLOUD_ACCESS_KEY": "pulumi-id", "ALICLOUD_SECRET_KEY": "pulumi-secret"}
ALL_KINDS = "vcpu-quota,instance-type-quota,stock,storage-zone"


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

    monkeypatch.setattr("blueprints.engine.preview.preview", explode)
    monkeypatch.setattr(aliyun, "SdkReader", explode)
    result = runner.invoke(app, ["preflight", "medical-imaging"], env=NO_CREDS)
    assert result.exit_code == 3, result.output
    assert "no Alibaba Cloud credentials found" in result.output and "ALIBABA_CLOUD_ACCESS_KEY_ID" in result.output


def test_short_plan_exits_1_with_numbers(replay: ReplayReader) -> None:
    result = runner.invoke(app, ["preflight", "medical-imaging", "--today", "2026-11-30"], env=CREDS)
    assert result.exit_code == 1, result.output
    assert "quota 1000, in use 200, free 800; the plan starts 1536 (short by 736" in result.output
    assert "credentials: environment (ALIBABA_CLOUD_ACCESS_KEY_ID)" in result.output
    assert [api for api, _ in replay.calls] == [
        "ecs.DescribeAccountAttributes",
        "quotas.ListProductQuotas",
        "ecs.DescribeAvailableResource",
        "nas.DescribeZones",
    ]


def test_fitting_plan_exits_0_and_json_schema(replay: ReplayReader, tmp_path: Path) -> None:
    """The pool's instance-type quota is unanswered (Quota Center
    lists none): exit 4 unless that check is accepted by name."""
    stack = tmp_path / "Pulumi.pool.yaml"
    stack.write_text("config:\n  aitrain:preset: autoscaling-training\n")
    args = ["preflight", "--stack-config", str(stack), "--format", "json", "--today", "2026-11-30"]
    gate = runner.invoke(app, args, env=CREDS)
    assert gate.exit_code == 4, gate.output
    blocked = json.loads(gate.output)
    assert (blocked["verdict"], blocked["exit_code"], blocked["short"]) == ("unanswered", 4, False)
    assert [c["kind"] for c in blocked["checks"] if c["status"] == "unknown"] == ["instance-type-quota"]
    assert blocked["unanswered"] == {"accepted": [], "blocking": ["quota.instance_type.ecs.gn7i-c32g1.8xlarge"]}
    result = runner.invoke(app, [*args, "--accept-unanswered", "instance-type-quota"], env=CREDS)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (
        data["schema"] == preflight.SCHEMA
        and data["short"] is False
        and (data["verdict"], data["exit_code"]) == ("ok", 0)
    )
    assert data["accepted_unanswered"] == ["instance-type-quota"]
    assert data["unanswered"] == {"accepted": ["quota.instance_type.ecs.gn7i-c32g1.8xlarge"], "blocking": []}
    assert data["needs"]["compute"][0]["nodes"] == 8 and data["needs"]["totals"]["postpaid_vcpus"] == 256
    assert {c["status"] for c in data["checks"]} == {"ok", "warn", "unknown"}


def test_unreachable_api_exits_4_with_one_readable_line_per_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Credentials as `pulumi up` takes them, every endpoint
    unreachable (the recorded SDK failures): the gate does not pass."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(aliyun, "sdk_client_classes", unreachable_client_classes)
    result = runner.invoke(app, ["preflight", "medical-imaging", "--today", "2026-11-30"], env=PULUMI_CREDS)
    assert result.exit_code == 4, result.output
    assert "credentials: environment (ALICLOUD_ACCESS_KEY)" in result.output
    unanswered = [line for line in result.output.splitlines() if line.lstrip().startswith("??")]
    assert len(unanswered) == 4
    for line in unanswered:
        assert "Unreachable: cannot reach " in line and "Name or service not known" in line, line
        assert not any(
            noise in line for noise in ("RetryError", "{'message'", "HTTPSConnectionPool", "Caused by", "Traceback")
        ), line
    assert (
        "ecs.DescribeAccountAttributes: Unreachable: cannot reach ecs.cn-shanghai.aliyuncs.com:443: Failed to resolve "
        "'ecs.cn-shanghai.aliyuncs.com' ([Errno -2] Name or service not known)" in result.output
    )
    assert "quotas.ListProductQuotas: Unreachable: cannot reach quotas.aliyuncs.com:443:" in result.output
    assert "nothing short" not in result.output
    assert "UNANSWERED: 4 check(s) the cloud did not answer (exit 4)" in result.output
    assert f"--accept-unanswered {ALL_KINDS}" in result.output
    accepted = runner.invoke(
        app,
        ["preflight", "medical-imaging", "--today", "2026-11-30", "--accept-unanswered", ALL_KINDS],
        env=PULUMI_CREDS,
    )
    assert accepted.exit_code == 0, accepted.output
    assert "4 unanswered, accepted by name (vcpu-quota, instance-type-quota, stock, storage-zone)" in accepted.output
    partly = runner.invoke(
        app,
        [
            "preflight",
            "medical-imaging",
            "--today",
            "2026-11-30",
            "--accept-unanswered",
            "stock",
            "--accept-unanswered",
            "storage-zone",
        ],
        env=PULUMI_CREDS,
    )
    assert partly.exit_code == 4, partly.output
    assert (
        "UNANSWERED: 2 check(s) the cloud did not answer (exit 4)" in partly.output
        and "--accept-unanswered vcpu-quota,instance-type-quota" in partly.output
    )


def test_unknown_accept_name_exits_2_listing_the_names(replay: ReplayReader) -> None:
    result = runner.invoke(app, ["preflight", "medical-imaging", "--accept-unanswered", "stock,quota"], env=CREDS)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert (
        "--accept-unanswered" in text
        and "'quota'" in text
        and "vcpu-quota, instance-type-quota, stock, storage-zone" in text
    )
    assert "Traceback" not in result.output and replay.calls == []


def test_pulumi_profile_is_used_or_exit_3_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(
        aliyun, "SdkReader", lambda *_, **__: (_ for _ in ()).throw(AssertionError("no call without credentials"))
    )
    missing = runner.invoke(
        app,
        ["preflight", "medical-imaging"],
        env={**NO_CREDS, "ALICLOUD_PROFILE": "prod", "ALIBABA_CLOUD_CLI_PROFILE_DISABLED": ""},
    )
    assert missing.exit_code == 3, missing.output
    assert (
        "ALICLOUD_PROFILE=prod" in missing.output
        and "does not exist" in missing.output
        and "aliyun configure --profile prod" in missing.output
    )
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text(
        json.dumps({"current": "dev", "profiles": [{"name": "dev", "mode": "AK"}]})
    )
    other = runner.invoke(
        app,
        ["preflight", "medical-imaging"],
        env={**NO_CREDS, "ALICLOUD_PROFILE": "prod", "ALIBABA_CLOUD_CLI_PROFILE_DISABLED": ""},
    )
    assert other.exit_code == 3 and "has no profile of that name (its profiles: dev)" in other.output


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
    for phrase in (
        "0 nothing short",
        "1 something is short",
        "2 invalid input",
        "3 no credentials found",
        "4 a check went unanswered",
        "--accept-unanswered",
    ):
        assert phrase in text
