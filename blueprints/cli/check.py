"""The ``check`` command (the health gate) and the gate ``aitrain launch`` runs first.

Every subprocess goes through a ``Runner`` (default: ``subprocess.run`` on the printed argv), so tests replay
recorded Cloud Assistant and ssh answers; the pure parts are ``blueprints.health``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import enum
import shlex
import shutil
import time
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from blueprints.cli.cloudcalls import INSTALL, Runner, invoke_id, pool_instance_ids, run_argv
from blueprints.cli.support import reports_user_errors
from blueprints.core.errors import MISSING, Problem, UserInputError
from blueprints.health.gate import OnUnhealthy
from blueprints.launch.torchrun import StackOutputs, Via

# Seconds between DescribeInvocationResults polls.
POLL_SECONDS = 5.0
Sleep = Callable[[float], None]
Answers = dict[str, tuple[str, Optional[int]]]  # instance ID -> (output, exit code)
# How the gate runs a printed argv and waits between polls; tests replace both with recorded answers.
RUN: Runner = run_argv
SLEEP: Sleep = time.sleep


class Gate:
    """One stack's gate: outputs, expectations, threshold and how to reach the nodes."""

    def __init__(self, data: Any, source: str, outputs: StackOutputs, via: Via, suite: str, run_id: str):
        from blueprints.catalog import load_catalog
        from blueprints.health.suites import expectations
        from blueprints.health.thresholds import threshold_for

        catalog = load_catalog()
        name = data.get("instance_type")
        if not isinstance(name, str) or name not in catalog.instance_types:
            raise UserInputError(
                f"cannot check {source}",
                [
                    Problem(
                        f"{source}: instance_type",
                        name if "instance_type" in data else MISSING,
                        "must be an instance type of the catalog (`aitrain catalog` lists them): the gate compares "
                        "each node with its catalog row; re-run `pulumi up` with this aitrain, then save the outputs",
                    )
                ],
            )
        instance = catalog.instance_types[name]
        gate = data.get("health_gate")
        fabric = gate.get("allreduce", {}).get("fabric") if isinstance(gate, dict) else None
        fabric = fabric if fabric in ("erdma", "roce", "tcp") else instance.fabric_link
        self.outputs, self.via, self.suite, self.run_id = outputs, via, suite, run_id
        self.exp = expectations(catalog, instance, fabric)
        self.threshold = threshold_for(instance, fabric)


def check_via(outputs: StackOutputs, via: Via) -> None:
    """``--via`` must be usable for these outputs and its binary on PATH (exit 2 before anything runs)."""
    from blueprints.launch import torchrun as lc

    lc.check_launchable(outputs, via)
    binary = "ssh" if via is Via.ssh else "aliyun"
    if shutil.which(binary) is None:
        raise UserInputError(
            f"cannot check: `{binary}` is not on PATH",
            [Problem("--via", via.value, f"{INSTALL[binary]}, or use --dry-run to print the commands")],
        )


def describe(gate: Gate) -> list[str]:
    """What the gate runs, copy-pasteable: the node script, its calls, the all-reduce line (dry run)."""
    from blueprints.health import commands as hc
    from blueprints.launch import torchrun as lc

    outputs, script = gate.outputs, hc.check_script(gate.exp, gate.suite)
    hc.fits(script, "check script")
    lines = [
        f"health gate ({gate.suite} suite) on {outputs.profile_name}: each node runs this script "
        f"({hc.encoded_size(script)} of {lc.COMMAND_CONTENT_LIMIT_BASE64_BYTES} bytes in Base64):",
        *(f"  | {line}" for line in script.rstrip("\n").splitlines()),
        "calls:",
    ]
    ids, ips = list(outputs.instance_ids or ()), list(outputs.private_ips or ())
    name = f"check-{gate.run_id}"
    if gate.via is Via.ssh:
        lines += [f"  {shlex.join(hc.ssh_call(outputs, ip, '<the script above>'))}" for ip in ips]
    elif outputs.is_pool:
        lines.append(f"  {shlex.join(lc.describe_scaling_argv(outputs, 1))}")
        call = hc.cloud_assistant_calls(outputs, name, "<the script above>", [], hc.CHECK_TIMEOUT_S[gate.suite])[0]
        lines.append(f"  {shlex.join(call)} {lc.pool_placeholder(outputs)}")
    else:
        timeout = hc.CHECK_TIMEOUT_S[gate.suite]
        lines += [
            f"  {shlex.join(a)}" for a in hc.cloud_assistant_calls(outputs, name, "<the script above>", ids, timeout)
        ]
    if gate.via is Via.cloud_assistant:
        lines.append(f"  then, per node: {shlex.join(hc.describe_result_argv(outputs, '<InvokeId>', '<instance>'))}")
    line = hc.allreduce_line(outputs, gate.exp, gate.suite, ips or None, None if ips else 2)
    t = gate.threshold
    lines += [
        "then the all-reduce on the healthy nodes (each runs, --hosts = the healthy nodes' IPs):",
        f"  {line[:160]}... ({hc.encoded_size(line)} bytes in Base64)",
        f"  threshold: {t.threshold_gbps if t.threshold_gbps is not None else 'unknown'} Gbit/s busbw - {t.source}",
        "slow: pair tests (each node with both ring neighbours) name the slow node(s)",
    ]
    return lines


