"""The Terraform export of kubernetes-pool plans: the ACK types map; Kubernetes objects are refused (exit 2, naming
--cloud-only), or with --cloud-only left out and named while every alicloud resource is written."""

from __future__ import annotations

import json

import pytest

from blueprints.cli.main import app
from blueprints.export import ExportError, kubernetes_objects, left_out, to_terraform, to_terraform_json
from blueprints.export.names import tf_identifier
from tests.test_export_terraform import DOCUMENTED, _attribute_names, managed, plan_of, resource, runner, tiny_plan

# ---- kubernetes-pool plans (issue 11): the ACK types map; Kubernetes objects are refused, never half-exported ----


def test_ack_types_map_to_their_terraform_types_with_single_blocks():
    cluster = resource(
        "alicloud:cs/managedKubernetes:ManagedKubernetes",
        "train-cluster",
        {"clusterSpec": "ack.pro.small", "slbInternetEnabled": False, "auditLogConfig": {"enabled": True}},
    )
    pool = resource(
        "alicloud:cs/nodePool:NodePool",
        "train-gpu",
        {
            "clusterId": "${train-cluster.id}",
            "instanceTypes": ["ecs.gn7e-c16g1.32xlarge"],
            "scalingConfig": {"enable": True, "minSize": 0, "maxSize": 4},
            "instanceMetadataOptions": {"httpTokens": "required"},
        },
    )
    addon = resource(
        "alicloud:cs/kubernetesAddon:KubernetesAddon",
        "csi-plugin",
        {"clusterId": "${train-cluster.id}", "name": "csi-plugin"},
    )
    document = to_terraform(tiny_plan(cluster, pool, addon))
    body = document["resource"]["alicloud_cs_managed_kubernetes"]["train-cluster"]
    assert (
        body["cluster_spec"] == "ack.pro.small"
        and body["slb_internet_enabled"] is False
        and body["audit_log_config"] == [{"enabled": True}]
    )
    node_pool = document["resource"]["alicloud_cs_kubernetes_node_pool"]["train-gpu"]
    assert node_pool["cluster_id"] == "${alicloud_cs_managed_kubernetes.train-cluster.id}"
    assert node_pool["scaling_config"] == [{"enable": True, "min_size": 0, "max_size": 4}]
    assert node_pool["instance_metadata_options"] == [{"http_tokens": "required"}]
    assert document["resource"]["alicloud_cs_kubernetes_addon"]["csi-plugin"]["name"] == "csi-plugin"
    for tf_type, named in document["resource"].items():
        for body in named.values():
            assert not _attribute_names(body) - set(DOCUMENTED[tf_type]), tf_type


def test_kubernetes_objects_are_refused_naming_the_kinds():
    network = resource("alicloud:vpc/network:Network", "net", {"cidrBlock": "10.0.0.0/16"})
    pv = resource(
        "kubernetes:core/v1:PersistentVolume", "train-shared", {"spec": {"persistentVolumeReclaimPolicy": "Retain"}}
    )
    provider = resource("pulumi:providers:kubernetes", "train-k8s", {})
    with pytest.raises(
        ExportError,
        match=(
            r"Kubernetes objects \(kubernetes:core/v1:PersistentVolume, "
            r"pulumi:providers:kubernetes\), which the Terraform export does not write"
        ),
    ) as caught:
        to_terraform(tiny_plan(network, pv, provider))
    from blueprints.export import NotExportable

    assert isinstance(caught.value, NotExportable)


def test_cli_refuses_a_plan_with_kubernetes_objects_with_exit_2_and_writes_nothing(tmp_path, monkeypatch):
    import blueprints.engine.preview

    pv = resource("kubernetes:core/v1:PersistentVolume", "train-shared", {"spec": {}})
    monkeypatch.setattr(blueprints.engine.preview, "preview", lambda *args, **kwargs: tiny_plan(pv))
    result = runner.invoke(app, ["export", "terraform", "autoscaling-training", "--out", str(tmp_path / "tf")])
    assert result.exit_code == 2
    assert (
        "error: cannot export t to Terraform: the plan holds Kubernetes objects (kubernetes:core/v1:PersistentVolume)"
        in result.stderr
    )
    assert "pass --cloud-only" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "tf").exists()


def test_the_kubernetes_preset_is_refused_with_exit_2_and_nothing_written(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "tf"
    done = subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", "export", "terraform", "kubernetes-training", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert (
        done.returncode == 2
        and "Kubernetes objects (kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration, "
        in done.stderr
    )
    assert "pass --cloud-only to write the alicloud resources alone" in done.stderr
    assert "Traceback" not in done.stderr and not (out / "main.tf.json").exists()


# ---- --cloud-only (issue 26): the cloud side of a kubernetes-pool plan, what is left out named ----

