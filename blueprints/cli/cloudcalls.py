"""The cloud calls the run-time commands share (launch, check, runs, logs, cancel): run a printed argv, read a
RunCommand answer, list a pool's InService nodes. No command module imports another for these (``launch`` imports
the health gate, so ``check`` importing ``launch`` would be a cycle)."""

from __future__ import annotations

import json
import shlex
import subprocess
from typing import Any, Callable

import typer

# How each binary is installed, for the message when it is missing.
INSTALL = {
    "aliyun": "install the Alibaba Cloud CLI (https://www.alibabacloud.com/help/en/cli/) and run `aliyun configure`",
    "ssh": "install an OpenSSH client",
}
Runner = Callable[[list[str]], "subprocess.CompletedProcess[str]"]


def run_argv(argv: list[str]) -> "subprocess.CompletedProcess[str]":
    """Run one printed argv list (no shell: the list is exactly what was printed, word for word)."""
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def invoke_id(stdout: str) -> str | None:
    """The InvokeId in a RunCommand answer, if any."""
    try:
        data = json.loads(stdout)
    except (ValueError, RecursionError):
        return None
    value = data.get("InvokeId") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def pool_instance_ids(outputs: Any, run: Runner) -> list[str]:
    """The pool's InService instance IDs, page by page (exit 1 when a call fails or the pool has none)."""
    from blueprints.launch import torchrun as lc

    ids: list[str] = []
    page = 1
    while True:
        argv = lc.describe_scaling_argv(outputs, page)
        result = run(argv)
        if result.returncode != 0:
            typer.echo(f"failed (exit {result.returncode}): {shlex.join(argv)}\n{result.stderr.strip()}", err=True)
            raise typer.Exit(code=1)
        try:
            found, total = lc.scaling_instance_ids(result.stdout)
        except (ValueError, KeyError, TypeError) as exc:
            typer.echo(f"cannot read the answer of {shlex.join(argv)}: {exc}", err=True)
            raise typer.Exit(code=1) from None
        ids += found
        if not found or page * lc.SCALING_PAGE_SIZE >= total:
            break
        page += 1
    if not ids:
        typer.echo(
            f"the pool {outputs.scaling_group_id} has no InService "
            "nodes: scale it out (desired capacity) and launch again",
            err=True,
        )
        raise typer.Exit(code=1)
    return ids
