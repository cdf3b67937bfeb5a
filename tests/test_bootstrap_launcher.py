"""aitrain-torchrun, executed: fake torchrun and sleep on PATH, a fake registry, exact argv for 1, 2 and 12 nodes."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from blueprints import bootstrap as b
from tests.test_bootstrap import files, spec

FAKE_TORCHRUN = '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$ARGV_FILE"\n'
# The fake sleep records each call; when LATE_IP is set, the first call "boots" the missing node into the registry.
FAKE_SLEEP = """#!/bin/sh
echo "$1" >> "$SLEEP_LOG"
if [ -n "${LATE_IP:-}" ]; then echo "$LATE_IP" > "$REGISTRY/i-late"; fi
"""


class Node:
    """One node's view: the rendered launcher, its env dir (cluster.env + nccl.env from the user data), a registry."""

    def __init__(self, tmp: Path, expected: int | None = 12) -> None:
        # How many nodes the run expects: what `aitrain launch` passes as --nnodes (None: the registry's count).
        self.expected = expected
        s = spec()
        self.tmp = tmp
        self.registry = tmp / "hosts"
        self.registry.mkdir()
        env_dir = tmp / "etc"
        env_dir.mkdir()
        written = files(yaml.safe_load(b.render_user_data(s)))
        self.shared = tmp / "shared"
        cluster_env = written["/etc/aitrain/cluster.env"].replace(b.REGISTRY_DIR, str(self.registry))
        assert f"AITRAIN_MOUNT_PATH={b.SHARED_MOUNT}\n" in cluster_env
        cluster_env = cluster_env.replace(
            f"AITRAIN_MOUNT_PATH={b.SHARED_MOUNT}\n", f"AITRAIN_MOUNT_PATH={self.shared}\n"
        )
        (env_dir / "cluster.env").write_text(cluster_env)
        (env_dir / "nccl.env").write_text(written["/etc/aitrain/nccl.env"])
        self.status = env_dir / "status"
        self.status.write_text("state=ready\ndriver=550.127.08\n")
        self.launcher = tmp / "aitrain-torchrun"
        self.launcher.write_text(written[b.LAUNCHER_PATH])
        self.launcher.chmod(0o755)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for name, text in (("torchrun", FAKE_TORCHRUN), ("sleep", FAKE_SLEEP)):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        self.argv_file = tmp / "argv"
        self.sleep_log = tmp / "sleeps"
        self.env = {
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "AITRAIN_ENV_DIR": str(env_dir),
            "ARGV_FILE": str(self.argv_file),
            "SLEEP_LOG": str(self.sleep_log),
            "REGISTRY": str(self.registry),
            # The spot watcher has its own tests (tests/test_launcher_spot.py); here it would poll with the fake sleep.
            "AITRAIN_SPOT_WATCH": "off",
        }

    def register(self, ips: list[str]) -> None:
        for i, ip in enumerate(ips):
            (self.registry / f"i-{i:03d}").write_text(ip + "\n")

    def run(self, *args: str, self_ip: str, **env: str) -> subprocess.CompletedProcess[str]:
        if self.expected is not None and "--nnodes" not in args and "--hosts" not in args:
            args = ("--nnodes", str(self.expected), *args)
        return subprocess.run(
            [str(self.launcher), *args],
            env={**self.env, "AITRAIN_SELF_IP": self_ip, **env},
            capture_output=True,
            text=True,
            timeout=30,
        )

    def argv(self) -> list[str]:
        return self.argv_file.read_text().splitlines()

    def sleeps(self) -> int:
        return len(self.sleep_log.read_text().splitlines()) if self.sleep_log.exists() else 0


def ips(n: int) -> list[str]:
    # Deliberately not in text order: 10.0.0.10 must sort after 10.0.0.9.
    return [f"10.0.{i // 100}.{i % 100 + 2}" for i in range(n)][::-1]


