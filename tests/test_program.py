"""Whole-program tests: infra/__main__.py (what `pulumi up` runs) under mocks, for each preset."""

from __future__ import annotations

import datetime as dt
import json
import runpy
from pathlib import Path

import pytest
from conftest import beyond_opt_in

from blueprints.catalog import load_catalog
from blueprints.core import userdata
from blueprints.engine.preview import catalog_images, record
from blueprints.profile.stackconfig import PRESET_KEY, PROFILE_KEY, preset_names
from blueprints.testing import assert_guardrails, offline_plan
from tests.test_golden import plan_of

PROGRAM = Path(__file__).resolve().parents[1] / "infra" / "__main__.py"
SHANGHAI = list(load_catalog().zones("cn-shanghai"))


def run_infra_main(config: dict[str, str], region: str = "cn-shanghai"):
    # get_images answered per name pattern, as the cloud does (Alibaba's GPU image and the plain OS image differ).
    images = catalog_images(load_catalog(), region)
    zones = list(load_catalog().zones(region))
    return record(lambda: runpy.run_path(str(PROGRAM), run_name="__main__"), config, zones=zones, image_id=images)


@pytest.mark.parametrize("preset", preset_names())
def test_infra_main_with_preset_config_creates_exactly_the_plan(preset, request):
    plan = plan_of(preset, request)
    resources, outputs = run_infra_main({PRESET_KEY: preset}, plan.region)
    assert [(r.type, r.name, r.parent, r.inputs, r.protect, r.retain_on_delete) for r in resources] == [
        (r.type, r.name, r.parent, r.inputs, r.protect, r.retain_on_delete) for r in plan.resources
    ]
    assert outputs["blueprint"] == plan.blueprint and outputs["region"] == plan.region


def test_infra_main_accepts_a_structured_profile_object():
    profile = {
        "blueprint": "fixed-cluster",
        "name": "tiny",
        "region": "cn-shanghai",
        "compute": {"instance_type": "ecs.gn7i-c32g1.8xlarge", "nodes": 2},
        "storage": {"kind": "nas", "capacity_gib": 500, "throughput_tier": "Capacity"},
    }
    resources, outputs = run_infra_main({PROFILE_KEY: json.dumps(profile)})
    (instance_set,) = [r for r in resources if r.short_type == "ecs.EcsInstanceSet"]
    assert instance_set.inputs["amount"] == 2 and instance_set.name == "tiny-cluster-nodes-0"
    assert outputs["gpus"] == 2


def test_infra_main_reports_bad_config_without_traceback():
    import pulumi

    with pytest.raises(pulumi.RunError) as info:
        run_infra_main({PRESET_KEY: "medical-imagin"})
    assert "did you mean 'medical-imaging'?" in str(info.value)


def test_medical_imaging_plan_shape(medical_plan):
    plan = medical_plan
    assert plan.summary["gpus"] == 96 and plan.summary["nodes"] == 12
    assert plan.summary["instance_type"] == "ecs.gn7e-c16g1.32xlarge" and plan.summary["gpu_model"].startswith("A100")
    assert any("m6i.32xlarge" in n and "12 × ecs.gn7e-c16g1.32xlarge" in n for n in plan.notes)
    tops = {r.type for r in plan.resources if r.parent is None and not r.custom}
    assert tops == {
        "aitrain:network:TrainingNetwork",
        "aitrain:storage:SharedStorage",
        "aitrain:storage:DataBucket",
        "aitrain:compute:GpuCluster",
    }
    assert plan.count_by_type()["ecs.EcsInstanceSet"] == 1
    assert plan.find("ecs.EcsDeploymentSet")[0].inputs["strategy"] == "LowLatency"
    assert plan.summary["compute_cny_per_hour"] == pytest.approx(12 * 277.93)
    # AIT016: the snapshot policy no resource can apply (a warning until ApplyAutoSnapshotPolicy runs); AIT027: the
    # preset's HTTPS to any address, a warning on purpose (tests/test_egress_guardrails.py).
    assert_guardrails(plan, skip=["AIT016", "AIT027"])
    assert [f["rule"] for f in beyond_opt_in(plan.findings)] == ["AIT016", "AIT027"]


def test_only_real_catalog_instance_types_appear_in_resources(medical_plan, autoscaling_plan):
    catalog = load_catalog()
    for plan in (medical_plan, autoscaling_plan):
        types = {
            r.inputs["instanceType"]
            for r in plan.resources
            if "instanceType" in r.inputs and r.custom and r.short_type != "ecs.EipAssociation"
        }
        assert types and all(t in catalog.instance_types and t.startswith("ecs.") for t in types)


