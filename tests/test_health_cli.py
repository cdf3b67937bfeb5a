"""`aitrain check` and the gate `aitrain launch` runs first, on recorded Cloud Assistant answers (no cloud)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprints.cli import check as cc
from blueprints.cli.main import app
from blueprints.launch import torchrun as lc

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "health"
NODES = {  # instance ID -> (recorded answer, private IP)
    "i-uf6nodehealthy": ("healthy", "10.20.0.11"),
    "i-uf6nodeecc": ("ecc", "10.20.0.12"),
    "i-uf6nodexid79": ("xid79", "10.20.0.13"),
    "i-uf6nodegpucount": ("gpu_count", "10.20.0.14"),
}


def outputs(ids, **extra):
    data = {
        "aitrain_outputs": "v1",
        "blueprint": "fixed-cluster",
        "profile_name": "medical-imaging",
        "region": "cn-shanghai",
        "instance_type": "ecs.ebmgn7ex.32xlarge",
        "launcher": "/usr/local/bin/aitrain-torchrun",
        "shared_mount_path": "/mnt/shared",
        "node_instance_ids": list(ids),
        "node_private_ips": [NODES[i][1] if i in NODES else f"10.20.1.{k}" for k, i in enumerate(ids)],
        "expected_nodes": len(ids),
    }
    data.update(extra)
    return data


class FakeCloud:
    """Answers RunCommand with an InvokeId and DescribeInvocationResults with the recorded answers; the all-reduce
    reports ``busbw`` (per set of nodes) from rank 0. Every argv is kept."""

    def __init__(self, busbw=150.0):
        self.calls: list[list[str]] = []
        self.invocations: dict[str, tuple[str, list[str]]] = {}
        self.busbw = busbw

    def __call__(self, argv):
        self.calls.append(argv)
        if "RunCommand" in argv:
            invoke = f"t-{len(self.invocations):04d}"
            ids = argv[argv.index("--Timeout") + 3 :: 2]
            self.invocations[invoke] = (argv[argv.index("--Name") + 1], ids)
            out = json.dumps({"InvokeId": invoke, "CommandId": "c-1"})
        else:
            name, ids = self.invocations[argv[argv.index("--InvokeId") + 1]]
            instance = argv[argv.index("--InstanceId") + 1]
            if "-check-" in name:
                out = (DATA / f"describe-{NODES[instance][0]}.json").read_text()
            else:
                bw = self.busbw(ids) if callable(self.busbw) else self.busbw
                line = json.dumps({"aitrain_allreduce": "v1", "busbw_gbps": bw, "algbw_gbps": bw / 1.5,
                                   "world_size": 8 * len(ids), "correct": True})  # fmt: skip
                text = f"AITRAIN-ALLREDUCE {line}" if instance == ids[0] else "worker"
                result = {"InstanceId": instance, "InvokeRecordStatus": "Finished", "ExitCode": 0, "Output": text}
                out = json.dumps({"Invocation": {"InvocationResults": {"InvocationResult": [result]}}})
        return subprocess.CompletedProcess(argv, 0, out, "")


@pytest.fixture
def cloud(monkeypatch, tmp_path):
    fake = FakeCloud()
    monkeypatch.setattr(cc, "RUN", fake)
    monkeypatch.setattr(cc, "SLEEP", lambda s: None)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("aliyun", "ssh"):  # only found on PATH: never run (the fake runner answers)
        (bin_dir / name).write_text("#!/bin/sh\nexit 99\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv(lc.NOW_ENV, "2026-12-01T09:30:00Z")
    return fake


@pytest.fixture
def stack(tmp_path):
    def write(data):
        path = tmp_path / "outputs.json"
        path.write_text(json.dumps(data))
        return str(path)

    return write


def test_healthy_cluster_exits_0_and_reports_the_allreduce_threshold(cloud, stack):
    result = runner.invoke(app, ["check", "--stack", stack(outputs(["i-uf6nodehealthy"]))])
    assert result.exit_code == 0, result.output
    assert "medical-imaging (fixed-cluster, ecs.ebmgn7ex.32xlarge), 1 node: healthy" in result.stdout
    assert "threshold: 128 Gbit/s busbw (erdma, expected 160)" in result.stdout
    run_commands = [c for c in cloud.calls if "RunCommand" in c]
    assert run_commands[0][run_commands[0].index("--Name") + 1] == "aitrain-medical-imaging-check-20261201T093000Z"
    assert "AITRAIN-CHECK" in run_commands[0][run_commands[0].index("--CommandContent") + 1]


def test_unhealthy_nodes_exit_1_each_named_with_its_reason(cloud, stack):
    ids = ["i-uf6nodehealthy", "i-uf6nodeecc", "i-uf6nodexid79", "i-uf6nodegpucount"]
    result = runner.invoke(app, ["check", "--stack", stack(outputs(ids)), "--format", "json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["aitrain_check"] == "v1" and doc["unhealthy_nodes"] == ids[1:]
    reasons = {n["node"]: n["reasons"] for n in doc["nodes"]}
    assert reasons["i-uf6nodeecc"][0].startswith("ecc: GPU 3")
    assert any("XID 79 (GPU has fallen off the bus)" in r for r in reasons["i-uf6nodexid79"])
    assert reasons["i-uf6nodegpucount"][0].startswith("gpu_count: 4 GPUs visible, 8 expected")
    # The all-reduce runs on the healthy node only.
    allreduce = [c for c in cloud.calls if "RunCommand" in c and "allreduce" in c[c.index("--Name") + 1]]
    assert len(allreduce) == 1 and allreduce[0][-2:] == ["--InstanceId.1", "i-uf6nodehealthy"]


def test_slow_allreduce_is_narrowed_to_the_node_every_slow_pair_has(cloud, stack, monkeypatch):
    ids = [f"i-uf6slow{k:04d}" for k in range(4)]
    for i in ids:
        NODES.setdefault(i, ("healthy", f"10.20.2.{ids.index(i)}"))
    cloud.busbw = lambda members: 20.0 if "i-uf6slow0002" in members else 150.0
    result = runner.invoke(app, ["check", "--stack", stack(outputs(ids))])
    assert result.exit_code == 1, result.output
    assert "slow node(s): i-uf6slow0002" in result.stdout
    assert "every pair with this node was slow" in result.stdout
    pairs = [c for c in cloud.calls if "RunCommand" in c and "-r" in c[c.index("--Name") + 1].split("allreduce")[-1]]
    assert len(pairs) == 4  # the ring of 4: two rounds of two pairs


def test_dry_run_prints_the_script_and_calls_and_runs_nothing(cloud, stack):
    result = runner.invoke(app, ["check", "--stack", stack(outputs(["i-uf6nodehealthy"])), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "/sys/class/infiniband/erdma_*" in result.stdout and "dcgmi" not in result.stdout
    assert "--Timeout 300 --InstanceId.1 i-uf6nodehealthy" in result.stdout
    assert result.stdout.rstrip().endswith("dry run: nothing was run") and cloud.calls == []
    long = runner.invoke(
        app, ["check", "--stack", stack(outputs(["i-uf6nodehealthy"])), "--dry-run", "--suite", "long"]
    )
    assert "dcgmi diag -r 3" in long.stdout and "--Timeout 3600" in long.stdout


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (None, "file does not exist"),
        ({"aitrain_outputs": "v1", "blueprint": "someone-else"}, "these look like outputs of another blueprint"),
        ({"vpc_id": "vpc-1"}, "aitrain_outputs"),
        ("instance_type", "must be an instance type of the catalog"),
        ("kubernetes", "ack-node-problem-detector"),
    ],
)
def test_bad_input_is_exit_2_with_one_paragraph_and_nothing_run(cloud, stack, tmp_path, data, expected):
    if data is None:
        path = str(tmp_path / "missing.json")
    elif data == "instance_type":
        path = stack(outputs(["i-uf6nodehealthy"], instance_type="ecs.nonexistent.large"))
    elif data == "kubernetes":
        path = stack({"aitrain_outputs": "v1", "blueprint": "kubernetes-pool"})
    else:
        path = stack(data)
    result = runner.invoke(app, ["check", "--stack", path])
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.stderr.split()) and "Traceback" not in result.output
    assert cloud.calls == []


# --- aitrain launch runs the quick suite first ---------------------------------------------------------------------


def launch(stack_path, *options):
    return runner.invoke(app, ["launch", "--stack", stack_path, *options, "--", "python", "train.py"])


def test_launch_stops_on_an_unhealthy_node_and_starts_nothing(cloud, stack, monkeypatch):
    started = []
    monkeypatch.setattr("blueprints.cli.launch._run", lambda argv: started.append(argv) or
                        subprocess.CompletedProcess(argv, 0, '{"InvokeId": "t-run"}', ""))  # fmt: skip
    result = launch(stack(outputs(["i-uf6nodehealthy", "i-uf6nodexid79"])))
    assert result.exit_code == 1, result.output
    assert started == []
    assert (
        "launch stopped (--on-unhealthy stop): unhealthy node(s) i-uf6nodexid79; nothing was started" in result.stderr
    )
    names = [c[c.index("--Name") + 1] for c in cloud.calls if "RunCommand" in c]
    assert names == [
        "aitrain-medical-imaging-check-20261201T093000Z",
        "aitrain-medical-imaging-allreduce-20261201T093000Z-all0",
    ]


def test_launch_exclude_starts_on_the_healthy_nodes_only_and_says_so(cloud, stack, monkeypatch):
    started = []
    monkeypatch.setattr("blueprints.cli.launch._run", lambda argv: started.append(argv) or
                        subprocess.CompletedProcess(argv, 0, '{"InvokeId": "t-run"}', ""))  # fmt: skip
    result = launch(stack(outputs(["i-uf6nodehealthy", "i-uf6nodeecc"])), "--on-unhealthy", "exclude")
    assert result.exit_code == 0, result.output
    assert "excluding 1 unhealthy node(s): i-uf6nodeecc; launching on the 1 healthy node(s)" in result.stdout
    assert len(started) == 1 and started[0][-2:] == ["--InstanceId.1", "i-uf6nodehealthy"]
    assert "--hosts 10.20.0.11 --" in started[0][started[0].index("--CommandContent") + 1]


def scaling_answer(ids):
    items = [{"InstanceId": i, "LifecycleState": "InService"} for i in ids]
    return json.dumps({"ScalingInstances": {"ScalingInstance": items}, "TotalCount": len(ids)})


def test_a_pool_launches_on_the_nodes_the_gate_checked_not_on_one_that_joined_since(cloud, stack, monkeypatch):
    pool = outputs([])
    for key in ("node_instance_ids", "node_private_ips", "expected_nodes"):
        del pool[key]
    pool.update(blueprint="autoscaling-pool", scaling_group_id="asg-uf6pool0001")
    checked = cloud.__call__

    def gate_cloud(argv):  # the gate finds one InService node
        if "DescribeScalingInstances" in argv:
            return subprocess.CompletedProcess(argv, 0, scaling_answer(["i-uf6nodehealthy"]), "")
        return checked(argv)

    monkeypatch.setattr(cc, "RUN", gate_cloud)
    started = []

    def launch_cloud(argv):  # by the time the launch runs, a second node is InService, unchecked
        started.append(argv)
        if "DescribeScalingInstances" in argv:
            return subprocess.CompletedProcess(argv, 0, scaling_answer(["i-uf6nodehealthy", "i-uf6nodenew"]), "")
        return subprocess.CompletedProcess(argv, 0, '{"InvokeId": "t-run"}', "")

    monkeypatch.setattr("blueprints.cli.launch._run", launch_cloud)
    result = launch(stack(pool))
    assert result.exit_code == 0, result.output
    assert "launching on the 1 pool node(s) the gate checked" in result.stdout
    (run,) = [c for c in started if "RunCommand" in c]
    assert run[-2:] == ["--InstanceId.1", "i-uf6nodehealthy"] and "i-uf6nodenew" not in run
    assert "--hosts 10.20.0.11 --" in run[run.index("--CommandContent") + 1]


def test_launch_skip_check_needs_a_reason_and_then_runs_no_check(cloud, stack, monkeypatch):
    path = stack(outputs(["i-uf6nodehealthy"]))
    blank = launch(path, "--skip-check", "  ")
    assert blank.exit_code == 2 and "--skip-check needs a reason" in blank.stderr and cloud.calls == []
    result = launch(path, "--skip-check", "checked at 09:00", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "health gate skipped: checked at 09:00" in result.stderr and "AITRAIN-CHECK" not in result.stdout


def test_launch_dry_run_prints_the_check_commands_first(cloud, stack):
    result = launch(stack(outputs(["i-uf6nodehealthy"])), "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("health gate (quick suite)") < out.index("aitrain launch: medical-imaging") and cloud.calls == []
    assert "(on unhealthy nodes: stop)" in out
