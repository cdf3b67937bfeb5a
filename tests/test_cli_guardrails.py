"""Guardrail levels and skips at the command line: --fail-level exit codes, skips with reasons in every format."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.review import guardrails

runner = CliRunner()
SCRATCH_WARNING = ("--set", "compute.scratch_gib=100")  # 100 GiB < 3 × 1,000 GiB memory: AIT013, a warning
REASON = "scratch is on the shared file system for this test cluster"


def invoke(*args: str):
    return runner.invoke(app, list(args))


def stack_with(tmp_path: Path, profile: dict) -> Path:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": {"aitrain:preset": "medical-imaging", "aitrain:profile": profile}}))
    return path


def test_fail_level_sets_the_exit_code_from_the_most_severe_finding():
    warned = invoke("plan", "medical-imaging", *SCRATCH_WARNING, "--format", "json")
    levels = {f["level"] for f in json.loads(warned.stdout)["findings"]}
    assert "warning" in levels and "error" not in levels
    assert warned.exit_code == 0  # the default --fail-level is error
    assert invoke("plan", "medical-imaging", *SCRATCH_WARNING, "--fail-level", "error").exit_code == 0
    failed = invoke("plan", "medical-imaging", *SCRATCH_WARNING, "--fail-level", "warning", "--format", "json")
    assert failed.exit_code == 1
    assert json.loads(failed.stdout)["findings"]  # the plan is written before the exit
    assert "guardrail finding(s) at --fail-level warning or above" in failed.stderr
    assert "warning: [AIT013] summary.scratch_gib_per_node: scratch 100 GiB per node" in failed.stderr
    assert invoke("plan", "medical-imaging", *SCRATCH_WARNING, "--fail-level", "info").exit_code == 1


def test_fail_level_ignores_findings_below_it():
    plan = json.loads(invoke("plan", "medical-imaging", "--format", "json").stdout)
    worst = min((guardrails.LEVELS.index(f["level"]) for f in plan["findings"]), default=len(guardrails.LEVELS))
    for index, level in enumerate(guardrails.LEVELS):
        assert invoke("plan", "medical-imaging", "--fail-level", level).exit_code == (1 if worst <= index else 0), level


def test_fail_level_typo_exits_2_with_the_allowed_levels():
    result = invoke("plan", "medical-imaging", "--fail-level", "warnings")
    assert result.exit_code == 2
    for level in guardrails.LEVELS:
        assert f"'{level}'" in result.output


def test_a_skip_with_its_reason_appears_in_every_format_and_the_rule_no_longer_fires(tmp_path):
    stack = stack_with(
        tmp_path, {"compute": {"scratch_gib": 100}, "guardrails": {"skip": [{"rule": "AIT013", "reason": REASON}]}}
    )
    plan = json.loads(invoke("plan", "--stack-config", str(stack), "--format", "json").stdout)
    assert plan["skipped"] == [
        {"rule": "AIT013", "title": "local scratch is at least 3 × memory per node", "reason": REASON}
    ]
    assert not [f for f in plan["findings"] if f["rule"] == "AIT013"]
    table = invoke("plan", "--stack-config", str(stack)).stdout
    assert f"skipped on purpose: AIT013 local scratch is at least 3 × memory per node: {REASON}" in table
    assert "  AIT013 " not in table  # a skipped rule is not listed as holding
    markdown = invoke("plan", "--stack-config", str(stack), "--format", "markdown").stdout
    assert "Skipped on purpose (the profile's `guardrails.skip`):" in markdown
    assert f"- `AIT013` local scratch is at least 3 × memory per node: {REASON}" in markdown
    assert "(AIT013)" not in markdown.split("### Guardrails", 1)[1].split("###", 1)[0]
    # A skipped rule never fails the run, whatever the level.
    assert invoke("plan", "--stack-config", str(stack), "--fail-level", "warning").exit_code == (
        1 if any(f["level"] in ("error", "warning") for f in plan["findings"]) else 0
    )


def test_a_skip_without_a_reason_is_refused_with_the_field_named(tmp_path):
    for entry, words in (
        ({"rule": "AIT013"}, ("guardrails.skip[0].reason", "required field is missing")),
        ({"rule": "AIT013", "reason": "  "}, ("guardrails.skip", "reason", "is empty")),
        ({"rule": "AIT13", "reason": REASON}, ("guardrails.skip", "rule", "is not a guardrail id", "AIT013")),
        ({"rule": "AIT013", "reason": "two\nlines"}, ("reason", "one line")),
    ):
        result = invoke("plan", "--stack-config", str(stack_with(tmp_path, {"guardrails": {"skip": [entry]}})))
        assert result.exit_code == 2, (entry, result.output)
        assert "Traceback" not in result.output
        for word in words:
            assert word in result.stderr, (entry, word, result.stderr)


def test_a_rule_skipped_twice_is_refused(tmp_path):
    skip = [{"rule": "AIT013", "reason": REASON}, {"rule": "AIT013", "reason": "again"}]
    result = invoke("plan", "--stack-config", str(stack_with(tmp_path, {"guardrails": {"skip": skip}})))
    assert result.exit_code == 2
    assert "skips AIT013 more than once" in result.stderr


def test_guardrails_command_lists_every_rule_in_every_format():
    ids = [r.id for r in guardrails.RULES]
    table = invoke("guardrails").stdout
    assert [line.split()[0] for line in table.splitlines() if not line.startswith(" ")] == ids
    data = json.loads(invoke("guardrails", "--format", "json").stdout)
    assert [r["id"] for r in data] == ids
    assert {r["level"] for r in data} <= set(guardrails.LEVELS)
    markdown = invoke("guardrails", "--format", "markdown").stdout
    assert [line.split(" | ")[0].lstrip("| ") for line in markdown.splitlines()[2:]] == ids


def test_the_rules_document_is_current_and_covers_every_section_7_rule():
    from blueprints.review.render.findings import rules_document

    doc = (Path(__file__).resolve().parent.parent / "docs" / "guardrails.md").read_text(encoding="utf-8")
    assert doc == rules_document(), "docs/guardrails.md is stale: run make regen"
    # Every rule of the reference's §7 (1-27) is enforced by at least one guardrail, and each has its why and fix.
    assert set().union(*(set(r.references) for r in guardrails.RULES)) == set(range(1, 28))
    assert all(r.rationale and r.fix and r.level in guardrails.LEVELS for r in guardrails.RULES)
