"""Inside the ACK cluster: the jobs' namespace, the file system as a static volume, the Kubeflow training operator."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blueprints.catalog.engines import KUEUE_BUNDLE, TRAINING_OPERATOR_VERSION
from blueprints.components.errors import ResourceError
from blueprints.components.kubernetes_workloads import (
    OPERATOR_DIR,
    KubernetesWorkloads,
    KubernetesWorkloadsArgs,
    nas_volume_attributes,
    operator_objects,
    oss_volume_attributes,
    trainer_objects,
)
from blueprints.components.vendored import VENDORED_KINDS, bundle
from blueprints.testing import offline_mocks, offline_plan

PRESET = "kubernetes-training"
UNIT = "kubernetes-training-workloads"
QUEUE = "kubernetes-training-queue"
ROOT = Path(__file__).resolve().parents[1]
LEGACY = {"kubernetes.job_engine": "training-operator-v1"}


@pytest.fixture(scope="module")
def k8s_plan():
    return offline_plan(PRESET)


@pytest.fixture(scope="module")
def legacy_plan():
    """The same stack on the legacy engine (the Kubeflow training operator v1.9.0), kept for one release."""
    return offline_plan(PRESET, overrides=LEGACY)


def one(plan, name):
    (resource,) = [r for r in plan.resources if r.name == name]
    return resource


def in_cluster(plan):
    return [r for r in plan.resources if r.type.startswith("kubernetes:")]


def test_every_kubernetes_object_uses_the_provider_made_from_the_clusters_kubeconfig(k8s_plan):
    provider = one(k8s_plan, f"{UNIT}-kubeconfig")
    assert provider.type == "pulumi:providers:kubernetes" and provider.parent == UNIT
    # The kubeconfig is the cluster's credential, shown as a secret reference, never the ambient ~/.kube/config.
    assert provider.inputs["kubeconfig"] == "[secret] ${kubernetes-training-k8s-cluster.kubeConfig}"
    objects = in_cluster(k8s_plan)
    # The jobs' namespace, 2 network policies, two volumes and their claims, Trainer with JobSet and the runtime
    # (KubernetesWorkloads); Kueue and the queues: 1 priority, the flavor, the cohort, 2 ClusterQueues, 2 LocalQueues.
    workloads = 1 + 2 + 4 + len(trainer_objects()) + 1
    queue = len(bundle(KUEUE_BUNDLE)) + 7
    assert len(objects) == workloads + queue == 43 + 86
    assert {r.provider for r in objects} == {f"{UNIT}-kubeconfig"}
    assert sum(r.parent == UNIT for r in objects) == workloads and sum(r.parent == QUEUE for r in objects) == queue
    # Nothing goes into the cluster before both node pools exist.
    assert all(
        {"kubernetes-training-k8s-gpu-pool", "kubernetes-training-k8s-system-pool"} <= set(r.depends_on)
        for r in objects
    )
    component = one(k8s_plan, UNIT)
    assert component.type == "aitrain:kubernetes:KubernetesWorkloads" and set(component.registered_outputs) == {
        "namespace",
        "shared_claim",
        "bucket_claim",
        "job_engine_version",
        "training_runtime",
    }
    # A destroy or a cluster replacement drops the objects of a cluster that no longer answers instead of failing.
    assert one(k8s_plan, f"{UNIT}-kubeconfig").inputs["deleteUnreachable"] == "true"


def test_the_shared_file_system_is_a_static_nas_volume_that_keeps_its_data(k8s_plan):
    volume = one(k8s_plan, f"{UNIT}-shared-volume").inputs
    spec = volume["spec"]
    assert volume["metadata"]["name"] == "kubernetes-training-shared"
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert spec["accessModes"] == ["ReadWriteMany"] and spec["capacity"] == {"storage": "16384Gi"}
    assert spec["csi"]["driver"] == "nasplugin.csi.alibabacloud.com"
    # The CSI driver requires volumeHandle == the PV's name; the server and path are the file system's mount target.
    assert spec["csi"]["volumeHandle"] == volume["metadata"]["name"]
    assert spec["csi"]["volumeAttributes"] == {
        "server": "${kubernetes-training-storage-mount-target.mountTargetDomain}",
        "path": "/share",
        "vers": "3",
    }
    assert spec["mountOptions"] == ["nolock,tcp,noresvport", "vers=3"]
    claim = one(k8s_plan, f"{UNIT}-shared-claim").inputs
    assert (claim["metadata"]["name"], claim["metadata"]["namespace"]) == ("kubernetes-training-shared", "training")
    # Static binding: no storage class, bound to this volume by name.
    assert (
        claim["spec"]["volumeName"] == volume["metadata"]["name"]
        and claim["spec"]["storageClassName"] == "" == spec["storageClassName"]
    )
    assert claim["spec"]["resources"] == {"requests": {"storage": "16384Gi"}}
    for name in (f"{UNIT}-shared-volume", f"{UNIT}-shared-claim"):
        assert one(k8s_plan, name).retain_on_delete, (
            f"{name}: dropping the volume object must never need the cluster to answer"
        )
    assert "kubernetes-training-workloads-namespace" in one(k8s_plan, f"{UNIT}-shared-claim").depends_on
    assert k8s_plan.outputs["shared_volume_claim"] == "kubernetes-training-shared"


def test_the_stacks_bucket_is_a_volume_mounted_with_the_gpu_pools_role(k8s_plan):
    volume = one(k8s_plan, f"{UNIT}-data-volume")
    attributes = volume.inputs["spec"]["csi"]["volumeAttributes"]
    # The role that holds the one-bucket policy (its attachment is in the plan), the stack's bucket, its VPC endpoint.
    assert attributes["roleName"] == one(k8s_plan, "kubernetes-training-k8s-gpu-node-role").inputs["roleName"]
    assert (
        attributes["bucket"] == k8s_plan.outputs["bucket"]
        and attributes["url"] == "https://" + k8s_plan.outputs["bucket_internal_endpoint"]
    )
    # The bucket denies plain HTTP (its https-only policy is in the plan), so the volume must not use it.
    assert one(k8s_plan, "kubernetes-training-data-https-only").type == "alicloud:oss/bucketPolicy:BucketPolicy"
    assert (
        attributes["authType"] == "sts"
        and volume.retain_on_delete
        and volume.inputs["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    )
    assert (
        one(k8s_plan, f"{UNIT}-data-claim").inputs["spec"]["volumeName"]
        == "kubernetes-training-data"
        == k8s_plan.outputs["bucket_volume_claim"]
    )


def test_the_file_system_is_still_protected_and_retained_beside_the_volume(k8s_plan):
    fs = one(k8s_plan, "kubernetes-training-storage-fs")
    assert fs.protect and fs.retain_on_delete


def test_the_legacy_training_operator_is_the_vendored_release_pytorchjob_only(legacy_plan):
    k8s_plan = legacy_plan
    crd = one(k8s_plan, f"{UNIT}-operator-customresourcedefinition-pytorchjobs.kubeflow.org").inputs
    assert crd["spec"]["group"] == "kubeflow.org" and crd["spec"]["names"]["kind"] == "PyTorchJob"
    deployment = one(k8s_plan, f"{UNIT}-operator-deployment-training-operator").inputs
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "kubeflow/training-operator:v1-5170a36" and container["args"] == [
        "--enable-scheme=pytorchjob"
    ]
    assert deployment["metadata"]["namespace"] == "kubeflow"
    webhook = one(k8s_plan, f"{UNIT}-operator-validatingwebhookconfiguration-validator.training-operator.kubeflow.org")
    (hook,) = webhook.inputs["webhooks"]
    assert hook["clientConfig"]["service"] == {
        "name": "training-operator",
        "namespace": "kubeflow",
        "path": "/validate-kubeflow-org-v1-pytorchjob",
    }
    # The operator writes its webhook certificate and CA bundle itself; Pulumi must not take them back.
    assert webhook.ignore_changes == ("webhooks",)
    assert one(k8s_plan, f"{UNIT}-operator-secret-training-operator-webhook-cert").ignore_changes == ("data",)
    assert k8s_plan.outputs["training_operator_version"] == TRAINING_OPERATOR_VERSION == "v1.9.0"
    assert k8s_plan.outputs["job_api"] == "kubeflow.org/v1" and "trainer_version" not in k8s_plan.outputs
    # The legacy engine installs no Trainer, no JobSet and no runtime; Kueue admits its PyTorchJobs all the same.
    assert not [r for r in in_cluster(k8s_plan) if r.name.startswith((f"{UNIT}-trainer-", f"{UNIT}-runtime-"))]
    assert one(k8s_plan, f"{QUEUE}-clusterqueue-kubernetes-training-llm")
    # Deleting the CRD would delete every running PyTorchJob: it stays in the cluster; the operator's other objects go.
    retained = {
        r.inputs["kind"] for r in in_cluster(k8s_plan) if r.name.startswith(f"{UNIT}-operator-") and r.retain_on_delete
    }
    assert retained == {"CustomResourceDefinition"}


def test_the_operator_image_can_come_from_your_own_registry():
    plan = offline_plan(
        PRESET,
        overrides={
            **LEGACY,
            "kubernetes.operator_image": "registry.cn-shanghai.aliyuncs.com/team/training-operator:v1-5170a36",
        },
    )
    deployment = one(plan, f"{UNIT}-operator-deployment-training-operator").inputs
    assert (
        deployment["spec"]["template"]["spec"]["containers"][0]["image"]
        == "registry.cn-shanghai.aliyuncs.com/team/training-operator:v1-5170a36"
    )


def test_the_vendored_crd_is_the_releases_file_and_every_object_has_a_resource_type():
    crd = OPERATOR_DIR / "kubeflow.org_pytorchjobs.yaml"
    # The hash recorded in PYTORCHJOB_CRD.md (the v1.9.0 file, byte for byte).
    assert hashlib.sha256(crd.read_bytes()).hexdigest() in (OPERATOR_DIR / "PYTORCHJOB_CRD.md").read_text(
        encoding="utf-8"
    )
    kinds = sorted(o["kind"] for o in operator_objects())
    assert kinds == sorted(
        [
            "CustomResourceDefinition",
            "ClusterRoleBinding",
            "ClusterRole",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
            "Service",
            "Deployment",
            "Namespace",
            "Secret",
        ]
    )
    assert {(o["apiVersion"], o["kind"]) for o in operator_objects()} <= set(VENDORED_KINDS)
    namespaced = [o for o in operator_objects() if o["kind"] in ("ServiceAccount", "Service", "Deployment", "Secret")]
    assert {o["metadata"]["namespace"] for o in namespaced} == {"kubeflow"}


def test_the_rendered_operator_file_says_where_it_comes_from():
    header = (OPERATOR_DIR / "operator.yaml").read_text(encoding="utf-8").splitlines()[:2]
    assert "kubeflow/training-operator v1.9.0 (6f74c7f6b2ed6c27aabd82d0a316b23f0646059c)" in header[0]
    assert yaml.safe_load_all((OPERATOR_DIR / "operator.yaml").read_text(encoding="utf-8"))


def test_nas_volume_attributes_split_the_mount_source():
    assert nas_volume_attributes("abc-123.cn-shanghai.extreme.nas.aliyuncs.com:/share") == {
        "server": "abc-123.cn-shanghai.extreme.nas.aliyuncs.com",
        "path": "/share",
        "vers": "3",
    }
    assert nas_volume_attributes("abc.cn-shanghai.nas.aliyuncs.com:/")["path"] == "/"
    assert nas_volume_attributes("abc.cn-shanghai.nas.aliyuncs.com")["path"] == "/"


def test_names_come_from_the_profile_name_so_a_pool_change_never_renames_a_volume(k8s_plan):
    bigger = offline_plan(PRESET, overrides={"compute.max_nodes": 16, "compute.min_nodes": 2})
    before = {r.name: r.inputs for r in in_cluster(k8s_plan)}
    after = {r.name: r.inputs for r in in_cluster(bigger)}
    cohort = f"{QUEUE}-cohort-kubernetes-training"
    assert before.keys() == after.keys()
    # Only the cohort changes: it holds the pool's GPUs no team's quota has (0 of 64, then 64 of 128).
    assert {name for name in before if before[name] != after[name]} == {cohort}

    def cohort_gpus(inputs):
        (group,) = inputs["spec"]["resourceGroups"]
        (flavor,) = group["flavors"]
        return {q["name"]: q["nominalQuota"] for q in flavor["resources"]}["nvidia.com/gpu"]

    assert (cohort_gpus(before[cohort]), cohort_gpus(after[cohort])) == ("0", "64")


def test_cpfs_is_refused_for_kubernetes_pool_with_the_allowed_kinds():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "blueprints.cli.main",
            "plan",
            PRESET,
            "--set",
            "storage.kind=cpfs",
            "--set",
            "storage.throughput_tier=advance_100",
            "--set",
            "storage.capacity_gib=3600",
            "--set",
            "storage.allow_unencrypted_cpfs=true",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2, result.stderr
    assert (
        "storage.kind" in result.stderr
        and "allowed here: nas, extreme_nas" in result.stderr
        and "Traceback" not in result.stderr
    )


def test_the_component_refuses_a_storage_kind_without_a_volume_recipe():
    with offline_mocks():
        with pytest.raises(
            ResourceError, match=r"^aitrain:kubernetes:KubernetesWorkloads \(w\): .*allowed: nas, extreme_nas"
        ):
            KubernetesWorkloads(
                "w",
                KubernetesWorkloadsArgs(
                    name="w",
                    region="cn-shanghai",
                    namespace="training",
                    kubeconfig="k",
                    storage_kind="cpfs",
                    file_system_id="f",
                    mount_source="m",
                    capacity_gib=100,
                ),
            )


@pytest.mark.parametrize(
    "setting, message",
    [
        ("kubernetes.namespace=kubeflow", "the training operator's own namespace"),
        ("kubernetes.namespace=default", "every cluster already has it"),
        ("kubernetes.namespace=kueue-system", "Kueue's own namespace"),
        ("kubernetes.namespace=kubeflow-system", "Kubeflow Trainer's and JobSet's own namespace"),
        ("kubernetes.images.kueue=Registry/UPPER", "must be a container image reference"),
        ("kubernetes.operator_image=registry.example.com/op:v1", "applies to job_engine training-operator-v1 only"),
        ("kubernetes.operator_image=bad image", "must be a container image reference"),
        ("kubernetes.operator_image=Registry/UPPER", "must be a container image reference"),
    ],
)
def test_namespaces_the_stack_cannot_create_and_bad_images_are_refused(setting, message):
    result = subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", "plan", PRESET, "--set", setting],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    field = setting.split("=", 1)[0]
    assert (
        result.returncode == 2
        and f"{field} = " in result.stderr
        and message in result.stderr
        and "Traceback" not in result.stderr
    )


def test_the_squash_note_speaks_of_jobs_in_pods_not_of_the_ecs_host_registry(k8s_plan):
    squash = [n for n in k8s_plan.notes if n.startswith("storage.nfs_squash")]
    assert len(squash) == 1 and "a job running as root in its pod is nobody on the share" in squash[0]
    assert "host registry" not in squash[0] and "aitrain-torchrun" not in squash[0]


def _workloads(**bucket):
    return KubernetesWorkloads(
        "w",
        KubernetesWorkloadsArgs(
            name="llama",
            region="cn-shanghai",
            namespace="training",
            kubeconfig="k",
            storage_kind="nas",
            file_system_id="f",
            mount_source="abc.cn-shanghai.nas.aliyuncs.com:/",
            capacity_gib=100,
            gpus_per_node=8,
            node_selector={"aitrain.io/node-pool": "gpu"},
            gpu_taint={"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
            **bucket,
        ),
    )


BUCKET = {
    "bucket": "llama-ckpt",
    "bucket_endpoint": "oss-cn-shanghai-internal.aliyuncs.com",
    "node_role_name": "llama-k8s-gpu-node",
}


def test_the_bucket_is_a_static_oss_volume_mounted_with_the_gpu_nodes_role_and_no_key():
    with offline_mocks() as stack:
        workloads = _workloads(**BUCKET)
    assert workloads.bucket_claim == "llama-data"
    by_name = {r.name: r for r in stack.resources}
    volume, claim = by_name["w-data-volume"], by_name["w-data-claim"]
    spec = volume.inputs["spec"]
    assert volume.inputs["metadata"]["name"] == "llama-data" == spec["csi"]["volumeHandle"]
    assert (
        spec["csi"]["driver"] == "ossplugin.csi.alibabacloud.com" and spec["persistentVolumeReclaimPolicy"] == "Retain"
    )
    assert spec["csi"]["volumeAttributes"] == {
        "bucket": "llama-ckpt",
        "url": "https://oss-cn-shanghai-internal.aliyuncs.com",
        "path": "/",
        "authType": "sts",
        "roleName": "llama-k8s-gpu-node",
        "otherOpts": "-o max_stat_cache_size=0 -o allow_other",
    }
    assert spec["accessModes"] == ["ReadWriteMany"] and spec["storageClassName"] == ""
    # Keyless: no Secret reference and no AccessKey anywhere in the volume.
    assert "nodePublishSecretRef" not in spec["csi"] and not {"akId", "akSecret"} & set(spec["csi"]["volumeAttributes"])
    # The only Secrets are the engines' webhook certificates, which their controllers fill.
    assert sorted(r.inputs["metadata"]["name"] for r in stack.resources if r.type == "kubernetes:core/v1:Secret") == [
        "jobset-webhook-server-cert",
        "kubeflow-trainer-webhook-cert",
    ]
    assert (claim.inputs["metadata"]["name"], claim.inputs["metadata"]["namespace"]) == ("llama-data", "training")
    assert claim.inputs["spec"]["volumeName"] == "llama-data" and claim.inputs["spec"]["storageClassName"] == ""
    assert claim.inputs["spec"]["resources"] == {"requests": {"storage": "100Gi"}} and spec["capacity"] == {
        "storage": "100Gi"
    }
    assert volume.retain_on_delete and claim.retain_on_delete and "w-namespace" in claim.depends_on
    assert volume.provider == claim.provider == "w-kubeconfig" and volume.parent == claim.parent == "w"


def test_without_a_bucket_there_is_no_bucket_volume_and_half_a_bucket_is_refused():
    with offline_mocks() as stack:
        workloads = _workloads()
    assert workloads.bucket_claim is None
    assert not [r for r in stack.resources if r.name.startswith("w-data")]
    with offline_mocks():
        with pytest.raises(ResourceError, match="come together"):
            _workloads(bucket="llama-ckpt", bucket_endpoint="oss-cn-shanghai-internal.aliyuncs.com")


def test_oss_volume_attributes_are_keyless():
    attributes = oss_volume_attributes("b", "oss-cn-beijing-internal.aliyuncs.com", "role")
    assert attributes["authType"] == "sts" and attributes["roleName"] == "role"
    # HTTPS always: the driver would give a bare internal endpoint http://, which the bucket's HTTPS-only policy denies.
    assert attributes["url"] == "https://oss-cn-beijing-internal.aliyuncs.com"
    assert (
        oss_volume_attributes("b", "https://oss-cn-beijing-internal.aliyuncs.com", "role")["url"]
        == "https://oss-cn-beijing-internal.aliyuncs.com"
    )


def test_the_jobs_namespace_is_default_deny_but_admits_itself_and_dns(k8s_plan):
    """Terway enforces NetworkPolicy: everything in the jobs'
    namespace is denied but its own pods and the cluster DNS."""
    policies = {
        r.inputs["metadata"]["name"]: r
        for r in in_cluster(k8s_plan)
        if r.short_type == "networking.k8s.io/v1.NetworkPolicy"
        or r.type == "kubernetes:networking.k8s.io/v1:NetworkPolicy"
    }
    assert set(policies) == {"default-deny", "allow-namespace-and-dns"}
    assert all(r.inputs["metadata"]["namespace"] == "training" for r in policies.values())
    assert all(f"{UNIT}-namespace" in r.depends_on for r in policies.values())
    assert policies["default-deny"].inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    allow = policies["allow-namespace-and-dns"].inputs["spec"]
    assert allow["ingress"] == [{"from": [{"podSelector": {}}]}]
    assert allow["egress"] == [
        {"to": [{"podSelector": {}}]},
        {
            "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        },
    ]
    # The plan says honestly what NetworkPolicy does not cover: hostNetwork (eRDMA) pods.
    assert any("NetworkPolicy does not govern hostNetwork pods" in n for n in k8s_plan.notes)
