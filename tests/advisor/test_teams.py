"""The yearly cost split by team (``teams:`` in the job, team name → GPUs): each team's share is its GPUs ÷ the teams'
GPUs, in whole cents by largest remainder, so the teams' amounts add up to the yearly total exactly; unknown parts stay
unknown; bad teams exit 2 naming the field, the value and what is allowed; no teams, no change to the output."""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest
import typer
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprints.advisor import choice
from blueprints.advisor.data import limits
from blueprints.advisor.job import load_job_dict, parse_job
from blueprints.advisor.render import estimate_dict, recommendation_dict, render_markdown, render_table
from blueprints.advisor.teams import split_by_team, split_cents, to_cents, yuan
from blueprints.advisor.yearly import yearly_cost, yearly_dict
from blueprints.architectures import budget_tiers
from blueprints.catalog import load_catalog
from blueprints.cli.advisor import register
from blueprints.cli.main import app as main_app
from blueprints.core.errors import UserInputError

from .fakes import fake_catalog

ROOT = Path(__file__).resolve().parents[2]
POOL_JOB = ROOT / "examples" / "team-llm-pool.yaml"  # 3 parallel jobs × 2 × ecs.gn7-c13g1.26xlarge: a 48-GPU pool
CATALOG = load_catalog()
TIERS = budget_tiers(limits())
TEAMS = {"research": 24, "product": 16, "platform": 8}
app = typer.Typer()
register(app)
runner = CliRunner()


def pool_job(**overrides: object):
    data = load_job_dict(POOL_JOB)
    data.update(overrides)
    return parse_job(data, regions=CATALOG.regions)


@functools.cache
def pool_rec(teams: tuple[tuple[str, int], ...] | None):
    job = pool_job() if teams is None else pool_job(teams=dict(teams))
    return choice.recommend(job, CATALOG, tiers=TIERS)


def exact(number: float) -> Decimal:
    """A JSON number as the decimal its text says."""
    return Decimal(repr(number))


# --- largest remainder --------------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(
    total=st.integers(min_value=0, max_value=10**13),
    weights=st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=30),
)
def test_the_parts_add_up_to_the_total_each_within_a_cent_of_its_exact_share(total, weights):
    parts = split_cents(total, weights)
    assert sum(parts) == total
    whole = sum(weights)
    for part, weight in zip(parts, weights, strict=True):
        quota = Fraction(total * weight, whole)
        assert quota - 1 < part < quota + 1  # the floor or the ceiling of its exact share
    for i, wi in enumerate(weights):  # more GPUs never pay less; equal GPUs differ by a cent at most
        for j, wj in enumerate(weights):
            if wi > wj:
                assert parts[i] >= parts[j]
            if wi == wj:
                assert abs(parts[i] - parts[j]) <= 1


@settings(max_examples=300, deadline=None)
@given(
    total=st.floats(min_value=0, max_value=1e10, allow_nan=False, allow_infinity=False),
    gpus=st.lists(st.integers(min_value=1, max_value=2000), min_size=1, max_size=12),
)
def test_the_json_amounts_add_up_exactly_to_the_json_total(total, gpus):
    """Whatever the float total, the teams' JSON numbers, read as the decimals they print as, add up to the total the
    yearly JSON prints (``round(total, 2)``), to the cent."""
    teams = [(f"team-{i}", g) for i, g in enumerate(gpus)]
    doc = split_by_team(teams, total, sum(gpus)).as_dict()
    assert doc["total_cny_per_year"] == round(total, 2)
    parts = [exact(t["cny_per_year"]) for t in doc["teams"]]
    assert sum(parts, Decimal(0)) == exact(round(total, 2))
    assert all(p == p.quantize(Decimal("0.01")) for p in parts)
    assert json.loads(json.dumps(doc)) == doc


