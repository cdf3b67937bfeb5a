"""A training job as the user describes it (model, data, precision, deadline, budget), validated strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Mapping

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from blueprints.advisor.data import limits
from blueprints.advisor.teams import LABEL_MAX, LABEL_PATTERN, check_teams
from blueprints.core import yamlsafe
from blueprints.core.errors import Problem, UserInputError, did_you_mean, join_allowed, problems_from_validation_error

ModelKind = Literal["transformer", "cnn", "other"]
Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8"]
Optimizer = Literal["adam", "adamw", "sgd", "sgd_momentum"]
# What the input pipeline decodes per sample (blueprints/advisor/feed.py; rates in data/input_pipeline.csv).
InputKind = Literal["jpeg_images", "raw_text", "pretokenized"]

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")

# Same rule as a profile's name, because the job name becomes the profile name (resource prefix).

_NUMBER_FIELDS = (
    "params",
    "tokens",
    "forward_gflops",
    "samples",
    "epochs",
    "dataset_tb",
    "ingest_tb_per_day",
    "runs_per_year",
    "deadline_days",
    "budget_cny_per_run",
    "budget_cny_per_year",
    "mfu",
    "tokens_per_sample",
    "preprocess_per_vcpu",
)
_INT_FIELDS = ("max_nodes", "jobs_in_parallel")


class Job(BaseModel):
    """What the user wants trained, with deadline and budget; the advisor picks hardware for it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(
        default="training-job",
        description=(
            "Job name, reused as the profile name (resource prefix): "
            "lowercase letters, digits, hyphens, 3–24 characters."
        ),
    )
    description: str = Field(default="", description="One line describing the job (free text).")
    model_kind: ModelKind = Field(
        description=(
            "transformer (FLOPs = 6·N·D) or cnn / other (FLOPs = 3 × forward FLOPs per sample × samples × epochs); "
            "when omitted, 'transformer' if tokens are given."
        )
    )
    params: float = Field(gt=0, description="Model parameters, count (e.g. 1.2e9).")
    tokens: float | None = Field(default=None, gt=0, description="Training tokens per run, count (transformer only).")
    forward_gflops: float | None = Field(
        default=None, gt=0, description="Forward-pass compute per sample, GFLOP (cnn / other only)."
    )
    samples: float | None = Field(default=None, gt=0, description="Samples per epoch, count (cnn / other only).")
    epochs: float = Field(
        default=1.0, gt=0, description="Passes over the dataset per run, count (also used for the data-path check)."
    )
    precision: Precision = Field(
        default="bf16", description="Training precision: fp32, tf32, bf16, fp16 or fp8; selects the GPU peak TFLOPS."
    )
    optimizer: Optimizer = Field(
        default="adamw", description="Optimizer; sets the optimizer-state bytes per parameter."
    )
    sharding: bool = Field(
        default=True,
        description="Weights, gradients and optimizer state may be sharded across all GPUs (ZeRO-3 / FSDP).",
    )
    dataset_tb: float | None = Field(
        default=None, gt=0, description="Training dataset size, TB (10^12 bytes); sizes storage and the read rate."
    )
    ingest_tb_per_day: float | None = Field(
        default=None, gt=0, description="New data written to storage per day, TB/day (10^12 bytes); adds a write rate."
    )
    runs_per_year: float = Field(
        default=1.0,
        gt=0,
        description="Training runs per year of this job, count (each of jobs_in_parallel jobs runs this often).",
    )
    deadline_days: float | None = Field(
        default=None, gt=0, description="Longest acceptable wall-clock time per run, days."
    )
    budget_cny_per_run: float | None = Field(
        default=None, gt=0, description="Largest acceptable compute cost per run, CNY."
    )
    budget_cny_per_year: float | None = Field(
        default=None,
        gt=0,
        description="Largest acceptable cost per year, CNY: all the parallel jobs' runs plus what stays up all year.",
    )
    region: str = Field(default="cn-shanghai", description="Alibaba Cloud region ID, e.g. cn-shanghai.")
    spot_allowed: bool = Field(
        default=False, description="The job checkpoints and tolerates preemption, so spot instances may be used."
    )
    max_nodes: int = Field(
        default=int(limits()["max_nodes_default"]),
        ge=1,
        le=int(limits()["max_nodes_hard"]),
        description=(
            "Most nodes (instances) to consider for one job, count (1–2000; default 100, one ECS instance set); a pool "
            "shared by jobs_in_parallel jobs holds that many per job."
        ),
    )
    mfu: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Measured model FLOPs utilisation (fraction) to use instead of the published default.",
    )
    input_kind: InputKind | None = Field(
        default=None,
        description=(
            "What the input pipeline decodes per sample: jpeg_images (decode + crop/flip/normalize), raw_text "
            "(tokenised while training) or pretokenized; sets the CPU-feed check. Empty: not checked."
        ),
    )
    tokens_per_sample: float | None = Field(
        default=None,
        gt=0,
        description="Tokens per image, count (a transformer on images, e.g. 196 for 224² pixels in 16² patches).",
    )
    preprocess_per_vcpu: float | None = Field(
        default=None,
        gt=0,
        description="Measured samples (or tokens) per second one vCPU prepares, instead of the published rates.",
    )
    jobs_in_parallel: int = Field(
        default=1,
        ge=1,
        le=int(limits()["max_nodes_hard"]),
        description="How many jobs like this one run at the same time on one "
        "shared pool of GPUs, count (1–2000; default 1, a job on its own). "
        "Each runs runs_per_year times, so the year counts "
        "jobs_in_parallel × runs_per_year runs; the jobs read the shared "
        "storage at once (their read rates add up) and share one "
        "dataset of dataset_tb (give the total if they do not). "
        "2 or more selects a blueprint that declares a tier for jobs sharing a pool.",
    )
    teams: (
        Annotated[
            dict[str, int],
            Field(
                json_schema_extra={
                    "minProperties": 1,
                    "propertyNames": {"pattern": LABEL_PATTERN, "maxLength": LABEL_MAX},
                    "additionalProperties": {"type": "integer", "minimum": 1},
                }
            ),
        ]
        | None
    ) = Field(
        default=None,
        description=(
            "Teams sharing the pool, each with its GPU quota: team name (a DNS-1123 label, e.g. research) → GPUs, a "
            "positive whole number (the team's nominal quota of the pool's GPUs, as a Kueue queue's gpus). The yearly "
            "cost is split by each team's GPUs ÷ all the teams' GPUs; their sum may not exceed the chosen pool's GPUs."
        ),
    )

    @field_validator(*_NUMBER_FIELDS, mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        """YAML 1.1 reads ``1.2e9`` as a string; accept it (and ``1_000``) as a number."""
        if isinstance(value, str):
            try:
                return float(value.replace("_", ""))
            except ValueError:
                raise ValueError("must be a number, e.g. 1.2e9") from None
        if isinstance(value, bool):
            raise ValueError("must be a number, not true/false")
        return value

    @field_validator(*_INT_FIELDS, mode="before")
    @classmethod
    def _integer(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value.replace("_", ""))
            except ValueError:
                raise ValueError("must be a whole number") from None
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    @field_validator("teams", mode="before")
    @classmethod
    def _teams(cls, value: Any) -> Any:
        """Team names are DNS-1123 labels, GPUs positive whole numbers (``blueprints.advisor.teams.check_teams``)."""
        return check_teams(value)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Without teams the job's JSON leaves ``teams`` out, so it prints as it did before the field (pydantic ≥ 2.6:
        ``Field(exclude_if=…)`` needs 2.11)."""
        data: dict[str, Any] = handler(self)
        if self.teams is None:
            data.pop("teams", None)
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        # Imported here: blueprints.profile.model loads every profile section, which `recommend` otherwise never needs.
        from blueprints.profile.model import check_resource_name

        return check_resource_name(value)

    @model_validator(mode="after")
    def _workload(self) -> "Job":
        if self.model_kind == "transformer":
            if self.tokens is None:
                raise ValueError("model_kind 'transformer' needs tokens (training tokens per run, e.g. 2e12)")
            if self.forward_gflops is not None or self.samples is not None:
                raise ValueError(
                    "model_kind 'transformer' uses tokens; forward_gflops and "
                    "samples are for cnn / other. Choose a single approach"
                )
        else:
            missing = [f for f in ("forward_gflops", "samples") if getattr(self, f) is None]
            if missing:
                raise ValueError(
                    f"model_kind {self.model_kind!r} needs {' and '.join(missing)} "
                    "(forward GFLOP per sample, samples per epoch)"
                )
            if self.tokens is not None:
                raise ValueError(
                    "tokens is for model_kind 'transformer'; model_kind "
                    f"{self.model_kind!r} uses forward_gflops × samples × epochs"
                )
        return self

    @property
    def deadline_hours(self) -> float | None:
        """Deadline in hours, or None."""
        return None if self.deadline_days is None else self.deadline_days * 24.0


JOB_FIELDS = tuple(Job.model_fields)

# An example value for each number field, so that a bound error says what a good value looks like.
_EXAMPLES = {
    "params": "1.2e9",
    "tokens": "2e12",
    "forward_gflops": "7.6 (ResNet-50 at 224²)",
    "samples": "1.28e6",
    "epochs": "90",
    "dataset_tb": "1.5",
    "ingest_tb_per_day": "0.5",
    "runs_per_year": "12",
    "deadline_days": "7",
    "budget_cny_per_run": "50000",
    "budget_cny_per_year": "600000",
    "max_nodes": "100",
    "jobs_in_parallel": "3",
    "mfu": "0.4 (a measured fraction, 0 < mfu ≤ 1)",
    "tokens_per_sample": "196",
    "preprocess_per_vcpu": "250",
}


def _explain(problem: Problem) -> Problem:
    """pydantic's "Input should be greater than 0" names no field: add what the field is and an example value."""
    field = Job.model_fields.get(problem.path)
    if field is None or not problem.message.startswith("Input should be"):
        return problem
    what = (field.description or "").rstrip(".")
    example = _EXAMPLES.get(problem.path)
    bound = problem.message.replace("Input should be", "must be", 1)
    text = f"{bound}: {problem.path} is the {what[:1].lower() + what[1:]}" + (
        f"; e.g. {problem.path}: {example}" if example else ""
    )
    return Problem(problem.path, problem.value, text, problem.hint)