# The alicloud types the kubernetes-training preset creates, as Terraform types.
K8S_CLOUD_TYPES = {
    "alicloud_cs_managed_kubernetes",
    "alicloud_cs_kubernetes_node_pool",
    "alicloud_cs_autoscaling_config",
    "alicloud_ram_role",
    "alicloud_ram_policy",
    "alicloud_ram_role_policy_attachment",
    "alicloud_vpc",
    "alicloud_vswitch",
    "alicloud_security_group",
    "alicloud_security_group_rule",
    "alicloud_nat_gateway",
    "alicloud_eip_address",
    "alicloud_eip_association",
    "alicloud_snat_entry",
    "alicloud_nas_file_system",
    "alicloud_nas_mount_target",
    "alicloud_nas_access_group",
    "alicloud_nas_access_rule",
    "alicloud_nas_auto_snapshot_policy",
    "alicloud_oss_bucket",
    "alicloud_oss_bucket_acl",
    "alicloud_oss_bucket_https_config",
    "alicloud_oss_bucket_logging",
    "alicloud_oss_bucket_policy",
    "alicloud_oss_bucket_public_access_block",
    "alicloud_oss_bucket_server_side_encryption",
    "alicloud_oss_bucket_versioning",
}


def test_cloud_only_export_of_the_kubernetes_preset_writes_its_alicloud_side_and_names_what_it_left_out():
    plan = plan_of("kubernetes-training")
    document = json.loads(to_terraform_json(plan, cloud_only=True))
    assert set(document["resource"]) == K8S_CLOUD_TYPES
    assert not [t for t in document["resource"] if "kubernetes" in t and not t.startswith("alicloud_cs_")]
    assert document["provider"] == {"alicloud": [{"region": "cn-shanghai"}]}
    assert len(document["resource"]["alicloud_cs_kubernetes_node_pool"]) == 2
    # The node pools' auto repair reaches Terraform as the block checkov's CKV_ALI_31 reads (management/auto_repair).
    for pool in document["resource"]["alicloud_cs_kubernetes_node_pool"].values():
        assert pool["management"][0]["auto_repair"] is True
    skipped = kubernetes_objects(plan)
    assert len(skipped) == 130 and {r.type for r in skipped} >= {
        "kubernetes:apps/v1:Deployment",
        "pulumi:providers:kubernetes",
    }
    assert (
        "Cloud side only (--cloud-only): 129 Kubernetes objects left out: "
        "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration (3), " in document["//"]
    )
    assert document["//"].endswith(
        "kubernetes:trainer.kubeflow.org/v1alpha1:TrainingRuntime, and 1 pulumi:providers:kubernetes; they are "
        "deployed by Pulumi, not by this file."
    )
    assert "kubernetes:core/v1:PersistentVolume (2)" in document["//"]
    text = json.dumps(document)
    for r in skipped:
        assert tf_identifier(r.name) not in text, r.name


def test_cloud_only_changes_nothing_on_a_plan_without_kubernetes_objects(medical_plan):
    assert to_terraform_json(medical_plan, cloud_only=True) == to_terraform_json(medical_plan)
    assert kubernetes_objects(medical_plan) == []


def test_cloud_only_refuses_an_alicloud_resource_that_needs_a_left_out_object():
    network = resource("alicloud:vpc/network:Network", "net", {"description": "${ns.metadata}"})
    ns = resource("kubernetes:core/v1:Namespace", "ns", {})
    with pytest.raises(ExportError, match="net refers to 'ns', a Kubernetes object the cloud-only export leaves out"):
        to_terraform(tiny_plan(network, ns), cloud_only=True)


def test_left_out_counts_kinds_and_the_provider():
    objects = [resource("kubernetes:core/v1:Namespace", n, {}) for n in ("a", "b")] + [
        resource("pulumi:providers:kubernetes", "k", {})
    ]
    assert (
        left_out(objects)
        == "2 Kubernetes objects left out: kubernetes:core/v1:Namespace (2), and 1 pulumi:providers:kubernetes"
    )
    assert left_out(objects[:1]) == "1 Kubernetes object left out: kubernetes:core/v1:Namespace"


def test_cli_cloud_only_writes_the_cloud_side_and_says_what_it_left_out(tmp_path):
    plan = plan_of("kubernetes-training")
    result = runner.invoke(app, ["export", "terraform", "kubernetes-training", "--cloud-only", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "main.tf.json").read_text(encoding="utf-8") == to_terraform_json(plan, cloud_only=True)
    assert (
        f"wrote {tmp_path / 'main.tf.json'} ({len(managed(plan))} resources of "
        "kubernetes-training); cloud side only, 129 Kubernetes objects left out: " in result.output
    )
    assert len(managed(plan)) == 36
