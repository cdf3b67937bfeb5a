"""Review inputs a pull request or a saved file can carry: hostile plans for `aitrain diff`, hostile stack outputs for
`aitrain launch`, and text a shell cannot encode in a profile.
Each ends in exit 2 and one message, never a traceback."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.review.diff.shape import MAX_DEPTH

AITRAIN = [sys.executable, "-m", "blueprints.cli.main"]
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
        (
            lambda d: d["findings"].append("AIT004"),
            "findings[",
            "must be an object with rule, resource, message, level",
        ),
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


# ------------------------------------------------------------------------------------------------
# aitrain launch: stack outputs
# ------------------------------------------------------------------------------------------------


def launch_with(tmp_path: Path, **changes: object) -> subprocess.CompletedProcess[str]:
    from tests.test_launch import fixed_outputs

    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(fixed_outputs(2, **changes)), encoding="utf-8")
    return aitrain(
        "launch", "--stack", str(path), "--skip-check", "no nodes here", "--dry-run", "--", "python", "train.py"
    )


@pytest.mark.parametrize(
    "path",
    [
        "/mnt/shared/../../etc",
        "/mnt/../root",
        "mnt/shared",
        "/mnt//shared",
        "/mnt/./shared",
        "/",
        "/mnt/shared/",
        "/mnt/sh ared",
        "/mnt/$(id)",
    ],
)
def test_launch_refuses_a_shared_mount_path_that_is_not_plain(tmp_path, path):
    message = one_message(launch_with(tmp_path, shared_mount_path=path))
    assert "shared_mount_path" in message and "no '..', '//' or spaces" in message, message


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "47.100.1.2", "100.128.0.1", "172.32.0.1", "0.0.0.0", "127.0.0.1", "169.254.1.1"]
)
def test_launch_refuses_a_public_or_odd_node_address(tmp_path, address):
    message = one_message(launch_with(tmp_path, node_private_ips=["10.20.0.11", address]))
    assert "node_private_ips" in message and f"holds {address}, not a private address" in message
    assert "10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10" in message


@pytest.mark.parametrize(
    "addresses", [["10.20.0.11", "10.20.0.12"], ["172.16.5.4", "192.168.1.9"], ["100.64.0.1", "100.127.255.254"]]
)
def test_launch_takes_private_node_addresses_and_a_plain_mount(tmp_path, addresses):
    run = launch_with(tmp_path, node_private_ips=addresses, shared_mount_path="/mnt/shared-data/team_a")
    assert run.returncode == 0, run.stderr
    assert "/mnt/shared-data/team_a/.aitrain/runs/" in run.stdout


# ------------------------------------------------------------------------------------------------
# Profile text that is not UTF-8 (undecodable bytes reach Python as lone surrogates)
# ------------------------------------------------------------------------------------------------

BAD = os.fsdecode(b"a\xff")  # 'a\udcff'


@pytest.mark.parametrize("setting", [f"description={BAD}", f"tags.team={BAD}", f"name=imaging{BAD}"])
def test_text_that_is_not_utf8_is_one_message_and_the_out_file_stays(tmp_path, setting):
    out = tmp_path / "plan.json"
    out.write_text('{"kept": true}\n', encoding="utf-8")
    message = one_message(aitrain("plan", "medical-imaging", "--set", setting, "--format", "json", "--out", str(out)))
    field = setting.split("=", 1)[0].split(".")[0]  # a mapping is named by its field (tags)
    assert f"{field} = " in message and "which is not UTF-8 text" in message, message
    assert out.read_text(encoding="utf-8") == '{"kept": true}\n'