def parse_job(data: Any, *, source: str = "job", regions: Mapping[str, Any] | None = None) -> Job:
    """Validate a plain dict into a Job; raise ``UserInputError`` listing every problem (path, value, allowed, hint)."""
    if not isinstance(data, dict):
        raise UserInputError(
            f"invalid {source}", [Problem("", data, "a job must be a mapping of keys to values (see examples/*.yaml)")]
        )
    if "model_kind" not in data and "tokens" in data:
        # Tokens only make sense for a transformer (FLOPs = 6·N·D), so the flag is implied.
        data = {**data, "model_kind": "transformer"}
    try:
        job = Job.model_validate(data)
    except ValidationError as exc:
        problems = problems_from_validation_error(exc, known_fields={"": JOB_FIELDS})
        raise UserInputError(f"invalid {source}", [_explain(p) for p in problems]) from None
    if regions is not None and job.region not in regions:
        hint = did_you_mean(job.region, regions)
        raise UserInputError(
            f"invalid {source}",
            [
                Problem(
                    "region",
                    job.region,
                    "unknown region: region is the Alibaba Cloud region ID, e.g. "
                    f"cn-shanghai; the catalog knows {join_allowed(regions)}",
                    hint,
                )
            ],
        )
    return job


def load_job_dict(path: Path | None, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read a job YAML file (or start empty) and apply flag overrides (None means "not given")."""
    from blueprints.core.errors import read_text_file

    data: dict[str, Any] = {}
    if path is not None:
        text = read_text_file(path, "job file")
        loaded = yamlsafe.load(text, f"job file {path}")
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise UserInputError(
                "invalid job",
                [Problem("", loaded, "a job file must be a mapping of keys to values (see examples/*.yaml)")],
            )
        data = dict(loaded)
    for key, value in (overrides or {}).items():
        if value is not None:
            data[key] = value
    return data
