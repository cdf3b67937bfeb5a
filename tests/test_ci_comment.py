"""`aitrain ci comment`: new and removed stacks, unreadable base plans, the comment limit and the exit codes."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprints.ci.comment import MARKER, StackOutcome, comment_body, compare_stacks, exit_code
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.review.diff.compare import PlanDiff, ResourceChange

TODAY = dt.date(2026, 12, 1)
STACK = "config:\n  aitrain:preset: medical-imaging\n"


def _checkout(root: Path, **stacks: str) -> Path:
    folder = root / "stacks"
    folder.mkdir(parents=True)
    for name, text in stacks.items():
        (folder / f"Pulumi.{name}.yaml").write_text(text)
    return root


def test_a_new_stack_is_all_create_not_an_error(tmp_path):
    base, head = _checkout(tmp_path / "base"), _checkout(tmp_path / "head", train=STACK)
    [outcome] = compare_stacks(base, head, "stacks", TODAY)
    assert outcome.status == "new" and outcome.diff is not None
    assert outcome.diff.changes and {c.action for c in outcome.diff.changes} == {"create"}
    assert exit_code([outcome], "data-risk") == 0 and exit_code([outcome], "any") == 1


def test_a_removed_stack_is_all_delete_with_its_data_risks(tmp_path):
    base, head = _checkout(tmp_path / "base", train=STACK), _checkout(tmp_path / "head")
    [outcome] = compare_stacks(base, head, "stacks", TODAY)
    assert outcome.status == "removed" and outcome.diff is not None
    # Protected storage would be refused (pulumi up stops), everything else deleted.
    assert {c.action for c in outcome.diff.changes} == {"delete", "refused"}
    assert {c.name for c in outcome.diff.changes if c.action == "refused"} == {
        "medical-imaging-storage-fs",
        "medical-imaging-data-bucket",
        "medical-imaging-data-log-bucket",
    }
    assert any("medical-imaging-storage-fs" in risk for risk in outcome.diff.risks)
    assert exit_code([outcome], "data-risk") == 1


@pytest.mark.parametrize(
    "plan, expected",
    [
        ({"schema": "aitrain.plan/v1", "summary": {}, "resources": []}, "aitrain.plan/v1"),
        ({"format_version": "1.2", "resource_changes": []}, "(missing)"),  # a Terraform plan: another tool
    ],
)
def test_a_base_plan_of_another_schema_or_tool_is_a_clear_error_and_exit_2(tmp_path, plan, expected):
    head = _checkout(tmp_path / "head", train=STACK)
    plans = tmp_path / "base-plans"
    plans.mkdir()
    (plans / "train.plan.json").write_text(json.dumps(plan))
    [outcome] = compare_stacks(tmp_path, head, "stacks", TODAY, base_plans=plans)
    assert outcome.status == "error" and outcome.diff is None
    assert "schema" in outcome.error and expected in outcome.error and "aitrain.plan/v2" in outcome.error
    assert exit_code([outcome], "data-risk") == 2
    body = comment_body([outcome], stacks="stacks", fail_on="data-risk", today=TODAY)
    assert "**Cannot plan 1 stack(s)**: `train`" in body and expected in body


def test_cli_writes_the_body_then_exits_2_for_an_invalid_stack_file(tmp_path):
    base = _checkout(tmp_path / "base", train=STACK)
    head = _checkout(
        tmp_path / "head",
        train="config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    compute:\n      nodes: -3\n",
    )
    out = tmp_path / "comment.md"
    result = CliRunner().invoke(
        app,
        [
            "ci",
            "comment",
            "--base",
            str(base),
            "--head",
            str(head),
            "--stacks",
            "stacks",
            "--today",
            "2026-12-01",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2, result.output
    body = out.read_text()
    assert body.startswith(MARKER) and "### `train` — error" in body and "compute.nodes" in body
    assert "Pulumi.train.yaml" in body  # the error names the file
    assert "Traceback" not in result.output


def test_cli_exit_1_on_the_fail_on_class_and_0_below_it(tmp_path):
    base = _checkout(tmp_path / "base", train=STACK)
    head = _checkout(tmp_path / "head", train=STACK + "  aitrain:profile:\n    compute:\n      nodes: 16\n")
    args = ["ci", "comment", "--base", str(base), "--head", str(head), "--stacks", "stacks", "--today", "2026-12-01"]
    assert CliRunner().invoke(app, args + ["--fail-on", "data-risk"]).exit_code == 0
    result = CliRunner().invoke(app, args + ["--fail-on", "any"])
    assert result.exit_code == 1 and "a change of class any" in result.output


def test_cli_bad_options_exit_2_and_write_nothing(tmp_path):
    out = tmp_path / "comment.md"
    result = CliRunner().invoke(
        app, ["ci", "comment", "--base", str(tmp_path / "nope"), "--head", str(tmp_path), "--out", str(out)]
    )
    assert result.exit_code == 2 and "--base" in result.output and not out.exists()
    empty = CliRunner().invoke(
        app, ["ci", "comment", "--base", str(tmp_path), "--head", str(tmp_path), "--stacks", "none"]
    )
    assert empty.exit_code == 2 and "no stack files" in empty.output


def _outcome(name: str, resources: int) -> StackOutcome:
    changes = tuple(
        ResourceChange("create", "alicloud:vpc/switch:Switch", f"{name}-vsw-{i:05d}") for i in range(resources)
    )
    return StackOutcome(name, "new", PlanDiff({}, changes))


def test_body_stays_under_the_limit_and_says_what_was_left_out():
    outcomes = [_outcome(f"s{i}", 400) for i in range(12)]
    body = comment_body(outcomes, stacks="stacks", fail_on="data-risk", today=TODAY)
    assert len(body) <= 60_000
    shown = body.count("\n### `")
    assert 0 < shown < 12
    assert f"_{12 - shown} stack section(s) left out to stay under GitHub's comment limit" in body
    assert all(f"| `s{i}` | new | 400 create |" in body for i in range(12))  # every stack keeps its row
    assert body.rstrip().endswith("so the base is planned by its own code)._")


def test_stack_diff_headings_nest_under_the_stack_heading_but_code_is_untouched():
    from blueprints.ci.comment import _demote

    assert _demote("## a\n```\n## not a heading\n```\n### b") == "#### a\n```\n## not a heading\n```\n##### b"


def test_base_plans_must_be_a_folder(tmp_path):
    head = _checkout(tmp_path / "head", train=STACK)
    with pytest.raises(UserInputError, match="--base-plans = '.*nope': is not a directory of <stack>.plan.json files"):
        compare_stacks(tmp_path, head, "stacks", TODAY, base_plans=tmp_path / "nope")


def test_each_stack_row_shows_its_monthly_cost_before_and_after_and_new_stacks_fold(tmp_path):
    base = _checkout(tmp_path / "base", train=STACK, gone=STACK)
    head = _checkout(
        tmp_path / "head", train=STACK + "  aitrain:profile:\n    compute:\n      nodes: 16\n", fresh=STACK
    )
    outcomes = compare_stacks(base, head, "stacks", TODAY)
    body = comment_body(outcomes, stacks="stacks", fail_on="data-risk", today=TODAY)
    rows = {line.split(" | ")[0].strip("| `"): line for line in body.splitlines() if line.startswith("| `")}
    # Priced lines only (disks are unpriced): 12 → 16 nodes at 277.93 CNY/h × 730 h is +32.4 %.
    assert rows["train"].endswith("| 2,505,544 (incomplete) → 3,317,099 (incomplete) (+32.4 %) |")
    assert rows["fresh"].endswith("| — → 2,505,544 (incomplete) |") and rows["gone"].endswith(
        "| 2,505,544 (incomplete) → — |"
    )
    fresh = body.split("### `fresh` — new", 1)[1]
    created = next(o for o in outcomes if o.stack == "fresh").diff.changes
    assert fresh.startswith(
        "\n\nNew stack file: everything below would be "
        f"created.\n\n<details><summary>{len(created)} resources</summary>"
    )
    assert (
        "<details><summary>"
        not in body.split("### `train` — changed", 1)[1].split("\n### ", 1)[0].split("#### aitrain plan diff")[0]
    )


def _strip_protect(monkeypatch):
    """Head code that creates the file system and the bucket without
    protect/retain_on_delete (what a careless or hostile PR does)."""
    from blueprints.components import base as components_base
    from blueprints.components import bucket, storage

    monkeypatch.setattr(storage, "stateful", components_base.child)
    monkeypatch.setattr(bucket, "stateful", components_base.child)


def test_a_head_whose_code_strips_protect_is_blocked_with_ait004_named(tmp_path, monkeypatch):
    """Both sides planned by the head's stripped code diff as "no
    change of class data-risk"; the head's own errors block it."""
    _strip_protect(monkeypatch)
    base = _checkout(tmp_path / "base", train=STACK)
    head = _checkout(tmp_path / "head", train=STACK + "  aitrain:profile:\n    storage:\n      capacity_gib: 200\n")
    out = tmp_path / "comment.md"
    result = CliRunner().invoke(
        app,
        [
            "ci",
            "comment",
            "--base",
            str(base),
            "--head",
            str(head),
            "--stacks",
            "stacks",
            "--today",
            "2026-12-01",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    body = out.read_text()
    verdict = body.split("\n| Stack |", 1)[0]
    assert "**Blocked: 3 error-level guardrail finding(s) in the head's plan**" in verdict
    assert (
        "blocked: `AIT004` on `medical-imaging-data-bucket`, `medical-imaging-data-log-bucket`, "
        "`medical-imaging-storage-fs` in `train`." in verdict
    )
    assert "No change of class `data-risk`." in verdict  # the diff alone would have passed it
    assert "- `AIT004` `medical-imaging-storage-fs`" in body.split("### `train`", 1)[1]
    assert (
        "blocked: error-level findings in the head's plan: AIT004 medical-imaging-data-bucket, AIT004 "
        "medical-imaging-data-log-bucket, AIT004 medical-imaging-storage-fs" in result.output
    )


def test_the_base_from_its_committed_plans_shows_protect_switched_off(tmp_path, monkeypatch):
    """The base's committed plans (written by the base's own code) are the honest base: the diff names the risk too."""
    base = _checkout(tmp_path / "base", train=STACK)
    plans = base / "stacks" / "plans"
    plans.mkdir()
    from blueprints.ci.goldenplans import plan_stack_json

    (plans / "train.plan.json").write_text(plan_stack_json(base / "stacks" / "Pulumi.train.yaml", TODAY))
    _strip_protect(monkeypatch)
    head = _checkout(tmp_path / "head", train=STACK)
    [outcome] = compare_stacks(base, head, "stacks", TODAY, base_plans=plans)
    assert "medical-imaging-storage-fs: protect is switched off" in outcome.diff.risks
    assert ("AIT004", "medical-imaging-storage-fs") in outcome.blocking
    body = comment_body([outcome], stacks="stacks", fail_on="data-risk", today=TODAY, base_source="committed")
    assert "**Blocked: a change of class `data-risk`** in `train`." in body
    assert "base: the base commit's committed plans (`stacks/plans/`, written by the base's own aitrain)._" in body


def test_a_clean_head_is_not_blocked(tmp_path):
    base, head = _checkout(tmp_path / "base", train=STACK), _checkout(tmp_path / "head", train=STACK)
    [outcome] = compare_stacks(base, head, "stacks", TODAY)
    assert outcome.blocking == () and exit_code([outcome], "data-risk") == 0
    assert "Blocked" not in comment_body([outcome], stacks="stacks", fail_on="data-risk", today=TODAY)