def head(n: int, rank: int, endpoint: str, *, restarts: int = 3, run_id: str = "default") -> list[str]:
    """torchrun's flags: fault tolerant at a fixed size (n:n), no --node-rank (c10d assigns it; ``rank`` is unused)."""
    del rank
    return [
        f"--nnodes={n}:{n}",
        "--nproc-per-node=8",
        f"--max-restarts={restarts}",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={endpoint}:29400",
        f"--rdzv-id=medical-imaging-{run_id}",
    ]


@pytest.mark.parametrize("n", [1, 2, 12])
def test_registry_gives_count_rank_and_endpoint(tmp_path, n):
    node = Node(tmp_path, expected=n)
    hosts = ips(n)
    node.register(hosts)
    me = "10.0.0.2" if n == 1 else "10.0.0.3"
    run = node.run("--", "python", "train.py", "--epochs", "3", self_ip=me)
    assert run.returncode == 0, run.stderr
    rank = 0 if n == 1 else 1
    assert node.argv() == head(n, rank, "10.0.0.2") + ["train.py", "--epochs", "3"]
    assert f"aitrain-torchrun: exec torchrun {' '.join(node.argv())}" in run.stderr
    assert node.sleeps() == 0


def test_numeric_ip_order_not_text_order(tmp_path):
    node = Node(tmp_path, expected=12)
    node.register(ips(12))
    run = node.run("--", "python3", "train.py", self_ip="10.0.0.10")
    assert run.returncode == 0, run.stderr
    assert node.argv()[:6] == head(12, 8, "10.0.0.2")


def test_python_module_and_other_commands(tmp_path):
    node = Node(tmp_path, expected=2)
    node.register(["10.0.0.5", "10.0.0.4"])
    assert node.run("--", "python", "-m", "pkg.train", "x", self_ip="10.0.0.5").returncode == 0
    assert node.argv() == head(2, 1, "10.0.0.4") + ["-m", "pkg.train", "x"]
    assert node.run("--", "bash", "run.sh", "a b", self_ip="10.0.0.4").returncode == 0
    assert node.argv() == head(2, 0, "10.0.0.4") + ["--no-python", "bash", "run.sh", "a b"]


def test_nccl_env_is_exported_to_torchrun(tmp_path):
    node = Node(tmp_path, expected=1)
    node.register(["10.0.0.2"])
    torchrun = tmp_path / "bin" / "torchrun"
    torchrun.write_text('#!/bin/sh\nenv | grep -E "^(NCCL|AITRAIN)_" | sort > "$ARGV_FILE"\n')
    assert node.run("--", "python", "t.py", self_ip="10.0.0.2").returncode == 0
    seen = node.argv()
    assert "NCCL_IB_GID_INDEX=1" in seen and "NCCL_SOCKET_IFNAME=eth0" in seen and "AITRAIN_FABRIC=erdma" in seen


def test_hosts_option_overrides_the_registry_and_nnodes_the_expected_count(tmp_path):
    node = Node(tmp_path, expected=12)
    node.register(["10.9.9.9"])
    run = node.run("--hosts", "10.0.1.7,10.0.0.200", "--nnodes", "2", "--", "python", "train.py", self_ip="10.0.1.7")
    assert run.returncode == 0, run.stderr
    assert node.argv() == head(2, 1, "10.0.0.200") + ["train.py"]


def test_pool_without_expected_count_uses_the_registry_count(tmp_path):
    node = Node(tmp_path, expected=None)
    node.register(["10.0.0.2", "10.0.0.3", "10.0.0.4"])
    assert node.run("--", "python", "train.py", self_ip="10.0.0.4").returncode == 0
    assert node.argv()[:6] == head(3, 2, "10.0.0.2")


def test_a_node_that_boots_late_is_waited_for(tmp_path):
    node = Node(tmp_path, expected=12)
    hosts = ips(12)
    node.register(hosts[:-1])  # 11 of 12 registered; the fake sleep registers the last one
    run = node.run("--", "python", "train.py", self_ip="10.0.0.5", LATE_IP=hosts[-1])
    assert run.returncode == 0, run.stderr
    assert node.sleeps() == 1
    assert "11 of 12 nodes registered, waiting" in run.stderr
    assert node.argv() == head(12, 3, "10.0.0.2") + ["train.py"]


