"""The optional CPU preprocessing group (profile section ``preprocess``) of the fixed-cluster and autoscaling pool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blueprints.catalog import instance_price, load_catalog
from blueprints.core import userdata
from blueprints.core.errors import UserInputError
from blueprints.testing import offline_plan

ROOT = Path(__file__).resolve().parents[1]
GROUP = {"preprocess": {"instance_type": "ecs.g7.8xlarge", "nodes": 2}}


@pytest.fixture(scope="module")
def grouped():
    return offline_plan("medical-imaging", profile=GROUP)


def _by_name(plan):
    return {r.name: r for r in plan.resources}


def test_the_group_is_a_component_of_cpu_instances_with_their_own_scoped_role(grouped):
    names = _by_name(grouped)
    unit = names["medical-imaging-preprocess"]
    assert unit.type == "aitrain:compute:CpuPreprocessGroup" and not unit.custom
    assert unit.registered_outputs == ("instance_ids", "private_ips", "role_name")
    children = {r.name: r.short_type for r in grouped.children("medical-imaging-preprocess")}
    assert children == {
        "medical-imaging-preprocess-node-role": "ram.Role",
        "medical-imaging-preprocess-bucket-policy": "ram.RolePolicyAttachment",
        "medical-imaging-preprocess-cpu-000": "ecs.Instance",
        "medical-imaging-preprocess-cpu-001": "ecs.Instance",
    }
    role = names["medical-imaging-preprocess-node-role"].inputs
    attach = names["medical-imaging-preprocess-bucket-policy"].inputs
    gpu_attach = names["medical-imaging-cluster-bucket-policy"].inputs
    # The bucket's one scoped policy, attached to the group's own role (not the GPU nodes').
    assert attach["policyName"] == gpu_attach["policyName"]
    assert attach["roleName"] == role["roleName"] == "medical-imaging-preprocess-node"
    assert grouped.outputs["preprocess_nodes"] == 2


def test_cpu_nodes_share_the_network_and_have_no_gpu_no_public_ip_and_encrypted_disks(grouped):
    names = _by_name(grouped)
    catalog = load_catalog()
    gpu_nodes = names["medical-imaging-cluster-nodes-0"].inputs
    for index in ("000", "001"):
        node = names[f"medical-imaging-preprocess-cpu-{index}"].inputs
        assert node["instanceName"] == f"medical-imaging-preprocess-cpu-{index}"
        assert not catalog.instance_types[node["instanceType"]].is_gpu
        assert node["internetMaxBandwidthOut"] == 0
        assert node["systemDiskEncrypted"] is True and node["systemDiskCategory"] == "cloud_essd"
        assert node["httpTokens"] == "required"
        assert node["roleName"] == "medical-imaging-preprocess-node"
        # Same vSwitch (so the NAS access rule admits them) and the same security group as the GPU nodes.
        assert node["vswitchId"] == gpu_nodes["vswitchId"]
        assert node["securityGroups"] == gpu_nodes["securityGroupIds"]
        assert node["availabilityZone"] == gpu_nodes["zoneId"]
        assert node["tags"]["aitrain-component"] == "cpu-preprocess"


def test_user_data_mounts_the_shared_file_system_and_points_at_the_bucket(grouped):
    node = _by_name(grouped)["medical-imaging-preprocess-cpu-000"].inputs
    text = userdata.decode(node["userData"])
    assert text is not None and text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    gpu_doc = yaml.safe_load(userdata.decode(_by_name(grouped)["medical-imaging-cluster-template"].inputs["userData"]))
    # The same NFS mount as the GPU nodes (source, path, options), mounted at boot.
    (mount,) = doc["mounts"]
    assert mount[:2] == ["${medical-imaging-storage-mount-target.mountTargetDomain}:/share", "/mnt/shared"]
    assert mount == gpu_doc["mounts"][0]
    assert "mount -a -t nfs" in doc["runcmd"] and gpu_doc["packages"][0] in doc["packages"]
    bucket = grouped.outputs["bucket"]
    assert f"OSS_BUCKET={bucket}" in text and "ALIBABA_CLOUD_ECS_METADATA=medical-imaging-preprocess-node" in text
    # Not a training node: no launcher, no host registry, no GPU driver install.
    for absent in ("aitrain-torchrun", "aitrain-registry", "gpu-install", "nvidia"):
        assert absent not in text


def test_adding_the_group_renames_and_changes_nothing_else(medical_plan, grouped):
    before, after = _by_name(medical_plan), _by_name(grouped)
    assert set(before) < set(after)
    added = set(after) - set(before)
    assert added == {r for r in after if r.startswith("medical-imaging-preprocess")}
    changed = [name for name in before if before[name].inputs != after[name].inputs]
    assert changed == []


def test_the_plan_sizes_and_prices_the_group(grouped):
    catalog = load_catalog()
    cpu = catalog.instance_types["ecs.g7.8xlarge"]
    cpu_price = instance_price(catalog, cpu.instance_type, "cn-shanghai").cny
    assert cpu_price is not None
    summary = grouped.summary
    assert summary["preprocess_nodes"] == 2 and summary["preprocess_vcpus"] == 2 * cpu.vcpus
    assert summary["preprocess_cny_per_hour"] == pytest.approx(2 * cpu_price)
    lines = [line for line in grouped.costs["lines"] if line["resource"].startswith("medical-imaging-preprocess-cpu")]
    compute = [line for line in lines if line["item"] == "1 × ecs.g7.8xlarge"]
    assert len(compute) == 2
    assert all(line["unit_price_cny"] == cpu_price for line in compute)
    assert sum(line["cny_per_hour"] for line in compute) == pytest.approx(summary["preprocess_cny_per_hour"])


def test_the_group_adds_no_guardrail_finding(medical_plan, grouped):
    def keyed(plan):
        return {(f["rule"], f["level"]) for f in plan.findings}

    assert not [f for f in grouped.findings if f["level"] == "error"]
    assert keyed(grouped) == keyed(medical_plan)


def test_the_autoscaling_pool_builds_the_same_group():
    plan = offline_plan("autoscaling-training", profile=GROUP)
    prefix = plan.profile_name + "-preprocess"
    cpus = [r for r in plan.resources if r.name.startswith(prefix + "-cpu-")]
    assert [r.short_type for r in cpus] == ["ecs.Instance", "ecs.Instance"]
    assert all(r.inputs["internetMaxBandwidthOut"] == 0 and r.inputs["systemDiskEncrypted"] for r in cpus)
    assert "fixed" in plan.summary["preprocess_scaling"]


def test_off_by_default_and_none_while_parked(medical_plan):
    assert not [r for r in medical_plan.resources if "preprocess" in r.name]
    assert "preprocess_nodes" not in medical_plan.summary
    parked = offline_plan("medical-imaging", profile=GROUP, overrides={"compute.nodes": 0})
    assert not [r for r in parked.resources if "preprocess" in r.name]


@pytest.mark.parametrize(
    ("section", "path", "needle"),
    [
        ({"instance_type": "ecs.gn7e-c16g1.32xlarge", "nodes": 1}, "preprocess.instance_type", "is a GPU type"),
        ({"instance_type": "ecs.g7.9xlarge", "nodes": 1}, "preprocess.instance_type", "not a CPU instance type"),
        ({"nodes": 0}, "preprocess.nodes", "greater than or equal to 1"),
        ({"nodes": 1, "gpus": 2}, "preprocess.gpus", ""),
    ],
)
def test_bad_input_names_the_field(section, path, needle):
    with pytest.raises(UserInputError) as caught:
        offline_plan("medical-imaging", profile={"preprocess": section})
    problem = next(p for p in caught.value.problems if p.path == path)
    assert needle in problem.message


def test_the_cli_exits_2_naming_the_field(tmp_path):
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(
        "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n"
        "    preprocess:\n      instance_type: ecs.gn7i-c8g1.2xlarge\n      nodes: 1\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", "plan", "--stack-config", str(stack)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2, result.stderr
    assert "preprocess.instance_type" in result.stderr and "is a GPU type" in result.stderr
    assert "Traceback" not in result.stderr
