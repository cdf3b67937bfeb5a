"""A node whose user data changes is rebooted by the provider: the diff says "reboots N nodes" as a downtime risk.

The plans are the real program under the offline preview; the new boot script is a one-line edit of the decoded
cloud-init (what a new aitrain release does to every node), re-encoded as the components encode it.
"""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from blueprints.catalog import load_catalog
from blueprints.core import userdata
from blueprints.core.errors import UserInputError
from blueprints.engine.preview import preview
from blueprints.profile.stackconfig import with_cli_inputs
from blueprints.review.diff.compare import diff_plans
from blueprints.review.diff.reboot import load_rebooting_updates
from blueprints.review.render.diff import render_diff, verdict

TODAY = dt.date(2026, 12, 1)
ERDMA = {"compute.instance_type": "ecs.ebmgn7ex.32xlarge", "compute.nodes": 2, "compute.scratch_gib": 3072}


def plan(overrides: dict[str, object]) -> dict:
    config = with_cli_inputs({}, "medical-imaging", list(overrides.items()))
    return json.loads(preview(config, catalog=load_catalog(), today=TODAY).to_json())


def new_boot_script(old: dict, **extra_inputs: object) -> dict:
    """The same plan with every node's (or template's) cloud-init one line longer, as a release changes it."""
    new = copy.deepcopy(old)
    for r in new["resources"]:
        text = userdata.decode(r["inputs"].get("userData"))
        if text:
            r["inputs"]["userData"] = userdata.encode(text.replace("#cloud-config\n", "#cloud-config\n# v2\n", 1))
            r["inputs"].update(extra_inputs if r["type"].endswith(":Instance") else {})
    return new


@pytest.fixture(scope="module")
def erdma() -> dict:
    return plan(ERDMA)


def test_new_user_data_on_per_node_instances_reboots_them_as_a_downtime_risk(erdma):
    diff = diff_plans(erdma, new_boot_script(erdma))
    assert [(c.action, c.short_type, list(c.inputs)) for c in diff.changes] == [
        ("update", "ecs.Instance", ["userData"]),
        ("update", "ecs.Instance", ["userData"]),
    ]
    assert verdict(diff) == "2 update; 0 data risks; 2 downtime risks: reboots 2 nodes"
    assert diff.fails_on("replace") and not diff.fails_on("data-risk")
    text = render_diff(diff)
    assert "Downtime risks — reboots 2 nodes:" in text
    assert "- medical-imaging-cluster-node-001: reboots (userData changed): updated in place, and the instance" in text
    data = diff.to_dict()
    assert [r["resource"] for r in data["reboots"]] == [f"medical-imaging-cluster-node-00{i}" for i in (0, 1)]
    assert len(data["downtime_risks"]) == 2
    assert "Downtime risks — reboots 2 nodes" in render_diff(diff, markdown=True)


def test_a_node_whose_image_changes_too_is_counted_once_as_reimaged(erdma):
    diff = diff_plans(erdma, new_boot_script(erdma, imageId="m-uf6newimage0000000000"))
    assert verdict(diff) == "2 update; 0 data risks; 2 downtime risks: stops and re-images 2 nodes"
    assert diff.reboots == ()


def test_a_launch_template_keeps_its_running_nodes_up():
    """Instance-set clusters take their user data from a launch template: a new version, no reboot."""
    old = plan({})
    diff = diff_plans(old, new_boot_script(old))
    assert [c.short_type for c in diff.changes] == ["ecs.EcsLaunchTemplate"] and diff.reboots == ()
    assert "downtime" not in verdict(diff)


def test_the_table_refuses_an_unknown_kind_and_a_duplicate(tmp_path):
    path = tmp_path / "rebooting_updates.csv"
    path.write_text(
        "type,input,what_happens,source\n"
        "ecs.Nope,userData,reboots,doc\n"
        "ecs.Instance,userData,reboots,doc\n"
        "ecs.Instance,userData,reboots,doc\n"
        "ecs.Instance,userData,,doc\n"
    )
    with pytest.raises(UserInputError) as err:
        load_rebooting_updates(path)
    text = str(err.value)
    assert "type = 'ecs.Nope': is not a resource kind" in text and "duplicates an earlier row" in text
    assert "line 5" in text and "non-empty columns" in text
