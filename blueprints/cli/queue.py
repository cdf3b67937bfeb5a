"""The ``queue`` command: who waits for GPUs on a kubernetes-pool stack's Kueue queues, and why (read-only)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Annotated, Optional

import typer

from blueprints.cli.cloudcalls import run_argv
from blueprints.cli.support import reports_user_errors
from blueprints.core.errors import MISSING, Problem, UserInputError

# The read-only kubectl calls run through this name (tests may replace it with recorded answers).
_run = run_argv

KUBECTL_INSTALL = "https://kubernetes.io/docs/tasks/tools/"
# Words of kubectl's errors when it cannot reach or log in to the API server.
_UNREACHABLE = ("unauthorized", "refused", "right host", "no such host", "timeout", "unable to connect", "certificate")


def queue_command(
    stack: Annotated[
        Path,
        typer.Option("--stack", help="The stack's outputs, saved with `pulumi stack output --json > outputs.json`."),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the queues and jobs as JSON (for tools).")] = False,
    team: Annotated[
        Optional[str], typer.Option("--team", help="Only this team's queue and jobs (a team of the outputs' queues).")
    ] = None,
) -> None:
    """Each team's GPU queue (Kueue ClusterQueue: in use, quota, borrowed) and every job in it: its GPUs, its state
    (pending, quota reserved, admitted, running, evicted, finished) and, in Kueue's own words, why it waits.

    Runs only `kubectl get` (Workloads in the stack's namespace, the cluster's ClusterQueues) with your kubeconfig.

    Exit status: 0 shown, 1 a kubectl call failed or gave an answer that cannot be read (its stderr is shown),
    2 invalid input or no kubectl on PATH (nothing run).
    """
    from blueprints.architectures import job_engines
    from blueprints.launch import queue as lq
    from blueprints.launch import queue_render as lr
    from blueprints.launch import torchrun as lc
    from blueprints.launch.queue_answers import KubectlAnswerError

    outputs = lq.parse_queue_outputs(lc.load_outputs(stack), str(stack), job_engines())
    chosen = lq.check_team(outputs, team)
    if shutil.which("kubectl") is None:
        first = shlex.join(lq.workloads_argv(outputs.namespace))
        raise UserInputError(
            "cannot read the queues: `kubectl` is not on PATH",
            [
                Problem(
                    "kubectl",
                    MISSING,
                    "aitrain queue asks the cluster with `kubectl get` (read-only); install kubectl "
                    f"({KUBECTL_INSTALL}) and point it at the stack's cluster with its kubeconfig, or run `{first}` "
                    "where kubectl is",
                )
            ],
        )
    answers = [
        _get(argv, outputs.namespace) for argv in (lq.workloads_argv(outputs.namespace), lq.cluster_queues_argv())
    ]
    try:
        report = lq.build_report(outputs, answers[0], answers[1], team=chosen, now=lc.utc_now())
    except KubectlAnswerError as exc:
        typer.echo(f"cannot read kubectl's answer: {exc}. Is kubectl's current context the stack's cluster?", err=True)
        raise typer.Exit(code=1) from None
    if as_json:
        typer.echo(json.dumps(lr.queue_json(report), indent=2, ensure_ascii=False))
    else:
        typer.echo(lr.render_queue(report, _width()), nl=False)


def _get(argv: list[str], namespace: str) -> str:
    """Run one read-only `kubectl get`; a failure is exit 1 with one paragraph: what failed, kubectl's words, what to
    check."""
    try:
        result: subprocess.CompletedProcess[str] = _run(argv)
    except OSError as exc:
        typer.echo(f"cannot run {shlex.join(argv)}: {exc.strerror or exc}", err=True)
        raise typer.Exit(code=1) from None
    if result.returncode == 0:
        return result.stdout
    said = " ".join((result.stderr or result.stdout).split()) or "(no message)"
    typer.echo(
        f"{shlex.join(argv)} failed (exit {result.returncode}): {said} {_hint(said, argv, namespace)} "
        "Nothing was changed: aitrain queue only reads.",
        err=True,
    )
    raise typer.Exit(code=1)


def _hint(said: str, argv: list[str], namespace: str) -> str:
    """What to check for kubectl's usual failures."""
    resource = argv[2]
    lower = said.lower()
    if "doesn't have a resource type" in lower or "the server could not find the requested resource" in lower:
        return (
            f"The cluster kubectl talks to has no {resource}: Kueue is not installed there. Check that kubectl's "
            "current context (`kubectl config current-context`) is this stack's cluster and that `pulumi up` has run."
        )
    if "forbidden" in lower:
        role = "kueue-workload-viewer-role" if resource.startswith("workloads") else "kueue-clusterqueue-viewer-role"
        where = f" in namespace {namespace}" if "-n" in argv else " (cluster-wide)"
        return f"Your Kubernetes user may not list {resource}{where}: ask the cluster's admin for Kueue's {role}."
    if any(word in lower for word in _UNREACHABLE) or "no configuration has been provided" in lower:
        return (
            "kubectl cannot reach the cluster with your kubeconfig ($KUBECONFIG, else ~/.kube/config): get the stack's "
            "cluster kubeconfig from the ACK console (the cluster's connection information) and check the API "
            "server is reachable from here."
        )
    return "Check that kubectl's current context is this stack's cluster (`kubectl config current-context`)."


def _width() -> int:
    """The terminal's columns when printing to one; 160 otherwise (pipes and files stay the same)."""
    import sys

    return shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160


def register(app: typer.Typer) -> None:
    """Add ``queue`` to ``app``."""
    app.command("queue")(reports_user_errors(queue_command))
