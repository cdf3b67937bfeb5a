"""Every example job → the blueprint the advisor picks, and why (the figure issue 11 asks for)."""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from blueprints.advisor.choice import recommend
from blueprints.advisor.data import limits
from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.architectures import budget_tiers, parse
from blueprints.catalog import load_catalog
from blueprints.cli.advisor import register

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LIMITS = limits()
POOL, DEDICATED = LIMITS["tier_pool_min_cny_per_year"], LIMITS["tier_dedicated_min_cny_per_year"]

# example → (blueprint, tier, why). Why: the year's cost against the article's tier boundaries for a lone job
# (below ¥100k / ¥100k–500k / ≥ ¥500k), or the jobs sharing one pool; None: nothing feasible.
TABLE = {
    "ecommerce-resnet50": ("fixed-cluster", "single-node", "below"),
    "finance-risk": ("fixed-cluster", "single-node", "below"),
    "llama2-70b": ("fixed-cluster", "dedicated", "above"),
    "llm-230b": (None, None, "infeasible"),
    "logistics-a10": ("fixed-cluster", "single-node", "below"),
    "medical-imaging": ("fixed-cluster", "dedicated", "above"),
    "team-llm-pool": ("kubernetes-pool", "shared-pool", "shared"),
    "tier-dedicated": ("fixed-cluster", "dedicated", "above"),
    "tier-gap": ("autoscaling-pool", "pool", "between"),
    "tier-pool": ("autoscaling-pool", "pool", "between"),
    "tier-single-node": ("fixed-cluster", "single-node", "below"),
}


@functools.cache
def rec_for(name: str):
    """The recommendation for examples/<name>.yaml with the shipped catalog and tiers."""
    catalog = load_catalog()
    job = parse_job(load_job_dict(EXAMPLES / f"{name}.yaml"), regions=catalog.regions)
    return recommend(job, catalog, tiers=budget_tiers(LIMITS))


def test_the_table_lists_every_example():
    assert set(TABLE) == {p.stem for p in EXAMPLES.glob("*.yaml")}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_example_gets_its_blueprint_for_its_reason(name):
    blueprint, tier_name, why = TABLE[name]
    rec = rec_for(name)
    if why == "infeasible":
        assert rec.chosen is None and rec.tier is None and any("deadline" in r for r in rec.relax)
        return
    assert (rec.tier.blueprint, rec.tier.name) == (blueprint, tier_name)
    year = rec.tier.basis_cny_per_year
    if why == "shared":
        assert rec.job.jobs_in_parallel == 3 and rec.tier.min_jobs_in_parallel == 2
        assert rec.tier_reasons[0].startswith("one pool for all 3 parallel jobs")
        return
    assert rec.job.jobs_in_parallel == 1
    assert {"below": year < POOL, "between": POOL <= year < DEDICATED, "above": year >= DEDICATED}[why], year
    # A lone job is told why not the shared pool.
    assert any("this job runs alone (jobs_in_parallel 1)" in r for r in rec.tier_reasons)


def test_team_llm_pool_writes_a_kubernetes_pool_stack(tmp_path):
    from blueprints.profile.stackconfig import engine_config, read_settings

    app = typer.Typer()
    register(app)
    target = tmp_path / "Pulumi.team.yaml"
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / "team-llm-pool.yaml"), "--write", str(target)])
    assert result.exit_code == 0, result.output
    data = read_settings(engine_config(target), source=str(target)).profile
    profile = parse(data, catalog=load_catalog(), today=dt.date(2026, 11, 30))
    assert profile.blueprint == "kubernetes-pool"
    nodes = rec_for("team-llm-pool").chosen.nodes
    compute = profile.compute
    assert (compute.min_nodes, compute.max_nodes, compute.nodes_per_job) == (0, 3 * nodes, nodes)
    assert compute.instance_type == rec_for("team-llm-pool").chosen.instance_type


def test_the_reasons_reach_every_output_format():
    import json

    app = typer.Typer()
    register(app)
    path = str(EXAMPLES / "team-llm-pool.yaml")
    reasons = rec_for("team-llm-pool").tier_reasons
    text = CliRunner().invoke(app, ["recommend", path]).output
    assert "Why this blueprint:\n" + "\n".join(f"  - {r}" for r in reasons) in text
    markdown = CliRunner().invoke(app, ["recommend", path, "--format", "markdown"]).output
    # The list of reasons ends before the next line, which would otherwise continue its last item.
    assert f"- {reasons[-1]}\n\nStorage:" in markdown
    document = json.loads(CliRunner().invoke(app, ["recommend", path, "--format", "json"]).output)
    assert document["tier"]["reasons"] == list(reasons) and document["tier"]["min_jobs_in_parallel"] == 2
    assert document["job"]["jobs_in_parallel"] == 3