def test_ties_go_to_the_team_listed_first():
    assert split_cents(100, [1, 1, 1]) == [34, 33, 33]
    assert split_cents(101, [1, 1, 1]) == [34, 34, 33]
    assert split_cents(0, [3, 5]) == [0, 0]


def test_cents_are_those_the_json_prints():
    assert to_cents(1682445.2938368313) == 168244529
    assert to_cents(0.125) == 12  # round(0.125, 2) == 0.12: the total the yearly JSON prints, not 0.13
    assert yuan(168244529) == "¥1,682,445.29" and yuan(5) == "¥0.05"


# --- the documented example -----------------------------------------------------------------------------------------


def test_the_documented_example_with_real_numbers():
    """examples/team-llm-pool.yaml with three teams holding its 48 GPUs (blueprints/advisor/teams.py's docstring)."""
    rec = pool_rec(tuple(TEAMS.items()))
    assert (rec.chosen.nodes, rec.chosen.instance_type, rec.job.jobs_in_parallel) == (2, "ecs.gn7-c13g1.26xlarge", 3)
    yearly = recommendation_dict(rec)["yearly_cost"]
    by_team = yearly["by_team"]
    assert yearly["total_cny_per_year"] == by_team["total_cny_per_year"] == 1682445.29
    assert [(t["team"], t["gpus"], t["share"], t["cny_per_year"]) for t in by_team["teams"]] == [
        ("research", 24, 0.5, 841222.64),  # 84,122,264.5 cents: floor, remainder 0.5
        ("product", 16, 0.333333, 560815.10),  # 56,081,509.67: floor + the second cent left over
        ("platform", 8, 0.166667, 280407.55),  # 28,040,754.83: floor + the first cent left over
    ]
    assert (by_team["team_gpus"], by_team["pool_gpus"], by_team["unassigned_gpus"]) == (48, 48, 0)
    assert sum(exact(t["cny_per_year"]) for t in by_team["teams"]) == exact(yearly["total_cny_per_year"])
    assert by_team["unknown"] == yearly["unknown"] and "API server load balancer (CLB)" in by_team["unknown"]

    table = render_table(rec)
    block = table[table.index("By team: ") : table.index("Considered (best option")]
    assert "the yearly cost ¥1,682,445.29 split by each team's GPUs ÷ the 48 GPUs the teams hold" in block
    assert "research    24   50.0%    ¥841,222.64" in block
    assert "product     16   33.3%    ¥560,815.10" in block
    assert "platform     8   16.7%    ¥280,407.55" in block
    assert "total       48  100.0%  ¥1,682,445.29" in block
    assert "Unknown, so not split (each team's share of them is unknown, not ¥0): NAT gateway CU fee" in block
    # After the yearly cost (and what follows it), before the considered options.
    assert table.index("Yearly cost: ") < table.index("By team: ")

    markdown = render_markdown(rec)
    assert "\n### By team\n" in markdown
    assert "| team | GPUs | share | CNY/year |\n|---|--:|--:|--:|\n| research | 24 | 50.0% | ¥841,222.64 |" in markdown
    assert "| total | 48 | 100.0% | ¥1,682,445.29 |" in markdown
    assert markdown.index("Yearly cost: ") < markdown.index("### By team") < markdown.index("| | GPU |")


def test_teams_holding_part_of_the_pool_pay_the_whole_bill_in_proportion():
    rec = pool_rec((("research", 30), ("product", 10)))
    by_team = recommendation_dict(rec)["yearly_cost"]["by_team"]
    assert (by_team["team_gpus"], by_team["pool_gpus"], by_team["unassigned_gpus"]) == (40, 48, 8)
    assert [t["share"] for t in by_team["teams"]] == [0.75, 0.25]
    assert sum(exact(t["cny_per_year"]) for t in by_team["teams"]) == exact(by_team["total_cny_per_year"])
    assert "the 8 GPUs no team holds are charged to no one" in by_team["text"]


