"""The ``launch`` and ``park`` commands: start ``aitrain-torchrun`` on every node; park or resume a fixed cluster."""

from __future__ import annotations

import concurrent.futures
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from blueprints.bootstrap import DEFAULT_MAX_RESTARTS
from blueprints.cli.cloudcalls import INSTALL, Runner, invoke_id, pool_instance_ids, run_argv
from blueprints.cli.support import StackEdit, reports_user_errors, show_and_write
from blueprints.core.errors import MISSING, Problem, UserInputError
from blueprints.health.gate import OnUnhealthy
from blueprints.launch.torchrun import Via

# The printed argv lists run through this name (tests replace it with recorded answers).
_run = run_argv


def launch(
    stack: Annotated[
        Path,
        typer.Option("--stack", help="The stack's outputs, saved with `pulumi stack output --json > outputs.json`."),
    ],
    cmd: Annotated[
        Optional[list[str]],
        typer.Argument(
            help=(
                "The training command, after --: e.g. -- python train.py --epochs 10. Each node runs it under torchrun."
            ),
            show_default=False,
        ),
    ] = None,
    via: Annotated[
        Via,
        typer.Option(
            "--via",
            help=(
                "cloud-assistant: ECS RunCommand, keyless (default). ssh: "
                "through the login node (fixed clusters with access.login_node)."
            ),
        ),
    ] = Via.cloud_assistant,
    run_id: Annotated[
        Optional[str],
        typer.Option(
            "--run-id",
            help=(
                "Names the run's log directory <shared>/.aitrain/runs/<run-id>/; "
                "default: the UTC time, e.g. 20261201T093000Z."
            ),
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print exactly what would run, run nothing, exit 0.")
    ] = False,
    skip_check: Annotated[
        Optional[str],
        typer.Option("--skip-check", help="Skip the health gate (the quick suite of `aitrain check`); say why."),
    ] = None,
    on_unhealthy: Annotated[
        OnUnhealthy,
        typer.Option(
            "--on-unhealthy",
            help="stop: start nothing, exit 1, name the failing nodes (default). exclude: launch on the healthy ones.",
        ),
    ] = OnUnhealthy.stop,
    kubernetes: Annotated[
        bool,
        typer.Option(
            "--kubernetes",
            help=(
                "Kubernetes stacks (kubernetes-pool): write the job the stack's outputs name (job_api): a Kubeflow "
                "Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1, the default) in the team's Kueue queue, or on a "
                "legacy stack (kubernetes.job_engine: training-operator-v1) a PyTorchJob (kubeflow.org/v1); one pod "
                "per GPU node."
            ),
        ),
    ] = False,
    image: Annotated[
        Optional[str],
        typer.Option(
            "--image",
            help=(
                "--kubernetes: the training container image (with torchrun), e.g. "
                "registry.cn-shanghai.aliyuncs.com/team/train:2026-11."
            ),
        ),
    ] = None,
    name: Annotated[
        Optional[str],
        typer.Option(
            "--name",
            help="--kubernetes: the job's name (DNS-1035 label; at most 44 characters for a TrainJob, 50 for a "
            "PyTorchJob); default <profile>-<run-id>.",
        ),
    ] = None,
    nodes: Annotated[
        Optional[int],
        typer.Option(
            "--nodes",
            help="--kubernetes: nodes (pods) of the job, 1 to max_nodes; default: the outputs' nodes_per_job.",
        ),
    ] = None,
    team: Annotated[
        Optional[str],
        typer.Option(
            "--team",
            help="--kubernetes on a Trainer stack: the team whose Kueue queue (and GPU quota) the TrainJob joins; "
            "default: the outputs' default_team (a stack of several teams has none: name one).",
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out", help="--kubernetes: write the manifest to this file (atomically) instead of printing it."
        ),
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="--kubernetes: run `kubectl apply -f` on the manifest (printed first).")
    ] = False,
    max_restarts: Annotated[
        int,
        typer.Option(
            "--max-restarts",
            help="torchrun --max-restarts: how many times the workers of every node restart (from their newest "
            "checkpoint) after a failure before the run fails.",
        ),
    ] = DEFAULT_MAX_RESTARTS,
    resume: Annotated[
        Optional[str],
        typer.Option(
            "--resume",
            help="Continue this run (same run id and AITRAIN_CHECKPOINT_DIR); refused (exit 2) when its checkpoint "
            "directory is missing or empty.",
        ),
    ] = None,
) -> None:
    """Start aitrain-torchrun on every node at once, or (--kubernetes)
    write and apply a TrainJob (or a legacy stack's PyTorchJob); print exactly what runs first.

    The quick health gate (`aitrain check`) runs first unless --skip-check REASON; --on-unhealthy says what a
    failing node means.

    Exit status: 0 started (or --dry-run), 1 the health gate found unhealthy nodes or a cloud, ssh or kubectl call
    failed (its stderr is shown), 2 invalid input (nothing run, nothing written).
    """
    from blueprints.architectures import job_engines
    from blueprints.cli.check import gate_launch
    from blueprints.launch import kubernetes as lk
    from blueprints.launch import torchrun as lc

    data = lc.load_outputs(stack)
    engines = job_engines()
    lc.check_max_restarts(max_restarts)
    resumed = lc.check_resume(run_id, resume)
    run_id = resumed or run_id
    if kubernetes:
        if via is Via.ssh:
            raise UserInputError(
                "--via is for torchrun launches",
                [
                    Problem(
                        "--via",
                        via.value,
                        "a Kubernetes job is started by its operator (Kubeflow Trainer or the training operator), "
                        "not over ssh: drop --via with --kubernetes",
                    )
                ],
            )
        _launch_kubernetes(
            data,
            str(stack),
            engines,
            run_id,
            cmd or [],
            image=image,
            name=name,
            nodes=nodes,
            team=team,
            out=out,
            apply=apply,
            dry_run=dry_run,
            max_restarts=max_restarts,
            resumed=resumed is not None,
        )
        return
    k8s_only = {
        "--image": image,
        "--name": name,
        "--nodes": nodes,
        "--team": team,
        "--out": out,
        "--apply": apply or None,
    }
    given = [option for option, value in k8s_only.items() if value is not None]
    if given:
        raise UserInputError(
            "options for --kubernetes only",
            [
                Problem(
                    given[0],
                    str(k8s_only[given[0]]),
                    "applies to `aitrain launch --kubernetes` (a TrainJob or PyTorchJob); add --kubernetes or drop it",
                )
            ],
        )
    if lk.job_engine_of(data, str(stack), engines) == lk.KUBERNETES_ENGINE:
        raise lk.refuse_torchrun_launch(data["blueprint"], str(stack))
    outputs = lc.parse_outputs(data, str(stack), engines)
    rid = lc.check_run_id(run_id) if run_id is not None else lc.default_run_id(lc.utc_now())
    plan = lc.plan_launch(outputs, via, rid, cmd or [], max_restarts=max_restarts)
    if resumed is not None:
        _check_checkpoints(outputs, via, rid, dry_run=dry_run)
    binary = "ssh" if via is Via.ssh else "aliyun"
    if not dry_run and shutil.which(binary) is None:
        raise UserInputError(
            f"cannot launch: `{binary}` is not on PATH",
            [
                Problem(
                    "--via",
                    via.value,
                    f"{INSTALL[binary]}, or use --dry-run to print the commands and run them elsewhere",
                )
            ],
        )
    gated = gate_launch(stack, outputs, via, rid, skip_check=skip_check, on_unhealthy=on_unhealthy, dry_run=dry_run)
    if gated is not outputs:  # --on-unhealthy exclude: the healthy nodes only
        outputs, plan = gated, lc.plan_launch(gated, via, rid, cmd or [])
    typer.echo(lc.render_plan(outputs, via, rid, plan))
    if dry_run:
        typer.echo("dry run: nothing was run")
        return
    commands = plan.commands
    if plan.discovery is not None:
        commands = _pool_commands(outputs, rid, cmd or [], _run, max_restarts=max_restarts)
    if via is Via.ssh:
        # One ssh per node, all at once: each returns as soon as its node has the launcher in the background.
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(32, len(commands))) as pool:
            results = list(pool.map(_run, commands))
    else:
        results = [_run(argv) for argv in commands]
    failed = [(argv, r) for argv, r in zip(commands, results, strict=True) if r.returncode != 0]
    for argv, result in failed:
        typer.echo(f"failed (exit {result.returncode}): {shlex.join(argv[:4])} ...\n{result.stderr.strip()}", err=True)
    if failed:
        raise typer.Exit(code=1)
    for result in results:
        invoke = invoke_id(result.stdout)
        if invoke:
            typer.echo(
                f"started: InvokeId {invoke} (results: aliyun ecs DescribeInvocationResults --RegionId "
                f"{outputs.region} --InvokeId {invoke})"
            )
    typer.echo(
        f"started on every node; follow with: tail -f {outputs.shared_mount_path.rstrip('/')}/.aitrain/runs/{rid}/*.log"
    )


