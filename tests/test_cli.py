"""CLI tests: exit codes, the key lines a user reads, the JSON schema, files written or not."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import beyond_opt_in
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.profile.stackconfig import load_preset, preset_names

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args))


def test_plan_table_shows_summary_tree_and_note():
    result = invoke("plan", "medical-imaging")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "aitrain plan: medical-imaging (fixed-cluster, cn-shanghai)" in out
    assert "ecs.gn7e-c16g1.32xlarge" in out and "96" in out
    assert "m6i.32xlarge (not an Alibaba Cloud type)" in out
    assert "medical-imaging-storage-fs" in out and "protect retain-on-delete" in out
    assert "guardrail findings: 0 errors, 2 warnings," in out and "guardrails holding:" in out


def test_plan_json_schema(tmp_path):
    out_file = tmp_path / "plan.json"
    result = invoke("plan", "autoscaling-training", "--format", "json", "--out", str(out_file))
    assert result.exit_code == 0 and result.stdout == ""
    data = json.loads(out_file.read_text())
    assert data["schema"] == "aitrain.plan/v2"
    assert data["blueprint"] == "autoscaling-pool" and data["region"] == "cn-shanghai"
    for resource in data["resources"]:
        assert set(resource) >= {"type", "name", "parent", "inputs", "protect", "retain_on_delete"}
    # The pool preset leaves the egress allow-list off: one warning per node security group, and opt-in infos.
    assert [(f["rule"], f["level"]) for f in beyond_opt_in(data["findings"])] == [("AIT027", "warning")]


def test_plan_markdown_fits_a_pr_comment():
    result = invoke("plan", "medical-imaging", "--format", "markdown", "--set", "compute.nodes=128")
    assert result.exit_code == 0
    assert result.stdout.startswith("## aitrain plan: `medical-imaging`")
    assert len(result.stdout) < 65_536
    assert "amount=`64`" in result.stdout


def test_plan_from_stack_config_with_set_override(tmp_path):
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(
        yaml.safe_dump({"config": {"aitrain:preset": "medical-imaging", "aitrain:profile": {"compute": {"nodes": 4}}}})
    )
    result = invoke(
        "plan", "--stack-config", str(stack), "--set", "network.admin_cidr=203.0.113.0/24", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["summary"]["nodes"] == 4 and data["summary"]["admin_cidr"] == "203.0.113.0/24"
    ssh = [r for r in data["resources"] if r["name"].endswith("sg-admin-ssh")]
    assert ssh and ssh[0]["inputs"]["cidrIp"] == "203.0.113.0/24"


@pytest.mark.parametrize(
    "args, expected",
    [
        (["plan", "medical-imagin"], "did you mean 'medical-imaging'?"),
        (["plan", "medical-imaging", "--set", "compute.nodes=-1"], "compute.nodes = -1"),
        (
            ["plan", "medical-imaging", "--set", "compute.scratch_gib=40000"],
            "compute.scratch_gib = 40000: 40,000 GiB is outside ESSD PL1's 20–32,768 GiB",
        ),
        (
            ["plan", "medical-imaging", "--set", "bucket.name=Team_Data"],
            "bucket.name = 'Team_Data': bucket name 'Team_Data' "
            "contains 'D', 'T', '_'; OSS allows only lowercase letters",
        ),
        (
            ["plan", "medical-imaging", "--set", "access.login_node=true"],
            "access.login_node = True: needs network.admin_cidr, which is empty",
        ),
        (["plan", "medical-imaging", "--set", "compute.instance_type=m6i.32xlarg"], "did you mean"),
        (["plan", "medical-imaging", "--set", "network.admin_cidr=0.0.0.0/0"], "network.admin_cidr = '0.0.0.0/0'"),
        (["plan", "medical-imaging", "--set", "network.vpc_cidr=10.0.0/16"], "not a valid CIDR"),
        (["plan", "medical-imaging", "--set", "compute.nodez=3"], "did you mean 'compute.nodes'?"),
        (["plan", "--stack-config", "/nonexistent/Pulumi.dev.yaml"], "file does not exist"),
        (["plan"], "name a preset"),
    ],
)
def test_bad_input_exits_2_with_one_message_and_no_traceback(args, expected, tmp_path):
    out_file = tmp_path / "never.json"
    result = invoke(*args, "--out", str(out_file)) if args[0] == "plan" else invoke(*args)
    assert result.exit_code == 2, result.output
    assert expected in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.output
    assert not out_file.exists()


def test_autoscaling_min_greater_than_max_is_rejected():
    result = invoke("plan", "autoscaling-training", "--set", "compute.min_nodes=9")
    assert result.exit_code == 2
    assert "min_nodes (9) is greater than max_nodes (8)" in result.stderr


def test_unreadable_or_invalid_stack_config(tmp_path):
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config: [unclosed\n")
    result = invoke("plan", "--stack-config", str(bad))
    assert result.exit_code == 2 and "is not valid YAML" in result.stderr
    wrong_key = tmp_path / "Pulumi.key.yaml"
    wrong_key.write_text(yaml.safe_dump({"config": {"aitrain:presett": "medical-imaging"}}))
    result = invoke("plan", "--stack-config", str(wrong_key))
    assert result.exit_code == 2 and "did you mean 'aitrain:preset'?" in result.stderr


def test_catalog_json_lists_rows_with_column_names():
    result = invoke("catalog", "--gpu", "A100", "--min-gpus", "8", "--format", "json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert rows and all(r["gpu_count"] >= 8 and r["gpu_model"].startswith("A100") for r in rows)
    assert {"instance_type", "vcpus", "memory_gib", "price_cny_per_hour", "price_source"} <= set(rows[0])


def test_presets_lists_every_preset_with_its_blueprint():
    result = invoke("presets")
    assert result.exit_code == 0
    rows = [line.split("\t")[:2] for line in result.stdout.splitlines()]
    assert rows == [[name, load_preset(name)["blueprint"]] for name in preset_names()]


def test_the_committed_example_stack_config_plans():
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "Pulumi.example.yaml"
    result = invoke("plan", "--stack-config", str(example), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["profile_name"] == "imaging-dev" and data["summary"]["nodes"] == 2
    assert data["outputs"]["compute_zone_ids"] == ["cn-shanghai-e"]
    (cluster_set,) = [r for r in data["resources"] if r["type"] == "alicloud:ecs/ecsInstanceSet:EcsInstanceSet"]
    assert cluster_set["inputs"]["zoneId"] == "cn-shanghai-e"
    assert all(r["inputs"]["tags"]["owner"] == "ml-platform" for r in data["resources"] if "tags" in r["inputs"])


def test_table_prints_brackets_literally():
    result = invoke("plan", "medical-imaging", "--set", "description=[bold]not markup[/bold] [sg-1]")
    assert result.exit_code == 0, result.output
    assert "note: [bold]not markup[/bold] [sg-1]" in result.stdout


def test_markdown_cells_escape_pipes_and_newlines():
    from blueprints.review.render import markdown_cell

    assert markdown_cell("a|b\nc") == "a\\|b c"
    assert markdown_cell({"k": "x|y"}) == "{k: x\\|y}"


# Every command through the real app (`blueprints.cli.main.app`), so a command that is not registered fails here.
COMMANDS = ("plan", "presets", "catalog", "diff", "recommend", "estimate")
EXAMPLE_JOB = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "medical-imaging.yaml")


def test_help_lists_every_command():
    result = invoke("--help")
    assert result.exit_code == 0
    assert "Turn an AI-training job into reviewable" in result.stdout
    for command in COMMANDS:
        assert f" {command} " in result.stdout, command


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0, result.output
    assert f"Usage: aitrain {command}" in result.stdout or f"{command} [OPTIONS]" in result.stdout


def test_no_arguments_prints_help():
    result = invoke()
    assert "Commands" in result.output and "recommend" in result.output


def test_recommend_on_the_real_app():
    result = invoke("recommend", EXAMPLE_JOB)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Job medical-imaging: transformer, 1.2e+09 parameters")
    assert "CHOSEN: " in result.stdout and "Blueprint: fixed-cluster" in result.stdout


def test_estimate_on_the_real_app():
    result = invoke("estimate", EXAMPLE_JOB, "--instance-type", "ecs.gn7e-c16g1.32xlarge", "--nodes", "12")
    assert result.exit_code == 0, result.output
    assert "12 × ecs.gn7e-c16g1.32xlarge = 96 × A100-SXM4-80GB" in result.stdout
    assert "feasible             yes" in result.stdout


def test_advisor_bad_input_exits_2_on_the_real_app():
    result = invoke("estimate", EXAMPLE_JOB, "--instance-type", "ecs.gn7e-c16g1.32xlarg")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and "did you mean" in result.stderr and "Traceback" not in result.output


def test_diff_table_on_the_real_app(tmp_path, medical_plan):
    old = tmp_path / "old.json"
    old.write_text(medical_plan.to_json())
    data = json.loads(medical_plan.to_json())
    for r in data["resources"]:
        if r["name"] == "medical-imaging-storage-fs":
            r["retain_on_delete"] = False
    new = tmp_path / "new.json"
    new.write_text(json.dumps(data))
    same = invoke("diff", str(old), str(old))
    assert same.exit_code == 0 and same.stdout == "aitrain plan diff\n\nNo changes.\n"
    result = invoke("diff", str(old), str(new))
    assert result.exit_code == 0, result.output
    assert "1 update; 1 data risk" in result.stdout
    assert result.stdout.endswith(
        "Data-safety risks:\n- medical-imaging-storage-fs: retain_on_delete is switched off\n"
    )


def test_catalog_table_on_the_real_app():
    result = invoke("catalog", "--gpu", "A10", "--min-gpus", "1")
    assert result.exit_code == 0, result.output
    assert "ecs.gn7i-c32g1.8xlarge" in result.stdout


def test_version_names_the_package_and_catalog_versions():
    from importlib.metadata import version

    from blueprints.catalog import load_catalog

    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"aitrain {version('aitrain')} (catalog {load_catalog().version})"


def test_numeric_flags_are_typed_as_numbers_in_help():
    for command, flag, kinds in (
        ("catalog", "--min-gpus", ("<int", "INTEGER")),
        ("estimate", "--nodes", ("<int", "INTEGER")),
        ("recommend", "--params", ("<float", "FLOAT")),
        ("recommend", "--max-nodes", ("<int", "INTEGER")),
    ):
        result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
        line = next(line for line in result.stdout.splitlines() if flag in line)
        assert any(kind in line for kind in kinds), line


def test_times_dates_and_cidrs_given_with_set_keep_their_meaning():
    """YAML 1.1 would read 19:00 as 1140 and 2027-01-04 as a date; here they stay what the user wrote."""
    result = invoke(
        "plan",
        "autoscaling-training",
        "--today",
        "2026-12-01",
        "--format",
        "json",
        "--set",
        "cost.off_hours.work_end=19:00",
        "--set",
        "cost.off_hours.start_date=2027-01-04",
        "--set",
        "network.admin_cidr=203.0.113.0/24",
        "--set",
        "compute.max_nodes=6",
    )
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    tasks = {
        r["name"]: r["inputs"] for r in plan["resources"] if r["type"] == "alicloud:ess/scheduledTask:ScheduledTask"
    }
    # 19:00 in Shanghai is 11:00 UTC; the schedule starts on the given date and is renewed from --today.
    assert tasks["autoscaling-training-pool-sleep"]["launchTime"] == "2027-01-04T11:00Z"
    assert tasks["autoscaling-training-pool-wake"]["launchTime"] == "2027-01-04T01:00Z"
    assert plan["summary"]["admin_cidr"] == "203.0.113.0/24" and plan["summary"]["max_nodes"] == 6


def test_an_off_hours_start_outside_the_window_is_exit_2_with_the_range():
    result = invoke(
        "plan", "autoscaling-training", "--today", "2026-12-01", "--set", "cost.off_hours.start_date=2027-06-01"
    )
    assert result.exit_code == 2
    assert "cost.off_hours.start_date = '2027-06-01'" in result.output and "must be from 2026-12-02" in result.output
    result = invoke("plan", "autoscaling-training", "--today", "12/01/2026")
    assert result.exit_code == 2 and "--today = '12/01/2026': must be a date written YYYY-MM-DD" in result.output
