"""aitrain-torchrun --run-dir: the status file each node keeps in the run directory (what `aitrain runs` reads)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

from blueprints.launch import runs
from tests.test_bootstrap_launcher import Node


def registered(tmp_path, *ips: str) -> tuple[Node, object]:
    """A node whose registry holds ``ips``, and an empty run directory."""
    node = Node(tmp_path, expected=len(ips))
    node.register(list(ips))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    return node, run_dir


def status(run_dir) -> dict[str, str]:
    path = run_dir / f"{socket.gethostname()}.status"
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_a_finished_run_records_rank_exit_code_and_times(tmp_path):
    node, run_dir = registered(tmp_path, "10.0.0.4", "10.0.0.5")
    result = node.run("--run-dir", str(run_dir), "--", "python", "train.py", self_ip="10.0.0.5")
    assert result.returncode == 0, result.stderr
    got = status(run_dir)
    assert {k: got[k] for k in ("state", "rank", "nnodes", "ip", "exit", "host")} == {
        "state": "exited",
        "rank": "1",
        "nnodes": "2",
        "ip": "10.0.0.5",
        "exit": "0",
        "host": socket.gethostname(),
    }
    assert got["started"].endswith("Z") and got["finished"].endswith("Z") and int(got["pid"]) > 1
    # torchrun still gets exactly the same arguments.
    assert node.argv()[:3] == ["--nnodes=2:2", "--nproc-per-node=8", "--max-restarts=3"]


def test_a_failing_job_records_its_exit_code_and_the_launcher_returns_it(tmp_path):
    node, run_dir = registered(tmp_path, "10.0.0.4")
    (tmp_path / "bin" / "torchrun").write_text("#!/bin/sh\nexit 3\n")
    result = node.run("--run-dir", str(run_dir), "--", "python", "train.py", self_ip="10.0.0.4")
    assert result.returncode == 3
    assert (status(run_dir)["state"], status(run_dir)["exit"]) == ("exited", "3")


def test_a_refused_start_records_exit_2_and_why(tmp_path):
    node, run_dir = registered(tmp_path, "10.0.0.4")
    result = node.run("--run-dir", str(run_dir), "--", "python", "train.py", self_ip="10.9.9.9")
    assert result.returncode == 2
    got = status(run_dir)
    assert (got["state"], got["exit"]) == ("exited", "2")
    assert got["detail"] == "this node (10.9.9.9) is not among the 1 nodes: 10.0.0.4"


def test_a_signal_to_the_process_group_is_recorded_as_cancelled(tmp_path):
    node, run_dir = registered(tmp_path, "10.0.0.4")
    (tmp_path / "bin" / "torchrun").write_text("#!/bin/sh\nexec /bin/sleep 30\n")
    env = {**node.env, "AITRAIN_SELF_IP": "10.0.0.4"}
    proc = subprocess.Popen(
        [str(node.launcher), "--nnodes", "1", "--run-dir", str(run_dir), "--", "python", "train.py"],
        env=env,
        start_new_session=True,
    )
    try:
        for _ in range(200):
            if (run_dir / f"{socket.gethostname()}.status").exists() and status(run_dir)["state"] == "running":
                break
            time.sleep(0.05)
        got = status(run_dir)
        assert (
            got["state"] == "running" and int(got["pid"]) == proc.pid
        )  # the pid is the process group aitrain cancel signals
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    got = status(run_dir)
    assert (got["state"], got["exit"]) == ("cancelled", str(128 + signal.SIGTERM))
    # What `aitrain runs` makes of it.
    (row,) = runs.parse_listing(
        f"== {run_dir.name}/{socket.gethostname()}.status\n" + (run_dir / f"{socket.gethostname()}.status").read_text()
    )
    assert (row.state, row.exit_code, row.rank) == ("cancelled", 143, 0)
