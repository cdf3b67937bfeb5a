"""aitrain-torchrun, executed with a fake torchrun and a fake ECS metadata server on localhost: the elastic flags, the
job's run id and checkpoint directory, the rendezvous endpoint kept for a rejoin, and the spot interruption watcher
(IMDSv2 token, SIGTERM to torchrun on a notice, ``<host>.preempted``, nothing on pay-as-you-go's 404)."""

from __future__ import annotations

import http.server
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from blueprints import bootstrap as b
from blueprints.launch import runs
from tests.test_bootstrap import spec
from tests.test_bootstrap_launcher import Node

TOKEN = "tok-123"
NOTICE = "2026-12-01T10:05:00Z"
# torchrun stand-in: records its argv and environment, runs until SIGTERM (recorded) or ~6 s, then exits.
FAKE_TORCHRUN = """#!/bin/sh
for a in "$@"; do printf "%s\\n" "$a"; done > "$ARGV_FILE"
env | grep -E "^(AITRAIN_RUN_ID|AITRAIN_CHECKPOINT_DIR|TORCH_ELASTIC_SHUTDOWN_TIMEOUT)=" | sort > "$ARGV_FILE.env"
trap 'echo TERM > "$ARGV_FILE.signal"; exit 143' TERM
i=0; while [ $i -lt ${TICKS:-60} ]; do /bin/sleep 0.1; i=$((i + 1)); done
"""


class Metadata(http.server.BaseHTTPRequestHandler):
    """ECS metadata in security hardening mode: a token for a PUT with the TTL header; reads need that token."""

    notice: str | None = None  # the termination-time body; None: 404, as on a pay-as-you-go node
    seen: list[tuple[str, str, dict[str, str]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, code: int, body: str = "") -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self) -> None:
        self.seen.append(("PUT", self.path, dict(self.headers)))
        if self.path == "/latest/api/token" and self.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds"):
            self._answer(200, TOKEN)
        else:
            self._answer(400)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, dict(self.headers)))
        if self.headers.get("X-aliyun-ecs-metadata-token") != TOKEN:
            self._answer(401)
        elif self.path != "/latest/meta-data/instance/spot/termination-time" or self.notice is None:
            self._answer(404)
        else:
            self._answer(200, self.notice)


