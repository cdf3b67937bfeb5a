"""`recommend --write` produces a stack config that the profile parser (and so `aitrain plan`) accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.advisor.commands import register

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
app = typer.Typer()
register(app)


@pytest.mark.parametrize("example", ["medical-imaging", "tier-pool", "tier-single-node", "tier-dedicated", "ecommerce-resnet50"])
def test_written_stack_config_parses(tmp_path, example):
    from blueprints.profile import parse_profile
    from blueprints.stackconfig import read_stack_config

    target = tmp_path / "Pulumi.dev.yaml"
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / f"{example}.yaml"), "--write", str(target)])
    assert result.exit_code == 0, result.output
    _, profile_data = read_stack_config(target)
    profile = parse_profile(profile_data)
    assert profile.region == "cn-shanghai"
    assert profile.name == example


def test_pool_profile_scales_from_zero(tmp_path):
    from blueprints.stackconfig import read_stack_config

    target = tmp_path / "Pulumi.pool.yaml"
    CliRunner().invoke(app, ["recommend", str(EXAMPLES / "tier-pool.yaml"), "--write", str(target)])
    _, data = read_stack_config(target)
    assert data["blueprint"] == "autoscaling-pool" and data["compute"]["min_nodes"] == 0 and data["cost"]["spot"] is True


def test_written_config_plans_offline(tmp_path):
    """The real `aitrain plan --stack-config` (the lead's CLI) accepts the written file."""
    cli = pytest.importorskip("blueprints.cli")
    target = tmp_path / "Pulumi.dev.yaml"
    CliRunner().invoke(app, ["recommend", str(EXAMPLES / "tier-single-node.yaml"), "--write", str(target)])
    result = CliRunner().invoke(cli.app, ["plan", "--stack-config", str(target), "--format", "json"])
    assert result.exit_code == 0, result.output


def test_nothing_feasible_writes_nothing(tmp_path):
    target = tmp_path / "Pulumi.none.yaml"
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / "llm-230b.yaml"), "--write", str(target)])
    assert result.exit_code == 1 and not target.exists()
