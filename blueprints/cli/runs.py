"""The ``runs``, ``logs`` and ``cancel`` commands: after
``aitrain launch``, through the same keyless path to the nodes."""

from __future__ import annotations

import shlex
import shutil
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from blueprints.cli.cloudcalls import INSTALL, Runner, invoke_id, pool_instance_ids
from blueprints.cli.cloudcalls import run_argv as _run
from blueprints.cli.support import reports_user_errors
from blueprints.core.errors import Problem, UserInputError
from blueprints.launch.torchrun import Via

STACK = typer.Option("--stack", help="The stack's outputs, saved with `pulumi stack output --json > outputs.json`.")
VIA = typer.Option(
    "--via",
    help=(
        "cloud-assistant: ECS RunCommand, keyless (default). ssh: "
        "through the login node (fixed clusters with access.login_node)."
    ),
)
DRY_RUN = typer.Option("--dry-run", help="Print exactly what would run, run nothing, exit 0.")
RUN_ID = typer.Argument(
    help="The run, as `aitrain launch` printed it (e.g. 20261201T093000Z or your --run-id).", show_default=False
)
# How long a read waits for Cloud Assistant's answer (the command itself only reads files), and how often it asks.
POLL_SECONDS, POLL_TRIES = 2.0, 60


def _outputs(stack: Path, verb: str, run_id: str | None) -> Any:
    """Checked outputs of a torchrun stack; a Kubernetes stack is told to use kubectl (exit 2)."""
    from blueprints.architectures import job_engines
    from blueprints.launch import kubernetes as lk
    from blueprints.launch import runs
    from blueprints.launch import torchrun as lc

    data = lc.load_outputs(stack)
    engines = job_engines()
    if lk.job_engine_of(data, str(stack), engines) == lk.KUBERNETES_ENGINE:
        namespace = data.get("kubernetes_namespace") if isinstance(data, dict) else None
        legacy = isinstance(data, dict) and data.get("job_api") == "kubeflow.org/v1"
        raise runs.refuse_kubernetes(verb, namespace if isinstance(namespace, str) else None, run_id, legacy=legacy)
    return lc.parse_outputs(data, str(stack), engines)


def _execute(
    outputs: Any, via: Via, name: str, line: str, *, every_node: bool, dry_run: bool, title: str, run: Runner = _run
) -> list[str]:
    """Print the calls, then (unless dry run) make them; return
    each node's output (Cloud Assistant: after it finished)."""
    from blueprints.launch import runs
    from blueprints.launch import torchrun as lc

    plan = runs.plan_on_nodes(outputs, via, name, line, every_node=every_node)
    binary = "ssh" if via is Via.ssh else "aliyun"
    if not dry_run and shutil.which(binary) is None:
        raise UserInputError(
            f"cannot reach the nodes: `{binary}` is not on PATH",
            [
                Problem(
                    "--via",
                    via.value,
                    f"{INSTALL[binary]}, or use --dry-run to print the commands and run them elsewhere",
                )
            ],
        )
    typer.echo(title, err=not dry_run)
    typer.echo(
        f"{'each node' if every_node else 'one node (the run directory is shared)'} runs:\n  {line}", err=not dry_run
    )
    typer.echo("commands:", err=not dry_run)
    if plan.discovery is not None and plan.pool_template is not None:
        typer.echo(f"  {shlex.join(plan.discovery)}", err=not dry_run)
        which = lc.pool_placeholder(outputs) if every_node else "--InstanceId.1 <the first InService instance>"
        typer.echo(f"  {shlex.join(plan.pool_template)} {which}", err=not dry_run)
    for argv in plan.commands:
        typer.echo(f"  {shlex.join(argv)}", err=not dry_run)
    if via is Via.cloud_assistant:
        typer.echo(
            f"  then, until it has finished: {shlex.join(runs.describe_invocation_argv(outputs, '<InvokeId>'))}",
            err=not dry_run,
        )
    if dry_run:
        typer.echo("dry run: nothing was run")
        return []
    commands = plan.commands
    if plan.discovery is not None:
        ids = pool_instance_ids(outputs, run)
        ids = ids if every_node else ids[:1]
        size = lc.RUN_COMMAND_MAX_INSTANCES
        commands = [lc.run_command_argv(outputs, name, line, ids[i : i + size]) for i in range(0, len(ids), size)]
    results = [run(argv) for argv in commands]
    failed = [(argv, r) for argv, r in zip(commands, results, strict=True) if r.returncode != 0]
    for argv, result in failed:
        typer.echo(
            f"failed (exit {result.returncode}): {shlex.join(argv[:5])} "
            f"...\n{(result.stderr or result.stdout).strip()}",
            err=True,
        )
    if failed:
        raise typer.Exit(code=1)
    if via is Via.ssh:
        return [r.stdout for r in results]
    return [text for r in results for text in _wait(outputs, r.stdout, run)]