@pytest.fixture
def metadata() -> Iterator[tuple[str, type[Metadata]]]:
    handler = type("Handler", (Metadata,), {"notice": None, "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def node_with_torchrun(tmp_path: Path) -> Node:
    node = Node(tmp_path, expected=2)
    node.register(["10.0.0.4", "10.0.0.5"])
    (tmp_path / "bin" / "torchrun").write_text(FAKE_TORCHRUN)
    (tmp_path / "bin" / "sleep").unlink()  # the watcher's poll uses the real sleep
    return node


def launch(node: Node, run_dir: Path, host: str, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    return node.run(
        "--run-dir", str(run_dir), *extra, "--", "python", "train.py", self_ip="10.0.0.5", AITRAIN_METADATA_HOST=host,
        AITRAIN_SPOT_WATCH="on", AITRAIN_SPOT_POLL_SECONDS="0.2", **env,
    )  # fmt: skip


def status(run_dir: Path) -> dict[str, str]:
    text = (run_dir / f"{socket.gethostname()}.status").read_text()
    return dict(line.split("=", 1) for line in text.splitlines())


def test_elastic_flags_run_id_and_checkpoint_dir(tmp_path, metadata):
    host, _ = metadata
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "r1"
    run_dir.mkdir(parents=True)
    ckpt = tmp_path / "ckpt" / "r1"
    done = launch(
        node, run_dir, host, "--run-id", "r1", "--max-restarts", "5", "--checkpoint-dir", str(ckpt), TICKS="1"
    )
    assert done.returncode == 0, done.stderr
    assert node.argv() == [
        "--nnodes=2:2",
        "--nproc-per-node=8",
        "--max-restarts=5",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=10.0.0.4:29400",
        "--rdzv-id=medical-imaging-r1",
        "train.py",
    ]
    assert not [a for a in node.argv() if a.startswith("--node-rank")]
    env = (tmp_path / "argv.env").read_text().splitlines()
    assert env == [f"AITRAIN_CHECKPOINT_DIR={ckpt}", "AITRAIN_RUN_ID=r1", "TORCH_ELASTIC_SHUTDOWN_TIMEOUT=120"]
    assert ckpt.is_dir()  # made by the launcher (as the job user, on a node)
    got = status(run_dir)
    assert (got["state"], got["exit"], got["max_restarts"]) == ("exited", "0", "5")


def test_defaults_run_id_from_the_run_dir_and_checkpoints_on_the_share(tmp_path, metadata):
    host, _ = metadata
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "20261201T093000Z"
    run_dir.mkdir(parents=True)
    done = launch(node, run_dir, host, TICKS="1")
    assert done.returncode == 0, done.stderr
    assert "--rdzv-id=medical-imaging-20261201T093000Z" in node.argv() and "--max-restarts=3" in node.argv()
    ckpt = node.shared / ".aitrain" / "checkpoints" / "20261201T093000Z"
    assert f"AITRAIN_CHECKPOINT_DIR={ckpt}" in (tmp_path / "argv.env").read_text() and ckpt.is_dir()


def test_the_recorded_endpoint_is_kept_when_a_lower_address_joins(tmp_path, metadata):
    host, _ = metadata
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    assert launch(node, run_dir, host, TICKS="1").returncode == 0
    assert (run_dir / "rendezvous").read_text() == "endpoint=10.0.0.4\n"
    # 10.0.0.5 was replaced by 10.0.0.2, which sorts first: while 10.0.0.4 is listed, the newcomer meets the others
    # at the recorded endpoint, not at itself.
    rejoin = ("--run-dir", str(run_dir), "--hosts", "10.0.0.2,10.0.0.4", "--", "python", "t.py")
    done = node.run(*rejoin, self_ip="10.0.0.2", TICKS="1")
    assert done.returncode == 0, done.stderr
    assert "--rdzv-endpoint=10.0.0.4:29400" in node.argv()
    # The endpoint host itself is gone (the run stopped with it): the next start records the new first host.
    done = node.run(*rejoin[:3], "10.0.0.2,10.0.0.5", *rejoin[4:], self_ip="10.0.0.2", TICKS="1")
    assert done.returncode == 0, done.stderr
    assert "--rdzv-endpoint=10.0.0.2:29400" in node.argv()
    assert (run_dir / "rendezvous").read_text() == "endpoint=10.0.0.2\n"


def test_a_second_start_of_a_live_run_is_a_no_op(tmp_path, metadata):
    host, _ = metadata
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    first = subprocess.Popen(
        [str(node.launcher), "--nnodes", "2", "--run-dir", str(run_dir), "--", "python", "train.py"],
        env={**node.env, "AITRAIN_SELF_IP": "10.0.0.5", "AITRAIN_METADATA_HOST": host, "TICKS": "100"},
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(100):
            if (run_dir / f"{socket.gethostname()}.status").exists() and status(run_dir)["state"] == "running":
                break
            time.sleep(0.05)
        node.argv_file.unlink()
        again = launch(node, run_dir, host)
        assert again.returncode == 0 and "already running on this node" in again.stderr
        assert not node.argv_file.exists() and status(run_dir)["state"] == "running"
    finally:
        first.terminate()
        first.wait(timeout=20)


def test_a_spot_notice_sigterms_torchrun_and_marks_the_node_preempted(tmp_path, metadata):
    host, handler = metadata
    handler.notice = NOTICE
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    started = time.monotonic()
    done = launch(node, run_dir, host, TICKS="100")
    assert time.monotonic() - started < 8
    assert done.returncode == 143, done.stderr
    assert (tmp_path / "argv.signal").read_text() == "TERM\n"
    assert f"spot interruption notice: this node is released at {NOTICE}" in done.stderr
    preempted = dict(line.split("=", 1) for line in (run_dir / f"{socket.gethostname()}.preempted").read_text().split())
    assert preempted["termination_time"] == NOTICE and preempted["signal"] == "SIGTERM"
    assert (status(run_dir)["state"], status(run_dir)["exit"]) == ("preempted", "143")
    listing = f"== r/{socket.gethostname()}.status\n" + (run_dir / f"{socket.gethostname()}.status").read_text()
    assert runs.run_summary(runs.parse_listing(listing)) == "preempted"  # what `aitrain runs` shows
    # IMDSv2: a PUT for the token with its TTL header, then the read with the token.
    puts = [s for s in handler.seen if s[0] == "PUT"]
    gets = [s for s in handler.seen if s[0] == "GET"]
    assert puts and puts[0][1] == "/latest/api/token"
    assert puts[0][2]["X-aliyun-ecs-metadata-token-ttl-seconds"] == "300"
    assert gets and gets[-1][1] == "/latest/meta-data/instance/spot/termination-time"
    assert gets[-1][2]["X-aliyun-ecs-metadata-token"] == TOKEN


@pytest.mark.parametrize("body", [None, "<html>maintenance</html>"])
def test_no_notice_or_a_body_that_is_not_a_time_leaves_the_job_alone(tmp_path, metadata, body):
    host, handler = metadata
    handler.notice = body
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    started = time.monotonic()
    done = launch(node, run_dir, host, TICKS="15")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 6  # the watcher ends with the job; nothing lingers on the log
    assert not (tmp_path / "argv.signal").exists() and not (run_dir / f"{socket.gethostname()}.preempted").exists()
    assert status(run_dir)["state"] == "exited"
    assert len([s for s in handler.seen if s[0] == "GET"]) >= 2  # it polled
    if body is None:  # a 404 keeps the token: one PUT, reused while the metadata server accepts it
        assert len([s for s in handler.seen if s[0] == "PUT"]) == 1


def test_no_metadata_server_is_no_notice(tmp_path):
    node = node_with_torchrun(tmp_path)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    done = launch(node, run_dir, closed, TICKS="10")
    assert done.returncode == 0 and status(run_dir)["state"] == "exited"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-restarts", "-1"], "--max-restarts: '-1' is not allowed"),
        (["--max-restarts", "three"], "--max-restarts: 'three' is not allowed"),
        (["--run-id", "../x"], "--run-id: '../x' is not allowed"),
    ],
)
def test_bad_elastic_options_are_exit_2(tmp_path, args, message):
    node = node_with_torchrun(tmp_path)
    done = node.run(*args, "--", "python", "t.py", self_ip="10.0.0.5")
    assert done.returncode == 2 and message in done.stderr and not node.argv_file.exists()


def test_rendered_launcher_carries_the_elastic_flags_and_the_token_header():
    script = b.code_only(b.render_launcher(spec()))
    assert '--nnodes="$want:$want"' in script and '--max-restarts="$MR"' in script and "--node-rank" not in script
    assert '--rdzv-id="$AITRAIN_CLUSTER-$RID"' in script
    assert '-X PUT "$m/api/token" -H "X-aliyun-ecs-metadata-token-ttl-seconds: 300"' in script
    assert '-H "X-aliyun-ecs-metadata-token: $k" "$m/meta-data/instance/spot/termination-time"' in script
    assert f"AITRAIN_METADATA_HOST:-{b.METADATA_HOST}" in script
    assert f"MR={b.DEFAULT_MAX_RESTARTS}" in script
