"""The kubernetes-pool profile's `queues` section: good teams are taken as written, and each bad one is refused in one
paragraph naming the field, its value and the numbers that rule it out (exit 2 from the CLI)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints import architectures
from blueprints.architectures.kubernetes_pool.queues import MAX_PRIORITIES, MAX_TEAMS, QueueSettings, Team
from blueprints.catalog import load_catalog
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.profile.stackconfig import load_preset, merge

CATALOG = load_catalog()
PRESET = load_preset("kubernetes-training")  # 8 × ecs.ebmgn7ex.32xlarge (8 GPUs each): a 64-GPU pool, 4-node jobs
POOL, JOB = 64, 32
assert PRESET["compute"]["max_nodes"] * CATALOG.instance_types[PRESET["compute"]["instance_type"]].gpu_count == POOL
assert PRESET["compute"]["nodes_per_job"] * 8 == JOB


def parse(queues: dict[str, Any] | None, **more: Any) -> Any:
    """The preset with ``queues`` instead of its own section (None: no section at all)."""
    data = {key: value for key, value in PRESET.items() if key != "queues"}
    data = data if queues is None else merge(data, {"queues": queues, **more})
    return architectures.parse(data, catalog=CATALOG, today=dt.date(2026, 12, 1))


def refusal(queues: dict[str, Any], **more: Any) -> str:
    with pytest.raises(UserInputError) as caught:
        parse(queues, **more)
    text = caught.value.render()
    assert text.count("\n  - ") == 1, text  # one problem, one paragraph
    assert "\n" not in text.split("\n  - ", 1)[1], text
    return text


def test_no_section_is_one_default_team_holding_the_whole_pool() -> None:
    queues = parse(None).queues
    assert queues == QueueSettings()
    (team,) = queues.teams_for(POOL)
    assert (team.name, team.quota, team.borrow_gpus, queues.priority_of(team)) == ("default", POOL, None, "normal")
    assert queues.priorities == {"normal": 100} and queues.pods_ready_timeout_minutes == 30


def test_good_teams_are_taken_as_written() -> None:
    queues = parse(
        {
            "teams": [
                {"name": "vision", "gpus": 24, "borrow_gpus": 8, "priority": "high"},
                {"name": "nlp", "gpus": "32"},  # `pulumi config set --path` stores numbers it cannot tell as text
            ],
            "priorities": {"high": 1000, "normal": 100},
            "pods_ready_timeout_minutes": 10,
        }
    ).queues
    assert queues.teams == (
        Team(name="vision", gpus=24, borrow_gpus=8, priority="high"),
        Team(name="nlp", gpus=32),
    )
    assert [queues.priority_of(t) for t in queues.teams] == ["high", "normal"]
    assert queues.teams_for(POOL) == queues.teams and queues.pods_ready_timeout_minutes == 10


def test_sixteen_priorities_are_allowed() -> None:
    priorities = {f"p{i}": i for i in range(MAX_PRIORITIES)}
    assert MAX_PRIORITIES == 16
    assert parse({"priorities": priorities, "default_priority": "p0"}).queues.priorities == priorities


def test_quotas_may_fill_the_pool_exactly_and_a_team_may_hold_exactly_one_job() -> None:
    queues = parse({"teams": [{"name": "a", "gpus": JOB, "borrow_gpus": 0}, {"name": "b", "gpus": POOL - JOB}]}).queues
    assert sum(t.quota for t in queues.teams) == POOL


@pytest.mark.parametrize(
    "queues, field, words",
    [
        # quotas summing above the pool: the sum and the pool, with how the pool is made
        (
            {"teams": [{"name": "vision", "gpus": 24}, {"name": "nlp", "gpus": 48}]},
            "queues.teams = [24, 48]",
            ["24 + 48 = 72 GPUs", "compute.max_nodes 8 × 8 GPUs per node = 64 GPUs", "at most 64"],
        ),
        # a team with no share
        (
            {"teams": [{"name": "vision", "gpus": 24}, {"name": "nlp"}]},
            "queues.teams[1].gpus:",
            ["is required", "team 'nlp'", "1 or more GPUs"],
        ),
        (
            {"teams": [{"name": "vision", "gpus": 24}, {"name": "nlp", "gpus": 0}]},
            "queues.teams[1].gpus = 0",
            ["no share of the pool", "1 or more GPUs"],
        ),
        # quota plus borrowing below one job of compute.nodes_per_job nodes
        (
            {"teams": [{"name": "vision", "gpus": 24, "borrow_gpus": 7}]},
            "queues.teams[0].borrow_gpus = 7",
            ["gpus 24 + borrow_gpus 7 = 31 GPUs", "4 nodes (compute.nodes_per_job) × 8 GPUs per node = 32", "least 8"],
        ),
        # a team name that is not a DNS label
        (
            {"teams": [{"name": "Vision_Team", "gpus": 8}]},
            "queues.teams[0].name = 'Vision_Team'",
            ["DNS-1123 label", "1–63 lowercase letters"],
        ),
        ({"teams": [{"name": "x" * 64, "gpus": 8}]}, "queues.teams[0].name", ["DNS-1123 label"]),
        # a duplicate team
        (
            {"teams": [{"name": "vision", "gpus": 8}, {"name": "nlp", "gpus": 8}, {"name": "vision", "gpus": 8}]},
            "queues.teams[2].name = 'vision'",
            ["also the name of queues.teams[0]"],
        ),
        # a priority not in priorities
        (
            {
                "teams": [{"name": "vision", "gpus": 8, "priority": "hihg"}],
                "priorities": {"high": 1000, "low": 1},
                "default_priority": "low",
            },
            "queues.teams[0].priority = 'hihg'",
            ["not in queues.priorities", "'high', 'low'", "did you mean 'high'?"],
        ),
        (
            {"priorities": {"high": 1000}},
            "queues.default_priority = 'normal'",
            ["not in queues.priorities", "allowed: 'high'"],
        ),
        # more teams than is sensible
        (
            {"teams": [{"name": f"t{i}", "gpus": 1} for i in range(MAX_TEAMS + 1)]},
            f"queues.teams = {MAX_TEAMS + 1}",
            [f"lists {MAX_TEAMS + 1} teams", f"at most {MAX_TEAMS}"],
        ),
        # priorities Kueue cannot hold
        (
            {"priorities": {"normal": 2**31}},
            "queues.priorities.normal = 2147483648",
            ["int32", "2147483647"],
        ),
        ({"priorities": {"Urgent!": 5}}, "queues.priorities.Urgent! = 'Urgent!'", ["DNS-1123 label"]),
        ({"priorities": {}}, "queues.priorities = {}", ["at least one priority"]),
        # more priorities than is sensible (each is a WorkloadPriorityClass and a line of the plan)
        (
            {"priorities": {f"p{i}": i for i in range(MAX_PRIORITIES + 1)}, "default_priority": "p0"},
            "queues.priorities",
            [f"names {MAX_PRIORITIES + 1} priorities", f"at most {MAX_PRIORITIES} are allowed"],
        ),
        ({"pods_ready_timeout_minutes": 0}, "queues.pods_ready_timeout_minutes = 0", ["greater than or equal to 1"]),
        ({"teams": [{"name": "a", "gpus": 8, "quota": 8}]}, "queues.teams[0].quota", ["unknown key"]),
    ],
)
def test_each_bad_queue_setting_is_one_paragraph_naming_field_value_and_numbers(queues, field, words) -> None:
    text = refusal(queues)
    assert field in text, text
    for word in words:
        assert word in text, (word, text)


def test_a_job_larger_than_the_pool_is_still_refused_by_compute_nodes_per_job() -> None:
    text = refusal({"teams": [{"name": "a", "gpus": 8}]}, compute={**PRESET["compute"], "nodes_per_job": 9})
    assert "compute.nodes_per_job = 9: is greater than max_nodes (8)" in text


def test_the_pool_check_uses_the_catalogs_gpus_per_node() -> None:
    # ecs.gn7i-c8g1.2xlarge has 1 GPU: the same 8-node pool holds 8 GPUs, so 24 no longer fits.
    instance = "ecs.gn7i-c8g1.2xlarge"
    assert CATALOG.instance_types[instance].gpu_count == 1
    text = refusal({"teams": [{"name": "a", "gpus": 24}]}, compute={**PRESET["compute"], "instance_type": instance})
    assert "compute.max_nodes 8 × 1 GPUs per node = 8 GPUs" in text


def test_the_cli_refuses_bad_queues_with_exit_2_and_no_traceback() -> None:
    result = CliRunner().invoke(
        app, ["plan", "kubernetes-training", "--set", "queues.teams=[{name: a, gpus: 40}, {name: b, gpus: 40}]"]
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "queues.teams = [40, 40]: give the teams 40 + 40 = 80 GPUs, more than the pool holds" in result.output
