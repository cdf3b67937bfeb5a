"""The kubernetes-pool blueprint's ACK cluster: resource graph,
the arguments that keep it safe, stable names, outputs."""

from __future__ import annotations

import json

import pytest

from blueprints.components.kubernetes_cluster import KubernetesCluster, KubernetesClusterArgs
from blueprints.review import guardrails
from blueprints.testing import offline_mocks, offline_plan

PRESET = "kubernetes-training"
UNIT = "kubernetes-training-k8s"
PROVIDER = "kubernetes-training-cn-shanghai"
KMS = "key-hzz630494463ejqjx0001"


@pytest.fixture(scope="module")
def k8s_plan():
    return offline_plan(PRESET)


def one(plan, name):
    (resource,) = [r for r in plan.resources if r.name == name]
    return resource


def test_cluster_component_parents_every_cs_resource_on_the_region_provider(k8s_plan):
    component = one(k8s_plan, UNIT)
    assert (
        component.type == "aitrain:kubernetes:KubernetesCluster" and not component.custom and component.parent is None
    )
    children = [r for r in k8s_plan.resources if r.parent == UNIT]
    assert sorted((r.short_type, r.name) for r in children) == [
        ("cs.AutoscalingConfig", f"{UNIT}-autoscaler"),
        ("cs.ManagedKubernetes", f"{UNIT}-cluster"),
        ("cs.NodePool", f"{UNIT}-gpu-pool"),
        ("cs.NodePool", f"{UNIT}-system-pool"),
        ("ram.Role", f"{UNIT}-gpu-node-role"),
        ("ram.Role", f"{UNIT}-system-node-role"),
        ("ram.RolePolicyAttachment", f"{UNIT}-gpu-bucket-policy"),
    ]
    assert {r.provider for r in children} == {PROVIDER}
    assert set(component.registered_outputs) == {"cluster_id", "gpu_node_pool_id", "gpu_role_name"}


def test_cluster_is_ack_pro_private_audited_and_joins_the_training_network(k8s_plan):
    cluster = one(k8s_plan, f"{UNIT}-cluster").inputs
    assert cluster["clusterSpec"] == "ack.pro.small" and cluster["version"] == "1.36.1-aliyun.1"
    assert cluster["newNatGateway"] is False
    assert cluster["slbInternetEnabled"] is False
    assert cluster["securityGroupId"] == "${kubernetes-training-network-sg.id}"
    # The compute zone's vSwitch of the training network (the storage zone here), for the cluster and both pools.
    one(k8s_plan, "kubernetes-training-network-vsw-cn-shanghai-a")
    vswitches = ["${kubernetes-training-network-vsw-cn-shanghai-a.id}"]
    assert cluster["vswitchIds"] == vswitches
    assert (
        one(k8s_plan, f"{UNIT}-gpu-pool").inputs["vswitchIds"]
        == vswitches
        == one(k8s_plan, f"{UNIT}-system-pool").inputs["vswitchIds"]
    )
    # Terway: pods take VPC addresses from the compute vSwitches; no Flannel pod CIDR.
    assert (
        cluster["podVswitchIds"] == vswitches and "podCidr" not in cluster and cluster["serviceCidr"] == "172.21.0.0/20"
    )
    assert cluster["auditLogConfig"] == {"enabled": True}
    assert cluster["controlPlaneLogComponents"] == ["apiserver", "kcm", "scheduler", "ccm", "controlplane-events"]
    assert cluster["controlPlaneLogTtl"] == "30"
    assert cluster["enableRrsa"] is True and cluster["deletionProtection"] is False
    assert cluster["skipSetCertificateAuthority"] is True
    assert "encryptionProviderKey" not in cluster
    assert cluster["tags"]["managed-by"] == "aitrain" and cluster["tags"]["team"] == "llm"