def test_timeout_is_exit_2_with_the_count(tmp_path):
    node = Node(tmp_path, expected=12)
    node.register(ips(12)[:5])
    run = node.run("--", "python", "train.py", self_ip="10.0.0.2", AITRAIN_WAIT_SECONDS="10")
    assert run.returncode == 2
    assert f"timed out after 10s: 5 of 12 nodes registered in {node.registry}" in run.stderr
    assert node.sleeps() == 2 and not node.argv_file.exists()


def test_self_not_in_the_list_is_exit_2(tmp_path):
    node = Node(tmp_path, expected=2)
    node.register(["10.0.0.2", "10.0.0.3"])
    run = node.run("--", "python", "train.py", self_ip="10.0.0.99")
    assert run.returncode == 2
    assert "this node (10.0.0.99) is not among the 2 nodes: 10.0.0.2,10.0.0.3" in run.stderr
    assert not node.argv_file.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no command"),
        (["--"], "no command"),
        (["--", "python"], "python needs a script or -m MODULE"),
        (["--", "python", "-u", "train.py"], "python option '-u' is not supported"),
        (["--nnodes", "zero", "--", "python", "t.py"], "--nnodes: 'zero' is not allowed"),
        (["--hosts"], "--hosts needs a value"),
        (["--gpus", "4", "--", "python", "t.py"], "unknown option '--gpus'"),
        (
            ["--hosts", "10.0.0.2", "--nnodes", "2", "--", "python", "t.py"],
            "--hosts lists 1 node(s) but 2 are expected",
        ),
    ],
)
def test_bad_invocations_are_exit_2_with_one_message(tmp_path, args, message):
    node = Node(tmp_path, expected=1)
    node.register(["10.0.0.2"])
    run = node.run(*args, self_ip="10.0.0.2")
    assert run.returncode == 2
    assert message in run.stderr and run.stderr.count("aitrain-torchrun:") == 1
    assert not node.argv_file.exists()


def test_missing_cluster_env_is_exit_2(tmp_path):
    node = Node(tmp_path)
    run = node.run("--", "python", "t.py", self_ip="10.0.0.2", AITRAIN_ENV_DIR=str(tmp_path / "nowhere"))
    assert run.returncode == 2 and "missing" in run.stderr and "cluster.env" in run.stderr


def test_launcher_is_the_one_in_the_user_data():
    s = spec()
    shipped = files(yaml.safe_load(b.render_user_data(s)))[b.LAUNCHER_PATH]
    assert shipped == b.code_only(b.render_launcher(s))
    # The node gets the code and the header (what it is, usage); the comments stay in the template.
    assert shipped.splitlines()[:3] == b.render_launcher(s).splitlines()[:3] and shipped.splitlines()[2].startswith(
        "# Usage: aitrain-torchrun"
    )
    assert not [line for line in shipped.splitlines()[4:] if line.lstrip().startswith("#")]
    assert b.render_launcher(replace(s, cluster="other")) != b.render_launcher(s)


@pytest.mark.parametrize(
    "status, message",
    [
        (None, "has no {env}/status yet: it is still booting (the driver install takes 10-20 minutes and a reboot)"),
        (
            "state=installing\ndetail=auto-install running\n",
            "this node is not ready: state=installing detail=auto-install running",
        ),
        ("state=failed\ndetail=nvidia-smi failed\n", "this node is not ready: state=failed detail=nvidia-smi failed"),
    ],
)
def test_a_node_that_is_not_ready_refuses_to_join(tmp_path, status, message):
    node = Node(tmp_path, expected=2)
    node.register(ips(2))
    if status is None:
        node.status.unlink()
    else:
        node.status.write_text(status)
    result = node.run("--", "python", "train.py", self_ip=ips(2)[0])
    assert result.returncode == 2 and not node.argv_file.exists()
    assert message.format(env=node.env["AITRAIN_ENV_DIR"]) in result.stderr
