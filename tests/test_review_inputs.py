"""Review inputs a pull request or a saved file can carry: hostile plans for `aitrain diff`, hostile stack outputs for
`aitrain launch`, and text a shell cannot encode in a profile. Each ends in exit 2 and one message, never a traceback."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.plandiff_shape import MAX_DEPTH

AITRAIN = [sys.executable, "-m", "blueprints.cli"]
ENV = {**os.environ, "AITRAIN_TODAY": "2026-11-30"}


def aitrain(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AITRAIN, *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=120)


def one_message(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and run.stdout == "", run.stderr
    assert run.stderr.startswith("error: "), run.stderr
    return run.stderr


GOLDEN = Path(__file__).parent / "golden" / "medical-imaging.plan.json"


def plan() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def diff_against(tmp_path: Path, new: dict | str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "new.json"
    path.write_text(new if isinstance(new, str) else json.dumps(new), encoding="utf-8")
    return aitrain("diff", str(GOLDEN), str(path))


# ------------------------------------------------------------------------------------------------
# aitrain diff
# ------------------------------------------------------------------------------------------------


def test_deeply_nested_json_is_one_message_not_a_recursion_error(tmp_path):
    data = plan()
    data["resources"][0]["inputs"]["deep"] = "@"
    text = json.dumps(data).replace('"@"', "[" * 100_000 + "]" * 100_000)
    message = one_message(diff_against(tmp_path, text))
    assert f"nests arrays/objects deeper than {MAX_DEPTH} levels" in message and "new.json" in message


def test_nesting_within_the_limit_still_diffs(tmp_path):
    data = plan()
    data["resources"][0]["inputs"]["deep"] = json.loads("[" * 40 + "]" * 40)
    run = diff_against(tmp_path, data)
    assert run.returncode == 0 and "deep" in run.stdout, run.stderr


@pytest.mark.parametrize(
    ("edit", "located", "problem"),
    [
        (lambda d: d["findings"][0].pop("resource"), "findings[0].resource", "is missing; must be a string"),
        (lambda d: d["findings"].append("AIT004"), "findings[", "must be an object with rule, resource, message, level"),
        (lambda d: d.__setitem__("findings", {"rule": "AIT004"}), "findings", "must be a list of objects"),
        (lambda d: d["findings"][0].__setitem__("message", ["x"]), "findings[0].message", "must be a string"),
        (lambda d: d.__setitem__("skipped", [{"title": "no rule"}]), "skipped[0].rule", "is missing; must be a string"),
        (lambda d: d["costs"].__setitem__("lines", [1, 2]), "costs.lines", "must be a list of objects"),
        (lambda d: d["costs"].__setitem__("totals", []), "costs.totals", "must be an object"),
    ],
)
def test_a_malformed_section_the_diff_reads_is_one_message(tmp_path, edit, located, problem):
    data = copy.deepcopy(plan())
    edit(data)
    message = one_message(diff_against(tmp_path, data))
    assert located in message and problem in message, message
