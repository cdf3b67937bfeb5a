"""The ``recommend`` and ``estimate`` commands: a training job in, hardware, time, cost and a stack config out."""

from __future__ import annotations

import dataclasses
import enum
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from blueprints.advisor.job import Job

from blueprints.cli.support import OutputFormat, emit, reports_user_errors, same_file
from blueprints.core.errors import MISSING, Problem, UserInputError


class ObjectiveChoice(str, enum.Enum):
    """What the recommendation minimises once every constraint is met."""

    cost = "cost"
    time = "time"


class ModelKindChoice(str, enum.Enum):
    """How training FLOPs are counted."""

    transformer = "transformer"
    cnn = "cnn"
    other = "other"


class PrecisionChoice(str, enum.Enum):
    """Training precision (selects the GPU peak)."""

    fp32 = "fp32"
    tf32 = "tf32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"


class OptimizerChoice(str, enum.Enum):
    """Optimizer (sets optimizer-state bytes per parameter)."""

    adam = "adam"
    adamw = "adamw"
    sgd = "sgd"
    sgd_momentum = "sgd_momentum"


JobFile = Annotated[
    Optional[Path],
    typer.Argument(
        help=(
            "Job YAML file (see examples/*.yaml). Flags below override "
            "its values; without it, flags describe the whole job."
        )
    ),
]
Name = Annotated[
    Optional[str],
    typer.Option(
        "--name", help="Job name, reused as the profile name: lowercase letters, digits, hyphens, 3–24 characters."
    ),
]
Params = Annotated[Optional[float], typer.Option("--params", help="Model parameters, count, e.g. 1.2e9.")]
Tokens = Annotated[Optional[float], typer.Option("--tokens", help="Training tokens per run (transformer), e.g. 2e12.")]
Kind = Annotated[
    Optional[ModelKindChoice],
    typer.Option(
        "--model-kind", help="transformer (6·N·D FLOPs) or cnn / other (3 × forward FLOPs × samples × epochs)."
    ),
]
ForwardGflops = Annotated[
    Optional[float],
    typer.Option(
        "--forward-gflops", help="Forward-pass GFLOP per sample (cnn / other), e.g. 7.6 for ResNet-50 at 224²."
    ),
]
Samples = Annotated[Optional[float], typer.Option("--samples", help="Samples per epoch (cnn / other), e.g. 1.28e6.")]
Epochs = Annotated[Optional[float], typer.Option("--epochs", help="Passes over the dataset per run.")]
PrecisionOpt = Annotated[
    Optional[PrecisionChoice], typer.Option("--precision", help="Training precision; selects the GPU's peak TFLOPS.")
]
OptimizerOpt = Annotated[
    Optional[OptimizerChoice],
    typer.Option("--optimizer", help="Optimizer; sets the optimizer-state bytes per parameter."),
]
Sharding = Annotated[
    Optional[bool],
    typer.Option(
        "--sharding/--no-sharding",
        help="Whether weights, gradients and optimizer state may be sharded across GPUs (ZeRO-3 / FSDP).",
    ),
]
DatasetTb = Annotated[
    Optional[float],
    typer.Option("--dataset-tb", help="Dataset size in TB (10^12 bytes); sizes storage and the read rate."),
]
IngestTb = Annotated[
    Optional[float],
    typer.Option("--ingest-tb-per-day", help="New data written per day, TB; adds a write rate to the data-path check."),
]
RunsPerYear = Annotated[Optional[float], typer.Option("--runs-per-year", help="Training runs per year.")]
DeadlineDays = Annotated[
    Optional[float], typer.Option("--deadline-days", help="Longest acceptable wall-clock time per run, days.")
]
BudgetRun = Annotated[
    Optional[float], typer.Option("--budget-cny-per-run", help="Largest acceptable compute cost per run, CNY.")
]
BudgetYear = Annotated[
    Optional[float], typer.Option("--budget-cny-per-year", help="Largest acceptable compute cost per year, CNY.")
]
Region = Annotated[Optional[str], typer.Option("--region", help="Alibaba Cloud region ID, e.g. cn-shanghai.")]
Spot = Annotated[
    Optional[bool],
    typer.Option(
        "--spot-allowed/--no-spot-allowed", help="The job checkpoints and tolerates preemption, so spot may be used."
    ),
]
MaxNodes = Annotated[Optional[int], typer.Option("--max-nodes", help="Most nodes to consider (1–2000; default 100).")]
JobsInParallel = Annotated[
    Optional[int],
    typer.Option(
        "--jobs-in-parallel",
        help=(
            "How many jobs like this one run at the same time on one shared "
            "GPU pool (default 1; 2 or more picks a shared-pool blueprint)."
        ),
    ),
]
Mfu = Annotated[
    Optional[float],
    typer.Option("--mfu", help="Measured model FLOPs utilisation (0–1) to use instead of the published default."),
]
Format = Annotated[
    OutputFormat, typer.Option("--format", help="table for a terminal, markdown for a pull request, json for tools.")
]
Out = Annotated[Optional[Path], typer.Option("--out", help="Write the output to this file instead of standard output.")]


