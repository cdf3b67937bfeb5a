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

from blueprints.cli.main import app
from blueprints.core import userdata
from blueprints.core.errors import UserInputError
from blueprints.review.diff.compare import FAIL_ON, diff_plans, empty_plan, load_plan_json
from blueprints.review.render.diff import render_diff, why
from blueprints.testing import offline_plan

FS = "medical-imaging-storage-fs"
NODES = "medical-imaging-cluster-nodes-0"
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
    assert not any(diff.fails_on(kind) for kind in FAIL_ON)
    with pytest.raises(ValueError, match="unknown fail-on class 'replaced'; one of data-risk, replace, any"):
        diff.fails_on("replaced")


def test_the_fail_on_classes_nest_a_data_risk_fails_every_class(medical_plan):
    """protect switched off is an in-place update but a data risk: `--fail-on replace` and `any` fail on it too."""
    old = as_dict(medical_plan)
    new = edit(old, FS, protect=False)
    diff = diff_plans(old, new)
    assert [c.action for c in diff.changes] == ["update"] and diff.risks
    assert [diff.fails_on(kind) for kind in FAIL_ON] == [True, True, True]


def test_nodes_12_to_16_replace_the_batch_delete_first(medical_plan):
    diff = diff_plans(as_dict(medical_plan), as_dict(offline_plan("medical-imaging", overrides={"compute.nodes": 16})))
    (change,) = diff.changes
    assert (change.action, change.name, change.replacing) == ("replace-delete-first", NODES, ("amount",))
    assert change.downtime == (
        "the batch's 12 GPU nodes down ~10–20 min: the new nodes boot, install the GPU driver and CUDA, and reboot once"
    )
    assert diff.risks == [] and diff.fails_on("replace") and not diff.fails_on("data-risk")


def test_instance_type_change_replaces_the_batch_delete_first(medical_plan):
    diff = diff_plans(
        as_dict(medical_plan),
        as_dict(offline_plan("medical-imaging", overrides={"compute.instance_type": "ecs.gn7e-c16g1.16xlarge"})),
    )
    by_name = {c.name: c for c in diff.changes}
    assert by_name[NODES].action == "replace-delete-first" and "instanceType" in by_name[NODES].replacing
    # The launch template gets a new version in place (no ForceNew input changed).
    assert by_name["medical-imaging-cluster-template"].action == "update"


def test_without_delete_before_replace_a_replacement_is_create_first(medical_plan):
    old = edit(as_dict(medical_plan), NODES, delete_before_replace=False)
    new = edit(old, NODES, inputs={**_inputs(old, NODES), "amount": 16})
    (change,) = diff_plans(old, new).changes
    assert change.action == "replace" and change.downtime is None


def test_scaling_out_to_two_batches_creates_the_second(medical_plan):
    big = offline_plan("medical-imaging", overrides={"compute.nodes": 128})
    diff = diff_plans(as_dict(medical_plan), as_dict(big))
    assert diff.summary["gpus"] == (96, 1024)
    by_name = {c.name: c for c in diff.changes}
    # Only the node batches: the nodes' user data does not depend on the node count.
    assert set(by_name) == {NODES, "medical-imaging-cluster-nodes-1"}
    assert by_name[NODES].inputs == {"amount": (12, 64)} and by_name[NODES].action == "replace-delete-first"
    assert by_name["medical-imaging-cluster-nodes-1"].action == "create"
    assert diff.risks == []


def test_storage_kind_change_is_refused_with_a_data_risk(medical_plan):
    nas = offline_plan("medical-imaging", overrides={"storage.kind": "nas", "storage.throughput_tier": "Performance"})
    diff = diff_plans(as_dict(medical_plan), as_dict(nas))
    by_name = {c.name: c for c in diff.changes}
    fs = by_name[FS]
    assert fs.inputs["fileSystemType"] == ("extreme", "standard")
    assert (fs.action, fs.would, fs.replacing) == ("refused", "replace", ("fileSystemType", "storageType"))
    assert fs.risks == (
        "replacing change of stored data (fileSystemType, storageType): "
        "the provider would replace it and its data with it; "
        "protect makes `pulumi up` fail instead — move the data or create new storage on purpose",
        "would be replaced while protected: `pulumi up` will refuse until it is unprotected on purpose",
    )
    # The mount target references the file system in a ForceNew input: it would be replaced with it.
    assert by_name["medical-imaging-storage-mount-target"].action == "replace"
    assert by_name["medical-imaging-storage-mount-target"].reasons == (
        "fileSystemId references medical-imaging-storage-fs, which is replaced: a new ID forces replacement",
    )
    assert diff.fails_on("data-risk")


