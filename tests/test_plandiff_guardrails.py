"""Diffs show what a change does to the guardrails: new and resolved findings, new and removed skips, every skip."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.review.diff.compare import diff_plans
from blueprints.review.diff.guardrails import guardrail_diff
from blueprints.review.render.diff import render_diff

runner = CliRunner()
REASON = "scratch lives on the shared file system in this test"


def plan_of(tmp_path: Path, name: str, profile: dict) -> dict:
    stack = tmp_path / f"Pulumi.{name}.yaml"
    stack.write_text(yaml.safe_dump({"config": {"aitrain:preset": "medical-imaging", "aitrain:profile": profile}}))
    result = runner.invoke(app, ["plan", "--stack-config", str(stack), "--format", "json", "--today", "2026-12-01"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_new_finding_and_its_resolution_are_shown_with_their_level(tmp_path):
    base = plan_of(tmp_path, "base", {})
    warned = plan_of(tmp_path, "warned", {"compute": {"scratch_gib": 100}})
    g = guardrail_diff(base, warned)
    assert [(f["rule"], f["level"]) for f in g.new_findings] == [("AIT013", "warning")]
    assert g.resolved_findings == () and g.kept_findings == len(base["findings"])
    markdown = render_diff(diff_plans(base, warned), markdown=True)
    assert f"### Guardrails ({len(base['findings'])} unchanged findings)" in markdown
    assert "- new warning: [AIT013] summary.scratch_gib_per_node: scratch 100 GiB per node" in markdown
    back = render_diff(diff_plans(warned, base))
    assert "- resolved warning: [AIT013] summary.scratch_gib_per_node: scratch 100 GiB per node" in back
    assert diff_plans(base, warned).to_dict()["guardrails"]["new_findings"][0]["rule"] == "AIT013"


def test_a_new_skip_alone_is_a_change_and_names_its_reason(tmp_path):
    base = plan_of(tmp_path, "base", {"compute": {"scratch_gib": 100}})
    skipped = plan_of(
        tmp_path,
        "skipped",
        {"compute": {"scratch_gib": 100}, "guardrails": {"skip": [{"rule": "AIT013", "reason": REASON}]}},
    )
    diff = diff_plans(base, skipped)
    assert not diff.changes and not diff.summary  # no resource changes: the skip alone must still show
    text = render_diff(diff)
    assert "No changes." not in text
    assert f"- newly skipped: [AIT013] local scratch is at least 3 × memory per node: {REASON}" in text
    assert "- resolved warning: [AIT013]" in text  # the finding goes away because the rule no longer runs
    markdown = render_diff(diff, markdown=True)
    assert f"newly skipped: [AIT013] local scratch is at least 3 × memory per node: {REASON}" in markdown
    restored = render_diff(diff_plans(skipped, base))
    assert (
        "- no longer skipped (the rule runs again): [AIT013] local scratch is at least 3 × memory per node" in restored
    )
    assert "- new warning: [AIT013]" in restored


def test_a_kept_skip_is_listed_on_every_diff_that_shows_a_change(tmp_path):
    skip = {"guardrails": {"skip": [{"rule": "AIT013", "reason": REASON}]}}
    old = plan_of(tmp_path, "old", {**skip, "compute": {"nodes": 12}})
    new = plan_of(tmp_path, "new", {**skip, "compute": {"nodes": 16}})
    g = guardrail_diff(old, new)
    assert g.new_skips == () and g.restored_skips == () and [s["rule"] for s in g.skipped] == ["AIT013"]
    text = render_diff(diff_plans(old, new))
    assert f"- skipped: [AIT013] local scratch is at least 3 × memory per node: {REASON}" in text
    assert render_diff(diff_plans(new, new)) == "aitrain plan diff\n\nNo changes.\n"


def test_new_findings_are_listed_most_severe_first():
    def finding(rule, level, resource="r"):
        return {"rule": rule, "level": level, "resource": resource, "message": f"{rule} message"}

    old = {"findings": []}
    new = {
        "findings": [
            finding("AIT031", "info"),
            finding("AIT027", "warning"),
            finding("AIT001", "error", "b"),
            finding("AIT001", "error", "a"),
        ]
    }
    g = guardrail_diff(old, new)
    assert [(f["level"], f["rule"], f["resource"]) for f in g.new_findings] == [
        ("error", "AIT001", "a"),
        ("error", "AIT001", "b"),
        ("warning", "AIT027", "r"),
        ("info", "AIT031", "r"),
    ]
    assert [f["rule"] for f in guardrail_diff(new, old).resolved_findings] == ["AIT001", "AIT001", "AIT027", "AIT031"]
