"""The pure half of ``aitrain runs``, ``aitrain logs`` and
``aitrain cancel``: the node commands and reading their answers.

A run lives in ``<shared>/.aitrain/runs/<run-id>/`` (written by the job user, see ``blueprints.launch.torchrun``): each
node's ``<host>.log`` and ``<host>.status`` (kept by ``aitrain-torchrun --run-dir``: ``state`` waiting, running, exited
or cancelled; ``pid``, the process group; ``rank``; ``exit``; ``started``/``finished``). Reading needs one node (the
directory is shared); cancelling signals each node's own process group. The commands reach the nodes the way
``aitrain launch`` does (Cloud Assistant ``RunCommand`` or ssh through the login node). Nothing here runs a process.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any, Sequence

from blueprints.core.errors import Problem, UserInputError
from blueprints.launch.torchrun import (
    RUN_COMMAND_MAX_INSTANCES,
    LaunchPlan,
    StackOutputs,
    Via,
    check_launchable,
    describe_scaling_argv,
    run_command_argv,
    run_dir,
)

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# DescribeInvocationResults: InvokeRecordStatus Running, Finished, Failed or Stopped (ECS API 2014-05-26,
# DescribeInvocationResults.md); anything but Running means the command is over.
_RUNNING = {"Running", "Pending", "Scheduled", "Stopping"}
DEFAULT_LOG_LINES = 100


@dataclass(frozen=True)
class NodeStatus:
    """One node's part in one run, as its status file says."""

    run_id: str
    host: str
    state: str
    rank: int | None
    exit_code: int | None
    started: str | None
    finished: str | None
    detail: str | None


def check_run_id(run_id: str) -> str:
    """RUN_ID names a run directory: the form ``aitrain launch --run-id`` takes."""
    if not _RUN_ID.fullmatch(run_id):
        raise UserInputError(
            "invalid RUN_ID",
            [
                Problem(
                    "RUN_ID",
                    run_id,
                    "must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit (as printed by "
                    "`aitrain launch`); list the runs with `aitrain runs --stack outputs.json`",
                )
            ],
        )
    return run_id


def check_node(outputs: StackOutputs, node: int | None) -> int | None:
    """``--node`` is a node rank: 0 to nodes-1 of a fixed cluster (a pool's size is known only on the nodes)."""
    count = len(outputs.instance_ids or ()) if outputs.instance_ids is not None else None
    if node is not None and (node < 0 or (count is not None and node >= count)):
        allowed = (
            f"0 to {count - 1} (the node's rank; {outputs.profile_name} has {count} node{'s' if count != 1 else ''})"
            if count
            else "0 or more (the node's rank)"
        )
        raise UserInputError("invalid --node", [Problem("--node", node, f"must be {allowed}")])
    return node


def runs_script(outputs: StackOutputs, run_id: str | None) -> str:
    """Print every status file of one run (or of all runs), each after a ``== <run>/<host>.status`` line. Read-only."""
    base = shlex.quote(f"{outputs.shared_mount_path.rstrip('/')}/.aitrain/runs")
    pattern = f"{shlex.quote(run_id)}/*.status" if run_id else "*/*.status"
    return (
        f"cd {base} 2>/dev/null || exit 0; for f in {pattern}; do "
        '[ -f "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 0'
    )


def logs_script(outputs: StackOutputs, run_id: str, node: int | None, lines: int, *, follow: bool = False) -> str:
    """Print the last ``lines`` lines of one node's log (by rank)
    or of every node's; ``follow``: keep printing (ssh)."""
    d = shlex.quote(run_dir(outputs, run_id))
    tail = f"tail -n {lines}{' -F' if follow else ''}"
    missing = f'echo "aitrain: no run {run_id} in {run_dir(outputs, run_id)}" >&2; exit 3'
    if node is None:
        return (
            f"cd {d} 2>/dev/null || {{ {missing}; }}; for f in *.log; "
            f'do [ -f "$f" ] || {{ {missing}; }}; done; {tail} *.log'
        )
    return (
        f"cd {d} 2>/dev/null || {{ {missing}; }}; f=$(grep -lx rank={node} *.status 2>/dev/null | head -n 1); "
        f'[ -n "$f" ] || {{ echo "aitrain: no node has rank {node} in run '
        f'{run_id} (yet): aitrain runs shows the ranks" >&2; exit 3; }}; '
        f'{tail} "${{f%.status}}.log"'
    )