def test_replacing_unprotected_storage_is_a_replace_with_a_data_risk(medical_plan):
    old = edit(as_dict(medical_plan), FS, protect=False)
    new = edit(old, FS, inputs={**_inputs(old, FS), "zoneId": "cn-shanghai-b"})
    (change, mount) = diff_plans(old, new).changes
    assert change.action == "replace" and change.risks[0].startswith("replacing change of stored data (zoneId)")
    assert mount.name == "medical-imaging-storage-mount-target"


@pytest.mark.parametrize(
    "key, new", [("zoneId", "cn-shanghai-b"), ("protocolType", "SMB"), ("encryptType", 0), ("vswitchId", "${other.id}")]
)
def test_each_replacing_storage_input_is_flagged(medical_plan, key, new):
    old = as_dict(medical_plan)
    diff = diff_plans(old, edit(old, FS, inputs={**_inputs(old, FS), key: new}))
    fs = next(c for c in diff.changes if c.name == FS)
    assert fs.replacing == (key,) and fs.action == "refused"
    assert (
        f"{FS}: replacing change of stored data ({key}): the provider would replace it and its data with it; "
        "protect makes `pulumi up` fail instead — move the data or create new storage on purpose" in diff.risks
    )


def test_in_place_storage_change_is_not_a_risk(medical_plan):
    bigger = offline_plan("medical-imaging", overrides={"storage.capacity_gib": 20480})
    diff = diff_plans(as_dict(medical_plan), as_dict(bigger))
    (fs,) = diff.changes
    assert fs.inputs == {"capacity": (32768, 20480)} and fs.replacing == () and fs.risks == () and fs.action == "update"
    assert diff.risks == [] and not diff.fails_on("replace") and diff.fails_on("any")


def test_region_change_lists_every_resource(medical_plan):
    moved = offline_plan("medical-imaging", overrides={"region": "cn-beijing", "storage.zone": "cn-beijing-c"})
    old, new = as_dict(medical_plan), as_dict(moved)
    diff = diff_plans(old, new)
    names = {c.name for c in diff.changes}
    assert names == {r["name"] for r in old["resources"] if r["custom"]} | {
        r["name"] for r in new["resources"] if r["custom"]
    }
    by_name = {c.name: c for c in diff.changes}
    vpc = by_name["medical-imaging-network-vpc"]
    assert vpc.action == "replace" and vpc.inputs == {}  # nothing of its own changes: its provider does
    assert vpc.reasons == (
        "its provider changes (medical-imaging-cn-shanghai → "
        "medical-imaging-cn-beijing): a new provider replaces every resource of it",
    )
    assert {by_name[n].action for n in (FS, "medical-imaging-data-bucket")} == {"refused"}
    assert by_name[NODES].action == "replace-delete-first"
    assert (
        by_name["medical-imaging-cn-shanghai"].action == "delete"
        and by_name["medical-imaging-cn-beijing"].action == "create"
    )


def test_provider_region_change_under_the_same_name_replaces_its_resources(medical_plan):
    old = as_dict(medical_plan)
    new = edit(old, "medical-imaging-cn-shanghai", inputs={"region": "cn-beijing"})
    by_name = {c.name: c for c in diff_plans(old, new).changes}
    assert by_name["medical-imaging-cn-shanghai"].replacing == ("region",)
    assert by_name["medical-imaging-network-vpc"].reasons == ("its provider medical-imaging-cn-shanghai is replaced",)
    assert len(by_name) == 1 + sum(1 for r in old["resources"] if r.get("provider") == "medical-imaging-cn-shanghai")


