"""`aitrain runs`, `logs` and `cancel`: the exact commands (dry run), the node scripts run against a fabricated run
directory, the status table, a real round trip through a fake `aliyun`, and every refused input (exit 2)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.launch import runs
from blueprints.launch import torchrun as lc
from tests.test_launch import fixed_outputs, pool_outputs
from tests.test_launch_kubernetes import llama
from tests.test_launch_trainjob import trainer_stack

runner = CliRunner()
RUN = "20261201T093000Z"
READ = "--Timeout 60 --InstanceId.1 i-uf6node0001"


@pytest.fixture
def stack(tmp_path):
    def write(data):
        path = tmp_path / "outputs.json"
        path.write_text(json.dumps(data))
        return str(path)

    return write


def invoke(*args):
    return runner.invoke(app, list(args))


def fabricated(tmp_path):
    """A run directory as two nodes leave it: one exited 0, one still running; and an older run that failed."""
    base = tmp_path / "shared" / ".aitrain" / "runs"
    (base / RUN).mkdir(parents=True)
    (base / RUN / "iZnode1.status").write_text(
        "state=exited\nhost=iZnode1\npid=4242\nstarted=2026-12-01T09:30:02Z\n"
        "rank=0\nnnodes=2\nip=10.20.0.11\nexit=0\nfinished=2026-12-01T11:00:00Z\n"
    )
    (base / RUN / "iZnode1.log").write_text("".join(f"step {i}\n" for i in range(300)))
    (base / RUN / "iZnode2.status").write_text(
        "state=running\nhost=iZnode2\npid=4343\nstarted=2026-12-01T09:30:03Z\nrank=1\nnnodes=2\nip=10.20.0.12\n"
    )
    (base / RUN / "iZnode2.log").write_text("rank 1 says hi\n")
    (base / "old").mkdir()
    (base / "old" / "iZnode1.status").write_text(
        "state=exited\nhost=iZnode1\npid=7\nstarted=2026-11-30T08:00:00Z\n"
        "exit=2\nfinished=2026-11-30T08:00:01Z\ndetail=this "
        "node (10.9.9.9) is not among the 2 nodes: 10.20.0.11,10.20.0.12\n"
    )
    return tmp_path / "shared"


def sh(line: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=30)


# --- dry runs: exactly what would run ---------------------------------------------------------------------------


def test_runs_dry_run_reads_one_node_and_says_how_the_answer_is_fetched(stack):
    result = invoke("runs", "--stack", stack(fixed_outputs(2)), "--dry-run")
    assert result.exit_code == 0, result.output
    line = (
        "cd /mnt/shared/.aitrain/runs 2>/dev/null || exit 0; for f in "
        '*/*.status; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 0'
    )
    expected = [
        "aitrain runs: medical-imaging (fixed-cluster, cn-shanghai), via cloud-assistant",
        "one node (the run directory is shared) runs:",
        f"  {line}",
        "commands:",
        "  aliyun ecs RunCommand --RegionId cn-shanghai --Type RunShellScript --Name aitrain-medical-imaging-runs "
        f"--CommandContent {shlex.quote(line)} {READ}",
        "  then, until it has finished: aliyun ecs DescribeInvocationResults --RegionId cn-shanghai "
        "--InvokeId '<InvokeId>' --ContentEncoding PlainText",
        "dry run: nothing was run",
    ]
    assert result.stdout == "\n".join(expected) + "\n"


def test_logs_dry_run_for_one_node_by_rank(stack):
    result = invoke("logs", "--stack", stack(fixed_outputs(2)), RUN, "--node", "1", "--lines", "20", "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"aitrain logs: medical-imaging, run {RUN}, node 1, via cloud-assistant"
    line = runs.logs_script(lc.parse_outputs(fixed_outputs(2), "o", ["fixed-cluster"]), RUN, 1, 20)
    assert (
        lines[2] == f"  {line}"
        and "grep -lx rank=1 *.status" in line
        and line.endswith('tail -n 20 "${f%.status}.log"')
    )
    assert lines[4] == (
        "  aliyun ecs RunCommand --RegionId cn-shanghai --Type RunShellScript --Name "
        f"aitrain-medical-imaging-{RUN}-logs --CommandContent {shlex.quote(line)} {READ}"
    )
    assert lines[-1] == "dry run: nothing was run"


def test_logs_follow_over_ssh_tails_through_the_login_node(stack):
    result = invoke(
        "logs",
        "--stack",
        stack(fixed_outputs(2, login_node_public_ip="47.100.1.2")),
        RUN,
        "--follow",
        "--via",
        "ssh",
        "--dry-run",
    )
    assert result.exit_code == 0, result.output
    (call,) = [line for line in result.stdout.splitlines() if line.startswith("  ssh ")]
    argv = shlex.split(call)
    assert argv[:4] == ["ssh", "-J", "root@47.100.1.2", "root@10.20.0.11"] and argv[4].endswith("tail -n 100 -F *.log")


def test_cancel_dry_run_reaches_every_node(stack):
    result = invoke("cancel", "--stack", stack(fixed_outputs(3)), "exp-7", "--dry-run")
    assert result.exit_code == 0, result.output
    (call,) = [line for line in result.stdout.splitlines() if line.startswith("  aliyun ecs RunCommand")]
    assert call.endswith(
        "--Timeout 60 --InstanceId.1 i-uf6node0001 --InstanceId.2 i-uf6node0002 --InstanceId.3 i-uf6node0003"
    )
    assert "--Name aitrain-medical-imaging-exp-7-cancel" in call and "kill -TERM " in call


def test_pool_dry_run_lists_the_instances_first(stack):
    result = invoke("runs", "--stack", stack(pool_outputs()), RUN, "--dry-run")
    assert result.exit_code == 0, result.output
    assert (
        "  aliyun ess DescribeScalingInstances --RegionId cn-shanghai --ScalingGroupId asg-uf6pool01 --LifecycleState "
        "InService --PageSize 50 --PageNumber 1" in result.stdout
    )
    assert "--InstanceId.1 <the first InService instance>" in result.stdout


# --- the node scripts, run against a fabricated run directory -------------------------------------------------


def test_status_from_a_fabricated_run_directory(tmp_path):
    share = fabricated(tmp_path)
    outputs = lc.parse_outputs(fixed_outputs(2, shared_mount_path=str(share)), "o", ["fixed-cluster"])
    listing = sh(runs.runs_script(outputs, None))
    assert listing.returncode == 0, listing.stderr
    rows = runs.parse_listing(listing.stdout)
    assert [(r.run_id, r.rank, r.host, r.state, r.exit_code) for r in rows] == [
        (RUN, 0, "iZnode1", "exited", 0),
        (RUN, 1, "iZnode2", "running", None),
        ("old", None, "iZnode1", "exited", 2),
    ]
    assert runs.render_runs(rows) == "\n".join(
        [
            f"run {RUN}: running (2 nodes)",
            "  node   0 iZnode1: exited exit 0 started 2026-12-01T09:30:02Z finished 2026-12-01T11:00:00Z",
            "  node   1 iZnode2: running started 2026-12-01T09:30:03Z",
            "run old: failed (1 node)",
            "  node   ? iZnode1: exited exit 2 started 2026-11-30T08:00:00Z finished 2026-11-30T08:00:01Z "
            "(this node (10.9.9.9) is not among the 2 nodes: 10.20.0.11,10.20.0.12)",
        ]
    )
    only = runs.parse_listing(sh(runs.runs_script(outputs, "old")).stdout)
    assert [r.run_id for r in only] == ["old"]
    assert (
        runs.render_runs(
            runs.parse_listing(
                sh(
                    runs.runs_script(
                        lc.parse_outputs(
                            fixed_outputs(1, shared_mount_path=str(tmp_path / "none")), "o", ["fixed-cluster"]
                        ),
                        None,
                    )
                ).stdout
            )
        )
        == "no runs yet (nothing in the run directory)"
    )


def test_summaries_of_finished_runs():
    def row(state, code):
        return runs.NodeStatus("r", "h", state, 0, code, None, None, None)

    assert runs.run_summary([row("exited", 0), row("exited", 0)]) == "succeeded"
    assert runs.run_summary([row("exited", 0), row("exited", 1)]) == "failed"
    assert runs.run_summary([row("cancelled", 143), row("exited", 0)]) == "cancelled"
    assert runs.run_summary([row("waiting", None)]) == "waiting"


def test_logs_of_one_rank_and_of_an_unknown_rank_or_run(tmp_path):
    share = fabricated(tmp_path)
    outputs = lc.parse_outputs(fixed_outputs(2, shared_mount_path=str(share)), "o", ["fixed-cluster"])
    got = sh(runs.logs_script(outputs, RUN, 0, 3))
    assert got.returncode == 0 and got.stdout == "step 297\nstep 298\nstep 299\n"
    assert sh(runs.logs_script(outputs, RUN, 1, 3)).stdout == "rank 1 says hi\n"
    every = sh(runs.logs_script(outputs, RUN, None, 1))
    assert every.stdout == "==> iZnode1.log <==\nstep 299\n\n==> iZnode2.log <==\nrank 1 says hi\n"
    missing = sh(runs.logs_script(outputs, RUN, 5, 3))
    assert missing.returncode == 3 and f"no node has rank 5 in run {RUN}" in missing.stderr
    assert sh(runs.logs_script(outputs, "nope", None, 3)).returncode == 3


def test_cancel_signals_the_recorded_process_group_and_leaves_finished_runs_alone(tmp_path):
    share = fabricated(tmp_path)
    host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    job = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        run_dir = share / ".aitrain" / "runs" / RUN
        (run_dir / f"{host}.status").write_text(f"state=running\nhost={host}\npid={job.pid}\nrank=0\n")
        outputs = lc.parse_outputs(fixed_outputs(2, shared_mount_path=str(share)), "o", ["fixed-cluster"])
        done = sh(runs.cancel_script(outputs, RUN))
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"{host}: run {RUN} cancelled (process group {job.pid})\n"
        assert job.wait(timeout=10) == -signal.SIGTERM
        (run_dir / f"{host}.status").write_text("state=cancelled\npid=1\n")
        assert sh(runs.cancel_script(outputs, RUN)).stdout == f"{host}: run {RUN} already cancelled\n"
        assert sh(runs.cancel_script(outputs, "other")).stdout == f"{host}: not in run other\n"
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)


# --- a real round trip through a fake aliyun -------------------------------------------------------------------


def test_runs_through_cloud_assistant_polls_until_finished_and_prints_the_table(stack, tmp_path, monkeypatch):
    share = fabricated(tmp_path)
    listing = sh(
        runs.runs_script(lc.parse_outputs(fixed_outputs(2, shared_mount_path=str(share)), "o", ["fixed-cluster"]), None)
    ).stdout
    calls = tmp_path / "calls.jsonl"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "aliyun"
    fake.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(calls)!r}, "a") as f:
            f.write(json.dumps(sys.argv[1:]) + "\\n")
        n = sum(1 for _ in open({str(calls)!r}))
        if "RunCommand" in sys.argv:
            print(json.dumps({{"InvokeId": "t-0001"}}))
        else:
            status = "Running" if n < 3 else "Finished"
            result = {{
                "InstanceId": "i-uf6node0001",
                "InvokeRecordStatus": status,
                "ExitCode": 0,
                "Output": {listing!r} if status == "Finished" else "",
            }}
            print(json.dumps({{"Invocation": {{"InvocationResults": {{"InvocationResult": [result]}}}}}}))
        """)
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr("blueprints.cli.runs.POLL_SECONDS", 0.0)
    result = invoke("runs", "--stack", stack(fixed_outputs(2)))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"run {RUN}: running (2 nodes)"
    made = [json.loads(line) for line in calls.read_text().splitlines()]
    assert [c[1] for c in made] == ["RunCommand", "DescribeInvocationResults", "DescribeInvocationResults"]
    assert made[1][-4:] == ["--InvokeId", "t-0001", "--ContentEncoding", "PlainText"]