def test_cluster_pins_the_catalog_addons_with_erdma_for_an_erdma_type(k8s_plan):
    addons = {a["name"]: a for a in one(k8s_plan, f"{UNIT}-cluster").inputs["addons"]}
    assert list(addons) == [
        "terway-eniip",
        "csi-plugin",
        "csi-provisioner",
        "logtail-ds",
        "ack-node-problem-detector",
        "node-lifecycle-controller",
        "ack-erdma-controller",
        "arms-prometheus",
    ]
    # The network plugin enforces NetworkPolicy (Flannel enforces none).
    assert json.loads(addons["terway-eniip"]["config"]) == {"NetworkPolicy": "true"}
    assert json.loads(addons["ack-erdma-controller"]["config"]) == {
        "agent": {"preferDriver": "ofed", "allocateAllDevices": True}
    }
    # No citable version: ACK's default (no version argument at all).
    assert all("version" not in a for a in addons.values())
    assert k8s_plan.summary["fabric"].startswith("eRDMA: the ack-erdma-controller add-on")


def test_gpu_pool_autoscales_tainted_labelled_with_imdsv2_no_public_ip_and_encrypted_scratch(k8s_plan):
    pool = one(k8s_plan, f"{UNIT}-gpu-pool").inputs
    assert pool["clusterId"] == f"${{{UNIT}-cluster.id}}"
    assert pool["instanceTypes"] == ["ecs.ebmgn7ex.32xlarge"]
    assert pool["scalingConfig"] == {"enable": True, "minSize": 0, "maxSize": 8, "type": "gpu"}
    assert "desiredSize" not in pool
    assert pool["labels"] == [{"key": "aitrain.io/node-pool", "value": "gpu"}]
    assert pool["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert pool["instanceMetadataOptions"] == {"httpTokens": "required"}
    assert "internetMaxBandwidthOut" not in pool
    assert pool["securityGroupIds"] == ["${kubernetes-training-network-sg.id}"]
    assert pool["ramRoleName"] == f"{UNIT}-gpu-node"
    assert pool["spotStrategy"] == "NoSpot" and pool["imageType"] == "AliyunLinux3"
    assert (
        pool["systemDiskCategory"] == "cloud_essd"
        and pool["systemDiskEncrypted"] is True
        and pool["systemDiskSize"] == 200
    )
    assert pool["dataDisks"] == [
        {
            "category": "cloud_essd",
            "size": 3072,
            "performanceLevel": "PL1",
            "encrypted": "true",
            "autoFormat": "true",
            "fileSystem": "ext4",
            "mountTarget": "/mnt/scratch",
            "name": "aitrain-scratch",
        }
    ]
    assert one(k8s_plan, f"{UNIT}-gpu-pool").depends_on == (f"{UNIT}-gpu-bucket-policy",)


def test_gpu_role_trusts_ecs_only_and_holds_the_bucket_policy(k8s_plan):
    role = one(k8s_plan, f"{UNIT}-gpu-node-role").inputs
    assert role["roleName"] == f"{UNIT}-gpu-node"
    trust = json.loads(role["assumeRolePolicyDocument"])
    assert [s["Principal"] for s in trust["Statement"]] == [{"Service": ["ecs.aliyuncs.com"]}]
    attachment = one(k8s_plan, f"{UNIT}-gpu-bucket-policy").inputs
    assert attachment["roleName"] == f"{UNIT}-gpu-node" and attachment["policyType"] == "Custom"
    assert attachment["policyName"] == one(k8s_plan, "kubernetes-training-data-node-policy").inputs["policyName"]


def test_system_pool_is_fixed_cpu_with_imdsv2_and_its_own_empty_role(k8s_plan):
    pool = one(k8s_plan, f"{UNIT}-system-pool").inputs
    assert pool["instanceTypes"] == ["ecs.g7.xlarge"] and pool["desiredSize"] == "2"
    assert "scalingConfig" not in pool and "taints" not in pool
    # Not ACK's shared worker role: a role of its own, trusted by ECS only, with no policy attached at all.
    assert pool["ramRoleName"] == f"{UNIT}-system-node"
    assert json.loads(one(k8s_plan, f"{UNIT}-system-node-role").inputs["assumeRolePolicyDocument"])["Statement"][0][
        "Principal"
    ] == {"Service": ["ecs.aliyuncs.com"]}
    assert not [r for r in k8s_plan.find("ram.RolePolicyAttachment") if r.inputs["roleName"] == f"{UNIT}-system-node"]
    assert pool["instanceMetadataOptions"] == {"httpTokens": "required"} and pool["systemDiskEncrypted"] is True


def test_outputs_are_the_seam(k8s_plan):
    out = k8s_plan.outputs
    assert out["cluster_id"] == f"${{{UNIT}-cluster.id}}"
    assert out["gpu_node_pool_id"] == f"${{{UNIT}-gpu-pool.nodePoolId}}"
    assert (
        out["kubernetes_namespace"],
        out["min_nodes"],
        out["max_nodes"],
        out["max_gpus"],
        out["nodes_per_job"],
        out["gpus_per_node"],
    ) == ("training", 0, 8, 64, 4, 8)
    assert (
        out["fabric"] == "erdma"
        and out["job_api"] == "trainer.kubeflow.org/v1alpha1"
        and out["trainer_version"] == "v2.3.0"
        and out["training_runtime"] == "aitrain-torch"
    )
    # The bucket is a keyless OSS volume (the CSI driver's authType
    # sts with the GPU pool's role), next to the file system's.
    assert (
        out["shared_volume_claim"] == "kubernetes-training-shared"
        and out["bucket_volume_claim"] == "kubernetes-training-data"
    )
    assert out["gpu_node_selector"] == {"aitrain.io/node-pool": "gpu"}
    assert out["gpu_taint"] == {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    assert out["blueprint"] == "kubernetes-pool" and out["shared_mount_path"] == "/mnt/shared"


def test_options_reach_the_arguments():
    plan = offline_plan(
        PRESET,
        overrides={
            "security.kms_key_id": KMS,
            "cost.spot": True,
            "kubernetes.nvidia_driver_version": "550.144.03",
            "kubernetes.audit_log_project": "team-audit",
            "kubernetes.public_api_endpoint": True,
            "network.admin_cidr": "203.0.113.0/24",
            "kubernetes.addons": [
                {"name": "csi-plugin", "version": "v1.33.1"},
                {"name": "ack-node-problem-detector", "config": '{"sls_project_name": "team-audit"}'},
            ],
        },
    )
    cluster = one(plan, f"{UNIT}-cluster").inputs
    assert cluster["encryptionProviderKey"] == KMS and cluster["slbInternetEnabled"] is True
    assert (
        "Kubernetes Secrets are encrypted at rest in etcd with KMS "
        f"key {KMS} (cs.ManagedKubernetes encryption_provider_key)." in plan.notes
    )
    assert (
        cluster["auditLogConfig"] == {"enabled": True, "slsProjectName": "team-audit"}
        and cluster["controlPlaneLogProject"] == "team-audit"
    )
    addons = {a["name"]: a for a in cluster["addons"]}
    assert addons["csi-plugin"] == {"name": "csi-plugin", "version": "v1.33.1"}
    assert json.loads(addons["logtail-ds"]["config"]) == {"sls_project_name": "team-audit"}
    assert addons["ack-node-problem-detector"] == {
        "name": "ack-node-problem-detector",
        "config": '{"sls_project_name": "team-audit"}',
    }
    pool = one(plan, f"{UNIT}-gpu-pool").inputs
    assert pool["spotStrategy"] == "SpotAsPriceGo"
    assert {"key": "ack.aliyun.com/nvidia-driver-version", "value": "550.144.03"} in pool["labels"]
    assert pool["systemDiskKmsKey"] == KMS and pool["dataDisks"][0]["kmsKeyId"] == KMS
    assert any(
        "network.admin_cidr (203.0.113.0/24) is not applied. AIT033 "
        "is an error until you set that access control by hand" in n
        for n in plan.notes
    )
    assert one(plan, f"{UNIT}-cluster").name in [
        f["resource"] for f in plan.findings if f["rule"] == "AIT033" and f["level"] == "error"
    ]


def test_a_type_without_erdma_gets_no_erdma_controller():
    plan = offline_plan(
        PRESET, overrides={"compute.instance_type": "ecs.gn7e-c16g1.32xlarge", "compute.scratch_gib": 3000}
    )
    names = [a["name"] for a in one(plan, f"{UNIT}-cluster").inputs["addons"]]
    assert "ack-erdma-controller" not in names and "terway-eniip" in names and "flannel" not in names
    assert plan.outputs["fabric"] == "tcp"
    assert not any("ack-erdma-controller" in n for n in plan.notes)


def test_names_storage_and_bucket_do_not_move_when_the_pool_changes(k8s_plan):
    other = offline_plan(
        PRESET,
        overrides={
            "compute.instance_type": "ecs.gn7e-c16g1.32xlarge",
            "compute.min_nodes": 1,
            "compute.max_nodes": 3,
            "compute.nodes_per_job": 2,
            "queues.teams": [{"name": "llm", "gpus": 16}, {"name": "vision", "gpus": 8}],
            "compute.scratch_gib": 3000,
        },
    )
    assert [r.name for r in other.resources] == [r.name for r in k8s_plan.resources]
    kept = [
        r.name
        for r in k8s_plan.resources
        if r.name.startswith(("kubernetes-training-storage", "kubernetes-training-data", "kubernetes-training-network"))
    ]
    assert kept
    for name in kept:
        assert one(other, name).inputs == one(k8s_plan, name).inputs, name
    assert one(other, f"{UNIT}-gpu-pool").inputs["scalingConfig"]["maxSize"] == 3


def test_the_autoscaler_scales_in_below_the_articles_40_percent_gpu_use_and_up_from_zero(k8s_plan):
    autoscaler = one(k8s_plan, f"{UNIT}-autoscaler").inputs
    assert autoscaler == {
        "clusterId": f"${{{UNIT}-cluster.id}}",
        "gpuUtilizationThreshold": "0.4",
        "scaleDownEnabled": True,
        "scaleUpFromZero": True,
    }
    other = offline_plan(PRESET, overrides={"compute.scale_in_gpu_percent": 25})
    assert one(other, f"{UNIT}-autoscaler").inputs["gpuUtilizationThreshold"] == "0.25"
    # The volumes and the operator wait for the autoscaler's settings too.
    assert f"{UNIT}-autoscaler" in one(k8s_plan, "kubernetes-training-workloads-shared-volume").depends_on


def test_kubeconfig_comes_from_the_cluster_credential():
    args = KubernetesClusterArgs(
        version="1.36.1-aliyun.1",
        cluster_spec="ack.pro.small",
        vswitch_ids=["vsw-1"],
        security_group_id="sg-1",
        service_cidr="172.21.0.0/20",
        public_api_endpoint=False,
        audit_log_project=None,
        addons=(),
        image_type="AliyunLinux3",
        system_instance_type="ecs.g7.xlarge",
        system_nodes=2,
        instance_type="ecs.gn7e-c16g1.32xlarge",
        min_nodes=0,
        max_nodes=2,
        scale_in_gpu_percent=40.0,
        system_disk_gib=200,
        system_disk_performance_level="PL1",
        scratch_disk_gib=0,
        scratch_performance_level="PL1",
        nvidia_driver_version=None,
        spot=False,
        bucket_policy_name=None,
        kubeconfig_minutes=120,
    )
    with offline_mocks() as stack:
        cluster = KubernetesCluster("c", args)
        assert stack.resolve(cluster.kubeconfig) == "${c-cluster.kubeConfig}"
        # What the workloads wait for: both node pools and the autoscaler's settings.
        assert cluster.ready == [cluster.system_pool, cluster.gpu_pool, cluster.autoscaler]
    pool = next(r for r in stack.resources if r.name == "c-gpu-pool")
    assert "dataDisks" not in pool.inputs and pool.depends_on == ()
    assert not [r for r in stack.resources if r.short_type == "ram.RolePolicyAttachment"]


def test_a_local_nvme_type_gets_no_scratch_disk_and_a_note_saying_so():
    plan = offline_plan(
        PRESET, overrides={"compute.instance_type": "ecs.gn5-c8g1.14xlarge", "compute.scratch_gib": None}
    )
    assert "dataDisks" not in one(plan, f"{UNIT}-gpu-pool").inputs
    assert any(
        n.startswith("ecs.gn5-c8g1.14xlarge brings local NVMe") and "/mnt/scratch does not exist" in n
        for n in plan.notes
    )


def test_an_optional_login_node_joins_the_stack_and_its_outputs():
    plan = offline_plan(
        PRESET,
        overrides={"access.login_node": True, "access.key_pair_name": "ops", "network.admin_cidr": "203.0.113.0/24"},
    )
    assert {"login_node_public_ip", "login_node_private_ip", "login_node_instance_id"} <= set(plan.outputs)
    assert [
        r.name
        for r in plan.resources
        if r.short_type == "aitrain:access:LoginNode" or r.name == "kubernetes-training-login"
    ] == ["kubernetes-training-login"]
    assert one(plan, f"{UNIT}-cluster").inputs["slbInternetEnabled"] is False


def test_the_kubeconfig_invoke_runs_on_the_region_provider(monkeypatch):
    from blueprints.engine import preview

    calls = []
    answer = preview.OfflineMocks.call

    def recording(self, args):
        calls.append((args.token, args.provider, dict(args.args)))
        return answer(self, args)

    monkeypatch.setattr(preview.OfflineMocks, "call", recording)
    offline_plan(PRESET)
    (credential,) = [c for c in calls if c[0] == "alicloud:cs/getClusterCredential:getClusterCredential"]
    assert f"pulumi:providers:alicloud::{PROVIDER}::" in credential[1]
    # A bounded kubeconfig (15–4320 minutes in the API): 120, which outlasts the rest of one `pulumi up`.
    assert credential[2] == {"clusterId": f"${{{UNIT}-cluster.id}}", "temporaryDurationMinutes": 120}


def test_the_notes_tell_a_reviewer_what_ack_changes(k8s_plan):
    notes = k8s_plan.notes
    assert any(
        n.startswith(f"The GPU pool runs as its own RAM role {UNIT}-gpu-node (trusts ecs.aliyuncs.com only")
        for n in notes
    )
    assert any(n.startswith("eRDMA: the ack-erdma-controller add-on creates and attaches ERIs itself") for n in notes)
    assert any(n.startswith("The cluster has no deletion protection: it holds no data") for n in notes)
    assert not any("is not applied. AIT033 is an error" in n for n in notes)
    # Without security.kms_key_id, the plan says Secrets are not
    # KMS-encrypted; the metadata note names the node role's bound.
    assert any(n.startswith("Kubernetes Secrets are NOT encrypted with a key of yours") for n in notes)
    assert any(
        n.startswith("Instance metadata: every node requires IMDSv2 tokens. A hostNetwork pod (every eRDMA job pod)")
        and f"({UNIT}-gpu-node)" in n
        for n in notes
    )
    assert any(
        n.startswith("The kubeconfig the stack reads (cs.get_cluster_credential) is temporary: valid 120 minutes")
        for n in notes
    )


def test_the_blueprint_meaning():
    from blueprints.architectures import parse, spec_for, specs
    from blueprints.catalog import load_catalog

    cls = specs()["kubernetes-pool"]
    assert cls.job_engine == "kubernetes" and cls.compute_unit == "k8s" and "cluster autoscaler" in cls.park_refusal
    catalog = load_catalog()
    profile = parse(
        {
            "blueprint": "kubernetes-pool",
            "name": "team",
            "region": "cn-shanghai",
            "compute": {"instance_type": "ecs.gn7e-c16g1.32xlarge", "max_nodes": 6, "nodes_per_job": 3},
            "storage": {"kind": "extreme_nas", "throughput_tier": "standard", "capacity_gib": 8192},
        },
        catalog=catalog,
        today=__import__("datetime").date(2026, 12, 1),
    )
    blueprint = spec_for(profile, catalog, __import__("datetime").date(2026, 12, 1))
    assert blueprint.node_role_name == "team-k8s-gpu-node"
    assert blueprint.expected_nodes() == 3 and blueprint.price_basis() == (6, "GPU pool at max_nodes")
    assert blueprint.kubernetes_version == "1.36.1-aliyun.1"


def test_both_pools_are_managed_with_auto_repair_and_no_auto_upgrade(k8s_plan):
    """Auto repair (CKV_ALI_31) on the system and GPU pools; no auto upgrade or CVE fix, which drain nodes mid-run."""
    for pool in ("system", "gpu"):
        assert one(k8s_plan, f"{UNIT}-{pool}-pool").inputs["management"] == {
            "enable": True,
            "autoRepair": True,
            "autoRepairPolicy": {"restartNode": True},
            "autoUpgrade": False,
            "autoVulFix": False,
            "maxUnavailable": 1,
        }
    # Repair acts on what these add-ons detect and run (NodePoolManagementArgs.auto_repair, SDK 4.0.0).
    names = [a["name"] for a in one(k8s_plan, f"{UNIT}-cluster").inputs["addons"]]
    assert {"ack-node-problem-detector", "node-lifecycle-controller"} <= set(names)
    assert [f for f in guardrails.check(k8s_plan) if f.rule == "AIT037"] == []