def test_tags_only_change_is_an_update_without_risk(medical_plan):
    old = as_dict(medical_plan)
    new = copy.deepcopy(old)
    for r in new["resources"]:
        if isinstance(r["inputs"].get("tags"), dict):
            r["inputs"]["tags"] = {**r["inputs"]["tags"], "team": "radiology"}
    diff = diff_plans(old, new)
    assert len(diff.changes) >= 9 and {c.action for c in diff.changes} == {"update"}
    assert diff.risks == [] and not diff.fails_on("replace") and not diff.fails_on("data-risk")


def test_unknown_type_may_replace_except_on_tags_and_description(medical_plan):
    old = as_dict(medical_plan)
    old["resources"].append({"type": "alicloud:foo/bar:Bar", "name": "x", "inputs": {"size": 1, "tags": {}}})
    changed = diff_plans(old, edit(old, "x", inputs={"size": 2, "tags": {}})).changes[0]
    assert (changed.action, changed.certain, changed.replacing) == ("replace", False, ("size",))
    assert "may replace; type not in the replacement table" in "; ".join(why(changed))
    tagged = diff_plans(old, edit(old, "x", inputs={"size": 1, "tags": {"a": "b"}})).changes[0]
    assert (tagged.action, tagged.replacing) == ("update", ())


def test_reference_to_a_replaced_resource_in_a_non_forcing_input_is_an_update(autoscaling_plan):
    """The scaling configuration's scalingGroupId is ForceNew; the alarm's alarmActions is not."""
    old = as_dict(autoscaling_plan)
    rule = "autoscaling-training-pool-scale-out"
    new = edit(old, rule, inputs={**_inputs(old, rule), "scalingRuleType": "StepScalingRule"})
    by_name = {c.name: c for c in diff_plans(old, new).changes}
    assert by_name[rule].action == "replace"
    alarm = by_name["autoscaling-training-pool-cpu-busy"]
    assert alarm.action == "update" and alarm.inputs == {}
    assert alarm.reasons == (f"alarmActions references {rule}, which is replaced: it takes the new ID in place",)


def test_ignored_inputs_are_not_changes(autoscaling_plan):
    old = as_dict(autoscaling_plan)
    group = "autoscaling-training-pool-group"
    assert diff_plans(old, edit(old, group, inputs={**_inputs(old, group), "desiredCapacity": 9})).changes == ()


def test_user_data_change_is_a_unified_diff_of_the_decoded_text(medical_plan):
    old = as_dict(medical_plan)
    template = "medical-imaging-cluster-template"
    text = userdata.decode(_inputs(old, template)["userData"])
    changed = userdata.encode(text.replace("#cloud-config\n", "#cloud-config\n# reviewed\n", 1))
    (change,) = diff_plans(old, edit(old, template, inputs={**_inputs(old, template), "userData": changed})).changes
    assert change.action == "update"
    lines = change.text_diffs["userData"].splitlines()
    assert lines[:2] == [f"--- old/{template}.userData", f"+++ new/{template}.userData"]
    assert "+# reviewed" in lines and " #cloud-config" in lines
    assert not any(changed[:20] in line for line in lines)  # never the base64 blob


def test_policy_change_is_a_unified_diff_of_the_pretty_json(medical_plan):
    old = as_dict(medical_plan)
    policy = "medical-imaging-data-node-policy"
    doc = json.loads(_inputs(old, policy)["policyDocument"])
    doc["Statement"][0]["Action"].append("oss:DeleteObject")
    (change,) = diff_plans(
        old, edit(old, policy, inputs={**_inputs(old, policy), "policyDocument": json.dumps(doc)})
    ).changes
    assert '+        "oss:DeleteObject"' in change.text_diffs["policyDocument"].splitlines()