def test_every_child_is_parented_to_its_component(medical_plan):
    components = {r.name for r in medical_plan.resources if not r.custom}
    for r in medical_plan.resources:
        if r.custom and r.type != "pulumi:providers:alicloud":
            assert r.parent in components, r.name


def test_scaling_nodes_keeps_plan_size_and_never_touches_storage(medical_plan):
    big = offline_plan("medical-imaging", overrides={"compute.nodes": 128})
    assert big.summary["gpus"] == 1024
    assert [s.inputs["amount"] for s in big.find("ecs.EcsInstanceSet")] == [64, 64]
    assert len(big.resources) == len(medical_plan.resources) + 1

    def storage(plan):
        return [
            (r.type, r.name, r.inputs, r.protect, r.retain_on_delete)
            for r in plan.resources
            if r.parent == "medical-imaging-storage"
        ]

    assert storage(big) == storage(medical_plan)


def test_autoscaling_plan_shape(autoscaling_plan):
    plan = autoscaling_plan
    assert plan.summary["max_gpus"] == 8
    assert len(plan.find("vpc.Switch")) == 3
    (group,) = plan.find("ess.ScalingGroup")
    assert len(group.inputs["vswitchIds"]) == 3
    assert {a.inputs["metricName"] for a in plan.find("ess.Alarm")} == {"CpuUtilization", "GpuUtilizationAgent"}
    assert len(plan.find("ess.ScheduledTask")) == 2
    assert_guardrails(
        plan, skip=("AIT027",)
    )  # the preset leaves the egress allow-list off (a warning, checked in test_cli)


def test_plan_is_deterministic(medical_plan):
    again = offline_plan("medical-imaging")
    assert again.to_json() == medical_plan.to_json()


def test_guardrails_catch_a_public_node(medical_plan):
    import dataclasses

    from blueprints.review import guardrails

    tampered = tuple(
        dataclasses.replace(r, inputs={**r.inputs, "internetMaxBandwidthOut": 100})
        if r.short_type == "ecs.EcsInstanceSet"
        else dataclasses.replace(r, protect=False)
        if r.short_type == "nas.FileSystem"
        else r
        for r in medical_plan.resources
    )
    findings = beyond_opt_in(guardrails.check(dataclasses.replace(medical_plan, resources=tampered)))
    assert {(f.rule, f.resource) for f in findings} == {
        ("AIT001", "medical-imaging-cluster-nodes-0"),
        ("AIT004", "medical-imaging-storage-fs"),
        ("AIT016", "medical-imaging-storage-fs"),  # the unapplied snapshot policy, untampered
        ("AIT027", "medical-imaging-network-sg-egress-allow-0"),
    }
    assert (
        beyond_opt_in(
            guardrails.check(
                dataclasses.replace(medical_plan, resources=tampered), skip=["AIT001", "AIT004", "AIT016", "AIT027"]
            )
        )
        == []
    )


def test_node_cloud_init_mounts_the_shared_storage_at_one_path(medical_plan, autoscaling_plan):

    import yaml

    (template,) = medical_plan.find("ecs.EcsLaunchTemplate")
    cloud_init = yaml.safe_load(userdata.decode(template.inputs["userData"]) or "")
    (mount,) = cloud_init["mounts"]
    assert mount[0] == "${medical-imaging-storage-mount-target.mountTargetDomain}:/share"  # Extreme NAS export
    assert mount[1] == "/mnt/shared" and mount[2] == "nfs" and "vers=3" in mount[3]
    (pool_template,) = autoscaling_plan.find("ecs.EcsLaunchTemplate")
    pool_init = yaml.safe_load(userdata.decode(pool_template.inputs["userData"]) or "")
    assert pool_init["mounts"][0][:2] == [
        "${autoscaling-training-storage-mount-target.mountTargetDomain}:/",
        "/mnt/shared",
    ]
    # The NFS client for the shared storage, xfsprogs to format the scratch disk, python3-venv for PyTorch's venv.
    assert pool_init["packages"] == ["nfs-common", "xfsprogs", "python3-venv"] and pool_init["package_update"] is True


