"""The Terraform JSON export: every preset exports, every type is mapped, references resolve, values equal the plan's,
the output is deterministic, and `aitrain export terraform` exits 0 / 1 / 2 as documented."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.export import ExportError, load_terraform_names, snake, to_terraform, to_terraform_json
from blueprints.export.names import parse_terraform_names, tf_identifier, tf_identifiers
from blueprints.profile.stackconfig import preset_names
from blueprints.review.plan import Plan, PlannedResource
from tests.test_golden import ERDMA_LOGIN  # the golden variant with ecs.Instance nodes, eRDMA and a login node

_TF_REFERENCE = re.compile(r"\$\{([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z0-9_.]+)\}")
_CACHE: dict[str, Plan] = {}
ROOT = Path(__file__).resolve().parents[1]


def plan_of(name: str) -> Plan:
    """Offline plan of a preset (or ``erdma-login``: medical-imaging with eRDMA and a login node), once per session."""
    from blueprints.testing import offline_plan

    if name not in _CACHE:
        _CACHE[name] = (
            offline_plan("medical-imaging", overrides=ERDMA_LOGIN) if name == "erdma-login" else offline_plan(name)
        )
    return _CACHE[name]


# Every preset and the eRDMA variant; a kubernetes-pool plan holds Kubernetes objects, so it is exported with
# cloud_only (its alicloud side; without the option the export refuses it, below).
PLANS = [*preset_names(), "erdma-login"]
assert "kubernetes-training" in PLANS


def cloud_only(name: str) -> bool:
    """Whether the plan holds Kubernetes objects (kubernetes-training, lingjun-training): its cloud side is exported."""
    return any(r.type.startswith("kubernetes:") for r in plan_of(name).resources)


def export_of(name: str) -> dict:
    """The export of a preset as `make scan` writes it (kubernetes-training with cloud_only)."""
    return to_terraform(plan_of(name), cloud_only=cloud_only(name))


def managed(plan: Plan) -> list[PlannedResource]:
    """The alicloud resources the export writes (Kubernetes objects are never written)."""
    return [r for r in plan.resources if r.custom and not r.type.startswith(("pulumi:providers:", "kubernetes:"))]


def tf_body(document: dict, resource: PlannedResource) -> dict:
    tf_type = load_terraform_names().of(resource.type).tf_type
    return document["resource"][tf_type][tf_identifier(resource.name)]


def resource(type_: str, name: str, inputs: dict, **options) -> PlannedResource:
    return PlannedResource(type=type_, name=name, parent=None, custom=True, inputs=inputs, **options)


def tiny_plan(*resources: PlannedResource, outputs: dict | None = None) -> Plan:
    return Plan(
        blueprint="t",
        region="cn-hangzhou",
        profile_name="t",
        summary={},
        notes=(),
        resources=tuple(resources),
        outputs=outputs or {},
    )


@pytest.mark.parametrize("name", PLANS)
def test_every_preset_exports_every_managed_resource_once(name):
    plan = plan_of(name)
    document = export_of(name)
    exported = sorted((tf_type, ident) for tf_type, named in document["resource"].items() for ident in named)
    expected = sorted((load_terraform_names().of(r.type).tf_type, tf_identifier(r.name)) for r in managed(plan))
    assert exported == expected and len(expected) > 20
    # Components are grouping only: no aitrain:* type and no component name appears as a resource.
    components = {r.name for r in plan.resources if not r.custom}
    assert components and not components & {ident for _, ident in exported}
    assert document["provider"] == {"alicloud": [{"region": plan.region}]}
    assert document["terraform"]["required_providers"]["alicloud"]["source"] == "aliyun/alicloud"


@pytest.mark.parametrize("name", PLANS)
def test_every_reference_resolves_to_a_declared_resource_and_attribute_names_are_terraform_names(name):
    document = export_of(name)
    text = json.dumps(document)
    references = _TF_REFERENCE.findall(text)
    assert references, "the presets wire resources together: references expected"
    for tf_type, ident, attribute in references:
        if tf_type == "data":  # ${data.<type>.<name>.<attribute>}: a declared data source
            assert attribute.split(".")[0] in document["data"].get(ident, {}), f"data.{ident}.{attribute} is undeclared"
            continue
        assert ident in document["resource"].get(tf_type, {}), (
            f"${{{tf_type}.{ident}.{attribute}}} names no declared resource"
        )
        assert attribute == snake(attribute)
    # No plan-form reference (``${logical-name.attr}``, two parts) survives the conversion.
    assert not re.search(r"\$\{[^.}]+\.[^.}]+\}", text)


DOCUMENTED = json.loads((Path(__file__).parent / "data" / "terraform_arguments.json").read_text(encoding="utf-8"))[
    "arguments"
]


def _attribute_names(body: dict, prefix: str = "") -> set[str]:
    names = set()
    for key, value in body.items():
        if key in ("lifecycle", "depends_on", "provider"):  # Terraform meta-arguments
            continue
        names.add(prefix + key)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                names |= _attribute_names(item, "")
    return names


@pytest.mark.parametrize("name", PLANS)
def test_every_exported_name_is_documented_by_the_terraform_provider(name):
    """Catches a field whose snake_case form is not its Terraform name (the data file then needs a rename)."""
    document = export_of(name)
    for tf_type, named in document["resource"].items():
        for ident, body in named.items():
            unknown = _attribute_names(body) - set(DOCUMENTED[tf_type])
            assert not unknown, f"{tf_type}.{ident}: {sorted(unknown)} not documented by terraform-provider-alicloud"
    for tf_type, _, attribute in _TF_REFERENCE.findall(json.dumps(document)):
        if tf_type == "data":  # a data source's attribute (data.alicloud_caller_identity.current.account_id)
            continue
        assert attribute in DOCUMENTED[tf_type], f"reference to undocumented {tf_type}.{attribute}"


def test_every_mapped_type_has_its_documented_arguments():
    assert sorted(DOCUMENTED) == sorted(n.tf_type for n in load_terraform_names().types.values())
    assert (
        "http_tokens" in DOCUMENTED["alicloud_ecs_launch_template"]
        and "cidr_ip" in DOCUMENTED["alicloud_security_group_rule"]
    )


@pytest.mark.parametrize("name", PLANS)
def test_top_level_scalar_values_equal_the_plans(name):
    plan = plan_of(name)
    document = export_of(name)
    names = load_terraform_names()
    compared = 0
    for r in managed(plan):
        body = tf_body(document, r)
        type_names = names.of(r.type)
        for key, value in r.inputs.items():
            if isinstance(value, (bool, int, float)) or (isinstance(value, str) and "${" not in value):
                assert body[type_names.field("", key)] == value, (r.name, key)
                compared += 1
    assert compared > 50


def test_safety_values_reach_terraform_under_the_providers_names(medical_plan):
    document = to_terraform(medical_plan)
    template = next(r for r in medical_plan.resources if r.short_type == "ecs.EcsLaunchTemplate")
    body = tf_body(document, template)
    assert body["http_tokens"] == template.inputs["httpTokens"] == "required"
    # A single nested block in Terraform: a one-element list holding the Pulumi object's fields, snake_cased.
    assert body["system_disk"] == [{snake(k): v for k, v in template.inputs["systemDisk"].items()}]
    assert body["system_disk"][0]["encrypted"] is True
    instance_set = next(r for r in medical_plan.resources if r.short_type == "ecs.EcsInstanceSet")
    disks = tf_body(document, instance_set)["data_disks"]
    assert [d["encrypted"] for d in disks] == [d["encrypted"] for d in instance_set.inputs["dataDisks"]] == [True]
    assert disks[0]["disk_name"] == "aitrain-scratch"
    for rule in medical_plan.find("ecs.SecurityGroupRule"):
        tf_rule = tf_body(document, rule)
        assert (tf_rule.get("cidr_ip"), tf_rule["port_range"], tf_rule["type"]) == (
            rule.inputs.get("cidrIp"),
            rule.inputs["portRange"],
            rule.inputs["type"],
        )
    fs = medical_plan.find("nas.FileSystem")[0]
    assert tf_body(document, fs)["encrypt_type"] == fs.inputs["encryptType"]
    # Tags are a map attribute: keys are data and keep their dashes.
    assert tf_body(document, fs)["tags"] == fs.inputs["tags"] and "managed-by" in fs.inputs["tags"]


def test_renamed_nested_fields_follow_the_bridge_metadata(medical_plan):
    bucket = medical_plan.find("oss.Bucket")[0]
    body = tf_body(to_terraform(medical_plan), bucket)
    rules = body["lifecycle_rule"]  # Pulumi lifecycleRules
    pulumi_rules = bucket.inputs["lifecycleRules"]
    assert [r["id"] for r in rules] == [r["id"] for r in pulumi_rules]
    noncurrent = next(r for r in rules if "noncurrent_version_expiration" in r)
    assert noncurrent["noncurrent_version_expiration"] == [{"days": 30}]
    assert noncurrent["expiration"] == [{"expired_object_delete_marker": True}]
    assert "lifecycleRules" not in body and "lifecycle_rules" not in body


def test_protect_ignore_changes_and_depends_on_become_lifecycle_and_depends_on(medical_plan):
    document = to_terraform(medical_plan)
    for r in managed(medical_plan):
        body = tf_body(document, r)
        assert body.get("lifecycle", {}).get("prevent_destroy", False) is r.protect
    assert any(r.protect for r in managed(medical_plan))
    snat = next(r for r in medical_plan.find("vpc.SnatEntry") if r.depends_on)
    assert tf_body(document, snat)["depends_on"] == [
        f"alicloud_eip_association.{tf_identifier(d)}" for d in snat.depends_on
    ]
    plan = tiny_plan(
        resource(
            "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate",
            "lt",
            {"systemDisk": {"size": 20}},
            ignore_changes=("userData", "systemDisk.size", "dataDisks[0].diskName"),
        )
    )
    assert to_terraform(plan)["resource"]["alicloud_ecs_launch_template"]["lt"]["lifecycle"] == {
        "ignore_changes": ["user_data", "system_disk.size", "data_disks[0].disk_name"]
    }
    bucket = tiny_plan(
        resource(
            "alicloud:oss/bucket:Bucket",
            "b",
            {},
            ignore_changes=("lifecycleRules[0].noncurrentVersionExpirations", "lifecycleRules.expirations"),
        )
    )
    assert to_terraform(bucket)["resource"]["alicloud_oss_bucket"]["b"]["lifecycle"] == {
        "ignore_changes": ["lifecycle_rule[0].noncurrent_version_expiration", "lifecycle_rule.expiration"]
    }


@pytest.mark.parametrize("name", PLANS)
def test_export_is_deterministic_and_independent_of_resource_order(name):
    plan = plan_of(name)
    text = to_terraform_json(plan, cloud_only=cloud_only(name))
    assert text == to_terraform_json(plan, cloud_only=cloud_only(name))
    reordered = dataclasses.replace(plan, resources=tuple(reversed(plan.resources)))
    assert to_terraform_json(reordered, cloud_only=cloud_only(name)) == text
    assert text.endswith("}\n") and json.loads(text)


def test_unknown_resource_type_fails_with_the_token_and_the_remedy():
    plan = tiny_plan(
        resource("alicloud:foo/bar:Bar", "x", {}),
        resource("alicloud:vpc/network:Network", "net", {"cidrBlock": "10.0.0.0/16"}),
    )
    with pytest.raises(
        ExportError,
        match=r"no Terraform mapping for resource type\(s\) alicloud:foo/bar:Bar: give each a kind with"
        r" terraform=Terraform.MAPPED \(blueprints/kinds/foo.py\), then regenerate "
        r"blueprints/data/terraform_names.json",
    ):
        to_terraform(plan)


def test_a_kind_the_export_does_not_map_is_refused_by_name():
    """A RAM user is a kind (so AIT020 can name it) that the export never writes: refused, naming its module."""
    plan = tiny_plan(resource("alicloud:ram/user:User", "someone", {"name": "someone"}))
    with pytest.raises(ExportError, match=r"alicloud:ram/user:User: give each a kind .*\(blueprints/kinds/ram.py\)"):
        to_terraform(plan)


def test_reference_to_a_name_outside_the_plan_fails_naming_both():
    plan = tiny_plan(resource("alicloud:vpc/switch:Switch", "vsw", {"vpcId": "${missing-vpc.id}"}))
    with pytest.raises(ExportError, match="vsw refers to 'missing-vpc', which is not a resource of this plan"):
        to_terraform(plan)


def test_names_that_would_collide_or_be_ambiguous_fail_clearly():
    colliding = tiny_plan(
        resource("alicloud:vpc/network:Network", "a.b", {}),
        resource("alicloud:vpc/network:Network", tf_identifier("a.b"), {}),
    )
    with pytest.raises(ExportError, match="both become the Terraform identifier"):
        to_terraform(colliding)
    shared = tiny_plan(
        resource("alicloud:vpc/network:Network", "x", {}), resource("alicloud:vpc/switch:Switch", "x", {})
    )
    with pytest.raises(
        ExportError, match="two resources share the logical name 'x'; a reference to it would be ambiguous"
    ):
        to_terraform(shared)


def test_references_convert_inside_strings_and_to_renamed_output_attributes():
    plan = tiny_plan(
        resource("alicloud:vpc/network:Network", "net", {"cidrBlock": "10.0.0.0/16"}),
        resource(
            "alicloud:vpc/switch:Switch",
            "vsw",
            {"vpcId": "${net.id}", "description": "in ${net.cidrBlock} of ${net.id}"},
        ),
        resource("alicloud:vpc/network:Network", "tagged", {"tags": {"peer-vpc": "${net.id}", "dataDisks": "x"}}),
        outputs={"vpc_id": "${net.id}", "ids": {"vpcId": "${net.id}"}},
    )
    document = to_terraform(plan)
    assert document["resource"]["alicloud_vswitch"]["vsw"] == {
        "vpc_id": "${alicloud_vpc.net.id}",
        "description": "in ${alicloud_vpc.net.cidr_block} of ${alicloud_vpc.net.id}",
    }
    # Map values are converted too; map keys are data and keep their spelling.
    assert document["resource"]["alicloud_vpc"]["tagged"]["tags"] == {
        "peer-vpc": "${alicloud_vpc.net.id}",
        "dataDisks": "x",
    }
    assert document["output"] == {
        "vpc_id": {"value": "${alicloud_vpc.net.id}"},
        "ids": {"value": {"vpcId": "${alicloud_vpc.net.id}"}},
    }


def test_literal_interpolation_markers_are_escaped_so_terraform_keeps_them_verbatim():
    plan = tiny_plan(
        resource("alicloud:vpc/network:Network", "net", {}),
        resource(
            "alicloud:vpc/switch:Switch",
            "vsw",
            {"vpcId": "${net.id}", "description": "echo ${HOME} %{if x} for ${net.id}"},
        ),
    )
    body = to_terraform(plan)["resource"]["alicloud_vswitch"]["vsw"]
    assert body["description"] == "echo $${HOME} %%{if x} for ${alicloud_vpc.net.id}"
    assert body["vpc_id"] == "${alicloud_vpc.net.id}"


def test_several_providers_get_aliases_and_resources_name_theirs():
    plan = tiny_plan(
        resource("pulumi:providers:alicloud", "p1", {"region": "cn-hangzhou"}),
        resource("pulumi:providers:alicloud", "p2", {"region": "cn-beijing"}),
        resource("alicloud:vpc/network:Network", "net", {}, provider="p2"),
    )
    document = to_terraform(plan)
    assert document["provider"]["alicloud"] == [
        {"alias": "p1", "region": "cn-hangzhou"},
        {"alias": "p2", "region": "cn-beijing"},
    ]
    assert document["resource"]["alicloud_vpc"]["net"]["provider"] == "alicloud.p2"


def test_identifiers_are_sanitised_deterministically_and_never_collide():
    assert tf_identifier("medical-imaging-network-vpc") == "medical-imaging-network-vpc"
    odd = tf_identifier("1st.node/a")
    assert re.fullmatch(r"r_1st_node_a_[0-9a-f]{8}", odd) and odd == tf_identifier("1st.node/a")
    assert tf_identifier("a.b") != tf_identifier("a/b")  # both sanitise to a_b; the hash keeps them apart
    with pytest.raises(ValueError, match="both become the Terraform identifier"):
        tf_identifiers(["a.b", tf_identifier("a.b")])


def test_name_data_names_its_source_and_maps_known_types():
    names = load_terraform_names()
    assert names.source["repository"] == "https://github.com/pulumi/pulumi-alicloud"
    assert re.fullmatch(r"[0-9a-f]{40}", names.source["commit"])
    assert names.source["path"] == "provider/cmd/pulumi-resource-alicloud/bridge-metadata.json"
    expected = {
        "alicloud:vpc/switch:Switch": "alicloud_vswitch",
        "alicloud:vpc/network:Network": "alicloud_vpc",
        "alicloud:ecs/securityGroupRule:SecurityGroupRule": "alicloud_security_group_rule",
        "alicloud:ecs/eipAddress:EipAddress": "alicloud_eip_address",
        "alicloud:ecs/instance:Instance": "alicloud_instance",
        "alicloud:nas/fileSystem:FileSystem": "alicloud_nas_file_system",
        "alicloud:oss/bucketHttpsConfig:BucketHttpsConfig": "alicloud_oss_bucket_https_config",
    }
    assert {t: names.of(t).tf_type for t in expected} == expected
    assert names.of("alicloud:ess/scalingConfiguration:ScalingConfiguration").field("", "dataDisks") == "data_disk"
    assert "systemDisk" in names.of("alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate").single_blocks
    custom = parse_terraform_names(
        {"source": {}, "resources": {"alicloud:x/y:Y": {"type": "alicloud_y", "renames": {"aB": "c"}}}}
    )
    assert custom.of("alicloud:x/y:Y").field("", "aB") == "c" and custom.of("alicloud:x/y:Y").field("", "dE") == "d_e"


# --- the CLI -------------------------------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_writes_main_tf_json_equal_to_the_export_of_the_same_plan(tmp_path, autoscaling_plan):
    result = runner.invoke(app, ["export", "terraform", "autoscaling-training", "--out", str(tmp_path / "tf")])
    assert result.exit_code == 0, result.output
    written = (tmp_path / "tf" / "main.tf.json").read_text(encoding="utf-8")
    assert written == to_terraform_json(autoscaling_plan)
    assert (
        f"wrote {tmp_path / 'tf' / 'main.tf.json'} ({len(managed(autoscaling_plan))} resources of autoscaling-training)"
        in result.output
    )


def test_cli_set_overrides_reach_the_export(tmp_path):
    result = runner.invoke(
        app, ["export", "terraform", "medical-imaging", "--set", "compute.nodes=3", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "main.tf.json").read_text(encoding="utf-8"))
    assert [s["amount"] for s in document["resource"]["alicloud_ecs_instance_set"].values()] == [3]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "terraform", "--out", "OUT"], "preset = None: name a preset"),
        (["export", "terraform", "no-such-preset", "--out", "OUT"], "preset = 'no-such-preset': no such preset"),
        (["export", "terraform", "medical-imaging", "--set", "compute.nodes=many", "--out", "OUT"], "compute.nodes"),
        (["export", "terraform", "medical-imaging", "--out", "FILE"], "--out = "),
    ],
)
def test_cli_bad_input_exits_2_with_one_message(tmp_path, args, message):
    (tmp_path / "FILE").write_text("x", encoding="utf-8")
    args = [str(tmp_path / a) if a in ("OUT", "FILE") else a for a in args]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "OUT").exists()


def test_cli_unmapped_type_exits_1_and_writes_nothing(tmp_path, monkeypatch):
    import blueprints.export.terraform as terraform

    full = load_terraform_names()
    without = dataclasses.replace(
        full, types={t: n for t, n in full.types.items() if t != "alicloud:vpc/network:Network"}
    )
    monkeypatch.setattr(terraform, "load_terraform_names", lambda: without)
    result = runner.invoke(app, ["export", "terraform", "medical-imaging", "--out", str(tmp_path / "tf")])
    assert result.exit_code == 1
    assert (
        "cannot export medical-imaging to Terraform: no Terraform "
        "mapping for resource type(s) alicloud:vpc/network:Network" in result.output
    )
    assert not (tmp_path / "tf").exists()


def test_cli_reads_a_stack_file_as_pulumi_up_would(tmp_path):
    from blueprints.engine.preview import preview
    from blueprints.profile.stackconfig import engine_config, with_cli_inputs

    stack = ROOT / "examples" / "stacks" / "Pulumi.pool.yaml"
    result = runner.invoke(app, ["export", "terraform", "--stack-config", str(stack), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    from blueprints.catalog import load_catalog
    from blueprints.core import clock

    plan = preview(with_cli_inputs(engine_config(stack), None, []), catalog=load_catalog(), today=clock.today())
    assert (tmp_path / "main.tf.json").read_text(encoding="utf-8") == to_terraform_json(plan)
    assert (
        "alicloud_ess_scaling_group" in json.loads((tmp_path / "main.tf.json").read_text(encoding="utf-8"))["resource"]
    )