def test_vpc_cidr_change_replaces_the_vswitch_and_refuses_the_cpfs_bound_to_it(cpfs_plans):
    before, after = cpfs_plans
    fs = next(r for r in before["resources"] if r["type"] == "alicloud:nas/fileSystem:FileSystem")
    assert fs["inputs"]["vswitchId"] == "${autoscaling-training-network-vsw-cn-shanghai-a.id}"
    diff = diff_plans(before, after)
    by_name = {c.name: c for c in diff.changes}
    assert by_name["autoscaling-training-network-vsw-cn-shanghai-a"].replacing == ("cidrBlock",)
    # A VPC's CIDR block changes in place (not ForceNew in the provider docs).
    assert by_name["autoscaling-training-network-vpc"].action == "update"
    storage = by_name["autoscaling-training-storage-fs"]
    assert storage.inputs == {} and storage.action == "refused"
    assert (
        "vswitchId references autoscaling-training-network-vsw-cn-shanghai-a, "
        "which is replaced: a new ID forces replacement" in storage.reasons
    )
    assert diff.fails_on("data-risk")


def test_vpc_cidr_change_on_nas_puts_no_storage_at_risk(autoscaling_plan):
    moved = offline_plan("autoscaling-training", overrides={"network.vpc_cidr": "10.1.0.0/16"})
    diff = diff_plans(as_dict(autoscaling_plan), as_dict(moved))
    assert {c.name for c in diff.changes if c.action == "replace"} >= {
        "autoscaling-training-network-vsw-cn-shanghai-a",
        "autoscaling-training-storage-mount-target",
    }
    assert diff.risks == []  # NAS is reached through a mount target; the file system references nothing


def test_removing_a_resource_the_storage_is_bound_to_is_a_risk(cpfs_plans):
    before, _ = cpfs_plans
    diff = diff_plans(before, without(before, "autoscaling-training-network-vsw-cn-shanghai-a"))
    (change,) = diff.changes
    assert change.action == "delete"
    assert change.risks == (
        "this change removes a resource stateful autoscaling-training-storage-fs is bound to (vswitchId): "
        "the storage would have to be replaced with it; protect makes `pulumi up` fail instead",
    )


def test_tag_change_of_a_bound_resource_is_in_place(cpfs_plans):
    before, _ = cpfs_plans
    vpc = "autoscaling-training-network-vpc"
    diff = diff_plans(before, edit(before, vpc, inputs={**_inputs(before, vpc), "tags": {"team": "x"}}))
    assert [(c.action, c.replacing) for c in diff.changes] == [("update", ())] and diff.risks == []


def test_removing_protected_storage_is_refused_and_a_risk(medical_plan):
    old = as_dict(medical_plan)
    diff = diff_plans(old, without(old, FS))
    (change,) = diff.changes
    assert (change.action, change.would) == ("refused", "delete")
    assert diff.risks == [f"{FS}: removed while protected: `pulumi up` will refuse until it is unprotected on purpose"]


def test_removing_unretained_storage_is_a_risk_and_retained_is_not(medical_plan):
    old = edit(as_dict(medical_plan), FS, protect=False, retain_on_delete=False)
    assert diff_plans(old, without(old, FS)).risks == [
        f"{FS}: removed stateful resource without retain_on_delete: its data would be deleted"
    ]
    retained = edit(as_dict(medical_plan), FS, protect=False)
    assert diff_plans(retained, without(retained, FS)).risks == []
    # A stateless resource can go without a word, but it is still a deletion for --fail-on replace.
    diff = diff_plans(old, without(old, "medical-imaging-cluster-placement"))
    assert diff.risks == [] and diff.fails_on("replace") and diff.changes[0].action == "delete"


@pytest.mark.parametrize("option", ["protect", "retain_on_delete"])
def test_switching_off_protection_is_a_risk(medical_plan, option):
    old = as_dict(medical_plan)
    diff = diff_plans(old, edit(old, FS, **{option: False}))
    assert diff.risks == [f"{FS}: {option} is switched off"]
    (change,) = diff.changes
    assert change.options == {option: (True, False)} and change.action == "update"


