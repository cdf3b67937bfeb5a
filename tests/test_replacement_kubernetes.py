"""Replace-aware diff of a kubernetes-pool plan: the ACK types' ForceNew marks (terraform-provider-alicloud docs) and
the Kubernetes kinds' replace lists (pulumi-kubernetes forceNewProperties), read as data with their sources.

Plans here are dicts with the engine input names; the diff is ``blueprints.review.diff.compare.diff_plans``.
"""

from __future__ import annotations

import copy
from typing import Any

from blueprints.review.diff.compare import diff_plans, empty_plan
from blueprints.review.diff.replacement import replacement_table

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
TF = "aliyun/terraform-provider-alicloud@81c43b6727a09e9da37b3d88818c3ba5fa17fa14:website/docs/r/"
K8S = "pulumi/pulumi-kubernetes@94977969d64112b04e19945818a7d5d5f38f631d:provider/pkg/provider/diff.go#L"


def resource(token: str, name: str, inputs: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"type": token, "name": name, "inputs": inputs, **options}


def base_plan() -> dict[str, Any]:
    csi = {
        "driver": "nasplugin.csi.alibabacloud.com",
        "volumeHandle": "train-shared",
        "volumeAttributes": {"server": "0a1b.cn-wulanchabu.extreme.nas.aliyuncs.com", "path": "/share"},
    }
    plan = empty_plan()
    plan["resources"] = [
        resource(
            "alicloud:nas/fileSystem:FileSystem",
            "train-fs",
            {"fileSystemType": "extreme", "capacity": 1024, "encryptType": 1},
            protect=True,
            retain_on_delete=True,
        ),
        resource(
            "alicloud:cs/managedKubernetes:ManagedKubernetes",
            "train-cluster",
            {"clusterSpec": "ack.pro.small", "serviceCidr": "172.21.0.0/20", "slbInternetEnabled": False},
        ),
        resource(
            "alicloud:cs/nodePool:NodePool",
            "train-gpu",
            {
                "clusterId": "${train-cluster.id}",
                "instanceTypes": ["ecs.gn7e-c16g1.32xlarge"],
                "ramRoleName": "train-gpu-node",
                "scalingConfig": {"enable": True, "minSize": 0, "maxSize": 4},
                "instanceMetadataOptions": {"httpTokens": "required"},
            },
        ),
        resource(
            PV,
            "train-shared-pv",
            {
                "metadata": {"name": "train-shared"},
                "spec": {"capacity": {"storage": "1024Gi"}, "csi": csi, "persistentVolumeReclaimPolicy": "Retain"},
            },
        ),
        resource(
            PVC,
            "train-shared-pvc",
            {
                "metadata": {"name": "train-shared", "namespace": "train"},
                "spec": {"volumeName": "train-shared", "storageClassName": ""},
            },
        ),
        resource(
            DEPLOYMENT,
            "training-operator",
            {
                "metadata": {"name": "training-operator"},
                "spec": {
                    "selector": {"matchLabels": {"app": "training-operator"}},
                    "template": {"spec": {"containers": [{"image": "kubeflow/training-operator:v1-8a4f3f4"}]}},
                },
            },
        ),
    ]
    return plan


def changed(plan: dict[str, Any], name: str, path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(plan)
    (r,) = [r for r in out["resources"] if r["name"] == name]
    target = r["inputs"]
    *parents, last = path.split(".")
    for key in parents:
        target = target[key]
    target[last] = value
    return out


def outcome(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {c.name: (c.action, c.replacing) for c in diff_plans(old, new).changes}


def test_ack_and_kubernetes_rows_load_with_their_sources() -> None:
    table = replacement_table()
    assert table.forcing("cs.NodePool") >= {"clusterId", "ramRoleName", "instanceMetadataOptions", ("securityGroupIds")}  # type: ignore[operator]
    assert "instanceTypes" not in table.forcing("cs.NodePool")  # type: ignore[operator]
    assert table.sources[("cs.NodePool", "ramRoleName")] == TF + "cs_kubernetes_node_pool.html.markdown#L751"
    assert table.sources[("cs.ManagedKubernetes", "serviceCidr")] == TF + "cs_managed_kubernetes.html.markdown#L501"
    assert table.forcing("cs.KubernetesAddon") == {"clusterId", "name"}
    assert table.sources[(PV, "spec.csi")] == K8S + "93"
    assert table.sources[(PV, "metadata.name")] == K8S + "209"


def test_a_gpu_type_change_updates_the_node_pool_in_place_and_never_touches_storage() -> None:
    old = base_plan()
    new = changed(old, "train-gpu", "instanceTypes", ["ecs.gn8v-8x.48xlarge"])
    assert outcome(old, new) == {"train-gpu": ("update", ())}


def test_a_node_pool_role_or_cluster_network_change_replaces() -> None:
    old = base_plan()
    assert outcome(old, changed(old, "train-gpu", "ramRoleName", "other-role")) == {
        "train-gpu": ("replace", ("ramRoleName",))
    }
    result = outcome(old, changed(old, "train-cluster", "serviceCidr", "172.22.0.0/20"))
    assert result["train-cluster"] == ("replace", ("serviceCidr",))
    # The new cluster ID replaces the pool (clusterId is ForceNew); the file system is not touched.
    assert result["train-gpu"][0] == "replace"
    assert "train-fs" not in result


def test_a_volume_source_change_replaces_the_pv_and_a_capacity_change_updates_it() -> None:
    old = base_plan()
    moved = changed(
        old, "train-shared-pv", "spec.csi.volumeAttributes.server", "9z8y.cn-wulanchabu.extreme.nas.aliyuncs.com"
    )
    assert outcome(old, moved) == {"train-shared-pv": ("replace", ("spec",))}
    grown = changed(old, "train-shared-pv", "spec.capacity.storage", "2048Gi")
    assert outcome(old, grown) == {"train-shared-pv": ("update", ())}
    renamed = changed(old, "train-shared-pv", "metadata.name", "train-shared-2")
    assert outcome(old, renamed) == {"train-shared-pv": ("replace", ("metadata",))}


def test_claim_and_deployment_replace_only_on_their_immutable_fields() -> None:
    old = base_plan()
    assert (
        outcome(old, changed(old, "train-shared-pvc", "spec.storageClassName", "alicloud-nas"))["train-shared-pvc"][0]
        == "replace"
    )
    image = changed(
        old,
        "training-operator",
        "spec.template",
        {"spec": {"containers": [{"image": "kubeflow/training-operator:v1-new"}]}},
    )
    assert outcome(old, image) == {"training-operator": ("update", ())}
    selector = changed(old, "training-operator", "spec.selector", {"matchLabels": {"app": "other"}})
    assert outcome(old, selector) == {"training-operator": ("replace", ("spec",))}


def test_a_nested_replacing_input_counts_whole_without_values_and_by_part_with_them() -> None:
    table = replacement_table()
    old = {"capacity": {"storage": "1Gi"}, "csi": {"volumeHandle": "a"}}
    assert table.forces(PV, "spec") is True  # no values: the safe side
    assert table.forces(PV, "spec", (old, {**old, "capacity": {"storage": "2Gi"}})) is False
    assert table.forces(PV, "spec", (old, {**old, "csi": {"volumeHandle": "b"}})) is True
    assert table.forces(PV, "spec", (None, old)) is True  # a source that appears replaces too
    assert table.forces("cs.NodePool", "instanceTypes", (["a"], ["b"])) is False
