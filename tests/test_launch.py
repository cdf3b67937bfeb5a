"""`aitrain launch`: the exact lines and commands it prints and runs, batching, pools, and every refused input."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.launch import torchrun as lc

runner = CliRunner()
RUN = "20261201T093000Z"
# Root is nobody on the share (root_squash): the run directory, the log and the launcher are the job user's (uid 2000).
LINE = (
    "ulimit -l unlimited 2>/dev/null; setpriv --reuid=2000 --regid=2000 --init-groups sh -c "
    '\'d=$1; shift; mkdir -p "$d" || exit; HOME=/home/aitrain USER=aitrain LOGNAME=aitrain setsid nohup "$@" < '
    '/dev/null >> "$d/$(hostname).log" 2>&1 &\' '
    "sh /mnt/shared/.aitrain/runs/{run} /usr/local/bin/aitrain-torchrun --run-dir "
    "/mnt/shared/.aitrain/runs/{run} --run-id {run} --max-restarts 3 --checkpoint-dir "
    "/mnt/shared/.aitrain/checkpoints/{run}{hosts} -- {cmd}"
)
LOGS = "logs: /mnt/shared/.aitrain/runs/{run}/<hostname>.log on the shared file system, written as aitrain (uid 2000)"


def fixed_outputs(nodes: int, **extra):
    data = {
        "aitrain_outputs": "v1",
        "blueprint": "fixed-cluster",
        "profile_name": "medical-imaging",
        "region": "cn-shanghai",
        "launcher": "/usr/local/bin/aitrain-torchrun",
        "shared_mount_path": "/mnt/shared",
        "node_instance_ids": [f"i-uf6node{k:04d}" for k in range(1, nodes + 1)],
        "node_private_ips": [f"10.20.{k // 200}.{10 + k % 200}" for k in range(1, nodes + 1)],
        "expected_nodes": nodes,
        "nas_mount_target": "[secret]",  # a secret the launch does not need is ignored
    }
    data.update(extra)
    return data


def pool_outputs(**extra):
    data = {
        "aitrain_outputs": "v1",
        "blueprint": "autoscaling-pool",
        "profile_name": "autoscaling-training",
        "region": "cn-shanghai",
        "launcher": "/usr/local/bin/aitrain-torchrun",
        "shared_mount_path": "/mnt/shared",
        "scaling_group_id": "asg-uf6pool01",
    }
    data.update(extra)
    return data


@pytest.fixture
def outputs_file(tmp_path):
    def write(data, name="outputs.json"):
        path = tmp_path / name
        path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
        return str(path)

    return write


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    monkeypatch.setenv(lc.NOW_ENV, "2026-12-01T09:30:00Z")


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """A PATH holding only fake `aliyun` and `ssh` that append their
    argv (JSON) to calls.jsonl and answer like the real ones."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.jsonl"
    script = textwrap.dedent(
        f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(calls)!r}, "a") as f:
            f.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\\n")
        if os.environ.get("FAKE_FAIL"):
            sys.stderr.write("ERROR: InvalidInstance.NotFound\\n")
            sys.exit(3)
        if "DescribeScalingInstances" in sys.argv:
            page = int(sys.argv[sys.argv.index("--PageNumber") + 1])
            ids = json.loads(os.environ["FAKE_POOL"])
            size = int(sys.argv[sys.argv.index("--PageSize") + 1])
            chunk = ids[(page - 1) * size : page * size]
            listed = [{{"InstanceId": i, "LifecycleState": "InService"}} for i in chunk]
            print(json.dumps({{"TotalCount": len(ids), "ScalingInstances": {{"ScalingInstance": listed}}}}))
        elif "RunCommand" in sys.argv:
            print(json.dumps({{"CommandId": "c-1", "InvokeId": "t-0001", "RequestId": "r"}}))
        """
    )
    for name in ("aliyun", "ssh"):
        exe = bin_dir / name
        exe.write_text(script)
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))

    def recorded():
        return [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []

    return recorded


# The health gate (`aitrain launch` runs it first) has its own tests (tests/test_health_cli.py); these skip it.
SKIP_GATE = ("--skip-check", "the launch tests skip the gate")


def invoke(*args, env=None):
    if args[:1] == ("launch",) and "--kubernetes" not in args:
        args = ("launch", *SKIP_GATE, *args[1:])
    return runner.invoke(app, list(args), env=env)


def run_command(ids, line, run=RUN, profile="medical-imaging"):
    argv = [
        "aliyun",
        "ecs",
        "RunCommand",
        "--RegionId",
        "cn-shanghai",
        "--Type",
        "RunShellScript",
        "--Name",
        f"aitrain-{profile}-{run}",
        "--CommandContent",
        line,
        "--Timeout",
        "60",
    ]
    for n, i in enumerate(ids, start=1):
        argv += [f"--InstanceId.{n}", i]
    return argv


# --- dry run: exact output ---------------------------------------------------------------------------------------


def test_dry_run_one_node_exact(outputs_file):
    result = invoke(
        "launch", "--stack", outputs_file(fixed_outputs(1)), "--dry-run", "--", "python", "train.py", "--lr", "3e-4"
    )
    assert result.exit_code == 0, result.output
    line = LINE.format(run=RUN, hosts=" --hosts 10.20.0.11", cmd="python train.py --lr 3e-4")
    expected = [
        f"aitrain launch: medical-imaging (fixed-cluster, cn-shanghai), 1 node, run {RUN}, via cloud-assistant",
        "each node runs:",
        f"  {line}",
        "commands:",
        "  aliyun ecs RunCommand --RegionId cn-shanghai --Type RunShellScript "
        f"--Name aitrain-medical-imaging-{RUN} --CommandContent "
        f"{shlex.quote(line)} --Timeout 60 --InstanceId.1 i-uf6node0001",
        LOGS.format(run=RUN),
        "dry run: nothing was run",
    ]
    assert result.stdout == "\n".join(expected) + "\n"


def test_dry_run_two_nodes_exact_and_arguments_quoted_once(outputs_file):
    result = invoke(
        "launch",
        "--stack",
        outputs_file(fixed_outputs(2)),
        "--run-id",
        "exp-7",
        "--dry-run",
        "--",
        "python",
        "train.py",
        "--note",
        "it's a test",
        "$HOME",
    )
    assert result.exit_code == 0, result.output
    line = LINE.format(
        run="exp-7", hosts=" --hosts 10.20.0.11,10.20.0.12", cmd="python train.py --note 'it'\"'\"'s a test' '$HOME'"
    )
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "aitrain launch: medical-imaging (fixed-cluster, cn-shanghai), 2 nodes, run exp-7, via cloud-assistant"
    )
    assert lines[2] == f"  {line}"
    assert lines[4] == "  " + shlex.join(run_command(["i-uf6node0001", "i-uf6node0002"], line, run="exp-7"))
    assert len(lines) == 7
    # What each node's shell receives splits back into exactly the user's words.
    started = shlex.split(line.split("; ", 1)[1])
    assert started[:8] == ["setpriv", "--reuid=2000", "--regid=2000", "--init-groups", "sh", "-c", lc.JOB_SHELL, "sh"]
    assert started[started.index("--") + 1 :] == ["python", "train.py", "--note", "it's a test", "$HOME"]


def test_dry_run_twelve_nodes_exact(outputs_file):
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(12)), "--dry-run", "--", "python", "train.py")
    assert result.exit_code == 0, result.output
    ips = ",".join(f"10.20.0.{10 + k}" for k in range(1, 13))
    line = LINE.format(run=RUN, hosts=f" --hosts {ips}", cmd="python train.py")
    ids = [f"i-uf6node{k:04d}" for k in range(1, 13)]
    expected = [
        f"aitrain launch: medical-imaging (fixed-cluster, cn-shanghai), 12 nodes, run {RUN}, via cloud-assistant",
        "each node runs:",
        f"  {line}",
        "commands:",
        "  " + shlex.join(run_command(ids, line)),
        LOGS.format(run=RUN),
        "dry run: nothing was run",
    ]
    assert result.stdout.splitlines() == expected
    assert "--InstanceId.12 i-uf6node0012" in result.stdout and "--InstanceId.13" not in result.stdout


def test_dry_run_pool_exact(outputs_file):
    result = invoke("launch", "--stack", outputs_file(pool_outputs()), "--dry-run", "--", "python", "-m", "pkg.train")
    assert result.exit_code == 0, result.output
    line = LINE.format(run=RUN, hosts="", cmd="python -m pkg.train")
    expected = [
        "aitrain launch: autoscaling-training (autoscaling-pool, cn-shanghai), the InService nodes of asg-uf6pool01, "
        f"run {RUN}, via cloud-assistant",
        "each node runs:",
        f"  {line}",
        "  (with --nnodes N before --, N = the InService instances found: the launcher waits until N have registered)",
        "commands:",
        "  aliyun ess DescribeScalingInstances --RegionId cn-shanghai --ScalingGroupId asg-uf6pool01 "
        "--LifecycleState InService --PageSize 50 --PageNumber 1",
        "  aliyun ecs RunCommand --RegionId cn-shanghai --Type RunShellScript "
        f"--Name aitrain-autoscaling-training-{RUN} --CommandContent {shlex.quote(line)} --Timeout 60 "
        "--InstanceId.1 <id> --InstanceId.2 <id> ... (each InService instance of asg-uf6pool01, 50 per call)",
        LOGS.format(run=RUN),
        "dry run: nothing was run",
    ]
    assert result.stdout == "\n".join(expected) + "\n"


def test_dry_run_ssh_one_command_per_node_through_the_login_node(outputs_file):
    data = fixed_outputs(2, login_node_public_ip="47.100.1.2")
    result = invoke("launch", "--stack", outputs_file(data), "--via", "ssh", "--dry-run", "--", "python", "train.py")
    assert result.exit_code == 0, result.output
    line = LINE.format(run=RUN, hosts=" --hosts 10.20.0.11,10.20.0.12", cmd="python train.py")
    assert [s.strip() for s in result.stdout.splitlines()[4:6]] == [
        shlex.join(["ssh", "-J", "root@47.100.1.2", f"root@{ip}", line]) for ip in ("10.20.0.11", "10.20.0.12")
    ]


def test_more_nodes_than_one_call_takes_are_batched_by_50(outputs_file):
    outputs = lc.parse_outputs(fixed_outputs(120), "o", ["fixed-cluster"])
    plan = lc.plan_launch(outputs, lc.Via.cloud_assistant, "r", ["python", "t.py"])
    counts = [sum(1 for a in argv if a.startswith("--InstanceId.")) for argv in plan.commands]
    assert counts == [50, 50, 20]
    assert plan.commands[1][plan.commands[1].index("--InstanceId.1") + 1] == "i-uf6node0051"
    assert all(argv[argv.index("--CommandContent") + 1] == plan.line for argv in plan.commands)


def test_host_list_too_long_for_cloud_assistant_falls_back_to_the_registry(outputs_file):
    outputs = lc.parse_outputs(fixed_outputs(2000), "o", ["fixed-cluster"])
    plan = lc.plan_launch(outputs, lc.Via.cloud_assistant, "r", ["python", "t.py"])
    assert "--hosts" not in plan.line and not plan.hosts_in_line
    assert (
        "aitrain-torchrun --run-dir /mnt/shared/.aitrain/runs/r --run-id r --max-restarts 3 --checkpoint-dir "
        "/mnt/shared/.aitrain/checkpoints/r --nnodes 2000 -- python t.py" in plan.line
    )  # the registry must hold all 2000
    assert len(plan.commands) == 40
    small = lc.plan_launch(
        lc.parse_outputs(fixed_outputs(12), "o", ["fixed-cluster"]), lc.Via.cloud_assistant, "r", ["python", "t.py"]
    )
    assert small.hosts_in_line and "--hosts 10.20.0.11," in small.line
    # ssh has no such limit: every node still gets the list.
    via_ssh = lc.plan_launch(
        lc.parse_outputs(fixed_outputs(2000, login_node_public_ip="47.1.1.1"), "o", ["fixed-cluster"]),
        lc.Via.ssh,
        "r",
        ["python", "t.py"],
    )
    assert "--hosts" in via_ssh.line


def test_default_run_id_is_the_injected_utc_time():
    import datetime as dt

    tz = dt.timezone(dt.timedelta(hours=8))
    assert lc.default_run_id(dt.datetime(2026, 12, 1, 17, 30, 5, tzinfo=tz)) == "20261201T093005Z"
    assert lc.utc_now({lc.NOW_ENV: "2026-12-01T09:30:00Z"}) == dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)


# --- real runs with fake binaries ----------------------------------------------------------------------------------


def test_real_run_executes_exactly_the_printed_commands(outputs_file, fake_bin):
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(2)), "--", "python", "train.py", "--epochs", "10")
    assert result.exit_code == 0, result.output
    printed = [shlex.split(line) for line in result.stdout.splitlines() if line.startswith("  aliyun ")]
    calls = fake_bin()
    assert calls == printed and len(calls) == 1
    assert calls[0][calls[0].index("--CommandContent") + 1] == LINE.format(
        run=RUN, hosts=" --hosts 10.20.0.11,10.20.0.12", cmd="python train.py --epochs 10"
    )
    assert (
        "started: InvokeId t-0001 (results: aliyun ecs "
        "DescribeInvocationResults --RegionId cn-shanghai --InvokeId t-0001)" in result.stdout
    )


def test_real_run_on_a_pool_finds_the_inservice_nodes_page_by_page(outputs_file, fake_bin, monkeypatch):
    pool = [f"i-uf6pool{k:04d}" for k in range(1, 53)]
    monkeypatch.setenv("FAKE_POOL", json.dumps(pool))
    result = invoke("launch", "--stack", outputs_file(pool_outputs()), "--run-id", "p1", "--", "python", "train.py")
    assert result.exit_code == 0, result.output
    calls = fake_bin()
    assert [c[2] for c in calls] == ["DescribeScalingInstances", "DescribeScalingInstances", "RunCommand", "RunCommand"]
    assert calls[1][-1] == "2"  # --PageNumber 2
    # The nodes wait until all 52 have registered: a pool's size is known only now.
    line = LINE.format(run="p1", hosts=" --nnodes 52", cmd="python train.py")
    assert calls[2] == run_command(pool[:50], line, run="p1", profile="autoscaling-training")
    assert calls[3] == run_command(pool[50:], line, run="p1", profile="autoscaling-training")
    assert "found 52 InService nodes; running:" in result.stdout
    assert [
        shlex.split(s)
        for s in result.stdout.splitlines()
        if s.startswith("  aliyun ecs RunCommand") and "<id>" not in s
    ] == calls[2:]


def test_pool_without_inservice_nodes_is_exit_1_and_runs_nothing(outputs_file, fake_bin, monkeypatch):
    monkeypatch.setenv("FAKE_POOL", "[]")
    result = invoke("launch", "--stack", outputs_file(pool_outputs()), "--", "python", "train.py")
    assert result.exit_code == 1
    assert "has no InService nodes: scale it out" in result.stderr
    assert [c[2] for c in fake_bin()] == ["DescribeScalingInstances"]


def test_real_run_over_ssh_reaches_every_node(outputs_file, fake_bin):
    result = invoke(
        "launch",
        "--stack",
        outputs_file(fixed_outputs(3, login_node_public_ip="47.100.1.2")),
        "--via",
        "ssh",
        "--",
        "python",
        "train.py",
    )
    assert result.exit_code == 0, result.output
    calls = sorted(fake_bin())
    line = LINE.format(run=RUN, hosts=" --hosts 10.20.0.11,10.20.0.12,10.20.0.13", cmd="python train.py")
    assert calls == [["ssh", "-J", "root@47.100.1.2", f"root@10.20.0.{ip}", line] for ip in (11, 12, 13)]


def test_failed_call_shows_its_stderr_and_exits_1(outputs_file, fake_bin, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "1")
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(2)), "--", "python", "train.py")
    assert result.exit_code == 1
    assert "failed (exit 3): aliyun ecs RunCommand --RegionId ..." in result.stderr
    assert "InvalidInstance.NotFound" in result.stderr
    assert "started on every node" not in result.stdout


def test_missing_cli_is_exit_2_with_how_to_install(outputs_file, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = invoke("launch", "--stack", outputs_file(fixed_outputs(2)), "--", "python", "train.py")
    assert result.exit_code == 2
    assert (
        "`aliyun` is not on PATH" in result.stderr
        and "install the Alibaba Cloud CLI" in result.stderr
        and "--dry-run" in result.stderr
    )
    assert result.stdout == ""
    ssh = invoke(
        "launch",
        "--stack",
        outputs_file(fixed_outputs(2, login_node_public_ip="47.1.1.1")),
        "--via",
        "ssh",
        "--",
        "python",
        "t.py",
    )
    assert ssh.exit_code == 2 and "`ssh` is not on PATH" in ssh.stderr and "OpenSSH" in ssh.stderr


# --- bad input: exit 2, one message, nothing run ------------------------------------------------------------------

BAD = {
    "missing file": (None, ["--", "python", "t.py"], "file does not exist"),
    "not json": ("{nope", ["--", "python", "t.py"], "is not JSON"),
    "not aitrain": ({"vpc_id": "vpc-1"}, ["--", "python", "t.py"], "these are not aitrain stack outputs"),
    "other blueprint": (
        fixed_outputs(2, blueprint="slurm-cluster"),
        ["--", "python", "t.py"],
        "blueprint 'slurm-cluster' is not one aitrain knows",
    ),
    "parked": (
        fixed_outputs(0),
        ["--", "python", "t.py"],
        "is parked (no nodes): set compute.nodes / `aitrain park --resume N --write`",
    ),
    "empty command": (fixed_outputs(2), [], "give the command to run after --"),
    "ssh without login node": (
        fixed_outputs(2),
        ["--via", "ssh", "--", "python", "t.py"],
        "has no login_node_public_ip",
    ),
    "ssh on a pool": (
        pool_outputs(login_node_public_ip="47.1.1.1"),
        ["--via", "ssh", "--", "python", "t.py"],
        "use --via cloud-assistant",
    ),
    "bad run id": (
        fixed_outputs(2),
        ["--run-id", "../etc", "--", "python", "t.py"],
        "--run-id = '../etc': must be 1–64 letters",
    ),
    "secret ips": (
        fixed_outputs(2, node_private_ips="[secret]"),
        ["--", "python", "t.py"],
        "save the outputs with `pulumi stack output --json --show-secrets`",
    ),
    "unpaired ips": (
        fixed_outputs(2, node_private_ips=["10.0.0.1"]),
        ["--", "python", "t.py"],
        "has 1 addresses for 2 node_instance_ids",
    ),
    "injected ip": (
        fixed_outputs(1, node_private_ips=["10.0.0.1;reboot"]),
        ["--", "python", "t.py"],
        "must be a list of IPv4 addresses",
    ),
    "stale count": (
        fixed_outputs(2, expected_nodes=3),
        ["--", "python", "t.py"],
        "lists 2 nodes but expected_nodes is 3",
    ),
    "no nodes at all": (
        {k: v for k, v in fixed_outputs(2).items() if not k.startswith(("node_", "expected"))},
        ["--", "python", "t.py"],
        "the outputs name no nodes",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_exit_2_with_one_message_and_nothing_run(case, outputs_file, fake_bin, tmp_path):
    data, args, message = BAD[case]
    path = outputs_file(data) if data is not None else str(tmp_path / "nowhere.json")
    result = invoke("launch", "--stack", path, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert result.stdout == ""
    assert fake_bin() == []


def test_scaling_answer_of_either_api_version_is_read():
    old = json.dumps(
        {
            "TotalCount": 2,
            "ScalingInstances": {
                "ScalingInstance": [
                    {"InstanceId": "i-uf6aaaa1", "LifecycleState": "InService"},
                    {"InstanceId": "i-uf6aaaa2", "LifecycleState": "Pending"},
                ]
            },
        }
    )
    new = json.dumps(
        {"TotalCount": 1, "ScalingInstances": [{"InstanceId": "i-uf6aaaa1", "LifecycleState": "InService"}]}
    )
    assert lc.scaling_instance_ids(old) == (["i-uf6aaaa1"], 2)
    assert lc.scaling_instance_ids(new) == (["i-uf6aaaa1"], 1)
    with pytest.raises(ValueError):
        lc.scaling_instance_ids(json.dumps({"Message": "denied"}))
