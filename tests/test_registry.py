"""The Blueprint owns its architecture: every registered blueprint provides the whole contract, and nothing
outside the blueprint modules compares blueprint names."""

from __future__ import annotations

import datetime as dt
import inspect
import re
from pathlib import Path

import pytest

from blueprints import architectures
from blueprints.advisor.budget import BudgetTier
from blueprints.advisor.data import limits
from blueprints.architectures.base import Blueprint
from blueprints.catalog import load_catalog
from blueprints.profile.model import ProfileBase
from blueprints.profile.stackconfig import load_preset, preset_names

PACKAGE = Path(architectures.__file__).resolve().parents[1]
TODAY = dt.date(2026, 11, 30)


@pytest.mark.parametrize("name, cls", sorted(architectures.BLUEPRINTS.items()))
def test_every_blueprint_provides_the_whole_contract(name, cls):
    assert issubclass(cls, Blueprint) and cls.name == name and not inspect.isabstract(cls)
    assert cls.__doc__ and len(cls.__doc__.split()) > 20, "the docstring states the architecture and why"
    model = cls.profile_model
    assert issubclass(model, ProfileBase) and model.model_fields["blueprint"].annotation.__args__ == (name,)
    assert model.alias_count_fields and all(
        f in model.model_fields["compute"].annotation.model_fields for f in model.alias_count_fields
    )
    assert cls.compute_zone_count >= 1
    tiers = cls.budget_tiers(limits())
    assert tiers and all(isinstance(t, BudgetTier) and t.blueprint == name for t in tiers)
    compute = cls.compute_from_choice("ecs.gn7e-c16g1.32xlarge", 3)
    assert compute["instance_type"] == "ecs.gn7e-c16g1.32xlarge"
    # What a recommendation becomes is a valid profile of this very blueprint.
    profile = {**load_preset("medical-imaging"), "blueprint": name, "compute": compute}
    parsed = architectures.parse(profile, catalog=load_catalog(), today=TODAY)
    assert isinstance(parsed, model)
    blueprint = architectures.blueprint_for(parsed, load_catalog(), TODAY)
    summary = blueprint.summary()
    assert summary["blueprint"] == name and summary["instance_type"] == "ecs.gn7e-c16g1.32xlarge"
    nodes, _ = blueprint.price_basis()
    assert summary["compute_cny_per_hour"] == pytest.approx(nodes * blueprint.instance.price_cny_per_hour)


def test_every_preset_names_a_registered_blueprint():
    assert {load_preset(p)["blueprint"] for p in preset_names()} <= set(architectures.BLUEPRINTS)


def test_the_budget_tiers_cover_every_budget_once():
    # Per level of jobs sharing a pool: a lone job's tiers, and the shared-pool tiers that need parallel jobs.
    tiers = architectures.budget_tiers(limits())
    levels = sorted({t.min_jobs_in_parallel for t in tiers})
    assert levels[0] == 1 and len(levels) > 1
    for level in levels:
        minimums = [t.min_cny_per_year for t in tiers if t.min_jobs_in_parallel == level]
        assert minimums == sorted(minimums, reverse=True) and minimums[-1] == 0 and len(set(minimums)) == len(minimums)


def test_no_module_outside_the_blueprints_compares_blueprint_names():
    names = "|".join(re.escape(n) for n in architectures.BLUEPRINTS)
    pattern = re.compile(rf"""["']({names})["']""")
    allowed = {
        PACKAGE / "architectures" / f"{module}.py"
        for module in ("fixed_cluster", "autoscaling_pool", "kubernetes_pool", "kubernetes_profile")
    }
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in allowed:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize("tier", architectures.budget_tiers(limits()), ids=lambda t: f"{t.blueprint}:{t.name}")
def test_a_tier_sizes_its_nodes_for_the_jobs_it_serves(tier):
    # A tier for parallel jobs holds them all at once (2 nodes per job × its minimum of jobs); a lone-job tier, one job.
    jobs = tier.min_jobs_in_parallel
    compute = tier.compute("ecs.gn7e-c16g1.32xlarge", 2, jobs)
    profile = architectures.parse(
        {**load_preset("medical-imaging"), "blueprint": tier.blueprint, "compute": compute},
        catalog=load_catalog(),
        today=TODAY,
    )
    blueprint = architectures.blueprint_for(profile, load_catalog(), TODAY)
    assert blueprint.price_basis()[0] == 2 * jobs
    assert blueprint.expected_nodes() in (2, None)  # one job spans the node count chosen for it
    # What the blueprint keeps up on top of the foundation names exactly one price source each.
    assert all((s.item is None) != (s.instance_type is None) and s.quantity > 0 for s in tier.standing)
    assert (jobs > 1) == bool(tier.why_parallel)