def test_every_resource_and_lookup_uses_the_region_pinned_provider():
    from blueprints.engine.preview import OfflineMocks, run_program
    from blueprints.engine.program import run

    calls = []

    class Spy(OfflineMocks):
        def call(self, args):
            calls.append((args.token, args.provider))
            return super().call(args)

    image_id = load_catalog().image_for("cn-shanghai").image_id
    registered, _, _ = run_program(
        run, {PRESET_KEY: "medical-imaging"}, zones=SHANGHAI, image_id=image_id, mocks=Spy(SHANGHAI, image_id)
    )
    (provider,) = [r for r in registered if r.typ == "pulumi:providers:alicloud"]
    assert provider.inputs["region"] == "cn-shanghai"
    alicloud_resources = [r for r in registered if r.typ.startswith("alicloud:")]
    assert alicloud_resources and all(
        "pulumi:providers:alicloud::medical-imaging-cn-shanghai" in (r.provider or "") for r in alicloud_resources
    )
    # getInstances reads the private IPs of the instance set's nodes.
    assert {token for token, _ in calls} == {
        "alicloud:index/getZones:getZones",
        "alicloud:ecs/getImages:getImages",
        "alicloud:ecs/getInstances:getInstances",
    }
    assert all("medical-imaging-cn-shanghai" in (p or "") for _, p in calls)


# --- one reading of the stack config: `pulumi up` and `aitrain plan --stack-config` fail alike ---

MISKEYED = [
    ({"aitrain:presets": "medical-imaging"}, "config.aitrain:presets", "did you mean 'aitrain:preset'?"),
    ({"aitrain:preset": "medical-imaging", "aitrain:profile_typo": "{}"}, "config.aitrain:profile_typo", "unknown key"),
    (
        {"aitrain:preset": "medical-imaging", "aitrain:profile.compute.nodes": "4"},
        "config.aitrain:profile.compute.nodes",
        "pulumi config set --path 'aitrain:profile.compute.nodes' <value>",
    ),
]


@pytest.mark.parametrize("config, path, text", MISKEYED)
def test_pulumi_up_and_the_plan_refuse_miskeyed_config_with_the_same_message(config, path, text, tmp_path):
    import pulumi
    import yaml
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    with pytest.raises(pulumi.RunError) as info:
        run_infra_main(config)
    up_message = str(info.value)
    assert path in up_message and text in up_message and "Traceback" not in up_message
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(yaml.safe_dump({"config": config}), encoding="utf-8")
    result = CliRunner().invoke(app, ["plan", "--stack-config", str(stack)])
    assert result.exit_code == 2
    plan_problems = [line for line in result.output.splitlines() if line.startswith("  - ")]
    assert plan_problems == [line for line in up_message.splitlines() if line.startswith("  - ")]


def test_pulumi_up_checks_the_off_hours_date_against_its_clock(monkeypatch):
    import pulumi

    monkeypatch.setenv("AITRAIN_TODAY", "2026-11-30")
    profile = json.dumps({"cost": {"off_hours": {"start_date": "2027-06-01"}}})
    with pytest.raises(pulumi.RunError, match="must be from 2026-12-01 to 2027-02-27"):
        run_infra_main({PRESET_KEY: "autoscaling-training", PROFILE_KEY: profile})


