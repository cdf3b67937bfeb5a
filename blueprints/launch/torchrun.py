"""The pure half of ``aitrain launch``: read and check ``pulumi stack output --json``, build the exact commands it runs.

Nothing here runs a process or imports Pulumi: the CLI (``blueprints.cli.launch``) prints what these functions
return and, unless ``--dry-run``, runs it. The known blueprint names are passed in, so this module does not import
the blueprint registry (which imports Pulumi).
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from blueprints.bootstrap import DEFAULT_MAX_RESTARTS, JOB_HOME, JOB_UID, JOB_USER
from blueprints.core.errors import MISSING, Problem, UserInputError, join_allowed

# Re-exported (they were defined here; launch_kubernetes imports them from this module).
from blueprints.launch.outputs import SAFE_PATH as SAFE_PATH
from blueprints.launch.outputs import SAFE_PATH_ALLOWED
from blueprints.launch.outputs import SECRET_PLACEHOLDER as SECRET_PLACEHOLDER
from blueprints.launch.outputs import OutputsReader as OutputsReader

# Marks stack outputs as aitrain's: every blueprint writes it,
# ``aitrain launch`` requires it. Bump when their meaning changes.
OUTPUTS_VERSION = "v1"
# `pulumi stack output --json` prints secret values as this text unless --show-secrets is given.

# RunCommand takes InstanceId.N with "N: 1 to 50" (AlibabaCloudDocs/ecs, intl.zh-CN/API参考/云助手/RunCommand.md)
# and "Valid values of N: 1 to 100" (quota, adjustable) in the current SDK (aliyun/alibabacloud-csharp-sdk,
# ecs-20140526/core/Models/RunCommandShrinkRequest.cs). 50 per call satisfies both; more nodes = more calls.
RUN_COMMAND_MAX_INSTANCES = 50
# "命令内容Base64编码后不能超过16KB" (RunCommand.md above); the current SDK allows 18 KB (kept) / 24 KB (not kept).
# The strictest figure is used.
COMMAND_CONTENT_LIMIT_BASE64_BYTES = 16 * 1024
# RunCommand Timeout is in seconds, default 60 (RunCommand.md). The line only starts the launcher in the
# background and returns, so the default is plenty; it is passed explicitly so the printed command says so.
RUN_COMMAND_TIMEOUT_S = 60
# DescribeScalingInstances pages its answer (PageNumber / PageSize); 50 is within every documented maximum.
SCALING_PAGE_SIZE = 50

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_INSTANCE_ID = re.compile(r"i-[a-z0-9]{4,64}")
_SCALING_GROUP_ID = re.compile(r"asg-[a-z0-9]{4,64}")
# Patterns both launches check stack outputs with (a region ID; SAFE_PATH in launch_outputs).
REGION_ID = re.compile(r"[a-z]{2}(-[a-z0-9]+)+")
_PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
NOW_ENV = "AITRAIN_NOW"
# More restarts than this is a run that fails the same way every time, not one that keeps training.
MAX_RESTARTS_LIMIT = 100


class Via(str, enum.Enum):
    """How the launch line reaches the nodes."""

    cloud_assistant = "cloud-assistant"
    ssh = "ssh"


@dataclass(frozen=True)
class StackOutputs:
    """The parts of an aitrain stack's outputs that a launch needs, checked."""

    source: str
    blueprint: str
    profile_name: str
    region: str
    launcher: str
    shared_mount_path: str
    login_node_public_ip: str | None
    instance_ids: tuple[str, ...] | None  # fixed cluster (empty when parked); None for a pool
    private_ips: tuple[str, ...] | None
    expected_nodes: int | None
    scaling_group_id: str | None  # autoscaling pool

    @property
    def is_pool(self) -> bool:
        """Whether the nodes come from an ESS scaling group (found at launch time) rather than the outputs."""
        return self.scaling_group_id is not None


