"""How a node gets its GPU stack, and how long until it is ready: Alibaba's GPU image where the catalog has one for
the family and region (no install script, no reboot), the team's own image (`aitrain bake`), else the install script;
an image ID the catalog records only for other regions is refused; `aitrain bake` adds Image Builder's pipeline."""

from __future__ import annotations

import copy

import pytest
import yaml
from typer.testing import CliRunner

from blueprints.bootstrap import BootSpec, Fabric, render_node_script
from blueprints.bootstrap.bake import bake_build_content
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.profile.stackconfig import load_preset
from blueprints.testing import offline_plan


def parse_profile(data: dict):
    import datetime as dt

    from blueprints import architectures
    from blueprints.catalog import load_catalog

    return architectures.parse(data, catalog=load_catalog(), today=dt.date(2026, 12, 1))


GPU_IMAGE = "ubuntu_22_04_x64_100G_with_gpu_driver_and_cuda_alibase_20260520.vhd"  # images.csv, cn-shanghai
PLAIN_IMAGE = "ubuntu_22_04_x64_20G_alibase_20230815.vhd"


def test_a_family_with_alibabas_gpu_image_boots_it_and_skips_the_install(autoscaling_plan):
    summary = autoscaling_plan.summary
    assert summary["gpu_software"].startswith(
        "NVIDIA driver 580.126.09, CUDA 12.8, preinstalled in Alibaba's GPU image"
    )
    assert summary["boot_to_ready"].startswith(
        "unknown per node, no install and no reboot (source: unknown: no Alibaba page"
    )
    assert "boot_faster" not in summary
    (template,) = autoscaling_plan.find("ecs.EcsLaunchTemplate")
    assert template.inputs["imageId"] == GPU_IMAGE
    assert autoscaling_plan.outputs["node_image"]["image_id"] == GPU_IMAGE


def test_the_pin_and_its_source_are_in_the_plan(medical_plan, autoscaling_plan):
    pin = medical_plan.summary["gpu_software_pin"]
    assert pin.startswith("family gn7e: gpu_software.csv (2026-11-30): Alibaba Cloud's auto-install")
    assert "nvidia-nccl-cu12==2.21.5" in pin and "Fabric Manager" in pin
    assert "image: images.csv (2026-09-22)" in autoscaling_plan.summary["gpu_software_pin"]


def test_a_family_without_one_runs_the_install_script_and_is_offered_the_bake(medical_plan):
    summary = medical_plan.summary
    assert "installed at first boot by Alibaba's auto-install script (then a reboot)" in summary["gpu_software"]
    assert "NVIDIA Fabric Manager 550.127.08 for the NVSwitch baseboard" in summary["gpu_software"]
    assert summary["boot_to_ready"].startswith("10-20 min per node, then a reboot (source: Alibaba's auto-install doc")
    assert "`aitrain bake`" in summary["boot_faster"] and "gn7e in cn-shanghai" in summary["boot_faster"]
    assert medical_plan.outputs["node_image"]["image_id"] == PLAIN_IMAGE


def test_the_same_family_elsewhere_falls_back_to_the_install_script():
    plan = offline_plan("autoscaling-training", overrides={"region": "cn-beijing", "storage.zone": "cn-beijing-c"})
    assert "auto-install script" in plan.summary["gpu_software"] and "boot_faster" in plan.summary


@pytest.mark.parametrize(
    ("preset", "method"), [("autoscaling-training", "driver_image"), ("medical-imaging", "install_script")]
)
def test_the_node_boot_follows_the_path(preset, method):
    import datetime as dt

    from blueprints.architectures import spec_for
    from blueprints.catalog import load_catalog

    spec = spec_for(parse_profile(load_preset(preset)), load_catalog(), dt.date(2026, 12, 1))
    gpu = spec.gpu_software()  # type: ignore[attr-defined]
    assert gpu.method == method
    boot = BootSpec(
        cluster="c",
        region="cn-shanghai",
        gpus_per_node=1,
        storage_kind="nas",
        mount_source="x.nas.aliyuncs.com:/",
        mount_options="vers=3",
        nfs_package="nfs-common",
        gpu=gpu,
        fabric=Fabric("tcp"),
        scratch_gib=0,
        scratch_local_nvme=False,
        bucket="b",
        role_name="r",
    )
    script = render_node_script(boot)
    assert ("auto_install_v4.0.sh" in script) == (method == "install_script")


def test_a_baked_image_skips_the_install_and_says_so():
    plan = offline_plan(
        "medical-imaging", overrides={"compute.image_id": "m-uf6bake0001", "compute.gpu_stack_in_image": True}
    )
    assert "preinstalled in the team's own image m-uf6bake0001 (`aitrain bake`)" in plan.summary["gpu_software"]
    assert plan.summary["boot_to_ready"].startswith("unknown per node, no install and no reboot")


def test_a_pinned_image_without_the_flag_keeps_the_install_script():
    plan = offline_plan("medical-imaging", overrides={"compute.image_id": "m-uf6plain0001"})
    assert "auto-install script" in plan.summary["gpu_software"]