def _execute(gate: Gate, jobs: list[tuple[str, str, list[str]]], timeout: int, run: Runner, sleep: Sleep) -> Answers:
    """Run every (name, line, instance IDs) job at once; each instance's (output, exit code)."""
    from blueprints.health import commands as hc
    from blueprints.launch import runs

    outputs = gate.outputs
    if gate.via is Via.ssh:
        by_ip = dict(zip(outputs.private_ips or (), outputs.instance_ids or (), strict=True))
        ip_of = {i: ip for ip, i in by_ip.items()}
        calls = [(i, hc.ssh_call(outputs, ip_of[i], line)) for _, line, ids in jobs for i in ids]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(32, len(calls)))) as pool:
            done = list(pool.map(lambda c: run(c[1]), calls))
        return {i: (r.stdout + r.stderr, r.returncode) for (i, _), r in zip(calls, done, strict=True)}
    pending: list[tuple[str, str]] = []  # (invoke id, instance id)
    for name, line, ids in jobs:
        for argv in hc.cloud_assistant_calls(outputs, name, line, ids, timeout):
            result = run(argv)
            invoke = invoke_id(result.stdout) if result.returncode == 0 else None
            if invoke is None:
                typer.echo(f"failed (exit {result.returncode}): {shlex.join(argv[:5])} ...", err=True)
                typer.echo((result.stderr or result.stdout).strip(), err=True)
                raise typer.Exit(code=1)
            batch = argv[argv.index("--Timeout") + 3 :: 2]
            pending += [(invoke, i) for i in batch]
    answers: Answers = {}
    for _ in range(int(timeout / POLL_SECONDS) + 12):
        for invoke, instance in list(pending):
            argv = hc.describe_result_argv(outputs, invoke, instance)
            result = run(argv)
            try:
                finished, found = runs.parse_invocation(result.stdout) if result.returncode == 0 else (False, [])
            except (ValueError, AttributeError):
                finished, found = False, []
            if finished:
                answers[instance] = ("\n".join(r.output for r in found), found[0].exit_code if found else None)
                pending.remove((invoke, instance))
        if not pending:
            return answers
        sleep(POLL_SECONDS)
    for invoke, instance in pending:
        answers[instance] = (f"no answer from Cloud Assistant (InvokeId {invoke}) within {timeout}s", None)
    return answers


def run_gate(gate: Gate, run: Runner, sleep: Sleep) -> Any:
    """Check every node, all-reduce across the healthy ones, narrow a slow one down; the HealthReport."""
    from blueprints.health import commands as hc
    from blueprints.health.report import HealthReport
    from blueprints.health.verdict import judge_node

    outputs, exp, suite = gate.outputs, gate.exp, gate.suite
    ids = pool_instance_ids(outputs, run) if outputs.is_pool else list(outputs.instance_ids or ())
    script = hc.fits(hc.check_script(exp, suite), "check script")
    typer.echo(f"health gate: checking {len(ids)} node(s) ({suite} suite) via {gate.via.value}", err=True)
    answers = _execute(gate, [(f"check-{gate.run_id}", script, ids)], hc.CHECK_TIMEOUT_S[suite], run, sleep)
    known_ip = dict(zip(outputs.instance_ids or (), outputs.private_ips or (), strict=False))
    verdicts = []
    for i in ids:
        output, code = answers.get(i, ("", None))
        v = judge_node(i, output, exp, suite, code)
        verdicts.append(dataclasses.replace(v, ip=known_ip.get(i) or v.ip))
    healthy = [v for v in verdicts if v.healthy and v.ip]
    allreduce = _allreduce(gate, healthy, run, sleep) if healthy else None
    return HealthReport(outputs.profile_name, outputs.blueprint, exp.instance_type, suite, tuple(verdicts), allreduce)


