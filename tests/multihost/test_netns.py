"""The rendered aitrain-torchrun, run for real on three hosts made as network namespaces (tests/multihost/hosts.py),
with PyTorch's CPU build and gloo: a tiny model trains and checkpoints, one host is killed mid-run and comes back,
and the run resumes from its last checkpoint at the same world size; then the health gate's all-reduce check runs on
the same hosts.

Each host starts the launcher as `aitrain launch` does on a node (blueprints.launch.torchrun.JOB_SHELL: setsid,
``<run-dir>/<hostname>.log``, ``--run-dir`` and ``--hosts``), from the files the node's user data writes. Needs root
(``ip netns``) and torch in this Python: ``make multihost`` installs torch==2.13.0 and runs it; plain ``pytest``
deselects it (marker ``multihost``, pyproject addopts).
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.health.commands import ALLREDUCE_SCRIPT, ALLREDUCE_SIZE
from blueprints.health.thresholds import Threshold
from blueprints.health.verdict import allreduce_result, judge_allreduce
from blueprints.launch.torchrun import JOB_SHELL
from tests.multihost.hosts import Host, Hosts, cannot_make_namespaces

pytestmark = pytest.mark.multihost

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "tests" / "multihost" / "train_tiny.py"
STEPS, EVERY, STEP_SECONDS = 300, 50, 0.05
START = re.compile(r"^train_tiny: start step=(\d+) world_size=(\d+) restart=(\d+) .*host=(\S+)$", re.M)
CHECKPOINT = re.compile(r"^train_tiny: checkpoint step=(\d+) ", re.M)
DONE = re.compile(r"^train_tiny: done step=(\d+) world_size=(\d+) loss=\S+ params=(\w+) .*host=(\S+)$", re.M)


def spec(cidr: str) -> b.BootSpec:
    """A CPU cluster of one process per node: no GPU software (so no ready check), TCP, hosts checked against the
    hosts' subnet like a real cluster's compute vSwitches."""
    return b.BootSpec(
        cluster="netns",
        region="cn-hangzhou",
        gpus_per_node=1,
        storage_kind="nas",
        mount_source="0a1b2c3d4e-abc12.cn-hangzhou.nas.aliyuncs.com:/",
        mount_options="vers=3,nolock,proto=tcp",
        nfs_package="nfs-common",
        gpu=b.GpuSoftware(
            method="none", driver_version=None, cuda_version=None, cudnn_version=None, fabric_manager=False
        ),
        fabric=b.Fabric(link="tcp"),
        scratch_gib=0,
        scratch_local_nvme=False,
        bucket="netns-datasets",
        role_name="netns-node",
        registry_cidrs=(cidr,),
    )


@dataclass
class Cluster:
    """The hosts with a node's files: the launcher and, per host, cluster.env/nccl.env pointing at the shared dir."""

    hosts: list[Host]
    shared: Path
    launcher: Path

    def env(self, host: Host) -> dict[str, str]:
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "AITRAIN_ENV_DIR": str(host.env_dir),
            "AITRAIN_SPOT_WATCH": "off",  # no instance metadata service inside the namespaces
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
        }

    def run_dir(self, run_id: str) -> Path:
        return self.shared / ".aitrain" / "runs" / run_id

    def register(self) -> None:
        """Each host's entry in the host registry on the share, as ``aitrain-node register`` writes it at boot."""
        registry = self.shared / ".aitrain" / "hosts"
        registry.mkdir(parents=True, exist_ok=True)
        for host in self.hosts:
            (registry / f"i-{host.hostname}").write_text(host.address + "\n")

    def launch(self, host: Host, run_id: str, command: list[str], *, registry: bool = False) -> None:
        """Start the launcher on ``host`` in the background, as `aitrain launch`'s node line does: the nodes from
        ``--hosts`` (a fixed cluster's outputs), or with ``registry`` from the host registry and ``--nnodes``."""
        rd = str(self.run_dir(run_id))
        nodes = ["--nnodes", str(len(self.hosts))] if registry else ["--hosts", ",".join(h.address for h in self.hosts)]
        argv = ["sh", "-c", JOB_SHELL, "sh", rd, str(self.launcher), "--run-dir", rd, *nodes, "--", *command]
        done = host.start(argv, self.env(host))
        assert done.returncode == 0, f"{host.hostname}: {done.stderr}"

    def status(self, host: Host, run_id: str) -> dict[str, str]:
        path = self.run_dir(run_id) / f"{host.hostname}.status"
        text = path.read_text() if path.exists() else ""
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def log(self, host: Host, run_id: str) -> str:
        path = self.run_dir(run_id) / f"{host.hostname}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self, run_id: str) -> str:
        """Every host's log tail, for an assertion message."""
        return "\n".join(
            f"--- {h.hostname}.log\n" + "\n".join(self.log(h, run_id).splitlines()[-40:]) for h in self.hosts
        )

    def wait_finished(self, run_id: str, seconds: float) -> dict[str, dict[str, str]]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            states = {h.hostname: self.status(h, run_id) for h in self.hosts}
            if all(s.get("state") in ("exited", "cancelled", "preempted") for s in states.values()):
                return states
            time.sleep(0.5)
        raise AssertionError(f"run {run_id} not finished after {seconds:.0f}s: {states}\n{self.logs(run_id)}")