def _launch_kubernetes(
    data: Any,
    source: str,
    engines: dict[str, str],
    run_id: Optional[str],
    cmd: list[str],
    *,
    image: Optional[str],
    name: Optional[str],
    nodes: Optional[int],
    team: Optional[str],
    out: Optional[Path],
    apply: bool,
    dry_run: bool,
    max_restarts: int,
    resumed: bool,
) -> None:
    """Build the TrainJob (Trainer stacks) or PyTorchJob (legacy stacks); print it (or write --out); with --apply
    run `kubectl apply` on it, printing the command first."""
    from blueprints.core.files import write_atomic
    from blueprints.launch import kubernetes as lk
    from blueprints.launch import kubernetes_outputs as lko
    from blueprints.launch import pytorchjob as lp
    from blueprints.launch import torchrun as lc
    from blueprints.launch import trainjob as lt

    outputs = lko.parse_kubernetes_outputs(data, source, engines)
    trainer = outputs.trainer is not None
    if team is not None and not trainer:
        raise lt.refuse_team(outputs, team)
    rid = lc.check_run_id(run_id) if run_id is not None else lc.default_run_id(lc.utc_now())
    if image is None:
        raise UserInputError(
            "no image",
            [
                Problem(
                    "--image",
                    MISSING,
                    "give the training container image (it must have torchrun), e.g. --image "
                    "registry.cn-shanghai.aliyuncs.com/team/train:2026-11",
                )
            ],
        )
    # A resumed run is a new job (the finished one may still exist) with the same run id and checkpoints.
    limit = lt.MAX_TRAINJOB_NAME if trainer else lk.MAX_JOB_NAME
    default = lk.default_job_name(
        outputs.profile_name, rid + (f"-{lc.default_run_id(lc.utc_now())}" if resumed else ""), limit
    )
    job_name = lk.check_job_name(name if name is not None else default, limit)
    if trainer:
        job = lt.build_trainjob(
            outputs,
            name=job_name,
            image=image,
            run_id=rid,
            command=cmd,
            team=team,
            nodes=nodes,
            max_restarts=max_restarts,
        )
        summary = lt.describe_trainjob(outputs, job)
    else:
        job = lp.build_job(
            outputs, name=job_name, image=image, run_id=rid, command=cmd, nodes=nodes, max_restarts=max_restarts
        )
        summary = lp.describe(outputs, job)
    if resumed:
        typer.echo(
            f"resuming run {rid}: the pods get AITRAIN_CHECKPOINT_DIR={lk.checkpoint_dir(outputs, rid)}; not checked "
            "from here (no pod mounts the share yet): the job must find its newest checkpoint there",
            err=True,
        )
    manifest = lk.render_job(job)
    argv = lk.apply_argv(str(out) if out is not None else None)
    if apply and not dry_run and shutil.which("kubectl") is None:
        raise UserInputError(
            "cannot apply: `kubectl` is not on PATH",
            [
                Problem(
                    "--apply",
                    "kubectl",
                    "install kubectl (https://kubernetes.io/docs/tasks/tools/) with the cluster's kubeconfig, or drop "
                    "--apply and apply the manifest elsewhere",
                )
            ],
        )
    typer.echo(summary, err=out is None and not dry_run)
    if dry_run:
        typer.echo(manifest.rstrip("\n"))
        if apply:
            typer.echo(f"would run: {shlex.join(argv)}" + (" (manifest on stdin)" if out is None else ""))
        typer.echo("dry run: nothing was written or applied")
        return
    if out is not None:
        write_atomic(out, manifest)
        typer.echo(f"wrote {out}")
    elif not apply:
        typer.echo(manifest.rstrip("\n"))
    if not apply:
        if out is not None:
            typer.echo(f"next: {shlex.join(argv)}")
        return
    typer.echo(f"running: {shlex.join(argv)}" + (" (manifest on stdin)" if out is None else ""))
    result = subprocess.run(argv, input=manifest if out is None else None, capture_output=True, text=True, check=False)
    if result.stdout.strip():
        typer.echo(result.stdout.rstrip("\n"))
    if result.returncode != 0:
        typer.echo(f"failed (exit {result.returncode}): {shlex.join(argv)}\n{result.stderr.strip()}", err=True)
        raise typer.Exit(code=1)
    if trainer:
        typer.echo(lt.follow_hint(job))
        return
    typer.echo(
        f"follow with: kubectl -n {outputs.namespace} get pods -l {lk.RUN_LABEL}={rid}; "
        f"kubectl -n {outputs.namespace} logs -f {job_name}-master-0"
    )