def _allreduce(gate: Gate, nodes: list[Any], run: Runner, sleep: Sleep) -> Any:
    """The all-reduce across ``nodes``; when it is below the threshold, the pair tests and their suspects."""
    from blueprints.health import commands as hc
    from blueprints.health.narrowing import plan_pairs, suspects
    from blueprints.health.verdict import judge_allreduce

    timeout = hc.ALLREDUCE_TIMEOUT_S[gate.suite]
    ip = {v.node: v.ip for v in nodes}
    ids = [v.node for v in nodes]

    def measure(groups: list[list[str]], tag: str) -> list[Any]:
        jobs = [
            (f"allreduce-{gate.run_id}-{tag}{k}", hc.allreduce_line(gate.outputs, gate.exp, gate.suite,
                                                                    [ip[i] for i in g]), g)
            for k, g in enumerate(groups)
        ]  # fmt: skip
        answers = _execute(gate, jobs, timeout, run, sleep)
        return [judge_allreduce(gate.threshold, g, [answers.get(i, ("", None))[0] for i in g]) for g in groups]

    typer.echo(f"health gate: all-reduce over {len(ids)} healthy node(s)", err=True)
    whole = measure([ids], "all")[0]
    if whole.status != "fail" or len(ids) < 2 or gate.threshold.threshold_gbps is None:
        return whole
    limit = gate.threshold.threshold_gbps
    slow: dict[tuple[str, str], bool] = {}
    pairs: list[tuple[str, str, float | None]] = []
    for number, round_ in enumerate(plan_pairs(ids)):
        typer.echo(f"health gate: pair tests, round {number + 1}: {len(round_)} pair(s)", err=True)
        for (a, b), result in zip(round_, measure([list(p) for p in round_], f"r{number}p"), strict=True):
            slow[(a, b)] = result.busbw_gbps is None or result.busbw_gbps < limit
            pairs.append((a, b, result.busbw_gbps))
    found = suspects(slow)
    detail = f"{whole.detail}; {found.reason}"
    return dataclasses.replace(whole, detail=detail, suspects=found.suspects, pairs=tuple(pairs))


class Suite(str, enum.Enum):
    """Which checks run: quick (before every launch) or long (opt-in: adds DCGM level 3, a longer all-reduce)."""

    quick = "quick"
    long = "long"


class Format(str, enum.Enum):
    """How the report is printed."""

    text = "text"
    json = "json"
    markdown = "markdown"


def load_gate(stack: Path, via: Via, suite: str, run_id: str | None, verb: str = "check") -> Gate:
    """Read and check the outputs (exit 2 for another stack's, a missing file, a Kubernetes stack)."""
    from blueprints.architectures import job_engines
    from blueprints.launch import kubernetes as lk
    from blueprints.launch import torchrun as lc

    data = lc.load_outputs(stack)
    engines = job_engines()
    if lk.job_engine_of(data, str(stack), engines) == lk.KUBERNETES_ENGINE:
        raise UserInputError(
            f"aitrain {verb} runs the health gate on torchrun stacks",
            [
                Problem(
                    "--stack",
                    f"{stack} ({data.get('blueprint')})",
                    "a Kubernetes stack's nodes are checked by ACK itself: the node problem detector (ack-node-problem-"
                    "detector) with GPU fault isolation and the GPU node pool's auto-repair mark and replace a failing "
                    "node; see the plan's repair section and `kubectl get nodes` (aitrain check does not run there)",
                )
            ],
        )
    outputs = lc.parse_outputs(data, str(stack), engines)
    rid = lc.check_run_id(run_id) if run_id is not None else lc.default_run_id(lc.utc_now())
    return Gate(data, str(stack), outputs, via, suite, rid)


