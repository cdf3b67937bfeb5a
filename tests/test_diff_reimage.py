"""A changed node image in the diff: "stops and re-images N nodes" as a downtime risk, counted per kind.

The plans are the real program under the offline preview, answering ``get_images`` with two different "newest"
images: what `pulumi up` resolves before and after Alibaba publishes a newer one.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from blueprints.catalog import load_catalog
from blueprints.engine.preview import preview
from blueprints.profile.stackconfig import with_cli_inputs
from blueprints.review.diff.compare import diff_plans
from blueprints.review.diff.reimage import image_changes, load_image_behaviours, newer_image_effect
from blueprints.review.render.diff import render_diff, verdict

TODAY = dt.date(2026, 12, 1)
OLD, NEW = "ubuntu_22_04_x64_20G_alibase_20230815.vhd", "ubuntu_22_04_x64_20G_alibase_20251120.vhd"
ERDMA = {"compute.instance_type": "ecs.ebmgn7ex.32xlarge", "compute.nodes": 2, "compute.scratch_gib": 3072}
LOGIN = {"network.admin_cidr": "203.0.113.0/24", "access.login_node": True, "access.key_pair_name": "ops"}


def plan_json(preset: str, overrides: dict[str, object], newest: str) -> dict:
    config = with_cli_inputs({}, preset, list(overrides.items()))
    plan = preview(config, catalog=load_catalog(), today=TODAY, newest_image=newest)
    return json.loads(plan.to_json())


_CACHE: dict[tuple, dict] = {}


def planned(preset: str, overrides: dict[str, object], newest: str) -> dict:
    key = (preset, tuple(sorted(overrides.items())), newest)
    if key not in _CACHE:
        _CACHE[key] = plan_json(preset, overrides, newest)
    return _CACHE[key]


def image_diff(preset: str, overrides: dict[str, object]):
    return diff_plans(planned(preset, overrides, OLD), planned(preset, overrides, NEW))


def test_a_newer_image_on_erdma_nodes_stops_and_reimages_both_as_a_downtime_risk():
    diff = image_diff("medical-imaging", ERDMA)
    # Pulumi calls it an in-place update of each node; nothing else in the stack changes.
    assert [(c.action, c.short_type, list(c.inputs)) for c in diff.changes] == [
        ("update", "ecs.Instance", ["imageId"]),
        ("update", "ecs.Instance", ["imageId"]),
    ]
    assert verdict(diff) == "2 update; 0 data risks; 2 downtime risks: stops and re-images 2 nodes"
    assert diff.reimage.nodes == 2 and diff.risks == []
    assert diff.fails_on("replace") and not diff.fails_on("data-risk")
    text = render_diff(diff)
    assert "Downtime risks — stops and re-images 2 nodes:" in text
    assert (
        f"- medical-imaging-cluster-node-000: stops and re-images 1 node in place (imageId {OLD} → {NEW}): stopped, "
        "its system disk replaced by a new one from the new image" in text
    )
    assert "downtime: stops and re-images 1 node in place" in text  # the change's own row says it too
    markdown = render_diff(diff, markdown=True)
    assert "**Verdict:** 2 update; 0 data risks; 2 downtime risks: stops and re-images 2 nodes" in markdown
    assert "### Downtime risks — stops and re-images 2 nodes\n\n- medical-imaging-cluster-node-000: " in markdown
    data = diff.to_dict()
    assert data["reimage"]["nodes"] == 2 and data["reimage"]["headline"] == "stops and re-images 2 nodes"
    assert [c["effect"] for c in data["reimage"]["changes"]] == ["reimage", "reimage"]
    assert data["reimage"]["changes"][0]["image"] == {"old": OLD, "new": NEW}
    assert [r.split(":")[0] for r in data["downtime_risks"]] == [
        "medical-imaging-cluster-node-000",
        "medical-imaging-cluster-node-001",
    ]


def test_the_login_node_is_counted_and_named():
    diff = image_diff("medical-imaging", {**ERDMA, **LOGIN})
    assert diff.reimage.nodes == 3
    assert diff.reimage.headline() == "stops and re-images 3 nodes (2 GPU nodes, the login node)"
    assert any(
        r.startswith("medical-imaging-login-instance: stops and re-images the login node in place")
        for r in diff.reimage.risks()
    )


def test_an_instance_set_counts_its_amount_and_its_template_reaches_only_new_nodes():
    diff = image_diff("medical-imaging", {})
    by_name = {c.resource: c for c in diff.reimage.changes}
    batch = by_name["medical-imaging-cluster-nodes-0"]
    assert (batch.effect, batch.nodes, batch.downtime) == ("replace", 12, True)
    template = by_name["medical-imaging-cluster-template"]
    assert (template.effect, template.downtime, template.nodes) == ("new_nodes_only", False, 0)
    assert verdict(diff).endswith("; 1 downtime risk: stops and re-images 12 nodes")
    text = render_diff(diff)
    assert "Image changes for new nodes only (running nodes keep theirs):" in text
    assert (
        f"- medical-imaging-cluster-template: imageId {OLD} → {NEW}: a new template version: running nodes keep the "
        "image they booted; nodes launched from the template from now on boot the new one" in text
    )
    assert "running nodes keep their image" in text  # the template's row
    assert "stops and re-images 12 nodes by replacing them" in text


def test_a_pool_keeps_its_running_nodes_so_no_downtime_risk_but_says_new_nodes_differ():
    diff = image_diff("autoscaling-training", {})
    assert diff.changes and all(c.action == "update" for c in diff.changes)
    assert diff.reimage.downtime == () and diff.reimage.headline() == ""
    assert "downtime" not in verdict(diff)
    assert not diff.fails_on("replace")
    kinds = {c.type for c in diff.reimage.changes}
    assert kinds == {"ecs.EcsLaunchTemplate"}
    assert "Image changes for new nodes only" in render_diff(diff, markdown=True)


def test_a_pinned_image_ignores_a_newer_one():
    pinned = {**ERDMA, "compute.image_id": OLD}
    diff = diff_plans(planned("medical-imaging", pinned, OLD), planned("medical-imaging", pinned, NEW))
    assert diff.changes == () and diff.reimage.changes == ()


def test_changes_without_a_new_image_and_created_nodes_are_no_image_change():
    # One more node: node-002 is created (from the image, but nothing running changes); the others keep theirs.
    diff = diff_plans(
        planned("medical-imaging", ERDMA, OLD), planned("medical-imaging", {**ERDMA, "compute.nodes": 3}, NEW)
    )
    assert ("create", "medical-imaging-cluster-node-002") in [(c.action, c.name) for c in diff.changes]
    assert [c.resource for c in diff.reimage.changes] == [
        "medical-imaging-cluster-node-000",
        "medical-imaging-cluster-node-001",
    ]
    same_image = diff_plans(
        planned("medical-imaging", ERDMA, OLD), planned("medical-imaging", {**ERDMA, "compute.nodes": 3}, OLD)
    )
    assert same_image.changes and same_image.reimage.changes == ()
    assert "downtime" not in verdict(same_image)


def test_a_type_the_table_does_not_know_may_reimage_and_counts_as_downtime_of_unknown_size():
    class Change:
        action, type, name = "update", "alicloud:ecs/dedicatedHost:DedicatedHost", "host"
        inputs = {"imageId": (OLD, NEW)}

    found = image_changes([Change()], {})
    assert found.downtime and found.nodes is None
    assert found.headline() == "stops and re-images nodes (how many is unknown: see the downtime risks)"
    assert "is not in blueprints/data/image_changes.csv" in found.risks()[0]


def test_a_replaced_instance_is_counted_as_replaced_not_reimaged_in_place():
    class Change:
        action, type, name = "replace", "alicloud:ecs/instance:Instance", "node-000"
        inputs = {"imageId": (OLD, NEW), "availabilityZone": ("a", "b")}

    (change,) = image_changes([Change()], {}).changes
    assert (change.effect, change.nodes) == ("replace", 1)
    assert change.message().startswith("stops and re-images 1 node by replacing it")


def test_what_a_newer_image_would_do_is_said_per_blueprint():
    erdma = planned("medical-imaging", {**ERDMA, **LOGIN}, OLD)
    assert newer_image_effect(erdma["resources"]) == "stops and re-images 3 nodes (2 GPU nodes, the login node)"
    pool = planned("autoscaling-training", {}, OLD)
    assert newer_image_effect(pool["resources"]).startswith("makes the nodes launched from then on boot it")


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("ecs.Nope,reimage,1,x,src", "is not a resource kind"),
        ("ecs.Instance,rebuild,1,x,src", "must be one of reimage, replace, new_nodes_only"),
        ("ecs.Instance,reimage,,x,src", "must be 1 or amount"),
        ("ecs.EcsLaunchTemplate,new_nodes_only,1,x,src", "must be 1 or amount"),
        ("ecs.Instance,reimage,1,x,", "what_happens and source are both required"),
    ],
)
def test_a_bad_row_of_the_image_table_is_refused_with_its_line(tmp_path, row, problem):
    from blueprints.core.errors import UserInputError

    path = tmp_path / "image_changes.csv"
    path.write_text("type,effect,nodes,what_happens,source\n" + row + "\n", encoding="utf-8")
    with pytest.raises(UserInputError) as err:
        load_image_behaviours(path)
    assert "line 2" in err.value.render() and problem in err.value.render()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("type,effect,nodes\necs.Instance,reimage,1\n", "header"),
        ("type,effect,nodes,what_happens,source\necs.Instance,reimage,1\n", "must have exactly 5 columns"),
        (
            "type,effect,nodes,what_happens,source\necs.Instance,reimage,1,x,s\necs.Instance,reimage,1,x,s\n",
            "duplicates an earlier row",
        ),
    ],
)
def test_a_malformed_image_table_is_refused(tmp_path, text, problem):
    from blueprints.core.errors import UserInputError

    path = tmp_path / "image_changes.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserInputError) as err:
        load_image_behaviours(path)
    assert problem in err.value.render()


def test_a_missing_image_table_is_refused_and_cells_are_stripped(tmp_path):
    from blueprints.core.errors import UserInputError

    with pytest.raises(UserInputError, match="cannot be read"):
        load_image_behaviours(tmp_path / "nope.csv")
    path = tmp_path / "image_changes.csv"
    path.write_text("type,effect,nodes,what_happens,source\n ecs.Instance , reimage , 1 , x , s \n", encoding="utf-8")
    assert load_image_behaviours(path)["ecs.Instance"].effect == "reimage"


def test_the_shipped_table_covers_every_kind_aitrain_gives_an_image():
    table = load_image_behaviours()
    assert {k: v.effect for k, v in table.items()} == {
        "ecs.Instance": "reimage",
        "ecs.EcsInstanceSet": "replace",
        "ecs.EcsLaunchTemplate": "new_nodes_only",
        "ess.ScalingConfiguration": "new_nodes_only",
        "cs.NodePool": "new_nodes_only",
    }
    assert all(v.source for v in table.values())


def test_an_eri_pools_scaling_configuration_changes_only_the_nodes_it_launches_later():
    eri_pool = {
        "compute.instance_type": "ecs.ebmgn7ex.32xlarge",
        "compute.erdma_pool": True,
        "guardrails.skip[0].rule": "AIT008",
        "guardrails.skip[0].reason": "the ERI path needs a scaling configuration",
    }
    diff = image_diff("autoscaling-training", eri_pool)
    assert [(c.type, c.effect, c.downtime) for c in diff.reimage.changes] == [
        ("ess.ScalingConfiguration", "new_nodes_only", False)
    ]
    assert not diff.fails_on("replace")
