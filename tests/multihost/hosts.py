"""Training hosts made on this machine: one network namespace per host, wired to a bridge in a switch namespace.

Each host has its own network (``eth0`` with a private 10.x address on one /24; nothing routes out of it, and the
root namespace is not on the bridge, so the traffic stays between the hosts), its own hostname (a UTS namespace),
its own ``/etc/hosts`` naming itself the way a cloud image's does (``ip netns exec`` bind-mounts
``/etc/netns/<namespace>/hosts``) and its own aitrain env dir (``cluster.env``, ``nccl.env`` from the node's user
data). A directory on this machine stands in for the shared file system every node mounts at /mnt/shared.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SUBNET = "10.77.0"  # private, and on no interface of this machine outside the namespaces
PREFIX_LENGTH = 24
ETC_NETNS = Path("/etc/netns")


def cannot_make_namespaces() -> str | None:
    """Why network namespaces cannot be made here (None: they can); the test skips with this reason."""
    if os.geteuid() != 0:
        return f"network namespaces need root (ip netns add); this runs as uid {os.geteuid()}"
    missing = [tool for tool in ("ip", "unshare", "hostname", "setsid") if shutil.which(tool) is None]
    if missing:
        return f"no {', '.join(missing)} on PATH (iproute2 and util-linux make the hosts)"
    probe = f"aitprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` failed here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@dataclass(frozen=True)
class Host:
    """One training host: its namespace, hostname, address and aitrain env dir."""

    namespace: str
    hostname: str
    address: str
    env_dir: Path

    def pids(self) -> list[int]:
        """Every process running in this host's network namespace."""
        out = subprocess.run(["ip", "netns", "pids", self.namespace], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def commands(self) -> list[str]:
        """The command line of every process on this host (what a test waits on)."""
        lines = []
        for pid in self.pids():
            try:
                lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue  # it exited meanwhile
        return lines

    def start(self, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` on this host (its network, hostname and /etc/hosts) and wait for it to return."""
        inside = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', self.hostname, *argv]
        return subprocess.run(
            ["ip", "netns", "exec", self.namespace, *inside], env=env, capture_output=True, text=True, timeout=60
        )

    def kill_everything(self) -> list[int]:
        """SIGKILL every process left on this host, as a host that dies; returns the pids it had to kill."""
        left = self.pids()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        return left


class Hosts:
    """``count`` hosts on one bridge; ``destroy`` removes every namespace, process and file ``create`` made."""

    def __init__(self, root: Path, count: int) -> None:
        tag = f"ait{os.getpid() % 100000}"
        self.switch = f"{tag}-sw"
        self.hosts = [
            Host(f"{tag}-h{i}", f"host{i}", f"{SUBNET}.{10 + i}", root / f"host{i}" / "etc")
            for i in range(1, count + 1)
        ]
        self.made: list[str] = []

    @property
    def cidr(self) -> str:
        return f"{SUBNET}.0/{PREFIX_LENGTH}"

    def create(self) -> None:
        ip("netns", "add", self.switch)
        self.made.append(self.switch)
        ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        ip("-n", self.switch, "link", "set", "br0", "up")
        for number, host in enumerate(self.hosts, start=1):
            ip("netns", "add", host.namespace)
            self.made.append(host.namespace)
            port = f"port{number}"
            ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", host.namespace)
            ip("-n", self.switch, "link", "set", port, "master", "br0", "up")
            ip("-n", host.namespace, "link", "set", "lo", "up")
            ip("-n", host.namespace, "addr", "add", f"{host.address}/{PREFIX_LENGTH}", "dev", "eth0")
            ip("-n", host.namespace, "link", "set", "eth0", "up")
            etc = ETC_NETNS / host.namespace
            etc.mkdir(parents=True, exist_ok=True)
            # As a cloud image's /etc/hosts: the node resolves its own name, not the other nodes' (torchrun needs
            # the first; that it does not get the second is what --local-addr in the launcher is for).
            (etc / "hosts").write_text(f"127.0.0.1 localhost\n{host.address} {host.hostname}\n")
            host.env_dir.mkdir(parents=True, exist_ok=True)

    def destroy(self) -> None:
        for host in self.hosts:
            if host.namespace in self.made:
                host.kill_everything()
        for namespace in reversed(self.made):
            subprocess.run(["ip", "netns", "delete", namespace], capture_output=True)
            shutil.rmtree(ETC_NETNS / namespace, ignore_errors=True)
        self.made.clear()