# --- refused input: exit 2, one message, nothing run -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "data", "message"),
    [
        (("logs", "{stack}", "bad id"), fixed_outputs(2), "RUN_ID = 'bad id': must be 1–64 letters"),
        (("cancel", "{stack}", "../etc"), fixed_outputs(2), "RUN_ID = '../etc': must be 1–64 letters"),
        (("runs", "{stack}", "a;rm"), fixed_outputs(2), "RUN_ID"),
        (
            ("logs", "{stack}", RUN, "--node", "2"),
            fixed_outputs(2),
            "--node = 2: must be 0 to 1 (the node's rank; medical-imaging has 2 nodes)",
        ),
        (("logs", "{stack}", RUN, "--node", "-1"), pool_outputs(), "--node = -1: must be 0 or more"),
        (("logs", "{stack}", RUN, "--follow"), fixed_outputs(2), "--follow needs ssh"),
        (("cancel", "{stack}", RUN, "--via", "ssh"), fixed_outputs(2), "no login_node_public_ip"),
        (("runs", "{stack}"), fixed_outputs(0, node_instance_ids=[], node_private_ips=[]), "is parked (no nodes)"),
        (("runs", "{stack}"), llama(), "kubectl -n training get pytorchjobs"),
        (
            ("runs", "{stack}"),
            trainer_stack(),
            "its runs are TrainJobs; use kubectl -n training get trainjobs, and `aitrain queue --stack OUTPUTS.json`",
        ),
        (
            ("logs", "{stack}", RUN),
            trainer_stack(),
            f"kubectl -n training logs -f <job>-node-0-0-<suffix> (one pod per node); kubectl -n training get pods "
            f"-l aitrain.io/run-id={RUN}",
        ),
        (
            ("cancel", "{stack}", RUN),
            trainer_stack(),
            f"kubectl -n training delete trainjob <job> (find it with kubectl -n training get trainjobs "
            f"-l aitrain.io/run-id={RUN})",
        ),
        (
            ("cancel", "{stack}", RUN),
            llama(),
            "kubectl -n training delete pytorchjob <job> (find it with "
            f"kubectl -n training get pytorchjobs -l aitrain.io/run-id={RUN})",
        ),
    ],
)
def test_bad_input_is_exit_2_with_one_message(stack, args, data, message, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no aliyun, no ssh: nothing could run
    path = stack(data)
    argv = [a if a != "{stack}" else path for a in args]
    result = invoke(argv[0], "--stack", *argv[1:])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert result.output.count("error:") == 1


def test_missing_cli_is_exit_2(stack, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = invoke("runs", "--stack", stack(fixed_outputs(1)))
    assert result.exit_code == 2 and "`aliyun` is not on PATH" in result.output


def test_an_answer_that_is_not_an_invocation_is_refused():
    with pytest.raises(ValueError):
        runs.parse_invocation('{"RequestId": "r"}')
    finished, found = runs.parse_invocation(
        json.dumps(
            {
                "Invocation": {
                    "InvocationResults": {
                        "InvocationResult": [
                            {"InstanceId": "i-1", "InvokeRecordStatus": "Failed", "ExitCode": 3, "Output": "x"}
                        ]
                    }
                }
            }
        )
    )
    assert finished and found[0].exit_code == 3