@dataclass(frozen=True)
class LaunchPlan:
    """What ``aitrain launch`` runs: the per-node line, optional discovery call, and the calls that start it."""

    line: str
    hosts_in_line: bool
    discovery: list[str] | None  # pools: DescribeScalingInstances (first page)
    commands: list[list[str]]  # fixed clusters: every call, in order; pools: [] until the IDs are known
    pool_template: list[str] | None  # pools: RunCommand without the InstanceId.N arguments


def utc_now(environ: Mapping[str, str] | None = None) -> dt.datetime:
    """``AITRAIN_NOW`` (``YYYY-MM-DDTHH:MM:SSZ``) when set, so
    runs and tests stay deterministic; else the system clock."""
    env = os.environ if environ is None else environ
    text = env.get(NOW_ENV)
    if not text:
        return dt.datetime.now(dt.timezone.utc)
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise UserInputError(
            "invalid time",
            [Problem(NOW_ENV, text, "must be a UTC time written YYYY-MM-DDTHH:MM:SSZ, e.g. 2026-12-01T09:30:00Z")],
        ) from None


def default_run_id(now: dt.datetime) -> str:
    """The run id when none is given: the UTC time, e.g. ``20261201T093000Z`` (sorts by time, safe in paths)."""
    return now.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def check_run_id(run_id: str) -> str:
    """A run id names a directory and a Cloud Assistant command: letters, digits, ``._-``, 1–64 characters."""
    if not _RUN_ID.fullmatch(run_id):
        raise UserInputError(
            "invalid --run-id",
            [
                Problem(
                    "--run-id", run_id, "must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit"
                )
            ],
        )
    return run_id


