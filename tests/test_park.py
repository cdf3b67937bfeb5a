"""`aitrain park`: compute to zero (or back) in the stack file, every other byte kept, validated before writing."""

from __future__ import annotations

import os

import pytest
import yaml
from typer.testing import CliRunner

from blueprints.architectures.autoscaling_pool.spec import AutoscalingPoolSpec
from blueprints.architectures.fixed_cluster.spec import FixedClusterSpec
from blueprints.cli.main import app

runner = CliRunner()

STACK = """\
# Production training stack — keep this comment
encryptionsalt: v1:abc123:def456
config:
  alicloud:region: cn-shanghai   # provider region
  aitrain:preset: medical-imaging
  team:api-key:
    secure: AAABAHxyzSECRETCIPHERTEXT==

  aitrain:profile:
    storage:
      zone: cn-shanghai-a
  other:flag: "true"
# trailing comment
"""


@pytest.fixture
def stack(tmp_path):
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(STACK, encoding="utf-8")
    return path


def invoke(*args):
    return runner.invoke(app, list(args))


def non_aitrain_lines(text):
    return [line for line in text.splitlines() if "aitrain:" not in line and not line.startswith(("    ", "      "))]


def test_park_without_write_shows_the_change_and_writes_nothing(stack):
    before = stack.read_bytes()
    result = invoke("park", "--stack-config", str(stack))
    assert result.exit_code == 0, result.output
    assert "aitrain park: medical-imaging (fixed-cluster) — compute.nodes: 12 -> 0" in result.stdout
    assert "+      nodes: 0" in result.stdout and "-  aitrain:profile:" in result.stdout
    assert f"not written: add --write to change {stack}" in result.stdout
    assert stack.read_bytes() == before


def test_park_write_sets_nodes_zero_and_keeps_every_other_byte(stack):
    result = invoke("park", "--stack-config", str(stack), "--write")
    assert result.exit_code == 0, result.output
    text = stack.read_text(encoding="utf-8")
    config = yaml.safe_load(text)["config"]
    assert config["aitrain:profile"] == {"storage": {"zone": "cn-shanghai-a"}, "compute": {"nodes": 0}}
    assert config["aitrain:preset"] == "medical-imaging"
    # Secure value, salt, comments, other namespaces: byte for byte.
    for kept in (
        "# Production training stack — keep this comment\n",
        "encryptionsalt: v1:abc123:def456\n",
        "  alicloud:region: cn-shanghai   # provider region\n",
        "  team:api-key:\n    secure: AAABAHxyzSECRETCIPHERTEXT==\n",
        '  other:flag: "true"\n',
        "# trailing comment\n",
    ):
        assert kept in text
    assert non_aitrain_lines(text) == non_aitrain_lines(STACK)
    assert "Next: `pulumi up` (compute is removed; the file system and bucket are kept)" in result.stdout
    # The parked file is what `aitrain plan --stack-config` reads: zero nodes.
    from blueprints.architectures import profile_models
    from blueprints.catalog import load_catalog
    from blueprints.core import clock
    from blueprints.profile.stackconfig import engine_config, read_settings, resolve

    _, profile = resolve(
        read_settings(engine_config(stack), source="t"), profile_models(), catalog=load_catalog(), today=clock.today()
    )
    assert profile.compute.nodes == 0


def test_resume_restores_the_node_count_and_parking_twice_changes_nothing(stack):
    assert invoke("park", "--stack-config", str(stack), "--write").exit_code == 0
    parked = stack.read_text(encoding="utf-8")
    again = invoke("park", "--stack-config", str(stack), "--write")
    assert again.exit_code == 0 and "already parked; nothing to change" in again.stdout
    assert stack.read_text(encoding="utf-8") == parked
    result = invoke("park", "--stack-config", str(stack), "--resume", "12", "--write")
    assert result.exit_code == 0, result.output
    assert "aitrain resume: medical-imaging (fixed-cluster) — compute.nodes: 0 -> 12" in result.stdout
    assert yaml.safe_load(stack.read_text())["config"]["aitrain:profile"]["compute"] == {"nodes": 12}
    assert non_aitrain_lines(stack.read_text()) == non_aitrain_lines(STACK)


def test_resume_beyond_what_the_profile_allows_is_exit_2_and_writes_nothing(stack):
    before = stack.read_bytes()
    result = invoke("park", "--stack-config", str(stack), "--resume", "5000", "--write")
    assert result.exit_code == 2
    assert "compute.nodes = 5000" in result.stderr
    assert stack.read_bytes() == before
    assert not [p for p in os.listdir(stack.parent) if p.endswith(".tmp")]


def test_pool_is_refused(tmp_path):
    path = tmp_path / "Pulumi.pool.yaml"
    path.write_text("config:\n  aitrain:preset: autoscaling-training\n", encoding="utf-8")
    before = path.read_bytes()
    result = invoke("park", "--stack-config", str(path), "--write")
    assert result.exit_code == 2
    assert (
        "'autoscaling-pool' cannot be parked: an autoscaling pool parks itself: set compute.min_nodes 0"
        in result.stderr
    )
    assert path.read_bytes() == before


def test_parking_is_each_blueprints_own_meaning():
    assert FixedClusterSpec.parked_compute == {"nodes": 0} and FixedClusterSpec.resume_field == "nodes"
    assert AutoscalingPoolSpec.parked_compute is None and AutoscalingPoolSpec.park_refusal.startswith(
        "an autoscaling pool parks itself"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "file does not exist"),
        ("config:\n  alicloud:region: cn-shanghai\n", "set 'aitrain:preset'"),
        ("just text\n", "a stack config needs a 'config:' mapping"),
    ],
)
def test_missing_or_foreign_stack_file_is_exit_2(tmp_path, text, message):
    path = tmp_path / "Pulumi.x.yaml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    result = invoke("park", "--stack-config", str(path), "--write")
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert (path.read_text() if text is not None else None) == text
