"""Plan diffs: resources added, removed and changed between two JSON plans, and every data-safety risk.

One test per risk: removal of protected or non-retained storage, protect/retain switched off,
delete_before_replace switched on, replacing changes of storage inputs (not in-place ones), and replacement
or removal of a resource the storage is bound to (the vSwitch CPFS lives in, after a vpc_cidr change).
"""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from blueprints.cli import app
from blueprints.errors import UserInputError
from blueprints.plandiff import diff_plans, load_plan_json, render_diff
from blueprints.testing import offline_plan

FS = "medical-imaging-storage-fs"
CPFS = {"storage.kind": "cpfs", "storage.throughput_tier": "advance_100", "storage.allow_unencrypted_cpfs": True}


def as_dict(plan):
    return json.loads(plan.to_json())


def edit(plan_dict, name, **fields):
    """A deep copy of a plan dict with resource ``name``'s fields set."""
    data = copy.deepcopy(plan_dict)
    (resource,) = [r for r in data["resources"] if r["name"] == name]
    resource.update(fields)
    return data


def without(plan_dict, name):
    data = copy.deepcopy(plan_dict)
    data["resources"] = [r for r in data["resources"] if r["name"] != name]
    return data


@pytest.fixture(scope="module")
def cpfs_plans():
    """Autoscaling preset on CPFS, before and after a vpc_cidr change (CPFS is bound to the VPC and vSwitch)."""
    before = offline_plan("autoscaling-training", overrides=CPFS)
    after = offline_plan("autoscaling-training", overrides={**CPFS, "network.vpc_cidr": "10.1.0.0/16"})
    return as_dict(before), as_dict(after)


def test_identical_plans_have_no_changes(medical_plan):
    diff = diff_plans(as_dict(medical_plan), as_dict(medical_plan))
    assert diff.summary == {} and diff.changes == ()
    assert render_diff(diff).endswith("No changes.\n")


def test_scaling_out_changes_compute_only(medical_plan):
    big = offline_plan("medical-imaging", overrides={"compute.nodes": 128})
    diff = diff_plans(as_dict(medical_plan), as_dict(big))
    assert diff.summary["gpus"] == (96, 1024)
    by_name = {c.name: c for c in diff.changes}
    # Only the node batches: the nodes' user data does not depend on the node count.
    assert set(by_name) == {"medical-imaging-cluster-nodes-0", "medical-imaging-cluster-nodes-1"}
    assert by_name["medical-imaging-cluster-nodes-0"].inputs == {"amount": (12, 64)}
    assert by_name["medical-imaging-cluster-nodes-1"].action == "added"
    assert diff.risks == []


def test_replacing_change_of_storage_inputs_is_a_risk(medical_plan):
    nas = offline_plan("medical-imaging", overrides={"storage.kind": "nas", "storage.throughput_tier": "Performance"})
    diff = diff_plans(as_dict(medical_plan), as_dict(nas))
    (fs,) = [c for c in diff.changes if c.name == FS]
    assert fs.inputs["fileSystemType"] == ("extreme", "standard")
    assert fs.replacing == ("fileSystemType", "storageType")
    assert fs.risks == (
        "replacing change of stored data (fileSystemType, storageType): the provider would replace it and its data with it; "
        "protect makes `pulumi up` fail instead — move the data or create new storage on purpose",
    )
    text = render_diff(diff)
    assert "fileSystemType: extreme → standard  [forces replacement]" in text
    assert "capacity: 32768 → null  [in place]" in text
    assert "userData: cloud-init changed" in text and "Data-safety risks:" in text


@pytest.mark.parametrize("key, new", [("zoneId", "cn-shanghai-b"), ("protocolType", "SMB"), ("encryptType", 0), ("vswitchId", "${other.id}")])
def test_each_replacing_storage_input_is_flagged(medical_plan, key, new):
    old = as_dict(medical_plan)
    fs = next(r for r in old["resources"] if r["name"] == FS)
    diff = diff_plans(old, edit(old, FS, inputs={**fs["inputs"], key: new}))
    assert [c.replacing for c in diff.changes] == [(key,)]
    assert diff.risks == [f"{FS}: replacing change of stored data ({key}): the provider would replace it and its data with it; "
                          "protect makes `pulumi up` fail instead — move the data or create new storage on purpose"]


def test_in_place_storage_change_is_not_a_risk(medical_plan):
    bigger = offline_plan("medical-imaging", overrides={"storage.capacity_gib": 20480})
    diff = diff_plans(as_dict(medical_plan), as_dict(bigger))
    (fs,) = [c for c in diff.changes if c.name == FS]
    assert fs.inputs == {"capacity": (32768, 20480)} and fs.replacing == () and fs.risks == ()
    assert diff.risks == []
    assert "capacity: 32768 → 20480  [in place]" in render_diff(diff)