def cancel_script(outputs: StackOutputs, run_id: str) -> str:
    """On each node: signal the run's process group (its status file's pid) if the run is still waiting or running."""
    status = shlex.quote(run_dir(outputs, run_id)) + '/"$(hostname)".status'
    return (
        f"f={status}; s=$(sed -n 's/^state=//p' \"$f\" 2>/dev/null); p=$(sed -n 's/^pid=//p' \"$f\" 2>/dev/null); "
        "case $s:$p in waiting:*[!0-9]*|running:*[!0-9]*|waiting:|running:) "
        'echo "$(hostname): bad pid in $f" >&2; exit 1 ;; '
        f'waiting:*|running:*) kill -TERM "-$p" && echo "$(hostname): run {run_id} cancelled (process group $p)" ;; '
        f':*) echo "$(hostname): not in run {run_id}" ;; *) echo "$(hostname): run {run_id} already $s" ;; esac'
    )


def plan_on_nodes(outputs: StackOutputs, via: Via, name: str, line: str, *, every_node: bool) -> LaunchPlan:
    """The calls that run ``line`` on the first node (reads: the run directory is shared) or on every node (cancel)."""
    check_launchable(outputs, via)
    ips = list(outputs.private_ips or ())
    if via is Via.ssh:
        assert outputs.login_node_public_ip is not None
        targets = ips if every_node else ips[:1]
        return LaunchPlan(
            line,
            False,
            None,
            [["ssh", "-J", f"root@{outputs.login_node_public_ip}", f"root@{ip}", line] for ip in targets],
            None,
        )
    template = run_command_argv(outputs, name, line, [])
    if outputs.is_pool:
        return LaunchPlan(line, False, describe_scaling_argv(outputs, 1), [], template)
    ids = list(outputs.instance_ids or ())
    if not every_node:
        ids = ids[:1]
    size = RUN_COMMAND_MAX_INSTANCES
    return LaunchPlan(
        line,
        False,
        None,
        [run_command_argv(outputs, name, line, ids[i : i + size]) for i in range(0, len(ids), size)],
        template,
    )


def describe_invocation_argv(outputs: StackOutputs, invoke_id: str) -> list[str]:
    """``aliyun ecs DescribeInvocationResults`` for one RunCommand, output as plain text."""
    return [
        "aliyun",
        "ecs",
        "DescribeInvocationResults",
        "--RegionId",
        outputs.region,
        "--InvokeId",
        invoke_id,
        "--ContentEncoding",
        "PlainText",
    ]


@dataclass(frozen=True)
class InvocationResult:
    """One instance's answer to a RunCommand."""

    instance_id: str
    status: str
    exit_code: int | None
    output: str


def parse_invocation(answer: str) -> tuple[bool, list[InvocationResult]]:
    """(finished, results) from a DescribeInvocationResults answer; ``ValueError`` when it is not one."""
    data: Any = json.loads(answer)
    items = (
        data.get("Invocation", {}).get("InvocationResults", {}).get("InvocationResult")
        if isinstance(data, dict)
        else None
    )
    if not isinstance(items, list):
        raise ValueError("no Invocation.InvocationResults.InvocationResult list in the answer")
    results = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"unexpected result {item!r}")
        code = item.get("ExitCode")
        results.append(
            InvocationResult(
                str(item.get("InstanceId", "")),
                str(item.get("InvokeRecordStatus", "")),
                code if isinstance(code, int) else None,
                str(item.get("Output") or ""),
            )
        )
    finished = bool(results) and all(r.status not in _RUNNING for r in results)
    return finished, results


