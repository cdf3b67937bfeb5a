"""Plan diffs: resources added, removed and changed between two JSON plans, and the data-safety risks."""

from __future__ import annotations

import copy
import json

from typer.testing import CliRunner

from blueprints.cli import app
from blueprints.plandiff import diff_plans, render_diff
from blueprints.testing import offline_plan


def as_dict(plan):
    return json.loads(plan.to_json())


def test_identical_plans_have_no_changes(medical_plan):
    diff = diff_plans(as_dict(medical_plan), as_dict(medical_plan))
    assert diff.summary == {} and diff.changes == ()
    assert render_diff(diff).endswith("No changes.\n")


def test_scaling_out_changes_compute_only(medical_plan):
    big = offline_plan("medical-imaging", overrides={"compute.nodes": 128})
    diff = diff_plans(as_dict(medical_plan), as_dict(big))
    assert diff.summary["gpus"] == (96, 1024)
    by_name = {c.name: c for c in diff.changes}
    assert set(by_name) == {"medical-imaging-cluster-nodes-0", "medical-imaging-cluster-nodes-1"}
    assert by_name["medical-imaging-cluster-nodes-0"].inputs == {"amount": (12, 64)}
    assert by_name["medical-imaging-cluster-nodes-1"].action == "added"
    assert diff.risks == []


def test_changing_storage_kind_is_flagged(medical_plan):
    nas = offline_plan("medical-imaging", overrides={"storage.kind": "nas", "storage.throughput_tier": "Performance"})
    diff = diff_plans(as_dict(medical_plan), as_dict(nas))
    (fs,) = [c for c in diff.changes if c.name == "medical-imaging-storage-fs"]
    assert fs.inputs["fileSystemType"] == ("extreme", "standard")
    assert any("Pulumi refuses any of them that forces a replacement" in r for r in fs.risks)
    text = render_diff(diff)
    assert "userData: cloud-init changed" in text and "Data-safety risks:" in text


def test_removing_protection_or_protected_storage_is_a_risk(medical_plan):
    old = as_dict(medical_plan)
    unprotected = copy.deepcopy(old)
    for r in unprotected["resources"]:
        if r["name"] == "medical-imaging-storage-fs":
            r["protect"] = False
    diff = diff_plans(old, unprotected)
    assert diff.risks == ["medical-imaging-storage-fs: protect is switched off"]
    gone = copy.deepcopy(old)
    gone["resources"] = [r for r in gone["resources"] if r["name"] != "medical-imaging-storage-fs"]
    (risk,) = diff_plans(old, gone).risks
    assert "removed while protected" in risk


def test_diff_command_json_and_bad_input(tmp_path, medical_plan):
    a = tmp_path / "a.json"
    a.write_text(medical_plan.to_json())
    b = tmp_path / "b.json"
    b.write_text(offline_plan("medical-imaging", overrides={"compute.nodes": 13}).to_json())
    runner = CliRunner()
    result = runner.invoke(app, ["diff", str(a), str(b), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == "aitrain.plandiff/v1"
    assert data["changes"][0]["inputs"]["amount"] == {"old": 12, "new": 13}
    not_a_plan = tmp_path / "job.json"
    not_a_plan.write_text('{"schema": "aitrain.recommendation/v1"}')
    result = runner.invoke(app, ["diff", str(a), str(not_a_plan)])
    assert result.exit_code == 2 and "expected 'aitrain.plan/v1'" in result.stderr