def _check_checkpoints(outputs: Any, via: Via, run_id: str, *, dry_run: bool, run: Runner = _run) -> None:
    """--resume: one node lists the run's checkpoint directory (read-only, as `aitrain runs` reads the status files);
    none there is exit 2 before anything starts. A dry run prints the check."""
    from blueprints.cli import runs as cr
    from blueprints.launch import torchrun as lc

    title = f"aitrain launch --resume {run_id}: first, the checkpoints in {lc.checkpoint_dir(outputs, run_id)}"
    line = lc.checkpoint_script(outputs, run_id)
    texts = cr._execute(outputs, via, f"resume-{run_id}", line, every_node=False, dry_run=dry_run, title=title, run=run)
    if dry_run:
        return
    count = lc.checkpoint_count("\n".join(texts))
    if count == 0:
        raise lc.no_checkpoint_error(outputs, run_id)
    typer.echo(f"run {run_id}: {count} entries in {lc.checkpoint_dir(outputs, run_id)}; resuming", err=True)


def _pool_commands(outputs: Any, run_id: str, command: list[str], run: Runner, *, max_restarts: int) -> list[list[str]]:
    """Page through the pool's InService instances, then one RunCommand per 50 of them, each waiting for all of them."""
    from blueprints.launch import torchrun as lc

    ids = pool_instance_ids(outputs, run)
    size = lc.RUN_COMMAND_MAX_INSTANCES
    line = lc.node_line(outputs, run_id, command, nnodes=len(ids), max_restarts=max_restarts)
    commands = [lc.run_command_argv(outputs, run_id, line, ids[i : i + size]) for i in range(0, len(ids), size)]
    typer.echo(f"found {len(ids)} InService node{'s' if len(ids) != 1 else ''}; running:")
    for argv in commands:
        typer.echo(f"  {shlex.join(argv)}")
    return commands