def test_delete_before_replace_switched_on_for_storage_is_a_risk(medical_plan):
    old = as_dict(medical_plan)
    assert diff_plans(old, edit(old, FS, delete_before_replace=True)).risks == [
        f"{FS}: delete_before_replace is switched on for stored data"
    ]
    # Nodes are replaced delete-first on purpose: not a data risk.
    assert diff_plans(old, edit(old, "medical-imaging-cluster-template", delete_before_replace=True)).risks == []


def test_an_unpriced_resource_that_did_not_change_is_not_a_cost_change(medical_plan):
    """The real plans price the NAT's CU fee as unknown on both sides: no line unless what is priced changed."""
    old = as_dict(medical_plan)
    assert diff_plans(old, as_dict(medical_plan)).costs.lines == ()
    grown = copy.deepcopy(old)
    nodes = next(
        line for line in grown["costs"]["lines"] if line["resource"] == NODES and line["cny_per_month"] is None
    )
    nodes["quantity"] = nodes["quantity"] + 1  # an unpriced disk more: the known part is equal, the cost is not
    (line,) = diff_plans(old, grown).costs.lines
    assert (line.resource, line.delta, line.partial) == (NODES, 0.0, True)


def test_costs_per_resource_and_total(medical_plan):
    old, new = as_dict(medical_plan), as_dict(medical_plan)
    old["costs"] = _costs({NODES: 2_434_667.0, FS: 100.0}, complete=True)
    new["costs"] = _costs({NODES: 3_246_222.67, FS: None}, complete=False)
    costs = diff_plans(old, new).costs
    assert costs is not None
    assert [(c.resource, c.old, c.new, c.delta) for c in costs.lines] == [
        (NODES, 2_434_667.0, 3_246_222.67, 811_555.67),
        (FS, 100.0, None, None),
    ]
    assert (costs.delta, costs.percent, costs.complete) == (811_455.67, 33.3, False)
    assert [c.partial for c in costs.lines] == [False, True]
    new["costs"] = {}
    assert diff_plans(old, new).costs is None


def test_empty_plan_diff_is_all_create_and_all_delete(medical_plan):
    plan = as_dict(medical_plan)
    assert {c.action for c in diff_plans(empty_plan(), plan).changes} == {"create"}
    removed = diff_plans(plan, empty_plan())
    assert {c.action for c in removed.changes} == {"delete", "refused"}  # the protected bucket and file system
    assert removed.fails_on("data-risk")


def _costs(amounts, complete):
    lines = [{"resource": name, "cny_per_month": amount} for name, amount in amounts.items()]
    total = None if not complete else sum(a for a in amounts.values())
    if not complete:
        total = sum(a for a in amounts.values() if a is not None)
    return {
        "currency": "CNY",
        "lines": lines,
        "totals": {"cny_per_month": total, "complete": complete, "unknown": [] if complete else ["fs: capacity"]},
    }


def _inputs(plan_dict, name):
    return next(r for r in plan_dict["resources"] if r["name"] == name)["inputs"]


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
    assert data["schema"] == "aitrain.plandiff/v2"
    assert data["changes"][0]["inputs"]["amount"] == {"old": 12, "new": 13}
    assert data["changes"][0]["action"] == "replace-delete-first" and data["counts"]["replace-delete-first"] == 1
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
    (
        "resource not an object",
        lambda d: d["resources"].insert(0, "vpc"),
        "resources[0] = 'vpc': must be an object with type, name and inputs",
    ),
    ("no inputs", lambda d: d["resources"][2].pop("inputs"), "resources[2].inputs: is missing; must be an object"),
    ("inputs a list", lambda d: d["resources"][1].update(inputs=[]), "resources[1].inputs = []: must be an object"),
    ("name a number", lambda d: d["resources"][3].update(name=7), "resources[3].name = 7: must be a string"),
    ("type missing", lambda d: d["resources"][0].pop("type"), "resources[0].type: is missing; must be a string"),
    (
        "protect a string",
        lambda d: d["resources"][4].update(protect="yes"),
        "resources[4].protect = 'yes': must be true or false",
    ),
    ("summary a list", lambda d: d.update(summary=[]), "summary = []: must be an object"),
    (
        "duplicate",
        lambda d: d["resources"].append(dict(d["resources"][1])),
        "duplicates resources[1] (same type and name)",
    ),
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
        for key in (
            "protect",
            "retain_on_delete",
            "delete_before_replace",
            "ignore_changes",
            "replace_on_changes",
            "depends_on",
            "registered_outputs",
            "parent",
            "custom",
            "provider",
        ):
            r.pop(key, None)
    loaded = load_plan_json(write(tmp_path, "trimmed.json", data))
    assert loaded["resources"][0] == {
        "type": data["resources"][0]["type"],
        "name": data["resources"][0]["name"],
        "inputs": data["resources"][0]["inputs"],
    }


