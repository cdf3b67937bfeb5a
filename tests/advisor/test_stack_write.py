"""`recommend --write` produces a stack config that the profile parser (and so `aitrain plan`) accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.cli.advisor import register

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
app = typer.Typer()
register(app)


def read_profile(path):
    from blueprints.profile.stackconfig import engine_config, read_settings

    return read_settings(engine_config(path), source=str(path)).profile


@pytest.mark.parametrize(
    "example", ["medical-imaging", "tier-pool", "tier-single-node", "tier-dedicated", "ecommerce-resnet50"]
)
def test_written_stack_config_parses(tmp_path, example):
    import datetime as dt

    from blueprints.architectures import parse
    from blueprints.catalog import load_catalog

    target = tmp_path / "Pulumi.dev.yaml"
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / f"{example}.yaml"), "--write", str(target)])
    assert result.exit_code == 0, result.output
    profile_data = read_profile(target)
    profile = parse(profile_data, catalog=load_catalog(), today=dt.date(2026, 11, 30))
    assert profile.region == "cn-shanghai"
    assert profile.name == example


def test_pool_profile_scales_from_zero(tmp_path):
    target = tmp_path / "Pulumi.pool.yaml"
    CliRunner().invoke(app, ["recommend", str(EXAMPLES / "tier-pool.yaml"), "--write", str(target)])
    data = read_profile(target)
    assert (
        data["blueprint"] == "autoscaling-pool" and data["compute"]["min_nodes"] == 0 and data["cost"]["spot"] is True
    )


def test_written_config_plans_offline(tmp_path):
    """The real `aitrain plan --stack-config` (the lead's CLI) accepts the written file."""
    cli = pytest.importorskip("blueprints.cli.main")
    target = tmp_path / "Pulumi.dev.yaml"
    CliRunner().invoke(app, ["recommend", str(EXAMPLES / "tier-single-node.yaml"), "--write", str(target)])
    result = CliRunner().invoke(cli.app, ["plan", "--stack-config", str(target), "--format", "json"])
    assert result.exit_code == 0, result.output


def test_nothing_feasible_writes_nothing(tmp_path):
    target = tmp_path / "Pulumi.none.yaml"
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / "llm-230b.yaml"), "--write", str(target)])
    assert result.exit_code == 1 and not target.exists()


EXISTING = """# team stack
encryptionsalt: v1:c2FsdA==:v1:AAAA:BBBB
config:
  alicloud:region: cn-shanghai
  db:password:
    secure: v1:AAABAGNvbmZpZ3NlY3JldA==:v1:c2VjcmV0
  other:flag: true  # kept
"""


def test_write_merges_into_an_existing_stack_file(tmp_path):
    target = tmp_path / "Pulumi.dev.yaml"
    target.write_text(EXISTING)
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / "tier-single-node.yaml"), "--write", str(target)])
    assert result.exit_code == 0, result.output
    text = target.read_text()
    assert text.startswith(EXISTING)  # every existing byte kept; the aitrain entries are appended to config
    profile = read_profile(target)
    assert profile["name"] == "tier-single-node"


def test_write_refuses_to_replace_other_aitrain_settings_without_force(tmp_path):
    target = tmp_path / "Pulumi.dev.yaml"
    existing = EXISTING + "  aitrain:preset: medical-imaging\n"
    target.write_text(existing)
    out = tmp_path / "rec.md"
    result = CliRunner().invoke(
        app, ["recommend", str(EXAMPLES / "tier-single-node.yaml"), "--write", str(target), "--out", str(out)]
    )
    assert result.exit_code == 2
    assert "config.aitrain:preset" in result.output and "--force" in result.output
    assert target.read_text() == existing and not out.exists()
    forced = CliRunner().invoke(
        app, ["recommend", str(EXAMPLES / "tier-single-node.yaml"), "--write", str(target), "--force"]
    )
    assert forced.exit_code == 0, forced.output
    text = target.read_text()
    assert text.startswith(EXISTING) and "aitrain:preset" not in text and "aitrain:profile:" in text


def test_write_and_out_on_the_same_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    result = CliRunner().invoke(
        app,
        [
            "recommend",
            str(EXAMPLES / "tier-single-node.yaml"),
            "--write",
            "Pulumi.dev.yaml",
            "--out",
            "sub/../Pulumi.dev.yaml",
        ],
    )
    assert result.exit_code == 2
    assert "--write and --out name the same file" in result.output
    assert not (tmp_path / "Pulumi.dev.yaml").exists()