def test_vpc_cidr_change_replaces_the_vswitch_cpfs_is_bound_to(cpfs_plans):
    before, after = cpfs_plans
    fs = next(r for r in before["resources"] if r["type"] == "alicloud:nas/fileSystem:FileSystem")
    assert fs["inputs"]["vswitchId"] == "${autoscaling-training-network-vsw-cn-shanghai-a.id}"
    diff = diff_plans(before, after)
    by_name = {c.name: c for c in diff.changes}
    vsw = by_name["autoscaling-training-network-vsw-cn-shanghai-a"]
    assert vsw.replacing == ("cidrBlock",)
    bound = [r for r in diff.risks if "is bound to" in r]
    assert bound == [
        "autoscaling-training-network-vpc: this change may replace (cidrBlock) a resource stateful autoscaling-training-storage-fs is bound to (vpcId): "
        "the storage would have to be replaced with it; protect makes `pulumi up` fail instead",
        "autoscaling-training-network-vsw-cn-shanghai-a: this change replaces (cidrBlock) a resource stateful autoscaling-training-storage-fs is bound to (vswitchId): "
        "the storage would have to be replaced with it; protect makes `pulumi up` fail instead",
    ]
    # The file system's own inputs did not change: only the reference check sees the risk.
    assert "autoscaling-training-storage-fs" not in by_name


def test_vpc_cidr_change_on_nas_puts_no_storage_at_risk(autoscaling_plan):
    moved = offline_plan("autoscaling-training", overrides={"network.vpc_cidr": "10.1.0.0/16"})
    diff = diff_plans(as_dict(autoscaling_plan), as_dict(moved))
    assert {c.name for c in diff.changes if c.replacing} >= {"autoscaling-training-network-vsw-cn-shanghai-a"}
    assert diff.risks == []  # NAS is reached through a mount target; the file system references nothing


def test_removing_a_resource_the_storage_is_bound_to_is_a_risk(cpfs_plans):
    before, _ = cpfs_plans
    diff = diff_plans(before, without(before, "autoscaling-training-network-vsw-cn-shanghai-a"))
    (change,) = diff.changes
    assert change.action == "removed"
    assert change.risks == (
        "this change removes a resource stateful autoscaling-training-storage-fs is bound to (vswitchId): "
        "the storage would have to be replaced with it; protect makes `pulumi up` fail instead",
    )


def test_tag_change_of_a_bound_resource_is_in_place(cpfs_plans):
    before, _ = cpfs_plans
    vpc = next(r for r in before["resources"] if r["name"] == "autoscaling-training-network-vpc")
    diff = diff_plans(before, edit(before, vpc["name"], inputs={**vpc["inputs"], "tags": {"team": "x"}}))
    assert [c.replacing for c in diff.changes] == [()] and diff.risks == []


def test_removing_protected_storage_is_a_risk(medical_plan):
    old = as_dict(medical_plan)
    (risk,) = diff_plans(old, without(old, FS)).risks
    assert risk == f"{FS}: removed while protected: `pulumi up` will refuse until it is unprotected on purpose"


def test_removing_unretained_storage_is_a_risk_and_retained_is_not(medical_plan):
    old = edit(as_dict(medical_plan), FS, protect=False, retain_on_delete=False)
    assert diff_plans(old, without(old, FS)).risks == [f"{FS}: removed stateful resource without retain_on_delete: its data would be deleted"]
    retained = edit(as_dict(medical_plan), FS, protect=False)
    assert diff_plans(retained, without(retained, FS)).risks == []
    # A stateless resource can go without a word.
    assert diff_plans(old, without(old, "medical-imaging-cluster-placement")).risks == []


@pytest.mark.parametrize("option", ["protect", "retain_on_delete"])
def test_switching_off_protection_is_a_risk(medical_plan, option):
    old = as_dict(medical_plan)
    diff = diff_plans(old, edit(old, FS, **{option: False}))
    assert diff.risks == [f"{FS}: {option} is switched off"]
    (change,) = diff.changes
    assert change.options == {option: (True, False)}


def test_delete_before_replace_switched_on_for_storage_is_a_risk(medical_plan):
    old = as_dict(medical_plan)
    assert diff_plans(old, edit(old, FS, delete_before_replace=True)).risks == [f"{FS}: delete_before_replace is switched on for stored data"]
    # Nodes are replaced delete-first on purpose: not a data risk.
    assert diff_plans(old, edit(old, "medical-imaging-cluster-template", delete_before_replace=True)).risks == []


def test_markdown_diff_lists_risks(medical_plan):
    old = as_dict(medical_plan)
    text = render_diff(diff_plans(old, edit(old, FS, protect=False)), markdown=True)
    assert text.startswith("## aitrain plan diff")
    assert f"~ `{FS}` (alicloud:nas/fileSystem:FileSystem)" in text
    assert "**Data-safety risks:**" in text and f"- {FS}: protect is switched off" in text