def wait_until(what: str, seconds: float, check: Callable[[], object], cluster: Cluster, run_id: str) -> object:
    """Poll ``check`` until it returns something true; fail with every host's log after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {seconds:.0f}s\n{cluster.logs(run_id)}")


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def workers(host: Host) -> list[str]:
    """The training processes on a host (torchrun's workers, not the agent, whose command line also names it)."""
    return [c for c in host.commands() if "train_tiny.py" in c and "torchrun" not in c]


@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory) -> Cluster:
    if importlib.util.find_spec("torch") is None:
        pytest.skip(f"torch is not installed in {sys.executable}: `make multihost` installs torch==2.13.0 first")
    reason = cannot_make_namespaces()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("multihost")
    made = Hosts(root, 3)
    request.addfinalizer(made.destroy)  # before create: a half-made set of namespaces is removed too
    made.create()
    shared = root / "shared"  # stands in for the NAS mount every node has at /mnt/shared
    written = {f["path"]: f["content"] for f in yaml.safe_load(b.render_user_data(spec(made.cidr)))["write_files"]}
    launcher = root / "aitrain-torchrun"
    launcher.write_text(written[b.LAUNCHER_PATH])
    launcher.chmod(0o755)
    for host in made.hosts:
        (host.env_dir / "cluster.env").write_text(
            written[f"{b.ENV_DIR}/cluster.env"].replace(b.SHARED_MOUNT, str(shared))
        )
        (host.env_dir / "nccl.env").write_text(written[f"{b.ENV_DIR}/nccl.env"])
    return Cluster(made.hosts, shared, launcher)