def test_an_unpriced_compute_stays_unknown_never_zero():
    """With no price for the nodes the known total is what stays up; the compute is named as unknown, not split."""
    catalog = fake_catalog()
    job = parse_job({"model_kind": "transformer", "params": 1e9, "tokens": 1e11, "mfu": 0.4, "teams": {"a": 6, "b": 2}})
    option, storage, _ = choice.estimate(job, catalog, "ecs.x8.32xlarge", 1)
    yc = yearly_cost(job, catalog, option, storage)
    split = yc.by_team()
    assert split is not None and yc.mode.compute.amount is None
    assert yc.mode.compute.what in split.unknown
    by_team = yearly_dict(yc)["by_team"]
    assert by_team["total_cny_per_year"] == round(yc.total(), 2)
    assert yc.mode.compute.what in by_team["unknown"] and "not ¥0" in by_team["text"]
    assert sum(exact(t["cny_per_year"]) for t in by_team["teams"]) == exact(by_team["total_cny_per_year"])


# --- output only with teams -----------------------------------------------------------------------------------------


def test_by_team_is_in_the_json_only_when_the_job_names_teams():
    without = recommendation_dict(pool_rec(None))
    assert "by_team" not in without["yearly_cost"] and "teams" not in without["job"]
    assert "By team" not in render_table(pool_rec(None)) and "By team" not in render_markdown(pool_rec(None))
    with_teams = recommendation_dict(pool_rec(tuple(TEAMS.items())))
    assert "by_team" in with_teams["yearly_cost"] and with_teams["job"]["teams"] == TEAMS
    # Everything else in the yearly cost is the same as without teams.
    assert {k: v for k, v in with_teams["yearly_cost"].items() if k != "by_team"} == without["yearly_cost"]


def test_estimate_splits_its_configuration_too(tmp_path):
    job = pool_job(teams={"research": 12, "product": 4}, jobs_in_parallel=1)
    option, storage, findings = choice.estimate(job, CATALOG, "ecs.gn7-c13g1.26xlarge", 2)
    yc = choice.estimate_yearly(job, CATALOG, option, storage)
    doc = estimate_dict(job, option, storage, findings, yearly=yc)
    assert [t["team"] for t in doc["yearly_cost"]["by_team"]["teams"]] == ["research", "product"]
    plain = choice.estimate_yearly(pool_job(jobs_in_parallel=1), CATALOG, option, storage)
    assert "by_team" not in estimate_dict(pool_job(), option, storage, findings, yearly=plain)["yearly_cost"]


def test_the_job_schema_accepts_teams_and_rejects_bad_names():
    result = runner.invoke(main_app, ["schema", "job"])
    assert result.exit_code == 0, result.output
    validator = jsonschema.Draft202012Validator(json.loads(result.stdout))
    job = yaml.safe_load(POOL_JOB.read_text())
    job.update(params=3.0e9, tokens=6.0e10)
    assert list(validator.iter_errors({**job, "teams": TEAMS})) == []
    for bad in ({"Research": 8}, {"a": 0}, {}):
        assert list(validator.iter_errors({**job, "teams": bad})), bad


# --- bad input ------------------------------------------------------------------------------------------------------

ALLOWED_NAME = (
    "a team name must be a DNS-1123 label (it names the team's queue in Kubernetes): lowercase letters, digits and "
    "'-', starting and ending with a letter or digit, 1–63 characters, e.g. teams: {research: 24, product: 16}"
)


def allowed_gpus() -> str:
    return (
        "a team's GPUs (its quota of the shared pool's GPUs) must be a positive whole number: 1, 2, …; "
        "e.g. teams: {research: 24, product: 16}"
    )