def test_an_image_id_not_in_the_region_is_refused_naming_field_and_value():
    data = copy.deepcopy(load_preset("autoscaling-training"))
    data["region"] = "cn-beijing"
    data["storage"]["zone"] = "cn-beijing-c"
    data["compute"]["image_id"] = GPU_IMAGE
    with pytest.raises(UserInputError) as info:
        parse_profile(data)
    (problem,) = info.value.problems
    assert (problem.path, problem.value) == ("compute.image_id", GPU_IMAGE)
    assert "records only in cn-hangzhou, cn-shanghai, not in region cn-beijing" in problem.message


def test_the_same_image_in_its_region_and_a_custom_image_anywhere_are_accepted():
    data = copy.deepcopy(load_preset("autoscaling-training"))
    data["compute"]["image_id"] = GPU_IMAGE
    assert parse_profile(data).compute.image_id == GPU_IMAGE
    data["region"], data["compute"]["image_id"] = "cn-beijing", "m-2ze0custom"
    data["storage"]["zone"] = "cn-beijing-c"
    assert parse_profile(data).compute.image_id == "m-2ze0custom"


def test_bake_adds_an_image_pipeline_that_installs_the_familys_pins():
    plan = offline_plan("medical-imaging", overrides={"compute.bake_image": True})
    (pipeline,) = plan.find("ecs.EcsImagePipeline")
    (execution,) = plan.find("ecs.ImagePipelineExecution")
    assert pipeline.inputs["baseImageType"] == "IMAGE" and pipeline.inputs["baseImage"] == PLAIN_IMAGE
    assert pipeline.inputs["instanceType"] == "ecs.gn7e-c16g1.32xlarge"
    assert pipeline.inputs["internetMaxBandwidthOut"] == 0 and pipeline.inputs["deleteInstanceOnFailure"] is True
    assert "bash auto_install_v4.0.sh 550.127.08 12.4.1 9.2.0.82 FALSE FALSE" in pipeline.inputs["buildContent"]
    assert "torch==2.5.1" in pipeline.inputs["buildContent"]
    assert execution.inputs["imagePipelineId"] == "${" + pipeline.name + ".id}"
    assert plan.outputs["image_bake"]["image_name"].startswith("medical-imaging-gn7e-550-127-08")
    # One component holds both, so a review sees the bake as a unit, and it registers what it made.
    (bake,) = [r for r in plan.resources if r.type == "aitrain:image:ImageBake"]
    assert {r.name for r in plan.children(bake.name)} == {pipeline.name, execution.name}
    assert bake.registered_outputs == ("execution_id", "pipeline_id")


def test_bake_content_refuses_a_path_without_install_pins():
    from blueprints.bootstrap import GpuSoftware

    with pytest.raises(ValueError, match="only an install-script pin"):
        bake_build_content(GpuSoftware("driver_image", "580.1", "12.8", None, False))


STACK = """\
config:
  alicloud:region: cn-shanghai
  aitrain:preset: {preset}
  aitrain:profile:
    compute:
      nodes: 2
"""


def test_bake_cli_sets_the_flag_and_refuses_a_family_that_already_has_an_image(tmp_path):
    runner = CliRunner()
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(STACK.format(preset="medical-imaging"), encoding="utf-8")
    done = runner.invoke(app, ["bake", "--stack-config", str(path), "--write"])
    assert done.exit_code == 0, done.output
    assert yaml.safe_load(path.read_text())["config"]["aitrain:profile"]["compute"]["bake_image"] is True
    path.write_text(STACK.format(preset="autoscaling-training").replace("nodes: 2", "max_nodes: 2"), encoding="utf-8")
    done = runner.invoke(app, ["bake", "--stack-config", str(path), "--write"])
    assert done.exit_code == 2 and "already boot an image with the GPU stack" in done.output


def test_the_login_node_beside_gpu_image_nodes_boots_the_plain_os_image():
    plan = offline_plan(
        "autoscaling-training",
        overrides={"network.admin_cidr": "203.0.113.0/24", "access.login_node": True, "access.key_pair_name": "ops"},
    )
    (login,) = [r for r in plan.find("ecs.Instance") if "-login" in r.name]
    assert login.inputs["imageId"] == PLAIN_IMAGE and login.inputs["systemDiskSize"] == 40
    (template,) = plan.find("ecs.EcsLaunchTemplate")
    assert template.inputs["imageId"] == GPU_IMAGE


def test_the_under_100k_tier_maps_to_the_preconfigured_images():
    from blueprints.advisor.tiers import preconfigured_image
    from blueprints.catalog import load_catalog

    catalog = load_catalog()
    alibaba = preconfigured_image(catalog, "ecs.gn7i-c32g1.8xlarge", "cn-shanghai")
    assert "Alibaba's ^ubuntu_22_04_x64_100G_with_gpu_driver_and_cuda_alibase_ (NVIDIA driver 580.126.09" in alibaba
    assert "`aitrain bake`" in preconfigured_image(catalog, "ecs.gn7e-c16g1.32xlarge", "cn-shanghai")
    assert preconfigured_image(catalog, "ecs.g6.4xlarge", "cn-shanghai") == ""