def load_outputs(path: Path) -> Any:
    """The JSON document in ``path`` (``pulumi stack output --json``), unchecked; ``UserInputError`` when unreadable."""
    where = f"--stack {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise launch_error(
            where, str(path), "file does not exist; save the outputs with `pulumi stack output --json > outputs.json`"
        ) from None
    except IsADirectoryError:
        raise launch_error(
            where, str(path), "is a directory; give the file written by `pulumi stack output --json`"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise launch_error(where, str(path), f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise launch_error(
            where,
            str(path),
            f"is not JSON ({exc.msg if isinstance(exc, json.JSONDecodeError) else 'too deeply nested'}); expected the "
            "output of `pulumi stack output --json`",
        ) from None
    return data


def outputs_blueprint(data: Any, source: str, known_blueprints: Iterable[str]) -> str:
    """The blueprint that wrote these stack outputs; exit 2 when they are not aitrain's, are another outputs version
    or name a blueprint this aitrain does not know (what every reader of outputs checks first)."""
    known = tuple(known_blueprints)
    if not isinstance(data, dict) or "aitrain_outputs" not in data:
        raise UserInputError(
            f"these are not aitrain stack outputs: {source}",
            [
                Problem(
                    "aitrain_outputs",
                    MISSING,
                    "missing; run `pulumi stack output --json` in the stack "
                    "that `pulumi up` built from an aitrain stack config",
                )
            ],
        )
    if data["aitrain_outputs"] != OUTPUTS_VERSION:
        raise launch_error(
            f"{source}: aitrain_outputs",
            data["aitrain_outputs"],
            f"this aitrain reads outputs version '{OUTPUTS_VERSION}'; re-run `pulumi up` with this aitrain version",
        )
    blueprint = data.get("blueprint")
    if not isinstance(blueprint, str) or blueprint not in known:
        raise UserInputError(
            f"blueprint {blueprint!r} is not one aitrain knows: {source}",
            [
                Problem(
                    "blueprint",
                    blueprint if "blueprint" in data else MISSING,
                    f"these look like outputs of another blueprint or tool; aitrain knows {join_allowed(known)}",
                )
            ],
        )
    return blueprint


def parse_outputs(data: Any, source: str, known_blueprints: Iterable[str]) -> StackOutputs:
    """Check one outputs document; every problem is reported at once, naming the key, the value and what is allowed."""
    blueprint = outputs_blueprint(data, source, known_blueprints)
    problems: list[Problem] = []
    get = OutputsReader(data, source, problems)
    profile_name = get.text("profile_name", _PROFILE_NAME, "a profile name (lowercase letters, digits, hyphens)")
    region = get.text("region", REGION_ID, "a region ID such as cn-shanghai")
    launcher = get.text("launcher", SAFE_PATH, SAFE_PATH_ALLOWED.format("/usr/local/bin/aitrain-torchrun"))
    shared = get.text("shared_mount_path", SAFE_PATH, SAFE_PATH_ALLOWED.format("/mnt/shared"))
    login = get.ip("login_node_public_ip", required=False)
    ids = ips = expected = group = None
    if "scaling_group_id" in data:
        group = get.text("scaling_group_id", _SCALING_GROUP_ID, "an ESS scaling group ID (asg-...)")
    elif "node_instance_ids" in data or "node_private_ips" in data or "expected_nodes" in data:
        ids = get.text_list("node_instance_ids", _INSTANCE_ID, "ECS instance IDs (i-...)")
        ips = get.ip_list("node_private_ips")
        expected = get.count("expected_nodes")
        if ids is not None and ips is not None and len(ids) != len(ips):
            problems.append(
                Problem(
                    f"{source}: node_private_ips",
                    list(ips),
                    f"has {len(ips)} addresses for {len(ids)} node_instance_ids; they must pair up (same order): "
                    "re-run `pulumi up`, then save the outputs again",
                )
            )
        elif ids and expected is not None and len(ids) != expected:
            problems.append(
                Problem(
                    f"{source}: node_instance_ids",
                    list(ids),
                    f"lists {len(ids)} nodes but expected_nodes is {expected}: the stack is mid-update; run `pulumi "
                    "up`, then save the outputs again",
                )
            )
    else:
        problems.append(
            Problem(
                f"{source}: node_instance_ids",
                MISSING,
                "the outputs name no nodes: a fixed cluster exports node_instance_ids, node_private_ips and "
                "expected_nodes; a pool exports scaling_group_id",
            )
        )
    if problems:
        raise UserInputError(f"cannot launch from {source}", problems)
    assert profile_name and region and launcher and shared  # every None added a problem above
    return StackOutputs(source, blueprint, profile_name, region, launcher, shared, login, ids, ips, expected, group)


def check_launchable(outputs: StackOutputs, via: Via) -> None:
    """Refuse a parked cluster and ``--via ssh`` without a login node or on a pool, before anything runs."""
    if outputs.instance_ids is not None and not outputs.instance_ids:
        raise launch_error(
            f"{outputs.source}: node_instance_ids",
            [],
            f"the cluster '{outputs.profile_name}' is parked (no nodes): set compute.nodes / `aitrain park --resume N "
            "--write`, run `pulumi up`, then save the outputs again",
        )
    if via is Via.ssh and outputs.is_pool:
        raise launch_error(
            "--via",
            via.value,
            "ssh needs the node addresses in the outputs (fixed clusters only); a pool's nodes are found through Cloud "
            "Assistant: use --via cloud-assistant",
        )
    if via is Via.ssh and outputs.login_node_public_ip is None:
        raise launch_error(
            "--via",
            via.value,
            f"ssh goes through the login node, and {outputs.source} has no login_node_public_ip: set "
            "access.login_node: true and `pulumi up`, or use --via cloud-assistant",
        )


# The node line runs the launcher as the job user the boot creates (blueprints.bootstrap: same uid/gid on every node):
# under root_squash root is nobody on the share, so the run directory, the log and the status are made by that user.
# setpriv (util-linux) keeps the resource limits, so `ulimit -l` raised by root first reaches NCCL's RDMA memory
# registration; it goes through no PAM stack that could lower them again. The log is appended to: a resumed run (or a
# node started again to rejoin it) keeps what its earlier attempts wrote, and a launcher still running is not truncated.
JOB_SHELL = (
    'd=$1; shift; mkdir -p "$d" || exit; HOME={home} USER={user} LOGNAME={user} '
    'setsid nohup "$@" < /dev/null >> "$d/$(hostname).log" 2>&1 &'
).format(home=JOB_HOME, user=JOB_USER)


def run_dir(outputs: StackOutputs, run_id: str) -> str:
    """Where a run's logs and status files live on the shared file system."""
    return f"{outputs.shared_mount_path.rstrip('/')}/.aitrain/runs/{run_id}"


def checkpoint_dir(outputs: StackOutputs, run_id: str) -> str:
    """Where a run's job saves its checkpoints (``AITRAIN_CHECKPOINT_DIR``): the same for every attempt of the run."""
    return f"{outputs.shared_mount_path.rstrip('/')}/.aitrain/checkpoints/{run_id}"


def checkpoint_script(outputs: StackOutputs, run_id: str) -> str:
    """Read-only, on one node (the share is the same everywhere): how many entries the run's checkpoint directory
    holds, printed as ``checkpoints=N`` (0 when it is missing or empty)."""
    d = shlex.quote(checkpoint_dir(outputs, run_id))
    return f"n=$(ls -A {d} 2>/dev/null | wc -l); echo checkpoints=$n; exit 0"


def checkpoint_count(text: str) -> int:
    """The N of the ``checkpoints=N`` line ``checkpoint_script`` printed (0 when there is none)."""
    found = re.findall(r"^checkpoints=(\d+)\s*$", text, flags=re.MULTILINE)
    return int(found[-1]) if found else 0


def check_resume(run_id: str | None, resume: str | None) -> str | None:
    """``--resume RUN_ID`` names the run to continue; ``--run-id`` with it is refused (one run id per launch)."""
    if resume is None:
        return None
    if run_id is not None:
        raise launch_error(
            "--run-id",
            run_id,
            f"cannot go with --resume {resume}: a resumed run keeps its own id (and so its checkpoint directory); "
            "drop --run-id",
        )
    return check_run_id(resume)


def no_checkpoint_error(outputs: StackOutputs, run_id: str) -> UserInputError:
    """``--resume`` of a run whose checkpoint directory is missing or empty: nothing to resume from (exit 2)."""
    return launch_error(
        "--resume",
        run_id,
        f"run {run_id} has no checkpoint in {checkpoint_dir(outputs, run_id)} (missing or empty), so there is nothing "
        "to resume from and nothing was started; the job must save into $AITRAIN_CHECKPOINT_DIR (see README, "
        "Resume), or start a new run without --resume",
    )


def check_max_restarts(value: int) -> int:
    """torchrun --max-restarts: 0 (the first failure ends the run) or more."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > MAX_RESTARTS_LIMIT:
        raise launch_error(
            "--max-restarts",
            value,
            f"must be a whole number from 0 to {MAX_RESTARTS_LIMIT} (each restart restarts every node's workers from "
            f"their newest checkpoint; default {DEFAULT_MAX_RESTARTS})",
        )
    return value


def as_job_user(script: str, *args: str) -> str:
    """A shell line that runs ``script`` (``sh -c``, with ``args``) as the job user, never as root."""
    return shlex.join(
        ["setpriv", f"--reuid={JOB_UID}", f"--regid={JOB_UID}", "--init-groups", "sh", "-c", script, "sh", *args]
    )


def node_line(
    outputs: StackOutputs,
    run_id: str,
    command: Sequence[str],
    *,
    hosts: bool = True,
    nnodes: int | None = None,
    max_restarts: int = DEFAULT_MAX_RESTARTS,
) -> str:
    """The one shell line each node runs: as the job user, make
    the run directory and start the launcher in the background.

    The launcher learns the nodes from ``--hosts`` (the outputs' private IPs) or, without it, the host registry
    with ``--nnodes`` (how many must have registered): the node count is never baked into the nodes' user data,
    so resizing a cluster does not change (and reboot) the nodes already running. ``--run-dir`` makes it keep
    ``<host>.status`` there (what ``aitrain runs`` reads); ``--run-id`` names the rendezvous and
    ``--checkpoint-dir`` is the job's ``AITRAIN_CHECKPOINT_DIR``; ``--max-restarts`` goes to torchrun.

    ``setsid`` and ``< /dev/null`` detach the launcher from the shell Cloud Assistant or ssh started, so that call
    returns at once and the job outlives it; stdout and stderr go to ``<shared>/.aitrain/runs/<run-id>/<host>.log``.
    A directory the job user cannot create fails the call itself (mkdir runs before the background start).
    """
    if not command:
        raise launch_error(
            "CMD",
            [],
            "give the command to run after --, e.g. `aitrain launch "
            "--stack outputs.json -- python train.py --epochs 10`",
        )
    directory = run_dir(outputs, run_id)
    launcher = [
        outputs.launcher,
        "--run-dir",
        directory,
        "--run-id",
        run_id,
        "--max-restarts",
        str(max_restarts),
        "--checkpoint-dir",
        checkpoint_dir(outputs, run_id),
    ]
    if hosts and outputs.private_ips:
        launcher += ["--hosts", ",".join(outputs.private_ips)]
    elif nnodes is not None:
        launcher += ["--nnodes", str(nnodes)]
    return "ulimit -l unlimited 2>/dev/null; " + as_job_user(JOB_SHELL, directory, *launcher, "--", *command)


def plan_launch(
    outputs: StackOutputs,
    via: Via,
    run_id: str,
    command: Sequence[str],
    *,
    max_restarts: int = DEFAULT_MAX_RESTARTS,
) -> LaunchPlan:
    """Everything ``aitrain launch`` will run for these outputs, in order."""
    check_launchable(outputs, via)
    line = node_line(outputs, run_id, command, max_restarts=max_restarts)
    hosts_in_line = bool(outputs.private_ips)
    if via is Via.ssh:
        assert outputs.login_node_public_ip is not None and outputs.private_ips is not None
        jump = f"root@{outputs.login_node_public_ip}"
        return LaunchPlan(
            line, hosts_in_line, None, [["ssh", "-J", jump, f"root@{ip}", line] for ip in outputs.private_ips], None
        )
    if _encoded_size(line) > COMMAND_CONTENT_LIMIT_BASE64_BYTES and hosts_in_line:
        # A very large cluster's host list would not fit: the launcher then reads the host registry on the
        # shared file system instead, which every node writes at boot.
        line, hosts_in_line = (
            node_line(
                outputs, run_id, command, hosts=False, nnodes=len(outputs.private_ips or ()), max_restarts=max_restarts
            ),
            False,
        )
    if _encoded_size(line) > COMMAND_CONTENT_LIMIT_BASE64_BYTES:
        raise launch_error(
            "CMD",
            shlex.join(command),
            f"the node line is {_encoded_size(line)} bytes once Base64-encoded; Cloud Assistant takes at most "
            f"{COMMAND_CONTENT_LIMIT_BASE64_BYTES}: put the arguments in a file on the shared file system",
        )
    template = run_command_argv(outputs, run_id, line, [])
    if outputs.is_pool:
        return LaunchPlan(line, hosts_in_line, describe_scaling_argv(outputs, 1), [], template)
    ids = list(outputs.instance_ids or ())
    batches = [ids[i : i + RUN_COMMAND_MAX_INSTANCES] for i in range(0, len(ids), RUN_COMMAND_MAX_INSTANCES)]
    return LaunchPlan(
        line, hosts_in_line, None, [run_command_argv(outputs, run_id, line, batch) for batch in batches], template
    )


def run_command_argv(outputs: StackOutputs, run_id: str, line: str, instance_ids: Sequence[str]) -> list[str]:
    """``aliyun ecs RunCommand`` for up to 50 instances (RPC list parameters are spelt
    ``--InstanceId.1 ... --InstanceId.N``)."""
    argv = [
        "aliyun",
        "ecs",
        "RunCommand",
        "--RegionId",
        outputs.region,
        "--Type",
        "RunShellScript",
        "--Name",
        f"aitrain-{outputs.profile_name}-{run_id}",
        "--CommandContent",
        line,
        "--Timeout",
        str(RUN_COMMAND_TIMEOUT_S),
    ]
    for n, instance_id in enumerate(instance_ids, start=1):
        argv += [f"--InstanceId.{n}", instance_id]
    return argv


def describe_scaling_argv(outputs: StackOutputs, page: int) -> list[str]:
    """``aliyun ess DescribeScalingInstances`` for one page of the pool's InService instances."""
    assert outputs.scaling_group_id is not None
    return [
        "aliyun",
        "ess",
        "DescribeScalingInstances",
        "--RegionId",
        outputs.region,
        "--ScalingGroupId",
        outputs.scaling_group_id,
        "--LifecycleState",
        "InService",
        "--PageSize",
        str(SCALING_PAGE_SIZE),
        "--PageNumber",
        str(page),
    ]


def pool_placeholder(outputs: StackOutputs) -> str:
    """How a dry run shows the instance arguments it cannot know yet."""
    return (
        f"--InstanceId.1 <id> --InstanceId.2 <id> ... (each InService instance of {outputs.scaling_group_id}, "
        f"{RUN_COMMAND_MAX_INSTANCES} per call)"
    )


def scaling_instance_ids(answer: str) -> tuple[list[str], int]:
    """The InService instance IDs on one page of a DescribeScalingInstances answer, and the total count.

    Accepts both API versions' shapes: 2014-08-28 (``ScalingInstances.ScalingInstance[]``, the aliyun CLI's
    default) and 2022-02-22 (``ScalingInstances[]``). ``ValueError`` when it is neither.
    """
    data = json.loads(answer)
    items = data.get("ScalingInstances") if isinstance(data, dict) else None
    if isinstance(items, dict):
        items = items.get("ScalingInstance")
    if not isinstance(items, list):
        raise ValueError("no ScalingInstances list in the answer")
    ids = [
        item["InstanceId"]
        for item in items
        if isinstance(item, dict) and item.get("LifecycleState", "InService") == "InService"
    ]
    if not all(isinstance(i, str) and _INSTANCE_ID.fullmatch(i) for i in ids):
        raise ValueError(f"unexpected instance IDs {ids!r}")
    total = data.get("TotalCount", len(items))
    return ids, int(total)


def render_plan(outputs: StackOutputs, via: Via, run_id: str, plan: LaunchPlan) -> str:
    """What the user reads before anything runs: the nodes, the per-node line and every command, copy-pasteable."""
    if outputs.is_pool:
        nodes = f"the InService nodes of {outputs.scaling_group_id}"
    else:
        count = len(outputs.instance_ids or ())
        nodes = f"{count} node{'s' if count != 1 else ''}"
    lines = [
        f"aitrain launch: {outputs.profile_name} ({outputs.blueprint}, "
        f"{outputs.region}), {nodes}, run {run_id}, via {via.value}",
        "each node runs:",
        f"  {plan.line}",
    ]
    if not plan.hosts_in_line and not outputs.is_pool:
        lines.append(
            f"  (no --hosts: {len(outputs.private_ips or ())} addresses do not fit "
            "in one Cloud Assistant command; the launcher reads the host registry)"
        )
    if outputs.is_pool:
        lines.append(
            "  (with --nnodes N before --, N = the InService instances "
            "found: the launcher waits until N have registered)"
        )
    lines.append("commands:")
    if plan.discovery is not None and plan.pool_template is not None:
        lines.append(f"  {shlex.join(plan.discovery)}")
        lines.append(f"  {shlex.join(plan.pool_template)} {pool_placeholder(outputs)}")
    lines += [f"  {shlex.join(argv)}" for argv in plan.commands]
    lines.append(
        f"logs: {run_dir(outputs, run_id)}/<hostname>.log on the "
        f"shared file system, written as {JOB_USER} (uid {JOB_UID})"
    )
    return "\n".join(lines)


def _encoded_size(line: str) -> int:
    return len(base64.b64encode(line.encode("utf-8")))


def launch_error(path: str, value: Any, message: str) -> UserInputError:
    """One problem that stops a launch before anything runs (exit 2)."""
    return UserInputError(f"cannot launch ({path})", [Problem(path, value, message)])