def park(
    stack_config: Annotated[Path, typer.Option("--stack-config", help="The Pulumi.<stack>.yaml of a fixed cluster.")],
    resume: Annotated[
        Optional[int],
        typer.Option("--resume", min=1, help="Bring the cluster back with this many nodes instead of parking it."),
    ] = None,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help=(
                "Write the change into the stack file (atomically; every "
                "other byte kept). Without it, only show the change."
            ),
        ),
    ] = False,
) -> None:
    """Park a fixed cluster (compute to zero; file system and bucket kept) or resume it, in the stack file.

    Prints the change to the aitrain:* keys and the next command (`pulumi up`). What "parked" means is the
    blueprint's: a fixed cluster sets compute.nodes to 0; an autoscaling pool cannot be parked (it scales to zero).
    """
    from blueprints.architectures import specs
    from blueprints.profile.stackconfig import merge

    stack = StackEdit.read(stack_config)
    source, existing, profile = stack.source, stack.existing, stack.profile
    blueprint = specs()[profile.blueprint]
    # What "parked" means is the blueprint's: the compute fields that park it and the one a resume sets back.
    parked, field = blueprint.parked_compute, blueprint.resume_field
    if parked is None or (resume is not None and field is None):
        raise UserInputError(
            f"cannot park {source}",
            [
                Problem(
                    f"{source}: blueprint",
                    profile.blueprint,
                    f"'{profile.blueprint}' cannot be parked: {blueprint.park_refusal}",
                )
            ],
        )
    change = {field: resume} if resume is not None and field is not None else dict(parked)
    new_profile = merge(stack.settings.profile, {"compute": change})
    new_data, merged, action = stack.rewritten(new_profile)
    verb = "resume" if resume is not None else "park"
    summary = [
        f"compute.{key}: {stack.data.get('compute', {}).get(key, MISSING)!r} -> {value!r}"
        for key, value in change.items()
    ]
    if action == "unchanged" or merged == existing:
        typer.echo(
            f"{source}: already {'at ' + ', '.join(summary) if resume is not None else 'parked'}; nothing to change"
        )
        return
    typer.echo(f"aitrain {verb}: {profile.name} ({profile.blueprint}) — " + "; ".join(summary))
    if not show_and_write(stack_config, existing, merged, f"{verb}ed", write=write):
        return
    storage = (
        "compute is removed; the file system and bucket are kept"
        if resume is None
        else f"{new_data['compute'].get(field)} nodes are created"
    )
    typer.echo(
        f"wrote {source}. Next: `pulumi up` ({storage}); preview first with `aitrain plan --stack-config {source}`"
    )


def register(app: typer.Typer) -> None:
    """Add ``launch`` and ``park`` to ``app``."""
    app.command("launch")(reports_user_errors(launch))
    app.command("park")(reports_user_errors(park))