@pytest.mark.parametrize(
    "teams, expected",
    [
        (
            "[research, product]",
            "teams = ['research', 'product']: teams must be a mapping of team name to its GPUs (the team's GPU quota "
            "of the shared pool), e.g. teams: {research: 24, product: 16}",
        ),
        (
            "{}",
            "teams = {}: teams names no team: give at least one (e.g. teams: {research: 24, product: 16}) or leave "
            "teams out",
        ),
        ("{Research: 8}", f"teams.Research = 'Research': {ALLOWED_NAME}"),
        ("{research_a: 8}", f"teams.research_a = 'research_a': {ALLOWED_NAME}"),
        ("{-ops: 8}", f"teams.-ops = '-ops': {ALLOWED_NAME}"),
        (f"{{{'a' * 64}: 8}}", f"teams.{'a' * 64} = '{'a' * 64}': {ALLOWED_NAME}"),
        ("{7: 8}", 'mapping key 7 (int) is not a string; keys must be text (quote it: "7")'),  # refused as YAML is read
        ("{research: 0}", f"teams.research = 0: {allowed_gpus()}"),
        ("{research: -4}", f"teams.research = -4: {allowed_gpus()}"),
        ("{research: 2.5}", f"teams.research = 2.5: {allowed_gpus()}"),
        ("{research: true}", f"teams.research = True: {allowed_gpus()}"),
        ("{research: eight}", f"teams.research = 'eight': {allowed_gpus()}"),
        ("{research: null}", f"teams.research = None: {allowed_gpus()}"),
        (
            "{research: 8, research: 16}",
            "key 'research' is written twice in one mapping: 'research: 8' on line 20, then 'research: 16' on line "
            "20",  # refused as YAML is read: a mapping's keys are unique
        ),
        (
            "{research: 32, product: 24}",
            "teams = {'research': 32, 'product': 24}: the teams' GPUs sum to 56, more than the 48 GPUs of the pool "
            "the recommendation picks (6 nodes × 8 GPUs of ecs.gn7-c13g1.26xlarge, 2 per job × 3 jobs_in_parallel); "
            "allowed: team GPUs that sum to at most 48; lower the teams' GPUs, or raise jobs_in_parallel (the pool "
            "holds every parallel job's nodes at once)",
        ),
    ],
)
def test_bad_teams_exit_2_with_one_message_naming_field_value_and_allowed(tmp_path, teams, expected):
    job = tmp_path / "job.yaml"
    job.write_text(POOL_JOB.read_text() + f"teams: {teams}\n", encoding="utf-8")
    result = runner.invoke(app, ["recommend", str(job)])
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.count("  - ") == 1  # one problem, one line


def test_estimate_refuses_teams_larger_than_its_configuration(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(POOL_JOB.read_text() + "teams: {research: 24, product: 16}\n", encoding="utf-8")
    args = ["--instance-type", "ecs.gn7-c13g1.26xlarge", "--nodes", "2", "--jobs-in-parallel", "1"]
    result = runner.invoke(app, ["estimate", str(job), *args])
    assert result.exit_code == 2, result.output
    assert (
        "teams = {'research': 24, 'product': 16}: the teams' GPUs sum to 40, more than the 16 GPUs of the "
        "configuration estimated (2 nodes × 8 GPUs of ecs.gn7-c13g1.26xlarge); allowed: team GPUs that sum to at "
        "most 16; lower the teams' GPUs, or give more --nodes"
    ) in " ".join(result.output.split())


def test_teams_within_the_pool_pass_and_the_error_is_a_user_input_error():
    assert pool_job(teams={"research": 48}).teams == {"research": 48}
    assert pool_job(teams={"a": 8.0}).teams == {"a": 8}  # a whole float is a whole number
    with pytest.raises(UserInputError, match="teams.7 = 7: a team name must be a DNS-1123 label"):
        pool_job(teams={7: 8})  # a key that is not text, given through the API rather than YAML
    with pytest.raises(UserInputError) as caught:
        choice.recommend(pool_job(teams={"research": 49}), CATALOG, tiers=TIERS)
    assert caught.value.exit_code == 2 and caught.value.problems[0].path == "teams"