def _enum_value(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def build_job(job_file: Path | None, flags: dict[str, Any], catalog: Any) -> "Job":
    """Read the job file (if any), lay the given flags over it and validate against the catalog's regions."""
    from blueprints.advisor.job import load_job_dict, parse_job

    source = f"job {job_file}" if job_file is not None else "job (from flags)"
    data = load_job_dict(job_file, {k: _enum_value(v) for k, v in flags.items()})
    return parse_job(data, source=source, regions=catalog.regions)


# The job fields both commands take as flags (their values override the job file's).
JOB_FLAGS = (
    "name",
    "params",
    "tokens",
    "model_kind",
    "forward_gflops",
    "samples",
    "epochs",
    "precision",
    "optimizer",
    "sharding",
    "dataset_tb",
    "ingest_tb_per_day",
    "runs_per_year",
    "deadline_days",
    "budget_cny_per_run",
    "budget_cny_per_year",
    "region",
    "spot_allowed",
    "max_nodes",
    "mfu",
    "jobs_in_parallel",
)


def _job_flags(values: dict[str, Any]) -> dict[str, Any]:
    """The job flags that were given (not None), picked from a command's arguments."""
    return {k: values[k] for k in JOB_FLAGS if values.get(k) is not None}


def recommend(
    job_file: JobFile = None,
    name: Name = None,
    params: Params = None,
    tokens: Tokens = None,
    model_kind: Kind = None,
    forward_gflops: ForwardGflops = None,
    samples: Samples = None,
    epochs: Epochs = None,
    precision: PrecisionOpt = None,
    optimizer: OptimizerOpt = None,
    sharding: Sharding = None,
    dataset_tb: DatasetTb = None,
    ingest_tb_per_day: IngestTb = None,
    runs_per_year: RunsPerYear = None,
    deadline_days: DeadlineDays = None,
    budget_cny_per_run: BudgetRun = None,
    budget_cny_per_year: BudgetYear = None,
    region: Region = None,
    spot_allowed: Spot = None,
    max_nodes: MaxNodes = None,
    mfu: Mfu = None,
    jobs_in_parallel: JobsInParallel = None,
    objective: Annotated[
        ObjectiveChoice,
        typer.Option(
            "--objective", help="cost: cheapest per run that meets every constraint; time: fastest that does."
        ),
    ] = ObjectiveChoice.cost,
    output_format: Format = OutputFormat.table,
    out: Out = None,
    write: Annotated[
        Optional[Path],
        typer.Option(
            "--write",
            help=(
                "Also write the chosen configuration as a stack config (e.g. Pulumi.dev.yaml) that `aitrain plan "
                "--stack-config` and `pulumi up` accept. An existing file keeps every other key, secure value and "
                "comment; only its aitrain:* keys are added."
            ),
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help=(
                "With --write: replace aitrain:* keys the existing stack file "
                "already sets to other values (other keys are kept either way)."
            ),
        ),
    ] = False,
    regions: Annotated[
        Optional[list[str]],
        typer.Option(
            "--regions",
            help=(
                "Recommend in each of these regions (comma-separated or repeated) and choose the one where the job "
                "is cheapest per run; the output ends with every region's choice. Overrides the job's region."
            ),
        ),
    ] = None,
    check_stock: Annotated[
        bool,
        typer.Option(
            "--check-stock",
            help=(
                "With --regions: ask ECS (DescribeAvailableResource, read-only, the credentials `aitrain preflight` "
                "uses) whether each region's chosen type is in stock, and choose among the regions that have it."
            ),
        ),
    ] = False,
) -> None:
    """Recommend the cheapest (or fastest) real Alibaba Cloud configuration that meets the job's deadline and budget.

    Exit status: 0 with a choice, 1 when nothing is feasible (the output says what to relax), 2 for invalid input.
    """
    job_values = dict(locals())  # first statement: only the arguments are in scope
    from blueprints.advisor.choice import recommend as choose
    from blueprints.advisor.data import limits
    from blueprints.advisor.render import recommendation_dict, render_markdown, render_table, to_json
    from blueprints.advisor.stack import stack_config_text
    from blueprints.architectures import budget_tiers, parse
    from blueprints.catalog import load_catalog
    from blueprints.core import clock

    if write is not None and out is not None and same_file(write, out):
        raise UserInputError(
            "--write and --out name the same file",
            [
                Problem(
                    "--write",
                    str(write),
                    f"is also the --out file ({out}); one would overwrite the other — give two different paths",
                )
            ],
        )
    region_list = [n.strip() for v in regions or [] for n in v.split(",") if n.strip()]
    source = _region_options(region_list, check_stock)
    catalog = load_catalog()
    job = build_job(job_file, _job_flags(job_values), catalog)
    today = clock.today()
    comparison = ""
    if region_list:
        rec, comparison, compared = _across_regions(job, catalog, objective.value, region_list, source)
    else:
        rec = choose(job, catalog, objective.value, tiers=budget_tiers(limits()))
    stack_text = None
    if write is not None and rec.chosen is not None:
        stack_text = stack_config_text(
            rec, functools.partial(parse, catalog=catalog, today=today, source="recommended profile")
        )
    if output_format is OutputFormat.json:
        document = recommendation_dict(rec, catalog.version)
        if region_list:
            document["regions"] = compared
        text = to_json(document)
    elif output_format is OutputFormat.markdown:
        text = render_markdown(rec) + comparison
    else:
        text = render_table(rec) + comparison
    written = None
    if stack_text is not None and write is not None:
        from blueprints.profile.stackfile import write_stack_file

        # Before any output: a refused merge (exit 2) must not leave a half-done run behind.
        written = write_stack_file(write, stack_text, force=force)
    emit(text, out)
    if write is not None:
        if written is None:
            typer.echo(f"not written: {write} (no feasible option; relax as suggested)", err=True)
        else:
            verb = {
                "created": "wrote",
                "merged": "added the aitrain:* keys to",
                "replaced": "replaced the aitrain:* keys in",
                "unchanged": "already up to date:",
            }[written]
            typer.echo(f"{verb} {write}: preview it with `aitrain plan --stack-config {write}`", err=True)
    if rec.chosen is None:
        raise typer.Exit(code=1)


def estimate(
    job_file: JobFile = None,
    instance_type: Annotated[
        str,
        typer.Option(
            "--instance-type",
            help="Real ECS type (e.g. ecs.gn7e-c16g1.32xlarge) or one of the article's aliases (e.g. m6i.32xlarge).",
        ),
    ] = ...,  # type: ignore[assignment]
    nodes: Annotated[
        int, typer.Option("--nodes", min=1, max=2000, help="Number of instances (for an alias: number of alias units).")
    ] = 1,
    name: Name = None,
    params: Params = None,
    tokens: Tokens = None,
    model_kind: Kind = None,
    forward_gflops: ForwardGflops = None,
    samples: Samples = None,
    epochs: Epochs = None,
    precision: PrecisionOpt = None,
    optimizer: OptimizerOpt = None,
    sharding: Sharding = None,
    dataset_tb: DatasetTb = None,
    ingest_tb_per_day: IngestTb = None,
    runs_per_year: RunsPerYear = None,
    deadline_days: DeadlineDays = None,
    budget_cny_per_run: BudgetRun = None,
    budget_cny_per_year: BudgetYear = None,
    region: Region = None,
    spot_allowed: Spot = None,
    max_nodes: MaxNodes = None,
    mfu: Mfu = None,
    jobs_in_parallel: JobsInParallel = None,
    output_format: Format = OutputFormat.table,
    out: Out = None,
) -> None:
    """Estimate time and cost of a fixed configuration for a job (GPUs, MFU, scaling, memory, data path)."""
    job_values = dict(locals())  # first statement: only the arguments are in scope
    from blueprints.advisor.choice import estimate as run_estimate
    from blueprints.advisor.choice import estimate_yearly
    from blueprints.advisor.render import estimate_dict, render_estimate_text, to_json
    from blueprints.catalog import load_catalog

    catalog = load_catalog()
    job = build_job(job_file, _job_flags(job_values), catalog)
    real_type, real_nodes, alias_note = resolve_instance(catalog, instance_type, nodes)
    option, storage, findings = run_estimate(job, catalog, real_type, real_nodes)
    if option.has("no_anchor"):
        group = "mixed precision" if job.precision in ("bf16", "fp16") else job.precision
        raise UserInputError(
            "no MFU for this GPU",
            [
                Problem(
                    "mfu",
                    MISSING,
                    f"{option.gpu_model} has no published {job.model_kind} {group} MFU "
                    "anchor (data/mfu.csv), so the time cannot be estimated; give a measured "
                    "fraction 0 < mfu ≤ 1, e.g. --mfu 0.3 or mfu: 0.3 in the job file",
                )
            ],
        )
    yearly = estimate_yearly(job, catalog, option, storage)
    if alias_note:
        findings = [alias_note] + findings
    if output_format is OutputFormat.json:
        text = to_json(estimate_dict(job, option, storage, findings, catalog.version, yearly=yearly))
    else:
        text = render_estimate_text(
            job, option, storage, findings, markdown=output_format is OutputFormat.markdown, yearly=yearly
        )
    emit(text, out)


def _region_options(region_list: list[str], check_stock: bool) -> str | None:
    """Exit 2 for --check-stock without --regions; exit 3 without credentials (before anything is computed).
    Where the credentials come from, when stock is to be checked."""
    if check_stock and not region_list:
        raise UserInputError(
            "invalid recommend options", [Problem("--check-stock", True, "goes with --regions (the regions to check)")]
        )
    if not check_stock:
        return None
    from blueprints.cli.support import require_credentials

    return require_credentials()


def _across_regions(
    job: Any, catalog: Any, objective: str, region_list: list[str], credentials: str | None
) -> tuple[Any, str, list[dict[str, Any]]]:
    """The recommendation in the cheapest region (with stock, when checked), the regions text and their JSON rows."""
    from blueprints.advisor.choice import recommend as choose
    from blueprints.advisor.data import limits
    from blueprints.advisor.regions import cheapest, compare, regions_text
    from blueprints.architectures import budget_tiers
    from blueprints.core.errors import did_you_mean, join_allowed

    unknown = [r for r in region_list if r not in catalog.regions]
    if unknown:
        raise UserInputError(
            "unknown region",
            [
                Problem(
                    "--regions",
                    r,
                    f"the catalog knows {join_allowed(catalog.regions)}",
                    did_you_mean(r, catalog.regions),
                )
                for r in unknown
            ],
        )
    tiers = budget_tiers(limits())
    stock_of = _stock_reader() if credentials is not None else None
    results = compare(
        list(dict.fromkeys(region_list)),
        lambda region: choose(job.model_copy(update={"region": region}), catalog, objective, tiers=tiers),
        stock_of,
    )
    best, why = cheapest(results)
    chosen = best.recommendation if best is not None else results[0].recommendation
    if best is None:
        # Nothing to recommend anywhere: the first region's answer (nothing feasible, or unpriced) with the table.
        chosen = dataclasses.replace(chosen, chosen=None)
    return chosen, regions_text(results, best, why), [r.row() for r in results]


def _stock_reader() -> Any:
    """(region, instance type) → RegionStock, through the preflight SDK reader (one client per region)."""
    from blueprints.advisor.regions import RegionStock
    from blueprints.cli.support import sdk_classes
    from blueprints.preflight.aliyun import SdkReader
    from blueprints.preflight.checks import AVAILABLE_RESOURCE, CloudError, stock_request, zones_with_stock
    from blueprints.preflight.needs import NO_SPOT, POSTPAID

    classes = sdk_classes("aitrain recommend --check-stock")

    def stock_of(region: str, instance_type: str) -> RegionStock:
        # Pay-as-you-go, not spot: the price the recommendation is compared on.
        params = stock_request(region, instance_type, POSTPAID, NO_SPOT)
        try:
            body = SdkReader(region, client_classes=classes).call(AVAILABLE_RESOURCE, params)
        except CloudError as exc:
            return RegionStock(unanswered=str(exc))
        return RegionStock(zones=zones_with_stock(body, instance_type))

    return stock_of


def resolve_instance(catalog: Any, name: str, nodes: int) -> tuple[str, int, str | None]:
    """A real GPU type and node count for ``name`` (an alias multiplies
    nodes); ``UserInputError`` with suggestions otherwise."""
    from blueprints.profile.parse import resolve_gpu_type

    instance, alias, problem = resolve_gpu_type(name, "--instance-type", catalog)
    if problem is not None or instance is None:
        raise UserInputError("invalid --instance-type", [problem] if problem else [])
    if alias is None:
        return instance.instance_type, nodes, None
    return (
        instance.instance_type,
        nodes * alias.nodes,
        f"alias: {alias.sentence} {nodes} × {name} = {nodes * alias.nodes} × {instance.instance_type}.",
    )


def register(app: typer.Typer) -> None:
    """Add ``recommend`` and ``estimate`` to ``app``."""
    app.command("recommend")(reports_user_errors(recommend))
    app.command("estimate")(reports_user_errors(estimate))