def check_command(
    stack: Annotated[
        Path,
        typer.Option("--stack", help="The stack's outputs, saved with `pulumi stack output --json > outputs.json`."),
    ],
    suite: Annotated[
        Suite, typer.Option("--suite", help="quick (the launch's gate) or long (adds dcgmi diag -r 3).")
    ] = Suite.quick,
    fmt: Annotated[Format, typer.Option("--format", help="text, json (versioned) or markdown.")] = Format.text,
    via: Annotated[
        Via,
        typer.Option("--via", help="cloud-assistant: ECS RunCommand (default). ssh: through the login node."),
    ] = Via.cloud_assistant,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print exactly what would run, run nothing, exit 0.")
    ] = False,
) -> None:
    """The health gate on every node of a deployed stack: GPUs, driver, ECC, XID, NVLink, RDMA, mounts, then an
    all-reduce against the fabric's threshold; a slow one is narrowed to the node(s) by pair tests.

    Exit status: 0 healthy (or --dry-run), 1 unhealthy (or a cloud/ssh call failed), 2 invalid input (nothing run).
    """
    from blueprints.health.report import render

    gate = load_gate(stack, via, suite.value, None)
    if dry_run:
        typer.echo("\n".join(describe(gate)))
        typer.echo("dry run: nothing was run")
        return
    check_via(gate.outputs, via)
    report = run_gate(gate, RUN, SLEEP)
    typer.echo(render(report, fmt.value))
    if not report.healthy:
        raise typer.Exit(code=1)


def gate_launch(
    stack: Path,
    outputs: StackOutputs,
    via: Via,
    run_id: str,
    *,
    skip_check: str | None,
    on_unhealthy: OnUnhealthy,
    dry_run: bool,
    run: Runner | None = None,
    sleep: Sleep | None = None,
) -> StackOutputs:
    """The quick suite before a launch: the outputs to launch on (all nodes, or the healthy ones with ``exclude``).

    ``--skip-check REASON`` skips it (a blank reason is exit 2); stop (the default): exit 1 naming the failing nodes.
    """
    from blueprints.health.report import render_text

    if skip_check is not None:
        if not skip_check.strip():
            raise UserInputError(
                "--skip-check needs a reason",
                [Problem("--skip-check", skip_check, "give why the health gate is skipped, e.g. --skip-check "
                         "'checked at 09:00, run 20261201T090000Z'; it is printed with the launch")],
            )  # fmt: skip
        typer.echo(f"health gate skipped: {skip_check.strip()}", err=True)
        return outputs
    gate = load_gate(stack, via, "quick", f"{run_id}", verb="launch")
    if dry_run:
        typer.echo("\n".join(describe(gate)))
        typer.echo(f"(on unhealthy nodes: {on_unhealthy.value})")
        return outputs
    report = run_gate(gate, run or RUN, sleep or SLEEP)
    typer.echo(render_text(report))
    if report.healthy:
        if not outputs.is_pool:
            return outputs
        # A pool's launch would find its InService nodes again: one that joined after the gate would start unchecked.
        typer.echo(f"launching on the {len(report.nodes)} pool node(s) the gate checked; nodes that join later are not")
        return _only(outputs, report.nodes)
    bad = report.unhealthy_nodes
    names = ", ".join(n.node for n in bad) or "none (the fabric as a whole is slow)"
    keep = [n for n in report.nodes if n not in bad]
    if on_unhealthy is OnUnhealthy.stop or not bad or not keep:
        why = (
            "--on-unhealthy stop"
            if on_unhealthy is OnUnhealthy.stop
            else "no healthy node to launch on, or none to exclude"
        )
        typer.echo(f"launch stopped ({why}): unhealthy node(s) {names}; nothing was started", err=True)
        raise typer.Exit(code=1)
    typer.echo(f"excluding {len(bad)} unhealthy node(s): {names}; launching on the {len(keep)} healthy node(s)")
    return _only(outputs, keep)


def _only(outputs: StackOutputs, nodes: list[Any]) -> StackOutputs:
    """The outputs of a launch on exactly ``nodes`` (checked by the gate): their IDs and addresses, no pool lookup."""
    return dataclasses.replace(
        outputs,
        scaling_group_id=None,
        instance_ids=tuple(n.node for n in nodes),
        private_ips=tuple(n.ip for n in nodes),
        expected_nodes=len(nodes),
    )


def register(app: typer.Typer) -> None:
    """Add ``check`` to ``app``."""
    app.command("check")(reports_user_errors(check_command))