def test_a_killed_host_comes_back_and_the_run_resumes_from_its_last_checkpoint(cluster):
    run_id = "tiny-resume"
    command = ["python", str(TRAIN), "--steps", str(STEPS), "--checkpoint-every", str(EVERY)]
    command += ["--step-seconds", str(STEP_SECONDS)]
    checkpoints = cluster.shared / ".aitrain" / "checkpoints" / run_id
    began = time.monotonic()
    for host in cluster.hosts:
        cluster.launch(host, run_id, command)
    wait_until("a first checkpoint", 120, lambda: list(checkpoints.glob("step-*.pt")), cluster, run_id)

    # The host to kill is not the rendezvous host (the first address): torchrun's c10d store lives there, and losing
    # it stops the run on every node (`aitrain launch --resume` is the way back from that, not --max-restarts).
    victim, survivors = cluster.hosts[2], cluster.hosts[:2]
    group = int(cluster.status(victim, run_id)["pid"])
    survivor_launchers = {h.hostname: cluster.status(h, run_id)["pid"] for h in survivors}
    os.killpg(group, signal.SIGKILL)  # the launcher's process group: the launcher and torchrun's agent
    wait_until("the process group gone", 10, lambda: not group_alive(group), cluster, run_id)
    # torchrun starts each worker in a session of its own (torch/distributed/elastic/multiprocessing/
    # subprocess_handler: start_new_session=True), so the worker outlives its agent's group; the host dying takes it.
    orphans = workers(victim)
    assert len(orphans) == 1 and len(victim.pids()) == 1, victim.commands()
    victim.kill_everything()
    assert victim.pids() == []
    # The others see the all-reduce fail, their agents stop their workers and wait in the rendezvous for 3 nodes.
    wait_until("the survivors' workers stopping", 120, lambda: not any(workers(h) for h in survivors), cluster, run_id)
    last = max(int(p.name[5:11]) for p in checkpoints.glob("step-*.pt"))
    cluster.launch(victim, run_id, command)  # the host is back: its launcher runs again
    states = cluster.wait_finished(run_id, 300)
    wall = time.monotonic() - began

    assert {h: (s["state"], s.get("exit")) for h, s in states.items()} == {
        h.hostname: ("exited", "0") for h in cluster.hosts
    }, cluster.logs(run_id)
    starts = {h.hostname: START.findall(cluster.log(h, run_id)) for h in cluster.hosts}
    # Every host: a start at step 0 in a world of 3, then a start at the last checkpoint's step, still 3.
    for host in cluster.hosts:
        (first_step, first_world, _, _), (step, world, _, name) = starts[host.hostname]
        assert (first_step, first_world, step, world, name) == ("0", "3", str(last), "3", host.hostname), starts
    # The survivors' own agents restarted their workers (the same launchers ran to the end); the victim's is a new
    # agent, restart count 0. A survivor's count is 1 when its worker failed on the lost peer, or 0 when the other
    # survivor's agent rejoined the rendezvous first: torchrun restarts a healthy group on "new nodes waiting" and
    # "membership changes do not count as retries" (torch/distributed/elastic/agent/server/api.py, _invoke_run). Which
    # comes first is a race; that at least one survivor failed is not, since nothing else ends the first round.
    assert {h.hostname: states[h.hostname]["pid"] for h in survivors} == survivor_launchers, states
    restarts = {name: found[1][2] for name, found in starts.items()}
    assert restarts[victim.hostname] == "0", starts
    assert {restarts[h.hostname] for h in survivors} <= {"0", "1"}, starts
    assert "1" in {restarts[h.hostname] for h in survivors}, starts
    assert 0 < last < STEPS
    done = [DONE.findall(cluster.log(h, run_id)) for h in cluster.hosts]
    assert all(len(d) == 1 and d[0][:2] == (str(STEPS), "3") for d in done), done
    assert len({d[0][2] for d in done}) == 1, f"parameters differ between hosts: {done}"
    saved = [int(s) for h in cluster.hosts for s in CHECKPOINT.findall(cluster.log(h, run_id))]
    assert sorted(saved) == sorted(set(saved)) and max(saved) == STEPS and last in saved
    print(
        f"\nmultihost: hosts {', '.join(f'{h.hostname}={h.address}' for h in cluster.hosts)}; {STEPS} steps, "
        f"checkpoint every {EVERY}; killed {victim.hostname} (process group {group}, then {len(orphans)} "
        f"orphaned worker(s)); resumed from step {last} at world size 3; checkpoints {sorted(saved)}; "
        f"wall {wall:.1f}s"
    )


def test_the_health_gate_allreduce_runs_under_the_launcher(cluster):
    """The gate's cross-node check as `aitrain check` runs it (its script, its quick-suite size, gloo on CPU nodes),
    judged by the gate's own verdict; these hosts have no catalog row, so there is no threshold to hold it to."""
    run_id = "health-allreduce"
    size_mb, iters = ALLREDUCE_SIZE["quick"]
    command = ["python", str(ALLREDUCE_SCRIPT), "--backend", "gloo", "--size-mb", str(size_mb), "--iters", str(iters)]
    cluster.register()  # this run finds the nodes as a pool's does: in the registry, with --nnodes
    for host in cluster.hosts:
        cluster.launch(host, run_id, [*command, "--json"], registry=True)
    states = cluster.wait_finished(run_id, 300)
    assert {h: (s["state"], s.get("exit")) for h, s in states.items()} == {
        h.hostname: ("exited", "0") for h in cluster.hosts
    }, cluster.logs(run_id)
    results = [allreduce_result(cluster.log(h, run_id)) for h in cluster.hosts]
    found = [r for r in results if r is not None]
    assert len(found) == 1, f"rank 0 alone prints the result: {results}\n{cluster.logs(run_id)}"
    result = found[0]
    assert (result["backend"], result["world_size"], result["correct"]) == ("gloo", 3, True), result
    assert result["hosts"] == [h.hostname for h in cluster.hosts], result
    assert result["size_bytes"] == size_mb * 1024 * 1024 and result["iters"] == iters, result
    unknown = Threshold("tcp", None, None, "network namespaces on one machine: no catalog row, no link speed")
    verdict = judge_allreduce(
        unknown, [h.hostname for h in cluster.hosts], [cluster.log(h, run_id) for h in cluster.hosts]
    )
    assert verdict.status == "unknown" and verdict.busbw_gbps == result["busbw_gbps"] > 0, verdict
    print(f"\nmultihost: health gate all-reduce (gloo, {size_mb} MiB x {iters}) on 3 hosts: {verdict.detail}; {result}")
