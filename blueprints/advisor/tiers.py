"""Budget tiers: map a job's yearly budget (or the chosen option's yearly cost) to a blueprint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from blueprints.advisor.budget import BudgetTier, StandingCost
from blueprints.advisor.job import Job

if TYPE_CHECKING:
    from blueprints.advisor.options import Option


@dataclass(frozen=True)
class Tier:
    """The article's budget tier and the blueprint it maps to."""

    name: str
    blueprint: str
    spot: bool
    basis_cny_per_year: float | None
    basis: str
    note: str
    compute: dict[str, Any] = field(default_factory=dict)  # the blueprint's ``compute`` section for the choice
    scales_to_zero: bool = False  # the blueprint declares that its nodes exist only during runs
    min_jobs_in_parallel: int = 1
    standing: tuple[StandingCost, ...] = ()  # what the blueprint keeps up all year beyond the shared foundation
    why_parallel: str = ""
    cpu_preprocess: bool = False  # the blueprint's profile takes a ``preprocess:`` CPU group


def served(job: Job, tiers: Sequence[BudgetTier]) -> list[BudgetTier]:
    """The tiers of the highest jobs-in-parallel level the job reaches (``min_jobs_in_parallel ≤ jobs_in_parallel``).

    A tier that needs parallel jobs never serves a lone job; once a job shares a pool, the tiers made for sharing win
    over the lone-job tiers whatever the budget (the yearly cost then chooses among that level's tiers).
    """
    reached = [t for t in tiers if t.min_jobs_in_parallel <= job.jobs_in_parallel]
    if not reached:
        return []
    level = max(t.min_jobs_in_parallel for t in reached)
    return [t for t in reached if t.min_jobs_in_parallel == level]


def preconfigured_image(catalog: Any, instance_type: str, region: str) -> str:
    """The article's under-¥100k "pre-configured AI images from the Marketplace", as the catalog has them: Alibaba's
    image with the GPU stack for the type's family and region (images.csv), else the team's own via `aitrain bake`."""
    instance = catalog.instance_types.get(instance_type)
    if instance is None or not instance.is_gpu:
        return ""
    image = catalog.gpu_image_for(region, instance.family)
    if image is not None:
        return (
            f"; pre-configured image: Alibaba's {image.name_regex} (NVIDIA driver {image.driver_version}, CUDA "
            f"{image.cuda_version} preinstalled for {instance.family} in {region}), so a node is ready without the "
            "driver install and its reboot"
        )
    return (
        f"; pre-configured image: the catalog names none with the GPU stack for {instance.family} in {region}, so "
        "`aitrain bake` builds the team's own once (ECS Image Builder) and later nodes skip the driver install"
    )


def tier_for(
    job: Job,
    chosen: Option | None,
    tiers: Sequence[BudgetTier],
    yearly_cny: float | None,
    basis: str,
    catalog: Any = None,
) -> Tier | None:
    """Map the article's budget tiers to the blueprint that declares them (boundaries in data/limits.csv).

    Only the tiers ``served`` for the job's ``jobs_in_parallel`` count. Basis: ``yearly_cny`` (described by ``basis``),
    what the chosen option costs a year in the mode it would run in (always on when the runs fill the year, else only
    during runs: ``blueprints.advisor.yearly``), never the budget itself — a budget says how much may be spent, not
    what the cluster costs. The tier with the highest minimum the basis reaches wins; an unknown basis goes to the tier
    with the highest minimum. With the shipped blueprints, a lone job: ≥ ¥500k dedicated ``fixed-cluster``;
    ¥100k – < ¥500k ``autoscaling-pool`` (the article's ¥100k–300k pool extended over its ¥300k–500k gap); < ¥100k a
    single ``fixed-cluster`` node (data/README.md); 2 or more jobs sharing a pool: ``kubernetes-pool`` at any cost.
    """
    level = served(job, tiers)
    if chosen is None or not level:
        return None
    ordered = sorted(level, key=lambda t: -t.min_cny_per_year)
    tier = (
        ordered[0]
        if yearly_cny is None
        else next((t for t in ordered if yearly_cny >= t.min_cny_per_year), ordered[-1])
    )
    if tier.min_jobs_in_parallel > 1:
        # The level, not the cost, picked the blueprint; the year then chooses within the level.
        basis = f"jobs_in_parallel {job.jobs_in_parallel} (tiers for jobs sharing one pool), then {basis}"
    spot = job.spot_allowed and tier.spot_when_allowed
    note = tier.note
    if tier.single_node:
        note += (
            ", spot (preemptible, price capped at pay-as-you-go)"
            if job.spot_allowed
            else ", on-demand (the job does not allow spot)"
        )
        if chosen.nodes > 1:
            note += (
                "; the article's under-¥100k tier is one node, but this "
                f"job needs {chosen.nodes} nodes to meet its constraints"
            )
        if catalog is not None:
            note += preconfigured_image(catalog, chosen.instance_type, job.region)
    return Tier(
        tier.name,
        tier.blueprint,
        spot,
        yearly_cny,
        basis,
        note,
        tier.compute(chosen.instance_type, chosen.nodes, job.jobs_in_parallel),
        tier.scales_to_zero,
        tier.min_jobs_in_parallel,
        tier.standing,
        tier.why_parallel,
        tier.cpu_preprocess,
    )
