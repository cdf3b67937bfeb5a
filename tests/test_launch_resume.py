"""`aitrain launch --resume RUN_ID` and `--max-restarts`: the checkpoint check before anything starts (recorded fake
`aliyun` / `ssh`), exit 2 with nothing started when there is no checkpoint, the refused combinations, the dry run."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from blueprints.launch import torchrun as lc
from tests.test_launch import RUN, fixed_outputs, invoke

CKPT = f"/mnt/shared/.aitrain/checkpoints/{RUN}"


@pytest.fixture
def outputs_file(tmp_path):
    def write(data):
        path = tmp_path / "outputs.json"
        path.write_text(json.dumps(data))
        return str(path)

    return write


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    monkeypatch.setenv(lc.NOW_ENV, "2026-12-01T09:30:00Z")


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """Fake `aliyun` and `ssh` on PATH: each call appended to calls.jsonl; the checkpoint listing answers
    ``checkpoints=$FAKE_CHECKPOINTS`` (through DescribeInvocationResults for Cloud Assistant)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.jsonl"
    script = textwrap.dedent(
        f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(calls)!r}, "a") as f:
            f.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\\n")
        out = "checkpoints=" + os.environ.get("FAKE_CHECKPOINTS", "0") + "\\n"
        if os.path.basename(sys.argv[0]) == "ssh":
            print(out if "checkpoints=" in sys.argv[-1] else "", end="")
        elif "RunCommand" in sys.argv:
            print(json.dumps({{"CommandId": "c-1", "InvokeId": "t-0001"}}))
        elif "DescribeInvocationResults" in sys.argv:
            result = {{"InstanceId": "i-uf6node0001", "InvokeRecordStatus": "Finished", "ExitCode": 0, "Output": out}}
            print(json.dumps({{"Invocation": {{"InvocationResults": {{"InvocationResult": [result]}}}}}}))
        """
    )
    for name in ("aliyun", "ssh"):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return lambda: [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def content(call: list[str]) -> str:
    return call[call.index("--CommandContent") + 1]


def test_resume_checks_the_checkpoints_then_starts_the_same_run(outputs_file, recorded, monkeypatch):
    monkeypatch.setenv("FAKE_CHECKPOINTS", "2")
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(2)), "--resume", RUN, "--", "python", "t.py")
    assert result.exit_code == 0, result.output
    calls = recorded()
    assert [c[2] for c in calls] == ["RunCommand", "DescribeInvocationResults", "RunCommand"]
    check = calls[0]
    assert content(check) == lc.checkpoint_script(lc.parse_outputs(fixed_outputs(2), "o", ["fixed-cluster"]), RUN)
    assert f"ls -A {CKPT}" in content(check) and check[-2:] == ["--InstanceId.1", "i-uf6node0001"]  # one node
    start = content(calls[2])
    assert f"--run-id {RUN} " in start and f"--checkpoint-dir {CKPT} " in start and f"runs/{RUN} " in start
    assert f"run {RUN}: 2 entries in {CKPT}; resuming" in result.output


@pytest.mark.parametrize("via", ["cloud-assistant", "ssh"])
def test_resume_without_a_checkpoint_is_exit_2_and_starts_nothing(outputs_file, recorded, via):
    data = fixed_outputs(2, login_node_public_ip="47.100.1.2")
    result = invoke("launch", "--stack", outputs_file(data), "--via", via, "--resume", RUN, "--", "python", "t.py")
    assert result.exit_code == 2, result.output
    assert f"run {RUN} has no checkpoint in {CKPT} (missing or empty)" in result.output
    assert "Traceback" not in result.output
    calls = recorded()
    # Only the read: no launcher line ever went out.
    assert calls and not [c for c in calls if "aitrain-torchrun" in " ".join(c)]


def test_resume_with_run_id_is_exit_2(outputs_file, recorded):
    stack = outputs_file(fixed_outputs(2))
    result = invoke("launch", "--stack", stack, "--resume", RUN, "--run-id", "other", "--", "python", "t.py")
    assert result.exit_code == 2 and "cannot go with --resume" in result.output and recorded() == []


def test_resume_of_a_bad_run_id_is_exit_2(outputs_file, recorded):
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(2)), "--resume", "../x", "--", "python", "t.py")
    assert result.exit_code == 2 and "invalid --run-id" in result.output and recorded() == []


def test_dry_run_prints_the_check_and_the_launch(outputs_file, recorded):
    stack = outputs_file(fixed_outputs(2))
    result = invoke("launch", "--stack", stack, "--resume", RUN, "--dry-run", "--", "python", "t.py")
    assert result.exit_code == 0, result.output
    assert f"aitrain launch --resume {RUN}: first, the checkpoints in {CKPT}" in result.output
    assert f"ls -A {CKPT}" in result.output and f"--run-id {RUN}" in result.output
    assert recorded() == []


@pytest.mark.parametrize("value", ["-1", "101"])
def test_max_restarts_out_of_range_is_exit_2(outputs_file, recorded, value):
    stack = outputs_file(fixed_outputs(1))
    result = invoke("launch", "--stack", stack, "--max-restarts", value, "--", "python", "t.py")
    assert result.exit_code == 2 and "--max-restarts" in result.output and recorded() == []


def test_max_restarts_reaches_the_node_line(outputs_file, recorded):
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(1)), "--max-restarts", "0", "--", "python", "t.py")
    assert result.exit_code == 0, result.output
    assert " --max-restarts 0 " in content(recorded()[0])
