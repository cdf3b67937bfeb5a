"""`aitrain replace-node`: exactly the named nodes of an eRDMA fixed cluster are replaced; bad input changes nothing."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.components.compute import REPLACE_ON, REPLACE_TAG
from blueprints.core.errors import UserInputError
from blueprints.review.diff.compare import diff_plans
from blueprints.review.render.diff import render_diff_text
from blueprints.testing import offline_plan

runner = CliRunner()
TODAY = dt.date(2026, 12, 1)
CLUSTER = "medical-imaging-cluster"

ERDMA_STACK = """\
# our training stack — keep this comment
encryptionsalt: v1:abc123:def456
config:
  team:api-key:
    secure: AAABAHxyzSECRETCIPHERTEXT==
  aitrain:preset: medical-imaging
  aitrain:profile:
    compute:
      instance_type: ecs.ebmgn7ex.32xlarge
      nodes: 4
      scratch_gib: 3072
    storage:
      zone: cn-shanghai-a
"""


@pytest.fixture
def erdma_stack(tmp_path):
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(ERDMA_STACK, encoding="utf-8")
    return path


def plan_json(stack):
    return json.loads(offline_plan(stack_config=stack, today=TODAY).to_json())


def replace(stack, *args):
    return runner.invoke(app, ["replace-node", "--stack-config", str(stack), *args])


def node(plan, index):
    return next(r for r in plan["resources"] if r["name"] == f"{CLUSTER}-node-{index:03d}")


def test_replace_node_changes_only_that_node_in_the_diff(erdma_stack):
    before = plan_json(erdma_stack)
    result = replace(erdma_stack, "node-003", "--write")
    assert result.exit_code == 0, result.output
    assert "compute.replace_nodes.node-003: (none) -> 1" in result.stdout
    after = plan_json(erdma_stack)
    diff = diff_plans(before, after)
    # One change: node-003 replaced delete-first; storage, bucket, network and the other nodes are not in the diff.
    assert [(c.action, c.name) for c in diff.changes] == [("replace-delete-first", f"{CLUSTER}-node-003")]
    change = diff.changes[0]
    assert change.replacing == (REPLACE_ON,) and change.certain
    assert not diff.risks
    text = render_diff_text(diff)
    assert "1 replace-delete-first" in text and f"{CLUSTER}-node-003" in text
    assert f"replace_on_changes watches {REPLACE_ON}: None → '1'" in text
    for untouched in (
        f"{CLUSTER}-node-000",
        f"{CLUSTER}-node-002",
        "medical-imaging-storage",
        "medical-imaging-bucket",
    ):
        assert untouched not in text


def test_the_program_tags_and_watches_only_the_named_node(erdma_stack):
    replace(erdma_stack, "node-001", "--write")
    plan = plan_json(erdma_stack)
    assert node(plan, 1)["inputs"]["tags"][REPLACE_TAG] == "1"
    assert node(plan, 1)["replace_on_changes"] == [REPLACE_ON]
    for other in (0, 2, 3):
        assert REPLACE_TAG not in node(plan, other)["inputs"]["tags"]
        assert node(plan, other)["replace_on_changes"] == []
    # The volume tags (the disks) never carry the generation: a replacement is the node's alone.
    assert REPLACE_TAG not in node(plan, 1)["inputs"]["volumeTags"]
    assert plan["outputs"]["repair"]["generations"] == {"node-001": 1}


def test_a_second_replace_raises_the_generation_and_replaces_the_node_again(erdma_stack):
    replace(erdma_stack, "node-002", "--write")
    before = plan_json(erdma_stack)
    result = replace(erdma_stack, "node-002", "node-000", "--write")
    assert result.exit_code == 0, result.output
    config = yaml.safe_load(erdma_stack.read_text(encoding="utf-8"))["config"]
    assert config["aitrain:profile"]["compute"]["replace_nodes"] == {"node-002": 2, "node-000": 1}
    diff = diff_plans(before, plan_json(erdma_stack))
    assert sorted((c.action, c.name) for c in diff.changes) == [
        ("replace-delete-first", f"{CLUSTER}-node-000"),
        ("replace-delete-first", f"{CLUSTER}-node-002"),
    ]


def test_dropping_an_entry_only_updates_the_tag_in_place(erdma_stack):
    replace(erdma_stack, "node-003", "--write")
    before = plan_json(erdma_stack)
    erdma_stack.write_text(ERDMA_STACK, encoding="utf-8")
    diff = diff_plans(before, plan_json(erdma_stack))
    assert [(c.action, c.name) for c in diff.changes] == [("update", f"{CLUSTER}-node-003")]


def test_write_keeps_secrets_comments_and_other_keys(erdma_stack):
    replace(erdma_stack, "node-000", "--write")
    text = erdma_stack.read_text(encoding="utf-8")
    for kept in (
        "# our training stack — keep this comment\n",
        "encryptionsalt: v1:abc123:def456\n",
        "  team:api-key:\n    secure: AAABAHxyzSECRETCIPHERTEXT==\n",
    ):
        assert kept in text


def test_without_write_nothing_is_written(erdma_stack):
    result = replace(erdma_stack, "node-003")
    assert result.exit_code == 0, result.output
    assert "+      replace_nodes:" in result.stdout and "not written: add --write" in result.stdout
    assert erdma_stack.read_text(encoding="utf-8") == ERDMA_STACK


def test_a_node_is_named_as_the_profile_writes_it_or_by_its_resource_name(erdma_stack):
    result = replace(erdma_stack, f"{CLUSTER}-node-001", "--write")
    assert result.exit_code == 0, result.output
    assert "compute.replace_nodes.node-001: (none) -> 1" in result.stdout
    assert "        node-001: 1\n" in erdma_stack.read_text(encoding="utf-8")


def test_a_node_that_does_not_exist_exits_2_listing_the_allowed_names(erdma_stack):
    result = replace(erdma_stack, "node-003", "node-004", "--write")
    assert result.exit_code == 2
    assert (
        "NODE = 'node-004': is not a node of medical-imaging (4 nodes); allowed: node-000, node-001, node-002, node-003"
        in (result.stderr)
    )
    assert "Traceback" not in result.output
    assert erdma_stack.read_text(encoding="utf-8") == ERDMA_STACK


def test_instance_set_clusters_are_refused_with_the_reason_and_the_alternative(erdma_stack):
    text = ERDMA_STACK.replace("ecs.ebmgn7ex.32xlarge", "ecs.gn7e-c16g1.32xlarge")
    erdma_stack.write_text(text, encoding="utf-8")
    result = replace(erdma_stack, "node-000", "--write")
    assert result.exit_code == 2
    assert "ecs.EcsInstanceSet batches" in result.stderr and "replace a batch only whole" in result.stderr
    assert "aliyun ecs RedeployInstance --InstanceId <id>" in result.stderr
    assert erdma_stack.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ("  aitrain:preset: autoscaling-training\n", "replace-node is for fixed-cluster stacks"),
        (ERDMA_STACK.split("config:\n", 1)[1].replace("nodes: 4", "nodes: 0"), "the cluster is parked"),
    ],
)
def test_other_blueprints_and_parked_clusters_are_refused(tmp_path, profile, message):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n" + profile, encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    result = replace(path, "node-000", "--write")
    assert result.exit_code == 2 and message in result.stderr
    assert path.read_text(encoding="utf-8") == before


ERDMA = {"compute.instance_type": "ecs.ebmgn7ex.32xlarge", "compute.nodes": 4, "compute.scratch_gib": 3072}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"compute.replace_nodes": {"node-001": 1}},  # the preset's type has no eRDMA
            "needs one ecs.Instance per node, which eRDMA types and reserved clusters (capacity.reservation) get",
        ),
        ({**ERDMA, "compute.replace_nodes": {"node-7": 1}}, "must be a node name"),
        ({**ERDMA, "compute.replace_nodes": {"node-004": 1}}, "is not a node of this 4-node cluster"),
        ({**ERDMA, "compute.replace_nodes": {"node-001": 0}}, "must be a generation"),
    ],
)
def test_the_profile_field_refuses_what_the_program_cannot_honour(overrides, message):
    with pytest.raises(UserInputError) as error:
        offline_plan("medical-imaging", overrides=overrides, today=TODAY)
    assert message in str(error.value)


def test_a_parked_cluster_keeps_its_generations():
    plan = offline_plan(
        "medical-imaging",
        overrides={**ERDMA, "compute.nodes": 0, "compute.replace_nodes": {"node-003": 2}},
        today=TODAY,
    )
    assert plan.outputs["repair"] == {"mechanism": "parked: no nodes to repair", "command": None}


def _instance(tags, watch):
    return {
        "type": "alicloud:ecs/instance:Instance",
        "name": "n",
        "inputs": {"tags": tags, "instanceType": "ecs.ebmgn7ex.32xlarge"},
        "replace_on_changes": watch,
    }


def _plans(old, new):
    wrap = lambda r: {"schema": "aitrain.plan/v2", "summary": {}, "resources": [r], "costs": {}}  # noqa: E731
    return wrap(old), wrap(new)


def test_the_diff_replaces_only_on_the_watched_path():
    watched = _plans(
        _instance({REPLACE_TAG: "1", "team": "a"}, [REPLACE_ON]),
        _instance({REPLACE_TAG: "2", "team": "a"}, [REPLACE_ON]),
    )
    other = _plans(
        _instance({REPLACE_TAG: "1", "team": "a"}, [REPLACE_ON]),
        _instance({REPLACE_TAG: "1", "team": "b"}, [REPLACE_ON]),
    )
    assert [c.action for c in diff_plans(*watched).changes] == ["replace"]
    assert [c.action for c in diff_plans(*other).changes] == ["update"]
    # A plan written before replace_on_changes was recorded (no key) diffs as the empty list, not as a change.
    legacy, current = _plans(_instance({"team": "a"}, []), _instance({"team": "a"}, []))
    del legacy["resources"][0]["replace_on_changes"]
    assert diff_plans(legacy, current).changes == ()