def _wait(outputs: Any, answer: str, run: Runner) -> list[str]:
    """Poll DescribeInvocationResults until the command finished everywhere; each instance's output."""
    from blueprints.launch import runs

    invoke = invoke_id(answer)
    if invoke is None:
        typer.echo(f"RunCommand gave no InvokeId: {answer.strip()[:200]}", err=True)
        raise typer.Exit(code=1)
    argv = runs.describe_invocation_argv(outputs, invoke)
    for _ in range(POLL_TRIES):
        result = run(argv)
        if result.returncode != 0:
            typer.echo(f"failed (exit {result.returncode}): {shlex.join(argv)}\n{result.stderr.strip()}", err=True)
            raise typer.Exit(code=1)
        try:
            finished, found = runs.parse_invocation(result.stdout)
        except (ValueError, AttributeError) as exc:
            typer.echo(f"cannot read the answer of {shlex.join(argv)}: {exc}", err=True)
            raise typer.Exit(code=1) from None
        if finished:
            bad = [r for r in found if r.exit_code not in (0, None)]
            for r in bad:
                typer.echo(f"{r.instance_id}: exit {r.exit_code}\n{r.output.strip()}", err=True)
            if bad:
                raise typer.Exit(code=1)
            return [r.output for r in found]
        time.sleep(POLL_SECONDS)
    typer.echo(f"no answer after {POLL_TRIES * POLL_SECONDS:.0f}s: {shlex.join(argv)}", err=True)
    raise typer.Exit(code=1)


def runs_command(
    stack: Annotated[Path, STACK],
    run_id: Annotated[
        Optional[str],
        typer.Argument(help="Only this run (default: every run in the run directory).", show_default=False),
    ] = None,
    via: Annotated[Via, VIA] = Via.cloud_assistant,
    dry_run: Annotated[bool, DRY_RUN] = False,
) -> None:
    """Each run's state per node (waiting, running, exited with
    its code, cancelled), from the run directory on the share.

    Exit status: 0 shown (or --dry-run), 1 a cloud or ssh call failed, 2 invalid input (nothing run).
    """
    from blueprints.launch import runs

    rid = runs.check_run_id(run_id) if run_id is not None else None
    outputs = _outputs(stack, "runs", rid)
    title = (
        f"aitrain runs: {outputs.profile_name} ({outputs.blueprint}, "
        f"{outputs.region}){', run ' + rid if rid else ''}, via {via.value}"
    )
    texts = _execute(
        outputs, via, rid or "runs", runs.runs_script(outputs, rid), every_node=False, dry_run=dry_run, title=title
    )
    if not dry_run:
        typer.echo(runs.render_runs(runs.parse_listing("\n".join(texts))))


def logs_command(
    stack: Annotated[Path, STACK],
    run_id: Annotated[str, RUN_ID],
    node: Annotated[
        Optional[int],
        typer.Option("--node", help="Only the node with this rank (0 = the rendezvous host); default: every node."),
    ] = None,
    lines: Annotated[
        int, typer.Option("--lines", min=1, max=10000, help="How many of the last lines of each log.")
    ] = 100,
    follow: Annotated[
        bool, typer.Option("--follow", help="Keep printing as the log grows (--via ssh; Cloud Assistant answers once).")
    ] = False,
    via: Annotated[Via, VIA] = Via.cloud_assistant,
    dry_run: Annotated[bool, DRY_RUN] = False,
) -> None:
    """The end of a run's logs, one node's (--node RANK) or every node's, read from the run directory on the share.

    Exit status: 0 shown (or --dry-run), 1 a call failed or the run has no such node, 2 invalid input (nothing run).
    """
    from blueprints.launch import runs

    rid = runs.check_run_id(run_id)
    outputs = _outputs(stack, "logs", rid)
    runs.check_node(outputs, node)
    if follow and via is not Via.ssh:
        raise UserInputError(
            "--follow needs ssh",
            [
                Problem(
                    "--follow",
                    "--via cloud-assistant",
                    "a Cloud Assistant command answers once, when it ends: add --via ssh (fixed clusters with a login "
                    "node), or run `aitrain logs` again",
                )
            ],
        )
    title = (
        f"aitrain logs: {outputs.profile_name}, run {rid}, "
        f"{'node ' + str(node) if node is not None else 'every node'}, via {via.value}"
    )
    line = runs.logs_script(outputs, rid, node, lines, follow=follow)
    for text in _execute(outputs, via, f"{rid}-logs", line, every_node=False, dry_run=dry_run, title=title):
        typer.echo(text.rstrip("\n"))


def cancel_command(
    stack: Annotated[Path, STACK],
    run_id: Annotated[str, RUN_ID],
    via: Annotated[Via, VIA] = Via.cloud_assistant,
    dry_run: Annotated[bool, DRY_RUN] = False,
) -> None:
    """Stop a run on every node: SIGTERM to its process group (torchrun stops its workers); the status says cancelled.

    Exit status: 0 signalled (or --dry-run), 1 a call failed, 2 invalid input (nothing run).
    """
    from blueprints.launch import runs

    rid = runs.check_run_id(run_id)
    outputs = _outputs(stack, "cancel", rid)
    title = f"aitrain cancel: {outputs.profile_name}, run {rid}, via {via.value}"
    for text in _execute(
        outputs, via, f"{rid}-cancel", runs.cancel_script(outputs, rid), every_node=True, dry_run=dry_run, title=title
    ):
        typer.echo(text.rstrip("\n"))


def register(app: typer.Typer) -> None:
    """Add ``runs``, ``logs`` and ``cancel`` to ``app``."""
    app.command("runs")(reports_user_errors(runs_command))
    app.command("logs")(reports_user_errors(logs_command))
    app.command("cancel")(reports_user_errors(cancel_command))
