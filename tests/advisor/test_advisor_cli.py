"""CLI tests for `recommend` and `estimate` with typer's CliRunner: exit codes, key lines, JSON schema."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.cli.advisor import register

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
app = typer.Typer()
register(app)
runner = CliRunner()

FLAGS = [
    "--name",
    "cli-job",
    "--model-kind",
    "transformer",
    "--params",
    "1.2e9",
    "--tokens",
    "2e10",
    "--deadline-days",
    "7",
]


def run(*args: str):
    return runner.invoke(app, list(args))


def test_recommend_table_from_flags():
    result = run("recommend", *FLAGS)
    assert result.exit_code == 0, result.output
    assert "CHOSEN:" in result.output
    assert "Considered (best option of each GPU model):" in result.output
    assert "CHOSEN" in result.output.split("Considered")[1]


def test_recommend_json_schema():
    result = run("recommend", str(EXAMPLES / "medical-imaging.yaml"), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == "aitrain.recommendation/v1"
    for key in (
        "instance_type",
        "nodes",
        "gpus",
        "estimated_hours",
        "cost_cny_per_run",
        "cost_cny_per_year",
        "blueprint",
        "considered",
        "relax",
        "profile",
    ):
        assert key in doc
    assert doc["blueprint"] in ("fixed-cluster", "autoscaling-pool")
    assert sum(1 for c in doc["considered"] if c["chosen"]) == 1
    assert {"instance_type", "nodes", "estimated_hours", "cost_cny_per_run", "status", "why"} <= set(
        doc["considered"][0]
    )


def test_recommend_is_deterministic():
    a = run("recommend", str(EXAMPLES / "tier-pool.yaml"), "--format", "json").output
    b = run("recommend", str(EXAMPLES / "tier-pool.yaml"), "--format", "json").output
    assert a == b


def test_recommend_markdown_and_out_file(tmp_path):
    out = tmp_path / "rec.md"
    result = run("recommend", str(EXAMPLES / "tier-pool.yaml"), "--format", "markdown", "--out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert text.startswith("## aitrain recommendation") and "**CHOSEN**" in text


def test_flags_override_the_file():
    result = run(
        "recommend", str(EXAMPLES / "tier-pool.yaml"), "--objective", "time", "--max-nodes", "4", "--format", "json"
    )
    doc = json.loads(result.output)
    assert doc["objective"] == "time" and doc["job"]["max_nodes"] == 4 and doc["nodes"] <= 4


def test_infeasible_exits_1_with_numbers():
    result = run("recommend", *FLAGS[:-2], "--deadline-days", "0.01", "--max-nodes", "2")
    assert result.exit_code == 1
    assert "No feasible option" in result.output and "extend the deadline to" in result.output


def test_invalid_job_exits_2_without_traceback():
    result = run("recommend", "--model-kind", "transformer", "--params", "abc")
    flat = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 2
    assert "Invalid value for '--params'" in flat and "valid number" in flat
    assert "Traceback" not in result.output
    # A number of the right type but out of range is the job's own message, naming the field.
    result = run("recommend", *FLAGS, "--max-nodes", "0")
    assert result.exit_code == 2 and "max_nodes = 0" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["recommend", "estimate"])
def test_numeric_flags_are_typed_as_numbers_in_help(command):
    cmd = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    ctx = cmd.make_context(command, [], resilient_parsing=True)
    shown_type = {p.opts[0]: p.display_type(ctx) for p in cmd.params if p.opts}  # what --help prints
    for flag in (
        "--params",
        "--tokens",
        "--forward-gflops",
        "--samples",
        "--epochs",
        "--dataset-tb",
        "--ingest-tb-per-day",
        "--runs-per-year",
        "--deadline-days",
        "--budget-cny-per-run",
        "--budget-cny-per-year",
        "--mfu",
    ):
        assert shown_type[flag] == "<float>", flag
    assert shown_type["--max-nodes"] == "<int>"
    shown = " ".join(run(command, "--help").output.replace("│", " ").split())
    assert "--params <float>" in shown and "--max-nodes <int>" in shown


def test_misspelled_key_in_file(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("model_kind: transformer\nparams: 1e9\ntokens: 1e10\nbudget_cny_per_yr: 5\n", encoding="utf-8")
    result = run("recommend", str(path))
    assert result.exit_code == 2
    assert "budget_cny_per_yr" in result.output and "did you mean 'budget_cny_per_year'?" in result.output


def test_missing_job_file():
    result = run("recommend", "/nonexistent/job.yaml")
    assert result.exit_code == 2 and "file does not exist" in result.output


def test_estimate_json_fields():
    result = run("estimate", "--instance-type", "ecs.gn7e-c16g1.32xlarge", "--nodes", "2", *FLAGS, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == "aitrain.estimate/v1"
    # Typical MFU: Llama 2's 0.435 at 250 nodes on ≥ 100 Gbit/s per GPU, where the model gives
    # 1 − (1 − 0.9416)/5 × log2(250) = 0.906960, so 0.435 / 0.906960 = 0.479624 on one NVLink node.
    node_mfu = 0.435 / (1 - 0.0584 / 5 * math.log2(250))
    assert doc["gpus"] == 16 and doc["mfu"] == pytest.approx(node_mfu, abs=1e-4)
    for key in ("estimated_hours", "cost_cny_per_run", "gpus", "mfu", "scaling_efficiency"):
        assert doc[key] is not None
    # 6 × 1.2e9 × 2e10 = 1.44e20 FLOPs ÷ (16 × 312e12 × 0.479624 × 0.954286) ÷ 3600 = 35.07 h
    assert abs(doc["estimated_hours"] - 1.44e20 / (16 * 312e12 * node_mfu * (1 - 0.32 / 7)) / 3600) < 1e-3
    # The range: the same configuration at the Megatron-LM 530B (tuned) and BLOOM (conservative) anchors, each
    # normalised to its own cluster at ≥ 100 Gbit/s per GPU (neither fabric-bound): 0.542 / (1 − 0.01168 × log2(280))
    # (2,240 GPUs) and 0.318 / (1 − 0.01168 × log2(48)) (384 GPUs).
    tuned = 0.542 / (1 - 0.0584 / 5 * math.log2(280))
    conservative = 0.318 / (1 - 0.0584 / 5 * math.log2(48))
    hours = doc["estimated_hours"]
    assert doc["estimated_hours_range"]["tuned"] == pytest.approx(hours * node_mfu / tuned, abs=2e-3)
    assert doc["estimated_hours_range"]["conservative"] == pytest.approx(hours * node_mfu / conservative, abs=2e-3)
    assert (
        doc["cost_cny_per_run_range"]["tuned"] < doc["cost_cny_per_run"] < doc["cost_cny_per_run_range"]["conservative"]
    )


def test_estimate_accepts_article_alias():
    result = run("estimate", "--instance-type", "m6i.32xlarge", "--nodes", "3", *FLAGS, "--format", "json")
    doc = json.loads(result.output)
    assert doc["instance_type"] == "ecs.gn7e-c16g1.32xlarge" and doc["nodes"] == 12 and doc["gpus"] == 96
    assert any(f.startswith("alias:") for f in doc["findings"])


def test_estimate_unknown_type_suggests():
    result = run("estimate", "--instance-type", "ecs.gn7e-c16g1.32xlarg", *FLAGS)
    assert result.exit_code == 2
    assert "did you mean 'ecs.gn7e-c16g1.32xlarge'" in result.output


def test_estimate_table_lines():
    result = run("estimate", str(EXAMPLES / "ecommerce-resnet50.yaml"), "--instance-type", "ecs.gn6e-c12g1.24xlarge")
    assert result.exit_code == 0, result.output
    assert "estimated time" in result.output and "cost per run" in result.output