def parse_listing(text: str) -> list[NodeStatus]:
    """The status files ``runs_script`` printed, one ``NodeStatus`` each, sorted by run, then rank."""
    rows: list[NodeStatus] = []
    name: str | None = None
    fields: dict[str, str] = {}

    def flush() -> None:
        if name is None:
            return
        run_id, _, file = name.partition("/")
        rows.append(
            NodeStatus(
                run_id=run_id,
                host=fields.get("host") or file.removesuffix(".status"),
                state=fields.get("state", "unknown"),
                rank=_int(fields.get("rank")),
                exit_code=_int(fields.get("exit")),
                started=fields.get("started"),
                finished=fields.get("finished"),
                detail=fields.get("detail"),
            )
        )

    for line in text.splitlines():
        if line.startswith("== "):
            flush()
            name, fields = line[3:].strip(), {}
        elif "=" in line and name is not None:
            key, value = line.split("=", 1)
            fields[key.strip()] = value.strip()
    flush()
    return sorted(rows, key=lambda r: (r.run_id, r.rank if r.rank is not None else 1 << 30, r.host))


def run_summary(rows: Sequence[NodeStatus]) -> str:
    """One run's state from its nodes: running while any is;
    failed if any exited non-zero; else cancelled or succeeded."""
    states = {r.state for r in rows}
    if states & {"running", "waiting"}:
        return "running" if "running" in states else "waiting"
    if "preempted" in states:  # a spot node was reclaimed: `aitrain launch --resume RUN_ID` continues it
        return "preempted"
    if any(r.state == "exited" and r.exit_code not in (0, None) for r in rows):
        return "failed"
    if "cancelled" in states:
        return "cancelled"
    return "succeeded" if states == {"exited"} else "unknown"


def render_runs(rows: Sequence[NodeStatus]) -> str:
    """A table: one line per run with its summary, then one per node."""
    if not rows:
        return "no runs yet (nothing in the run directory)"
    out = []
    for run_id in sorted({r.run_id for r in rows}):
        mine = [r for r in rows if r.run_id == run_id]
        out.append(f"run {run_id}: {run_summary(mine)} ({len(mine)} node{'s' if len(mine) != 1 else ''})")
        for r in mine:
            rank = "?" if r.rank is None else str(r.rank)
            code = "" if r.exit_code is None else f" exit {r.exit_code}"
            times = f" started {r.started}" if r.started else ""
            times += f" finished {r.finished}" if r.finished else ""
            detail = f" ({r.detail})" if r.detail else ""
            out.append(f"  node {rank:>3} {r.host}: {r.state}{code}{times}{detail}")
    return "\n".join(out)


def refuse_kubernetes(verb: str, namespace: str | None, run_id: str | None, *, legacy: bool = False) -> UserInputError:
    """Kubernetes runs are TrainJobs (PyTorchJobs on a legacy stack): kubectl reads and stops them."""
    ns = namespace or "<namespace>"
    label = f" -l aitrain.io/run-id={run_id}" if run_id else ""
    kind = "pytorchjob" if legacy else "trainjob"
    pods = "<job>-master-0 (workers: <job>-worker-N)" if legacy else "<job>-node-0-0-<suffix> (one pod per node)"
    how = {
        "runs": f"kubectl -n {ns} get {kind}s{label}"
        + ("" if legacy else ", and `aitrain queue --stack OUTPUTS.json` for what waits in Kueue and why"),
        "logs": f"kubectl -n {ns} logs -f {pods}; kubectl -n {ns} get pods{label}",
        "cancel": f"kubectl -n {ns} delete {kind} <job> (find it with kubectl -n {ns} get {kind}s{label})",
    }[verb]
    return UserInputError(
        f"aitrain {verb} is for torchrun launches",
        [
            Problem(
                "--stack", "a Kubernetes stack", f"its runs are {'PyTorchJobs' if legacy else 'TrainJobs'}; use {how}"
            )
        ],
    )


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


__all__ = [
    "DEFAULT_LOG_LINES",
    "NodeStatus",
    "cancel_script",
    "check_node",
    "check_run_id",
    "logs_script",
    "parse_invocation",
    "parse_listing",
    "plan_on_nodes",
    "render_runs",
    "runs_script",
]