def test_plans_without_the_graph_fields_still_diff(medical_plan):
    """depends_on / registered_outputs are additive: a plan written before them diffs cleanly."""
    old = as_dict(medical_plan)
    for r in old["resources"]:
        del r["depends_on"], r["registered_outputs"]
    assert diff_plans(old, as_dict(medical_plan)).changes == ()


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_diff_command_json(tmp_path, medical_plan):
    a = write(tmp_path, "a.json", medical_plan.to_json())
    b = write(tmp_path, "b.json", offline_plan("medical-imaging", overrides={"compute.nodes": 13}).to_json())
    result = CliRunner().invoke(app, ["diff", str(a), str(b), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == "aitrain.plandiff/v1"
    assert data["changes"][0]["inputs"]["amount"] == {"old": 12, "new": 13}
    assert data["risks"] == []


def mangle(plan_dict, how):
    data = copy.deepcopy(plan_dict)
    how(data)
    return data


BAD_PLANS = [
    ("truncated", lambda d: None, "is not JSON"),
    ("other schema", lambda d: d.update(schema="aitrain.recommendation/v1"), "expected 'aitrain.plan/v2'"),
    ("no resources", lambda d: d.pop("resources"), "resources: is missing; must be a list of resource objects"),
    ("resources an object", lambda d: d.update(resources={}), "resources = {}: must be a list of resource objects"),
    ("resource not an object", lambda d: d["resources"].insert(0, "vpc"), "resources[0] = 'vpc': must be an object with type, name and inputs"),
    ("no inputs", lambda d: d["resources"][2].pop("inputs"), "resources[2].inputs: is missing; must be an object"),
    ("inputs a list", lambda d: d["resources"][1].update(inputs=[]), "resources[1].inputs = []: must be an object"),
    ("name a number", lambda d: d["resources"][3].update(name=7), "resources[3].name = 7: must be a string"),
    ("type missing", lambda d: d["resources"][0].pop("type"), "resources[0].type: is missing; must be a string"),
    ("protect a string", lambda d: d["resources"][4].update(protect="yes"), "resources[4].protect = 'yes': must be true or false"),
    ("summary a list", lambda d: d.update(summary=[]), "summary = []: must be an object"),
    ("duplicate", lambda d: d["resources"].append(dict(d["resources"][1])), "duplicates resources[1] (same type and name)"),
]


@pytest.mark.parametrize("case, how, message", BAD_PLANS, ids=[c[0] for c in BAD_PLANS])
def test_diff_of_a_bad_plan_exits_2_naming_the_path(case, how, message, tmp_path, medical_plan):
    good = write(tmp_path, "good.json", medical_plan.to_json())
    text = medical_plan.to_json()[:500] if case == "truncated" else json.dumps(mangle(as_dict(medical_plan), how))
    bad = write(tmp_path, "bad.json", text)
    result = CliRunner().invoke(app, ["diff", str(good), str(bad)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: invalid plan file")
    assert message in result.stderr and str(bad) in result.stderr
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


def test_load_plan_json_reports_several_problems_at_once(tmp_path, medical_plan):
    data = as_dict(medical_plan)
    data["resources"][0]["inputs"] = None
    data["resources"][1]["type"] = None
    with pytest.raises(UserInputError) as err:
        load_plan_json(write(tmp_path, "p.json", data))
    assert [p.path.split(": ", 1)[1] for p in err.value.problems] == ["resources[0].inputs", "resources[1].type"]


def test_non_object_plan_is_rejected(tmp_path):
    with pytest.raises(UserInputError, match="schema = 'list'"):
        load_plan_json(write(tmp_path, "list.json", "[]"))
    with pytest.raises(UserInputError, match=r"schema = '\(missing\)': expected 'aitrain.plan/v2'"):
        load_plan_json(write(tmp_path, "empty.json", "{}"))


def test_optional_fields_may_be_absent_from_a_plan_file(tmp_path, medical_plan):
    """Only type, name and inputs are required per resource: older or hand-trimmed plans still load."""
    data = as_dict(medical_plan)
    for r in data["resources"]:
        for key in ("protect", "retain_on_delete", "delete_before_replace", "ignore_changes", "depends_on", "registered_outputs", "parent", "custom", "provider"):
            r.pop(key, None)
    loaded = load_plan_json(write(tmp_path, "trimmed.json", data))
    assert loaded["resources"][0] == {"type": data["resources"][0]["type"], "name": data["resources"][0]["name"], "inputs": data["resources"][0]["inputs"]}


def test_rendered_diff_lists_summary_counts_and_unmarked_compute_changes(medical_plan):
    old = as_dict(medical_plan)
    nodes = next(r for r in old["resources"] if r["name"] == "medical-imaging-cluster-nodes-0")
    changed = edit(old, nodes["name"], inputs={**nodes["inputs"], "amount": 13})
    changed["summary"] = {**old["summary"], "nodes": 13}
    text = render_diff(diff_plans(old, changed))
    assert text == (
        "aitrain plan diff\n\n"
        "- nodes: 12 → 13\n\n"
        "0 added, 1 changed, 0 removed\n"
        "~ medical-imaging-cluster-nodes-0 (alicloud:ecs/ecsInstanceSet:EcsInstanceSet)\n"
        "    amount: 12 → 13\n"
    )
    # Without a summary change there is no blank summary block.
    assert render_diff(diff_plans(old, edit(old, nodes["name"], inputs={**nodes["inputs"], "amount": 13}))).startswith(
        "aitrain plan diff\n\n0 added, 1 changed, 0 removed\n"
    )
