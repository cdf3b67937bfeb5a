"""The exact commands of the health gate: the node check script, the all-reduce line, and their Cloud Assistant/ssh
calls. Pure: the CLI (``blueprints.cli.check``) prints and runs them."""

from __future__ import annotations

import base64
import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from blueprints.bootstrap import (
    CLOUDMONITOR_PROCESS,
    ENV_DIR,
    JOB_HOME,
    JOB_UID,
    NODE_SCRIPT_PATH,
    SHARED_MOUNT,
    STATUS_PATH,
    TORCH_VENV,
    shell_templates,
)
from blueprints.core.errors import Problem, UserInputError
from blueprints.health.suites import NodeExpectations
from blueprints.launch.runs import describe_invocation_argv
from blueprints.launch.torchrun import COMMAND_CONTENT_LIMIT_BASE64_BYTES, StackOutputs, as_job_user, run_command_argv

TEMPLATES = Path(__file__).parent / "templates"
ALLREDUCE_SCRIPT = Path(__file__).parent / "allreduce.py"
# Where the all-reduce script is written on each node (the job user's local home: no race on the share).
ALLREDUCE_DIR = f"{JOB_HOME}/.aitrain"
# Seconds Cloud Assistant lets each command run (RunCommand Timeout); generous: a timeout reads as a failure.
CHECK_TIMEOUT_S = {"quick": 300, "long": 3600}
ALLREDUCE_TIMEOUT_S = {"quick": 600, "long": 1800}
# Per-rank tensor and iterations of the all-reduce (aitrain's choice: large enough to be bandwidth-bound).
ALLREDUCE_SIZE = {"quick": (256, 20), "long": (1024, 50)}


_ENV = shell_templates(TEMPLATES)


def check_script(exp: NodeExpectations, suite: str = "quick") -> str:
    """The POSIX sh script each node runs: collects facts, prints one ``AITRAIN-CHECK {json}`` line."""
    return _ENV.get_template("aitrain-check.sh.j2").render(
        suite=suite,
        gpu=exp.gpu_count > 0,
        nvlink=exp.nvlink,
        rdma=exp.rdma_prefix or "",
        long=suite == "long" and exp.gpu_count > 0,
        env_dir=ENV_DIR,
        node_script=NODE_SCRIPT_PATH,
        torch_python=f"{TORCH_VENV}/bin/python",
        job_uid=JOB_UID,
        shared=SHARED_MOUNT,
        status_path=STATUS_PATH,
        cms_process=CLOUDMONITOR_PROCESS,
    )


def encoded_size(text: str) -> int:
    """Bytes once Base64-encoded (what Cloud Assistant counts against its 16 KB)."""
    return len(base64.b64encode(text.encode("utf-8")))


def fits(text: str, what: str) -> str:
    """``text`` when it fits one RunCommand; else ``UserInputError`` naming the size and the limit."""
    size = encoded_size(text)
    if size > COMMAND_CONTENT_LIMIT_BASE64_BYTES:
        raise UserInputError(
            f"the {what} does not fit Cloud Assistant",
            [Problem(what, f"{size} bytes in Base64", f"at most {COMMAND_CONTENT_LIMIT_BASE64_BYTES} (RunCommand)")],
        )
    return text


def backend(exp: NodeExpectations) -> str:
    """nccl on GPU nodes, gloo on CPU nodes."""
    return "nccl" if exp.gpu_count else "gloo"


def allreduce_line(
    outputs: StackOutputs, exp: NodeExpectations, suite: str, hosts: Sequence[str] | None, nnodes: int | None = None
) -> str:
    """The line each node runs for the all-reduce: as the job user, write ``allreduce.py`` to its home and start it
    under the node's launcher (rendezvous over ``hosts``, or the host registry with ``nnodes``), in the foreground."""
    size, iters = ALLREDUCE_SIZE[suite]
    # gzip (mtime 0: the same bytes every time) keeps the line well under Cloud Assistant's 16 KB.
    script = base64.b64encode(gzip.compress(ALLREDUCE_SCRIPT.read_bytes(), mtime=0)).decode()
    path = f"{ALLREDUCE_DIR}/allreduce.py"
    launcher = [outputs.launcher]
    if hosts:
        launcher += ["--hosts", ",".join(hosts)]
    elif nnodes:
        launcher += ["--nnodes", str(nnodes)]
    body = 'mkdir -p "$1" && printf %s "$2" | base64 -d | gzip -dc >"$1/allreduce.py" || exit 1; shift 2; exec "$@"'
    args = [*launcher, "--", "python", path, "--backend", backend(exp), "--size-mb", str(size), "--iters", str(iters)]
    line = "ulimit -l unlimited 2>/dev/null; " + as_job_user(body, ALLREDUCE_DIR, script, *args, "--json")
    return fits(line, "all-reduce command")


def with_timeout(argv: list[str], seconds: int) -> list[str]:
    """``argv`` (a RunCommand) with its ``--Timeout`` set to ``seconds``."""
    out = list(argv)
    out[out.index("--Timeout") + 1] = str(seconds)
    return out


@dataclass(frozen=True)
class Target:
    """One node to check: its instance ID (Cloud Assistant) and private IP (ssh; None on a pool until it answers)."""

    instance_id: str
    ip: str | None


def cloud_assistant_calls(
    outputs: StackOutputs, name: str, line: str, ids: Sequence[str], timeout: int
) -> list[list[str]]:
    """RunCommand calls running ``line`` on ``ids``, at most 50 instances each."""
    size = 50
    return [
        with_timeout(run_command_argv(outputs, name, line, ids[i : i + size]), timeout)
        for i in range(0, len(ids), size)
    ]


def ssh_call(outputs: StackOutputs, ip: str, line: str) -> list[str]:
    """ssh through the login node to one node, running ``line``."""
    assert outputs.login_node_public_ip is not None
    return ["ssh", "-J", f"root@{outputs.login_node_public_ip}", f"root@{ip}", line]


def describe_result_argv(outputs: StackOutputs, invoke_id: str, instance_id: str) -> list[str]:
    """DescribeInvocationResults for one instance of one invocation (no paging to follow), output as plain text."""
    return [*describe_invocation_argv(outputs, invoke_id), "--InstanceId", instance_id]
