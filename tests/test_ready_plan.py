"""Issue 7's acceptance over real plans: every preset boots ready
to train, keeps its data, and can be reached and parked."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from blueprints.architectures import specs
from blueprints.architectures.ecs.spec import EcsSpec
from blueprints.bootstrap import STATUS_PATH, USER_DATA_LIMIT_BYTES
from blueprints.catalog import load_catalog
from blueprints.core import userdata
from blueprints.profile.stackconfig import load_preset, preset_names
from blueprints.review.diff.compare import diff_plans
from blueprints.testing import assert_guardrails, offline_plan

CATALOG = load_catalog()
SCHEMA = json.loads((Path(__file__).parent / "data" / "cloud-init" / "schema-cloud-config-v1.json").read_text())
# Every preset whose nodes aitrain boots itself (an ECS blueprint: cloud-init user data); ACK boots a Kubernetes pool's.
PRESETS = tuple(name for name in preset_names() if issubclass(specs()[load_preset(name)["blueprint"]], EcsSpec))
ERI_FIXED = "ecs.ebmgn7ex.32xlarge"  # eRDMA in the catalog (rdma = erdma)
ERI_POOL = "ecs.gn8is-2x.8xlarge"
ADMIN = "203.0.113.0/24"


def node_resource(plan):
    found = plan.find("ecs.EcsLaunchTemplate") or plan.find("ess.ScalingConfiguration") or plan.find("ecs.Instance")
    return found[0]


def user_data(plan) -> str:
    return userdata.decode(node_resource(plan).inputs["userData"]) or ""


def files(text: str) -> dict[str, str]:
    return {f["path"]: f.get("content", "") for f in yaml.safe_load(text)["write_files"]}


@pytest.fixture(scope="module", params=PRESETS)
def preset_plan(request):
    return request.param, offline_plan(request.param)


def test_every_preset_has_its_bucket_with_every_safety_property(preset_plan):
    name, plan = preset_plan
    bucket_name = plan.summary["bucket"]
    # The data bucket and its access-log bucket (components/bucket.py), each with its own settings.
    assert sorted(b.inputs["bucket"] for b in plan.find("oss.Bucket")) == [bucket_name, f"{bucket_name}-logs"]
    (bucket,) = [b for b in plan.find("oss.Bucket") if b.inputs["bucket"] == bucket_name]
    assert bucket.inputs["bucket"] == bucket_name == f"{name}-cn-shanghai-data"
    assert bucket.protect and bucket.retain_on_delete and not bucket.inputs.get("forceDestroy")

    def setting(short_type):
        (found,) = [r for r in plan.find(short_type) if r.inputs["bucket"] == bucket_name]
        return found.inputs

    assert setting("oss.BucketAcl")["acl"] == "private"
    assert setting("oss.BucketPublicAccessBlock")["blockPublicAccess"] is True
    assert setting("oss.BucketVersioning")["status"] == "Enabled"
    assert setting("oss.BucketServerSideEncryption")["sseAlgorithm"] == "AES256"
    (logging,) = plan.find("oss.BucketLogging")
    assert (logging.inputs["bucket"], logging.inputs["targetBucket"]) == (bucket_name, f"{bucket_name}-logs")
    (deny,) = json.loads(setting("oss.BucketPolicy")["policy"])["Statement"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"acs:SecureTransport": ["false"]}}
    (rule, _) = bucket.inputs["lifecycleRules"]
    assert rule["prefix"] == "checkpoints/" and rule["noncurrentVersionExpirations"] == [{"days": 30}]


def test_the_node_role_gets_a_policy_on_this_bucket_alone(preset_plan):
    _, plan = preset_plan
    bucket_name = plan.summary["bucket"]
    (policy,) = plan.find("ram.Policy")
    resources = [r for s in json.loads(policy.inputs["policyDocument"])["Statement"] for r in s["Resource"]]
    assert resources and all(r in (f"acs:oss:*:*:{bucket_name}", f"acs:oss:*:*:{bucket_name}/*") for r in resources)
    (attachment,) = plan.find("ram.RolePolicyAttachment")
    (role,) = plan.find("ram.Role")
    assert (
        attachment.inputs["roleName"] == role.inputs["roleName"]
        and attachment.inputs["policyName"] == policy.inputs["policyName"]
    )
    assert attachment.parent == role.parent  # the compute unit: parking removes the attachment, never the policy


def test_every_preset_has_encrypted_scratch_of_the_articles_ratio(preset_plan):
    _, plan = preset_plan
    node = node_resource(plan)
    if plan.find("ecs.EcsInstanceSet"):
        (disk,) = plan.find("ecs.EcsInstanceSet")[0].inputs["dataDisks"]
        size = disk["diskSize"]
    else:
        (disk,) = node.inputs["dataDisks"]
        size = disk["size"]
    assert (
        disk["encrypted"] is True
        and size == plan.summary["scratch_gib_per_node"] >= 3 * plan.summary["memory_gib_per_node"]
    )
    assert "/mnt/scratch" in plan.summary["scratch"]


def test_every_preset_boots_its_gpu_software_within_the_user_data_limit(preset_plan):
    name, plan = preset_plan
    text = user_data(plan)
    size = len(userdata.compressed(text))
    assert size < USER_DATA_LIMIT_BYTES, f"{name}: {size} bytes"
    jsonschema.Draft4Validator(SCHEMA).validate(yaml.safe_load(text))
    instance = CATALOG.instance_type(plan.summary["instance_type"])
    software, image = CATALOG.software_for(instance), CATALOG.gpu_image_for(plan.region, instance.family)
    assert software is not None and STATUS_PATH in text
    # Alibaba's GPU image brings its own driver (no install script in the boot); elsewhere the script installs the pin.
    driver, cuda = (
        (image.driver_version, image.cuda_version) if image else (software.driver_version, software.cuda_version)
    )
    assert (software.driver_version in text) == (image is None) and ("auto_install_v4.0.sh" in text) == (image is None)
    assert plan.summary["gpu_software"].startswith(f"NVIDIA driver {driver}, CUDA {cuda}")
    # The nodes read credentials of the role they really run as.
    (role,) = plan.find("ram.Role")
    assert f"ALIBABA_CLOUD_ECS_METADATA={role.inputs['roleName']}\n" in files(text)["/etc/aitrain/oss.env"]
    # Neither preset's type has RDMA in the catalog: the plan and the nodes both say TCP.
    assert plan.summary["fabric"].startswith("TCP") and "NCCL_IB_DISABLE=1" in files(text)["/etc/aitrain/nccl.env"]


def test_nodes_get_the_catalogs_pytorch_unless_the_profile_brings_its_own(medical_plan):
    software = CATALOG.software_for(CATALOG.instance_type(medical_plan.summary["instance_type"]))
    assert software is not None and software.pytorch_version
    assert f'"torch=={software.pytorch_version}" --index-url {software.pytorch_index_url}' in user_data(medical_plan)
    assert (
        f"PyTorch {software.pytorch_version} (torchrun, NCCL {software.nccl_version}) in /opt/aitrain/venv"
        in medical_plan.summary["gpu_software"]
    )
    own = offline_plan("medical-imaging", overrides={"compute.install_pytorch": False})
    assert "torch==" not in user_data(own) and "bring your own torchrun" in own.summary["gpu_software"]


def test_nvswitch_types_get_fabric_manager_and_others_do_not(medical_plan, autoscaling_plan):
    assert "Fabric Manager" in medical_plan.summary["gpu_software"]  # 8 × A100 SXM4 on NVSwitch
    assert "Fabric Manager" not in autoscaling_plan.summary["gpu_software"]  # one A10 (PCIe)


def test_an_erdma_fixed_cluster_gets_an_eri_on_every_node():
    plan = offline_plan("medical-imaging", overrides={"compute.instance_type": ERI_FIXED, "compute.scratch_gib": 3072})
    instances = plan.find("ecs.Instance")
    assert len(instances) == 12 and not plan.find("ecs.EcsInstanceSet")
    assert {i.inputs["networkInterfaceTrafficMode"] for i in instances} == {"HighPerformance"}
    assert {i.inputs["httpTokens"] for i in instances} == {"required"}
    # Stateless nodes are replaced delete-first, so a change never needs GPU quota for two copies of a node.
    assert all(i.delete_before_replace for i in instances)
    assert plan.summary["fabric"].startswith("eRDMA")
    nccl = files(user_data(plan))["/etc/aitrain/nccl.env"]
    assert "NCCL_IB_GID_INDEX=1" in nccl and "NCCL_SOCKET_IFNAME=eth0" in nccl
    # The unapplied snapshot policy; the preset's HTTPS to any address (tests/test_egress_guardrails.py); separate
    # instances without held capacity can start partly (AIT041, tests/test_capacity_cluster.py).
    assert_guardrails(plan, skip=["AIT016", "AIT027", "AIT041"])
    assert plan.outputs["node_instance_ids"] == [f"${{medical-imaging-cluster-node-{i:03d}.id}}" for i in range(12)]


def test_an_erdma_pool_asks_for_an_eri_in_its_scaling_configuration():
    plan = offline_plan(
        "autoscaling-training",
        profile={"guardrails": {"skip": [{"rule": "AIT008", "reason": "eRDMA needs the ERI scaling configuration"}]}},
        overrides={"compute.instance_type": ERI_POOL, "compute.scratch_gib": 768, "compute.erdma_pool": True},
    )
    (config,) = plan.find("ess.ScalingConfiguration")
    (nic,) = config.inputs["networkInterfaces"]
    assert nic["networkInterfaceTrafficMode"] == "HighPerformance" and nic["instanceType"] == "Primary"
    assert "securityGroupId" not in config.inputs  # the API refuses both
    assert not plan.find("ecs.EcsLaunchTemplate") and "launchTemplateId" not in plan.find("ess.ScalingGroup")[0].inputs
    assert plan.summary["fabric"].startswith("eRDMA") and any("compute.erdma_pool is true" in n for n in plan.notes)
    # The pool preset leaves the egress allow-list off (AIT027, a warning shown in every plan of it).
    assert_guardrails(plan, skip=("AIT008", "AIT027"))


def test_an_erdma_type_in_a_pool_defaults_to_the_imdsv2_launch_template_over_tcp():
    plan = offline_plan(
        "autoscaling-training", overrides={"compute.instance_type": ERI_POOL, "compute.scratch_gib": 768}
    )
    assert not plan.find("ess.ScalingConfiguration")
    (template,) = plan.find("ecs.EcsLaunchTemplate")
    assert template.inputs["httpTokens"] == "required" and "networkInterfaces" not in template.inputs
    assert plan.summary["fabric"].startswith("TCP")
    assert any("this pool uses the launch template (IMDSv2 required), so NCCL runs over TCP" in n for n in plan.notes)
    assert "NCCL_IB_DISABLE=1" in files(user_data(plan))["/etc/aitrain/nccl.env"]
    assert_guardrails(plan, skip=("AIT027",))


def test_the_advisor_and_the_plan_read_the_same_link():
    from blueprints.advisor.job import Job
    from blueprints.advisor.options import scaling_for

    job = Job.model_validate(
        {
            "name": "link-check",
            "model_kind": "transformer",
            "params": 1e9,
            "tokens": 1e10,
            "precision": "bf16",
            "region": "cn-shanghai",
            "deadline_days": 7,
        }
    )
    for type_name in (ERI_FIXED, "ecs.sccgn7ex.32xlarge", "ecs.gn7e-c16g1.32xlarge"):
        instance = CATALOG.instance_type(type_name)
        link = scaling_for(job, instance, 4).link
        plan = offline_plan("medical-imaging", overrides={"compute.instance_type": type_name, "compute.nodes": 1})
        assert link == ("tcp" if instance.fabric_link == "tcp" else "rdma")
        assert plan.summary["fabric"].lower().startswith(instance.fabric_link)


def test_parking_removes_compute_and_touches_no_storage(medical_plan):
    parked = offline_plan("medical-imaging", overrides={"compute.nodes": 0})
    assert (
        not parked.find("ecs.EcsInstanceSet")
        and not parked.find("ram.Role")
        and not parked.find("ecs.EcsLaunchTemplate")
    )
    assert parked.outputs["node_instance_ids"] == [] and parked.outputs["expected_nodes"] == 0
    diff = diff_plans(medical_plan.to_dict(), parked.to_dict())
    removed = {c.name for c in diff.changes if c.action == "delete"}
    assert removed == {r.name for r in medical_plan.resources if r.name.startswith("medical-imaging-cluster")}
    assert all(c.action == "delete" for c in diff.changes if c.type != "summary")
    assert diff.risks == []


def test_a_login_node_is_the_only_ssh_path_to_the_nodes():
    plan = offline_plan(
        "medical-imaging",
        overrides={"network.admin_cidr": ADMIN, "access.login_node": True, "access.key_pair_name": "ops"},
    )
    (login,) = [i for i in plan.find("ecs.Instance") if i.inputs["tags"]["aitrain-component"] == "login"]
    assert login.inputs["keyName"] == "ops" and login.inputs["instanceType"] == "ecs.g7.large"
    ssh = {r.name: r.inputs for r in plan.find("ecs.SecurityGroupRule") if r.inputs.get("portRange") == "22/22"}
    assert ssh["medical-imaging-login-sg-admin-ssh"]["cidrIp"] == ADMIN
    assert ssh["medical-imaging-network-sg-ssh-from-login"]["sourceSecurityGroupId"] == "${medical-imaging-login-sg.id}"
    # The login node's own egress: SSH onward into the VPC (and Alibaba's service range, then a drop-all).
    assert ssh["medical-imaging-login-sg-egress-ssh-vpc"]["type"] == "egress"
    assert set(ssh) == {
        "medical-imaging-login-sg-admin-ssh",
        "medical-imaging-network-sg-ssh-from-login",
        "medical-imaging-login-sg-egress-ssh-vpc",
    }
    assert plan.outputs["login_node_public_ip"] == "${medical-imaging-login-eip.ipAddress}"
    assert_guardrails(
        plan, skip=["AIT016", "AIT027"]
    )  # the unapplied snapshot policy; the preset's HTTPS to any address (tests/test_egress_guardrails.py)


def test_outputs_tell_a_user_how_to_reach_everything(medical_plan):
    outputs = medical_plan.outputs
    assert outputs["aitrain_outputs"] == "v1" and outputs["launcher"] == "/usr/local/bin/aitrain-torchrun"
    assert outputs["bucket"] == "medical-imaging-cn-shanghai-data"
    assert outputs["bucket_internal_endpoint"] == "oss-cn-shanghai-internal.aliyuncs.com"
    assert outputs["file_system_mount"] == "${medical-imaging-storage-mount-target.mountTargetDomain}:/share"
    assert outputs["nat_eip"] == "${medical-imaging-network-nat-eip.ipAddress}"
    # Read through the instance set's IDs (the instances data source), in ID order.
    assert outputs["node_private_ips"] == [
        f"${{medical-imaging-cluster-nodes-0.instanceIds[{i}].privateIp}}" for i in range(12)
    ]


def test_resizing_an_erdma_cluster_adds_nodes_and_leaves_the_running_ones_alone():
    overrides = {"compute.instance_type": ERI_FIXED, "compute.scratch_gib": 3072}
    small = offline_plan("medical-imaging", overrides={**overrides, "compute.nodes": 2})
    large = offline_plan("medical-imaging", overrides={**overrides, "compute.nodes": 3})
    diff = diff_plans(small.to_dict(), large.to_dict())
    # A user-data change would reboot every running node (ecs.Instance user_data updates in place with a reboot).
    assert {(c.name, c.action) for c in diff.changes} == {("medical-imaging-cluster-node-002", "create")}
