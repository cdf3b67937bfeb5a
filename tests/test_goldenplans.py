"""`aitrain plan --check DIR` / `--update DIR`: committed plans
of users' stack files, compared, never rewritten by --check."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from blueprints.cli.main import app

STACK = "config:\n  aitrain:preset: medical-imaging\n"
POOL = "config:\n  aitrain:preset: autoscaling-training\n"
TODAY = ["--today", "2026-12-01"]


def _run(*args: str):
    return CliRunner().invoke(app, ["plan", *args])


def _stacks(tmp_path: Path, **stacks: str) -> Path:
    for name, text in stacks.items():
        (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n")  # the project file is not a stack
    return tmp_path


def test_update_writes_then_check_passes_and_a_change_fails_with_the_plan_diff(tmp_path):
    folder = _stacks(tmp_path, train=STACK)
    written = _run("--update", str(folder), *TODAY)
    assert written.exit_code == 0, written.output
    assert "train: written" in written.output and "updated 1 of 1 plans (train)" in written.output
    assert sorted(p.name for p in (folder / "plans").iterdir()) == ["train.plan.json"]
    assert json.loads((folder / "plans" / "train.plan.json").read_text())["schema"] == "aitrain.plan/v2"
    assert _run("--check", str(folder), *TODAY).exit_code == 0

    (folder / "Pulumi.train.yaml").write_text(STACK + "  aitrain:profile:\n    compute:\n      nodes: 16\n")
    before = (folder / "plans" / "train.plan.json").read_text()
    stale = _run("--check", str(folder), *TODAY)
    assert stale.exit_code == 1
    assert (
        "train: stale" in stale.output and "amount 12 → 16 forces replacement" in stale.output
    )  # the plan diff, not a JSON diff
    assert "run `aitrain plan --update" in stale.output
    assert (folder / "plans" / "train.plan.json").read_text() == before  # --check compares only


def test_the_clock_is_an_input_pinned_by_today(tmp_path):
    folder = _stacks(tmp_path, pool=POOL)
    assert _run("--update", str(folder), *TODAY).exit_code == 0
    assert _run("--check", str(folder), *TODAY).exit_code == 0
    later = _run("--check", str(folder), "--today", "2027-03-01")
    assert later.exit_code == 1 and "off_hours_start_date" in later.output


def test_missing_and_orphan_plans_fail_the_check_and_update_fixes_both(tmp_path):
    folder = _stacks(tmp_path, train=STACK)
    missing = _run("--check", str(folder), *TODAY)
    assert missing.exit_code == 1 and "no committed plan; run `aitrain plan --update" in missing.output
    assert _run("--update", str(folder), *TODAY).exit_code == 0
    (folder / "plans" / "gone.plan.json").write_text("{}")
    orphan = _run("--check", str(folder), *TODAY)
    assert orphan.exit_code == 1 and "gone: orphan" in orphan.output and "no Pulumi.gone.yaml" in orphan.output
    fixed = _run("--update", str(folder), *TODAY)
    assert (
        fixed.exit_code == 0 and "gone: deleted" in fixed.output and not (folder / "plans" / "gone.plan.json").exists()
    )


def test_a_committed_plan_of_another_schema_is_stale_with_a_clear_reason(tmp_path):
    folder = _stacks(tmp_path, train=STACK)
    (folder / "plans").mkdir()
    (folder / "plans" / "train.plan.json").write_text(json.dumps({"schema": "aitrain.plan/v1", "resources": []}))
    result = _run("--check", str(folder), *TODAY)
    assert (
        result.exit_code == 1
        and "schema 'aitrain.plan/v1'" in result.output
        and "rewrite it with --update" in result.output
    )


def test_bad_input_exits_2_with_the_file_named(tmp_path):
    folder = _stacks(tmp_path, bad="config:\n  aitrain:preset: no-such-preset\n")
    result = _run("--check", str(folder), *TODAY)
    assert result.exit_code == 2 and "Pulumi.bad.yaml" in result.output and "no-such-preset" in result.output
    assert "Traceback" not in result.output
    nothing = _run("--check", str(tmp_path / "none"), *TODAY)
    assert nothing.exit_code == 2 and "is not a directory" in nothing.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "holds no Pulumi.<stack>.yaml" in _run("--check", str(empty), *TODAY).output
    both = _run("medical-imaging", "--check", str(folder))
    assert both.exit_code == 2 and "conflicting options" in both.output


def test_this_repos_example_plans_are_current():
    folder = Path(__file__).resolve().parents[1] / "examples" / "stacks"
    result = _run("--check", str(folder), *TODAY)
    assert result.exit_code == 0, result.output


def test_check_names_each_current_stack_and_explains_an_unreadable_or_other_difference(tmp_path):
    folder = _stacks(tmp_path, train=STACK)
    assert _run("--update", str(folder), *TODAY).exit_code == 0
    current = _run("--check", str(folder), *TODAY)
    assert (
        current.exit_code == 0
        and "train: current" in current.output
        and "all 1 committed plans are current" in current.output
    )
    committed = folder / "plans" / "train.plan.json"
    good = committed.read_text()
    committed.write_text("{not json")
    broken = _run("--check", str(folder), *TODAY)
    assert (
        broken.exit_code == 1
        and (
            "train.plan.json is not JSON (Expecting property name "
            "enclosed in double quotes, line 1); rewrite it with --update"
        )
        in broken.output
    )
    shapeless = json.loads(good)
    shapeless["resources"] = "none"
    committed.write_text(json.dumps(shapeless))
    assert (
        "is not a plan this aitrain can read; rewrite it with --update" in _run("--check", str(folder), *TODAY).output
    )
    # Same resources and summary, another note: the difference is shown as the changed JSON lines.
    noted = json.loads(good)
    noted["notes"] = [*noted["notes"], "a hand-edited note"]
    committed.write_text(json.dumps(noted, indent=2, ensure_ascii=False) + "\n")
    other = _run("--check", str(folder), *TODAY)
    assert (
        other.exit_code == 1
        and "same resources; other fields differ:" in other.output
        and '-    "a hand-edited note"' in other.output
    )