def _synthetic(*resources):
    """A minimal plan dict of (type, name, inputs[, extra fields]) tuples."""
    return {
        "schema": "aitrain.plan/v2",
        "summary": {},
        "resources": [
            {"type": t, "name": n, "inputs": i, **(extra[0] if extra else {})} for t, n, i, *extra in resources
        ],
    }


def test_a_replacement_carries_down_a_chain_of_references():
    """vSwitch replaced → its mount target (ForceNew vswitchId) → a resource on the mount target → one on that one."""

    def plan(cidr):
        return _synthetic(
            ("alicloud:vpc/switch:Switch", "vsw", {"cidrBlock": cidr, "vpcId": "vpc-1", "zoneId": "z"}),
            ("alicloud:nas/mountTarget:MountTarget", "mt", {"vswitchId": "${vsw.id}", "fileSystemId": "fs-1"}),
            ("example:index:OnMount", "first", {"target": "${mt.id}"}),
            ("example:index:OnFirst", "second", {"target": "${first.id}"}),
        )

    diff = diff_plans(plan("10.0.0.0/20"), plan("10.8.0.0/20"))
    assert {c.name: c.action for c in diff.changes} == {
        "vsw": "replace",
        "mt": "replace",
        "first": "replace",
        "second": "replace",
    }
    second = next(c for c in diff.changes if c.name == "second")
    assert (
        second.reasons == ("target references first, which is replaced: a new ID forces replacement",)
        and not second.certain
    )


def test_an_ignored_input_neither_changes_nor_carries_a_replacement():
    """ignore_changes: Pulumi does not diff those inputs, so
    neither their own change nor a new ID behind them counts."""

    def plan(cidr, label):
        return _synthetic(
            ("alicloud:vpc/switch:Switch", "vsw", {"cidrBlock": cidr, "vpcId": "vpc-1", "zoneId": "z"}),
            (
                "alicloud:nas/mountTarget:MountTarget",
                "mt",
                {"vswitchId": "${vsw.id}", "fileSystemId": label},
                {"ignore_changes": ["vswitchId", "fileSystemId"]},
            ),
        )

    diff = diff_plans(plan("10.0.0.0/20", "fs-1"), plan("10.8.0.0/20", "fs-2"))
    assert [(c.name, c.action) for c in diff.changes] == [("vsw", "replace")]


def test_a_cost_change_from_nothing_or_without_a_total_has_no_percent():
    from blueprints.review.diff.costs import cost_diff

    fresh = cost_diff(_costs({NODES: 0.0}, complete=True), _costs({NODES: 100.0}, complete=True))
    assert (fresh.delta, fresh.percent) == (100.0, None)  # from ¥0: a change, but no percentage of nothing
    no_total = {"lines": [{"resource": NODES, "cny_per_month": 5.0}], "totals": {}}
    blind = cost_diff(no_total, _costs({NODES: 100.0}, complete=True))
    assert (blind.delta, blind.percent) == (None, None)
    assert fresh.to_dict()["totals"] == {
        "old_cny_per_month": 0.0,
        "new_cny_per_month": 100.0,
        "delta_cny_per_month": 100.0,
        "delta_percent": None,
        "complete": True,
        "unknown": [],
    }
    assert fresh.to_dict()["lines"] == [
        {
            "resource": NODES,
            "old_cny_per_month": 0.0,
            "new_cny_per_month": 100.0,
            "delta_cny_per_month": 100.0,
            "complete": True,
        }
    ]
