"""ACK guardrails (AIT033–AIT036) and the node rules extended to cs.NodePool (AIT001, AIT003, AIT008).

Synthetic plans with the engine input names of pulumi-alicloud 4.0.0 cs.ManagedKubernetes / cs.NodePool and
pulumi-kubernetes core/v1: a secure kubernetes plan has no finding of these rules, and each case that breaks one
adds exactly the finding (rule, resource, message) it guards.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from blueprints.review import guardrails
from blueprints.review.plan import Plan, PlannedResource

OWNED = (
    "AIT033",
    "AIT034",
    "AIT035",
    "AIT036",
    "AIT037",
    "AIT038",
)  # the rules whose violating cases live here (tests/test_guardrails.py)
RULES = ("AIT001", "AIT003", "AIT008", "AIT014", "AIT033", "AIT034", "AIT035", "AIT036", "AIT037", "AIT038")
REPAIR = {
    "enable": True,
    "autoRepair": True,
    "autoRepairPolicy": {"restartNode": True},
    "autoUpgrade": False,
    "maxUnavailable": 1,
}
REPAIR_ADDONS = [{"name": "ack-node-problem-detector"}, {"name": "node-lifecycle-controller"}]
ROLE = "train-gpu-node"
ECS_TRUST = json.dumps(
    {
        "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": ["ecs.aliyuncs.com"]}}],
        "Version": "1",
    }
)


def alicloud(short_type: str, name: str, inputs: dict[str, Any]) -> PlannedResource:
    module, kind = short_type.split(".")
    return PlannedResource(f"alicloud:{module}/{kind[0].lower() + kind[1:]}:{kind}", name, None, True, inputs)


def cluster(**inputs: Any) -> PlannedResource:
    base = {
        "slbInternetEnabled": False,
        "auditLogConfig": {"enabled": True, "slsProjectName": "train-audit"},
        "clusterSpec": "ack.pro.small",
        "addons": [{"name": "flannel"}, *REPAIR_ADDONS],
    }
    return alicloud("cs.ManagedKubernetes", "train-cluster", {**base, **inputs})


def pool(**inputs: Any) -> PlannedResource:
    base = {
        "clusterId": "${train-cluster.id}",
        "instanceTypes": ["ecs.gn7i-c32g1.32xlarge"],
        "ramRoleName": ROLE,
        "systemDiskEncrypted": True,
        "systemDiskSize": 120,
        "internetMaxBandwidthOut": 0,
        "instanceMetadataOptions": {"httpTokens": "required"},
        "dataDisks": [{"category": "cloud_essd", "size": 500, "encrypted": True, "name": "aitrain-scratch"}],
        "scalingConfig": {"enable": True, "minSize": 0, "maxSize": 4},
        "management": REPAIR,
    }
    return alicloud("cs.NodePool", "train-gpu", {**base, **inputs})


def volume(name: str = "train-shared", **spec: Any) -> PlannedResource:
    base = {
        "capacity": {"storage": "1024Gi"},
        "accessModes": ["ReadWriteMany"],
        "persistentVolumeReclaimPolicy": "Retain",
    }
    return PlannedResource(
        "kubernetes:core/v1:PersistentVolume", name, None, True, {"metadata": {"name": name}, "spec": {**base, **spec}}
    )


def identity(
    trust: str = ECS_TRUST, attachments: tuple[tuple[str, str], ...] = (("train-bucket", "Custom"),)
) -> list[PlannedResource]:
    out = [
        alicloud("ram.Role", "train-gpu-role", {"roleName": ROLE, "assumeRolePolicyDocument": trust}),
        alicloud("ram.Policy", "train-bucket-policy", {"policyName": "train-bucket", "policyDocument": "{}"}),
    ]
    for index, (policy, kind) in enumerate(attachments):
        out.append(
            alicloud(
                "ram.RolePolicyAttachment",
                f"train-attach-{index}",
                {"roleName": ROLE, "policyName": policy, "policyType": kind},
            )
        )
    return out


def plan(*resources: PlannedResource, admin_cidr: str | None = None) -> Plan:
    summary = {"admin_cidr": admin_cidr} if admin_cidr else {}
    return Plan("kubernetes-pool", "cn-wulanchabu", "train", summary, (), tuple(resources))


def secure(**replace: PlannedResource) -> list[PlannedResource]:
    parts = {"cluster": cluster(), "pool": pool(), "volume": volume()}
    parts.update(replace)
    return [parts["cluster"], parts["pool"], parts["volume"], *identity()]


def findings(p: Plan) -> list[tuple[str, str, str]]:
    return [(f.rule, f.resource, f.message) for f in guardrails.check(p) if f.rule in RULES]


def test_the_secure_kubernetes_plan_has_no_finding_of_these_rules() -> None:
    assert findings(plan(*secure())) == []


def test_the_rules_are_registered_as_errors_with_rationale_and_fix() -> None:
    by_id = {rule.id: rule for rule in guardrails.RULES}
    for rule_id in ("AIT033", "AIT034", "AIT035", "AIT036"):
        assert by_id[rule_id].level == "error" and by_id[rule_id].rationale and by_id[rule_id].fix
    # A pool that does not repair its nodes loses runs, not data: a warning, citing checkov's rule.
    assert by_id["AIT037"].level == "warning" and "CKV_ALI_31" in by_id["AIT037"].rationale


def test_repair_addons_installed_as_their_own_resources_count() -> None:
    addons = [
        alicloud("cs.KubernetesAddon", f"train-{a['name']}", {"clusterId": "${train-cluster.id}", "name": a["name"]})
        for a in REPAIR_ADDONS
    ]
    assert findings(plan(*secure(cluster=cluster(addons=[{"name": "flannel"}])), *addons)) == []
    assert [f[0] for f in findings(plan(*secure(cluster=cluster(addons=[{"name": "flannel"}])), addons[0]))] == [
        "AIT037"
    ]


def test_a_pool_without_repair_is_one_finding_even_in_a_cluster_without_the_repair_addons() -> None:
    """The missing add-ons matter only once repair is on: an unmanaged pool is told to turn it on, once."""
    bare = secure(cluster=cluster(addons=[{"name": "flannel"}]), pool=pool(management=None))
    assert [(rule, name, message.split(":")[0]) for rule, name, message in findings(plan(*bare))] == [
        ("AIT037", "train-gpu", "management is not set")
    ]


@pytest.mark.parametrize(
    ("resources", "rule", "name", "words"),
    [
        # AIT033: the API default is an internet SLB; absent counts as public.
        (
            secure(cluster=cluster(slbInternetEnabled=None)),
            "AIT033",
            "train-cluster",
            "slbInternetEnabled=None (the API default is true)",
        ),
        (secure(cluster=cluster(slbInternetEnabled=True)), "AIT033", "train-cluster", "slbInternetEnabled=True"),
        (
            secure(
                cluster=cluster(
                    controlPlaneEndpointsConfig={
                        "loadBalancersConfigs": [{"endpointType": "private"}, {"endpointType": "public"}]
                    }
                )
            ),
            "AIT033",
            "train-cluster",
            "loadBalancersConfigs[1].endpointType is 'public'",
        ),
        # AIT034
        (secure(cluster=cluster(auditLogConfig=None)), "AIT034", "train-cluster", "auditLogConfig.enabled is not true"),
        (
            secure(cluster=cluster(auditLogConfig={"enabled": False})),
            "AIT034",
            "train-cluster",
            "auditLogConfig.enabled is not true",
        ),
        # AIT035
        (secure(pool=pool(ramRoleName=None)), "AIT035", "train-gpu", "ramRoleName is not set"),
        (
            secure(pool=pool(ramRoleName="KubernetesWorkerRole-abc")),
            "AIT035",
            "train-gpu",
            "'KubernetesWorkerRole-abc' is not a ram.Role created in this plan",
        ),
        # AIT036
        (
            secure(volume=volume(persistentVolumeReclaimPolicy="Delete")),
            "AIT036",
            "train-shared",
            "persistentVolumeReclaimPolicy is 'Delete', not 'Retain'",
        ),
        (
            secure(volume=volume(persistentVolumeReclaimPolicy=None)),
            "AIT036",
            "train-shared",
            "persistentVolumeReclaimPolicy is None",
        ),
        # AIT037: auto repair (CKV_ALI_31), which needs a managed pool and the cluster's two repair add-ons.
        (
            secure(pool=pool(management=None)),
            "AIT037",
            "train-gpu",
            "management is not set: a node whose kubelet, runtime or GPU fails stays in the pool",
        ),
        (
            secure(pool=pool(management={**REPAIR, "autoRepair": False})),
            "AIT037",
            "train-gpu",
            "management is enable=True, autoRepair=False",
        ),
        (
            secure(pool=pool(management={**REPAIR, "enable": False})),
            "AIT037",
            "train-gpu",
            "management is enable=False, autoRepair=True",
        ),
        (
            secure(cluster=cluster(addons=[{"name": "flannel"}, {"name": "ack-node-problem-detector"}])),
            "AIT037",
            "train-gpu",
            "auto repair is on but cluster train-cluster does not "
            "install node-lifecycle-controller, which repair needs",
        ),
        # AIT001 / AIT003 / AIT008 / AIT014 on cs.NodePool
        (
            secure(pool=pool(internetMaxBandwidthOut=10)),
            "AIT001",
            "train-gpu",
            "internetMaxBandwidthOut=10 gives training nodes a public IP",
        ),
        (
            secure(pool=pool(scalingConfig={"enable": True, "minSize": 0, "maxSize": 4, "isBondEip": True})),
            "AIT001",
            "train-gpu",
            "scalingConfig.isBondEip=true",
        ),
        (secure(pool=pool(systemDiskEncrypted=False)), "AIT003", "train-gpu", "node pool system disk is not encrypted"),
        (
            secure(pool=pool(dataDisks=[{"category": "cloud_essd", "size": 500, "name": "aitrain-scratch"}])),
            "AIT003",
            "train-gpu",
            "data disk 0 (cloud_essd, 500 GiB) is not encrypted",
        ),
        (
            secure(pool=pool(instanceMetadataOptions=None)),
            "AIT008",
            "train-gpu",
            "instanceMetadataOptions.httpTokens=required",
        ),
        (
            secure(pool=pool(instanceMetadataOptions={"httpTokens": "optional"})),
            "AIT008",
            "train-gpu",
            "instanceMetadataOptions.httpTokens=required",
        ),
        (
            secure(
                pool=pool(dataDisks=[{"category": "cloud_essd", "size": 500, "encrypted": True, "name": "datasets"}])
            ),
            "AIT014",
            "train-gpu",
            "inline data disk 0 is named 'datasets'",
        ),
    ],
)
def test_each_break_adds_exactly_its_finding(
    resources: list[PlannedResource], rule: str, name: str, words: str
) -> None:
    found = findings(plan(*resources))
    assert len(found) == 1, found
    assert found[0][:2] == (rule, name)
    assert words in found[0][2]


def test_an_admin_range_does_not_excuse_the_public_api_server() -> None:
    """Nothing applies network.admin_cidr to ACK's own CLB: AIT033 stays
    an error that says why, and only a reasoned skip silences it."""
    resources = secure(cluster=cluster(slbInternetEnabled=True))
    ((rule, name, message),) = findings(plan(*resources, admin_cidr="203.0.113.0/24"))
    assert (rule, name) == ("AIT033", "train-cluster")
    assert "network.admin_cidr 203.0.113.0/24 is not applied to it" in message
    assert "has no access-control argument" in message and "created by ACK, not by this stack" in message
    assert "guardrails.skip {rule: AIT033, reason: …}" in message
    by_id = {rule.id: rule for rule in guardrails.RULES}
    assert by_id["AIT033"].level == "error"
    skipped = [
        f.rule
        for f in guardrails.check(
            plan(*resources, admin_cidr="203.0.113.0/24"),
            [guardrails.Skip("AIT033", "ACL set by hand to 203.0.113.0/24")],
        )
    ]
    assert "AIT033" not in skipped


def test_the_node_role_must_trust_only_ecs() -> None:
    wide = json.dumps(
        {"Statement": [{"Effect": "Allow", "Principal": {"Service": ["ecs.aliyuncs.com", "cs.aliyuncs.com"]}}]}
    )
    resources = [cluster(), pool(), volume(), *identity(trust=wide)]
    found = [f for f in findings(plan(*resources)) if f[0] == "AIT035"]
    assert len(found) == 1 and found[0][1] == "train-gpu" and "not only the ECS service" in found[0][2]
    assert [f[0] for f in findings(plan(*[cluster(), pool(), volume(), *identity(trust="not json")]))] == ["AIT035"]


def test_the_node_role_holds_only_the_plans_own_policies() -> None:
    resources = [
        cluster(),
        pool(),
        volume(),
        *identity(attachments=(("train-bucket", "Custom"), ("AliyunOSSFullAccess", "System"))),
    ]
    found = findings(plan(*resources))
    assert found == [
        (
            "AIT035",
            "train-gpu",
            "node role 'train-gpu-node' holds System policy 'AliyunOSSFullAccess' (train-attach-1), not one of the "
            "plan's own policies (train-bucket)",
        )
    ]


def test_a_storage_class_that_deletes_its_volumes_is_an_error() -> None:
    deleting = PlannedResource(
        "kubernetes:storage.k8s.io/v1:StorageClass",
        "train-nas",
        None,
        True,
        {"provisioner": "nasplugin.csi.alibabacloud.com"},
    )
    retaining = dataclasses.replace(
        deleting, name="train-nas-retain", inputs={**deleting.inputs, "reclaimPolicy": "Retain"}
    )
    found = findings(plan(*secure(), deleting, retaining))
    assert found == [
        (
            "AIT036",
            "train-nas",
            "reclaimPolicy is None (default Delete), not 'Retain': "
            "the volumes it provisions are deleted with their claims",
        )
    ]


def test_kubernetes_objects_do_not_trip_the_storage_rules() -> None:
    """AIT004/AIT017 read only the alicloud stateful types: a PV, PVC or namespace without protect is not reported."""
    claim = PlannedResource(
        "kubernetes:core/v1:PersistentVolumeClaim",
        "train-shared-claim",
        None,
        True,
        {"spec": {"volumeName": "train-shared"}},
    )
    namespace = PlannedResource("kubernetes:core/v1:Namespace", "train-ns", None, True, {"metadata": {"name": "train"}})
    found = [f for f in guardrails.check(plan(*secure(), claim, namespace)) if f.rule in ("AIT004", "AIT017")]
    assert found == []


def test_the_policy_pack_reports_the_same_kubernetes_findings_with_or_without_admin_cidr() -> None:
    """The new rules run in the Pulumi policy pack too: same (rule, resource, message) as the offline plan."""
    from test_policy_pack import engine_records, run_pack

    from blueprints.policy.config import pack_config

    broken = plan(
        *secure(
            cluster=cluster(slbInternetEnabled=True, auditLogConfig=None),
            pool=pool(ramRoleName=None),
            volume=volume(persistentVolumeReclaimPolicy="Delete"),
        )
    )
    expected = sorted(findings(broken))
    assert [rule for rule, _, _ in expected] == ["AIT033", "AIT034", "AIT035", "AIT036"]
    assert sorted(f for f in run_pack(engine_records(broken)) if f[0] in RULES) == expected
    # The profile's admin range in the pack's config does not silence AIT033 there either (nothing applies it).
    opened = plan(*broken.resources, admin_cidr="203.0.113.0/24")
    assert sorted(f for f in run_pack(engine_records(opened), pack_config(opened)) if f[0] == "AIT033") == [
        f for f in sorted(findings(opened)) if f[0] == "AIT033"
    ]
    assert "network.admin_cidr 203.0.113.0/24 is not applied" in [f for f in findings(opened) if f[0] == "AIT033"][0][2]


def test_node_pools_count_toward_vswitch_capacity() -> None:
    """AIT030: a /28 has 12 free addresses; the GPU pool's max
    plus the system pool's desiredSize (a string) + 8 headroom."""
    switch = alicloud("vpc.Switch", "train-vsw", {"cidrBlock": "10.0.0.0/28"})
    system = alicloud("cs.NodePool", "train-system", {"desiredSize": "2", "vswitchIds": ["${train-vsw.id}"]})

    def ait030(max_size: int) -> list[tuple[str, str, str]]:
        gpu = pool(vswitchIds=["${train-vsw.id}"], scalingConfig={"enable": True, "minSize": 0, "maxSize": max_size})
        return [
            (f.rule, f.resource, f.message) for f in guardrails.check(plan(switch, gpu, system)) if f.rule == "AIT030"
        ]

    assert ait030(2) == []  # 2 + 2 + 8 = 12 fits
    (found,) = ait030(3)
    assert found[:2] == ("AIT030", "train-vsw")
    assert "have 12 free addresses (4 reserved per vSwitch), below 5 nodes + 8 headroom = 13" in found[2]
    assert "train-gpu also uses one vSwitch only" in found[2]


def test_an_operator_image_by_tag_is_a_warning_and_a_digest_holds() -> None:
    """AIT038: a mutable tag on a cluster Deployment is flagged; the same image pinned by digest is not."""

    def deployment(image: str) -> PlannedResource:
        spec = {"template": {"spec": {"containers": [{"name": "training-operator", "image": image}]}}}
        return PlannedResource("kubernetes:apps/v1:Deployment", "train-operator", None, True, {"spec": spec})

    ((rule, name, message),) = findings(plan(*secure(), deployment("kubeflow/training-operator:v1-5170a36")))
    assert (rule, name) == ("AIT038", "train-operator")
    assert "runs image 'kubeflow/training-operator:v1-5170a36', a mutable tag" in message
    assert {r.id: r.level for r in guardrails.RULES}["AIT038"] == "warning"
    pinned = "registry.cn-shanghai.aliyuncs.com/team/training-operator@sha256:" + "0" * 64
    assert findings(plan(*secure(), deployment(pinned))) == []
    # A tag that merely looks like a digest prefix is still a tag.
    assert [f[0] for f in findings(plan(*secure(), deployment("team/op:sha256-" + "0" * 64)))] == ["AIT038"]
