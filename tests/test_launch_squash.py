"""The launch line under root_squash, executed by a real shell: only the job user touches the share."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import time

from blueprints.launch import torchrun as lc
from tests.test_launch import LINE, RUN, fixed_outputs

# Records who runs what (its options), then runs it; the job's view of the share is what setpriv was asked for.
FAKE_SETPRIV = (
    '#!/bin/sh\nopts=; while [ "${1#--}" != "$1" ]; do opts="$opts '
    '$1"; shift; done\necho "setpriv$opts: $1 $2" >>"$LOG"\nexec "$@"\n'
)
FAKE_LAUNCHER = '#!/bin/sh\nprintf "%s\\n" "$@" >"$ARGS"\necho "HOME=$HOME USER=$USER"\necho started\n'


def test_only_the_job_user_writes_on_the_share():
    outputs = lc.parse_outputs(fixed_outputs(2), "o", ["fixed-cluster"])
    line = lc.plan_launch(outputs, lc.Via.cloud_assistant, RUN, ["python", "train.py"]).line
    assert line == LINE.format(run=RUN, hosts=" --hosts 10.20.0.11,10.20.0.12", cmd="python train.py")
    root_part, job_part = line.split("; ", 1)
    # What root does itself: raise the locked-memory limit (RDMA) that setpriv passes on. Nothing on the share.
    assert root_part == "ulimit -l unlimited 2>/dev/null" and "/mnt/shared" not in root_part
    words = shlex.split(job_part)
    assert (
        words[:4] == ["setpriv", f"--reuid={lc.JOB_UID}", f"--regid={lc.JOB_UID}", "--init-groups"]
        and lc.JOB_UID == 2000
    )
    # Every redirection and mkdir happens inside the job user's shell, none in root's.
    assert ">" not in job_part.replace(lc.JOB_SHELL, "").replace(shlex.quote(lc.JOB_SHELL), "")


def test_the_line_runs_the_launcher_detached_with_its_log_in_the_run_directory(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "setpriv").write_text(FAKE_SETPRIV)
    launcher = tmp_path / "aitrain-torchrun"
    launcher.write_text(FAKE_LAUNCHER)
    for exe in (bin_dir / "setpriv", launcher):
        exe.chmod(0o755)
    share = tmp_path / "shared"
    share.mkdir()
    outputs = lc.parse_outputs(
        fixed_outputs(1, launcher=str(launcher), shared_mount_path=str(share)), "o", ["fixed-cluster"]
    )
    line = lc.plan_launch(outputs, lc.Via.cloud_assistant, RUN, ["python", "train.py", "it's"]).line
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "LOG": str(tmp_path / "log"), "ARGS": str(tmp_path / "args")}
    done = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    run_dir = share / ".aitrain" / "runs" / RUN
    log = run_dir / f"{socket.gethostname()}.log"
    for _ in range(100):
        if log.exists() and "started" in log.read_text():
            break
        time.sleep(0.05)
    assert "HOME=/home/aitrain USER=aitrain" in log.read_text()
    assert (tmp_path / "log").read_text() == "setpriv --reuid=2000 --regid=2000 --init-groups: sh -c\n"
    assert (tmp_path / "args").read_text().splitlines() == [
        "--run-dir",
        str(run_dir),
        "--run-id",
        RUN,
        "--max-restarts",
        "3",
        "--checkpoint-dir",
        str(share / ".aitrain" / "checkpoints" / RUN),
        "--hosts",
        "10.20.0.11",
        "--",
        "python",
        "train.py",
        "it's",
    ]


def test_a_run_directory_the_job_user_cannot_create_fails_the_call(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "setpriv").write_text(FAKE_SETPRIV)
    (bin_dir / "setpriv").chmod(0o755)
    blocker = tmp_path / "shared"
    blocker.write_text("not a directory")  # mkdir -p fails under it, as on a share root that refuses uid 2000
    outputs = lc.parse_outputs(fixed_outputs(1, shared_mount_path=str(blocker)), "o", ["fixed-cluster"])
    line = lc.plan_launch(outputs, lc.Via.cloud_assistant, RUN, ["python", "train.py"]).line
    done = subprocess.run(
        ["sh", "-c", line],
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "LOG": str(tmp_path / "log")},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "mkdir" in done.stderr