def test_a_preset_argument_that_contradicts_the_stack_preset_is_an_error(tmp_path):
    import yaml
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(yaml.safe_dump({"config": {"aitrain:preset": "medical-imaging"}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["plan", "autoscaling-training", "--stack-config", str(stack)])
    assert result.exit_code == 2 and "the stack config sets 'aitrain:preset: medical-imaging'" in result.output


# --- storage never follows compute ---


class ZonedCatalog:
    """The shipped catalog, with per-type zone lists where each family lives in different zones of cn-shanghai."""

    ZONES = {
        "ecs.gn7e-c16g1.32xlarge": ("cn-shanghai-b", "cn-shanghai-e"),
        "ecs.gn7i-c32g1.8xlarge": ("cn-shanghai-f", "cn-shanghai-g", "cn-shanghai-l"),
        "ecs.gn6e-c12g1.24xlarge": ("cn-shanghai-a",),
        "ecs.gn7-c13g1.26xlarge": ("cn-shanghai-m", "cn-shanghai-n"),
    }

    def __init__(self):
        self._catalog = load_catalog()

    def __getattr__(self, name):
        return getattr(self._catalog, name)

    def zones_offering(self, instance_type, region):
        return self.ZONES.get(instance_type)


def storage_view(plan):
    """Everything storage depends on: the file system, its access rules and mount target, its vSwitch and the VPC."""
    (fs,) = plan.find("nas.FileSystem")
    # Access rules are one per compute vSwitch, named by zone: moving compute adds or drops them (never the group,
    # mount target or file system, which this view keeps).
    keep = {
        r.name
        for r in plan.resources
        if r.parent == f"{plan.profile_name}-storage" and r.short_type != "nas.AccessRule"
    }
    keep |= {r.name for r in plan.find("vpc.Network")}
    keep |= {r.name for r in plan.find("vpc.Switch") if r.inputs["zoneId"] == fs.inputs["zoneId"]}
    return sorted(
        (r.type, r.name, json.dumps(r.inputs, sort_keys=True), r.protect, r.retain_on_delete)
        for r in plan.resources
        if r.name in keep
    )


@pytest.mark.parametrize("pinned", [(), ("cn-shanghai-e", "cn-shanghai-f", "cn-shanghai-a", "cn-shanghai-m")])
def test_changing_compute_never_changes_any_storage_input(pinned):
    from blueprints.profile.stackconfig import load_preset

    catalog = ZonedCatalog()
    computes = [
        ("fixed-cluster", {"instance_type": "ecs.gn7e-c16g1.32xlarge", "nodes": 12}),
        ("fixed-cluster", {"instance_type": "ecs.gn7e-c16g1.32xlarge", "nodes": 128}),
        ("fixed-cluster", {"instance_type": "ecs.gn7i-c32g1.8xlarge", "nodes": 12}),
        ("fixed-cluster", {"instance_type": "ecs.gn6e-c12g1.24xlarge", "nodes": 3}),
        ("fixed-cluster", {"instance_type": "ecs.gn7-c13g1.26xlarge", "nodes": 2}),
        ("autoscaling-pool", {"instance_type": "ecs.gn7i-c32g1.8xlarge", "min_nodes": 0, "max_nodes": 4}),
        ("autoscaling-pool", {"instance_type": "ecs.gn7-c13g1.26xlarge", "min_nodes": 1, "max_nodes": 2}),
    ]
    views = []
    compute_zones = set()
    for blueprint, compute in computes:
        profile = {**load_preset("medical-imaging"), "blueprint": blueprint, "compute": compute}
        profile["network"] = {**profile["network"], "zones": list(pinned)}
        plan = offline_plan(profile=profile, catalog=catalog)
        views.append(storage_view(plan))
        compute_zones.update(plan.outputs["compute_zone_ids"])
    assert all(view == views[0] for view in views[1:])
    assert len(compute_zones) >= 3  # compute really moved between zones while storage stayed


def test_the_plan_refuses_a_duplicate_urn_as_the_engine_would():
    import pulumi_alicloud as alicloud

    from blueprints.core.errors import UserInputError
    from blueprints.core.layout import LayoutError
    from blueprints.engine.preview import preview

    def twice():
        alicloud.vpc.Network("dup", cidr_block="10.0.0.0/16")
        alicloud.vpc.Network("dup", cidr_block="10.1.0.0/16")

    with pytest.raises(LayoutError, match=r"same URN \(alicloud:vpc/network:Network 'dup'\)"):
        record(twice, zones=SHANGHAI)
    with pytest.raises(UserInputError, match="same URN"):
        preview({PRESET_KEY: "medical-imaging"}, catalog=load_catalog(), today=dt.date(2026, 11, 30), program=twice)


def test_the_program_reads_the_config_the_language_host_passes_in_pulumi_config(monkeypatch):
    """`pulumi up` hands the program its config as PULUMI_CONFIG (JSON, objects as JSON text): every key is seen."""
    from pulumi.runtime.config import CONFIG

    from blueprints.engine.program import current_config
    from blueprints.profile.stackconfig import read_settings

    monkeypatch.setenv(
        "PULUMI_CONFIG",
        json.dumps({"aitrain:preset": "medical-imaging", "aitrain:profile.compute.nodes": "4", "alicloud:region": "x"}),
    )
    token = CONFIG.set({})
    try:
        config = current_config()
    finally:
        CONFIG.reset(token)
    assert config["aitrain:profile.compute.nodes"] == "4" and config["alicloud:region"] == "x"
    from blueprints.core.errors import UserInputError

    with pytest.raises(UserInputError, match="is a key named with a dot, not a path into 'aitrain:profile'"):
        read_settings(config, source="(pulumi config)")
