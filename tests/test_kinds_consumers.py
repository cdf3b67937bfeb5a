"""What the consumers do with a kind: every pricer prices a plausible resource, the offline mocks answer its computed
outputs, and a type without a kind is never skipped: an unpriced cost line and an AIT039 error in the plan, the
engine preview and the test kit (the policy pack: tests/test_policy_pack.py, case unknown-kind)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from types import SimpleNamespace

import pytest

from blueprints.catalog import load_catalog
from blueprints.kinds import KINDS, Priced, kind_of
from blueprints.review import guardrails
from blueprints.review.costing import price_plan
from blueprints.review.guardrails.known import known_kinds
from blueprints.review.plan import Plan, PlannedResource

UNKNOWN_TYPE = "alicloud:ehpc/jobTemplate:JobTemplate"

# ---- every pricer runs on a plausible resource ----

TEMPLATE = (
    "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate",
    "tpl",
    {"instanceType": "ecs.gn7i-c8g1.2xlarge", "systemDisk": {"size": 100}},
)
GROUP = ("alicloud:ess/scalingGroup:ScalingGroup", "group", {"minSize": 0, "maxSize": 4})
# Per priced kind: the resource (token, name, inputs) and the resources it names; its lines are on ``owner``.
SAMPLES: dict[str, tuple[tuple[str, str, dict], tuple[tuple[str, str, dict], ...], str]] = {
    "alicloud:vpc/natGateway:NatGateway": (
        ("alicloud:vpc/natGateway:NatGateway", "nat", {"natType": "Enhanced"}),
        (),
        "nat",
    ),
    "alicloud:ecs/eipAddress:EipAddress": (
        ("alicloud:ecs/eipAddress:EipAddress", "eip", {"bandwidth": "100"}),
        (
            (
                "alicloud:ecs/eipAssociation:EipAssociation",
                "assoc",
                {"allocationId": "${eip.id}", "instanceType": "Nat"},
            ),
        ),
        "eip",
    ),
    "alicloud:ecs/ecsInstanceSet:EcsInstanceSet": (
        (
            "alicloud:ecs/ecsInstanceSet:EcsInstanceSet",
            "set",
            {"amount": 2, "launchTemplateId": "${tpl.id}", "instanceType": "ecs.gn7i-c8g1.2xlarge"},
        ),
        (TEMPLATE,),
        "set",
    ),
    "alicloud:ecs/instance:Instance": (
        ("alicloud:ecs/instance:Instance", "node", {"instanceType": "ecs.g7.large", "systemDiskSize": 40}),
        (),
        "node",
    ),
    "alicloud:ecs/capacityReservation:CapacityReservation": (
        (
            "alicloud:ecs/capacityReservation:CapacityReservation",
            "reservation",
            {"instanceType": "ecs.g7.large", "instanceAmount": 2, "zoneIds": ["cn-shanghai-b"]},
        ),
        (
            (
                "alicloud:ecs/instance:Instance",
                "node",
                {"instanceType": "ecs.g7.large", "privatePoolOptionsId": "${reservation.id}"},
            ),
        ),
        "reservation",
    ),
    "alicloud:ecs/elasticityAssurance:ElasticityAssurance": (
        (
            "alicloud:ecs/elasticityAssurance:ElasticityAssurance",
            "assurance",
            {"instanceType": "ecs.g7.large", "instanceAmount": 2, "period": 1, "periodUnit": "Month"},
        ),
        (),
        "assurance",
    ),
    "alicloud:ecs/ecsDisk:EcsDisk": (
        ("alicloud:ecs/ecsDisk:EcsDisk", "disk", {"category": "cloud_essd", "size": 500, "performanceLevel": "PL1"}),
        (),
        "disk",
    ),
    "alicloud:ess/scalingGroup:ScalingGroup": (
        (
            "alicloud:ess/scalingGroup:ScalingGroup",
            "group",
            {"minSize": 1, "maxSize": 4, "launchTemplateId": "${tpl.id}"},
        ),
        (TEMPLATE,),
        "group",
    ),
    "alicloud:ess/scalingConfiguration:ScalingConfiguration": (
        (
            "alicloud:ess/scalingConfiguration:ScalingConfiguration",
            "config",
            {"scalingGroupId": "${group.id}", "instanceType": "ecs.g7.large"},
        ),
        (GROUP,),
        "group",
    ),
    "alicloud:cs/managedKubernetes:ManagedKubernetes": (
        ("alicloud:cs/managedKubernetes:ManagedKubernetes", "cluster", {"clusterSpec": "ack.pro.small"}),
        (),
        "cluster",
    ),
    "alicloud:cs/nodePool:NodePool": (
        (
            "alicloud:cs/nodePool:NodePool",
            "pool",
            {"instanceTypes": ["ecs.g7.xlarge"], "desiredSize": 2, "systemDiskSize": 120},
        ),
        (),
        "pool",
    ),
    "alicloud:nas/fileSystem:FileSystem": (
        (
            "alicloud:nas/fileSystem:FileSystem",
            "fs",
            {"fileSystemType": "extreme", "storageType": "standard", "capacity": 100},
        ),
        (),
        "fs",
    ),
    "alicloud:oss/bucket:Bucket": (("alicloud:oss/bucket:Bucket", "bucket", {"bucket": "data"}), (), "bucket"),
    "alicloud:eflo/node:Node": (
        ("alicloud:eflo/node:Node", "lingjun", {"machineType": "efg1.nvga8n", "paymentType": "PayAsYouGo"}),
        (),
        "lingjun",
    ),
    "alicloud:eflo/hyperNode:HyperNode": (
        (
            "alicloud:eflo/hyperNode:HyperNode",
            "hyper",
            {"machineType": "efg3.GN9A.ch72", "paymentType": "Subscription"},
        ),
        (),
        "hyper",
    ),
    "kubernetes:core/v1:Service": (
        ("kubernetes:core/v1:Service", "lb", {"spec": {"type": "LoadBalancer", "ports": [{"port": 443}]}}),
        (),
        "lb",
    ),
    "kubernetes:core/v1:PersistentVolumeClaim": (
        (
            "kubernetes:core/v1:PersistentVolumeClaim",
            "claim",
            {"spec": {"storageClassName": "alicloud-disk-essd", "resources": {"requests": {"storage": "100Gi"}}}},
        ),
        (),
        "claim",
    ),
}


def test_every_priced_kind_has_a_sample():
    assert set(SAMPLES) == {token for token, kind in KINDS.items() if isinstance(kind.pricing, Priced)}


@pytest.mark.parametrize("token", sorted(SAMPLES))
def test_every_pricer_prices_a_plausible_resource(token):
    (own_token, name, inputs), others, owner = SAMPLES[token]
    resources = [PlannedResource(t, n, None, True, i) for t, n, i in ((own_token, name, inputs), *others)]
    costs = price_plan(resources, load_catalog(), "cn-shanghai")
    lines = [line for line in costs["lines"] if line["resource"] == owner]
    assert lines, f"{token}: no cost line on {owner}"
    assert all(line["type"] == kind_of(next(r.type for r in resources if r.name == owner)).short_type for line in lines)


def test_a_type_without_a_kind_is_an_unpriced_line_never_a_silent_skip():
    costs = price_plan(
        [PlannedResource(UNKNOWN_TYPE, "hpc", None, True, {"commandLine": "run.sh"})], load_catalog(), "cn-shanghai"
    )
    (line,) = [line for line in costs["lines"] if line["resource"] == "hpc"]
    assert line["item"] == f"{UNKNOWN_TYPE}: no resource kind, not priced" and line["cny_per_month"] is None
    assert line["source"] == "no resource kind: add one to blueprints/kinds/ehpc.py"
    assert (
        costs["totals"]["complete"] is False
        and f"hpc: {UNKNOWN_TYPE}: no resource kind, not priced" in costs["totals"]["unknown"]
    )


# ---- the offline mocks answer a kind's computed outputs ----


def test_the_mocks_answer_computed_and_counted_outputs():
    from blueprints.engine.preview import OfflineMocks

    mocks = OfflineMocks(["cn-shanghai-a"], None)
    for token, kind in KINDS.items():
        inputs = {count: 3 for _, count in kind.counted_outputs}
        _, state = mocks.new_resource(SimpleNamespace(typ=token, name="r", inputs=inputs))
        for attribute in kind.computed_outputs:
            assert state[attribute] == f"${{r.{attribute}}}", token
        for attribute, _ in kind.counted_outputs:
            assert state[attribute] == [f"${{r.{attribute}[{i}]}}" for i in range(3)], token
    _, state = mocks.new_resource(SimpleNamespace(typ=UNKNOWN_TYPE, name="x", inputs={"zone": "a"}))
    assert state == {"zone": "a"}


# ---- a type without a kind fails closed (AIT039) ----

UNKNOWN_FINDING = (
    f"{UNKNOWN_TYPE} has no resource kind: aitrain cannot price, count, diff, export or guard a type it has no record"
    f" of; add Kind(token='{UNKNOWN_TYPE}', …) to blueprints/kinds/ehpc.py (a new service: create the module; the"
    " registry finds it)"
)


def test_the_unknown_type_finding_names_the_type_and_its_file():
    job = "kubernetes:batch/v1:Job"
    resources = [
        PlannedResource(UNKNOWN_TYPE, "n0", None, True, {}),
        PlannedResource("aitrain:x:Component", "component", None, False, {}),
        PlannedResource(UNKNOWN_TYPE, "n1", None, True, {}),
        PlannedResource(job, "train", None, True, {}),
        PlannedResource(UNKNOWN_TYPE, "n2", None, True, {}),
    ]
    plan = Plan("component", "cn-shanghai", "t", {}, (), tuple(resources))
    assert list(known_kinds(plan)) == [
        ("n0", UNKNOWN_FINDING.replace("has no resource kind:", "has no resource kind (and 2 more of its resources):")),
        (
            "train",
            f"{job} has no resource kind: aitrain cannot price, count, diff, export or guard a type it has no record"
            f" of; add Kind(token='{job}', …) to blueprints/kinds/kubernetes.py",
        ),
    ]
    assert {r.id: r.level for r in guardrails.RULES}["AIT039"] == "error"


def test_a_plan_with_a_type_without_a_kind_shows_the_error():
    """The real engine path: a program with an alicloud.ehpc.JobTemplate (a type without a kind), previewed as
    `aitrain plan` previews a stack."""
    import pulumi_alicloud as alicloud

    from blueprints.engine.preview import preview
    from blueprints.profile.stackconfig import PRESET_KEY

    def program():
        alicloud.ehpc.JobTemplate("hpc-job", command_line="run.sh", job_template_name="hpc-job")

    plan = preview(
        {PRESET_KEY: "medical-imaging"}, catalog=load_catalog(), today=dt.date(2026, 11, 30), program=program
    )
    assert {"rule": "AIT039", "level": "error", "resource": "hpc-job", "message": UNKNOWN_FINDING} in plan.findings
    assert plan.costs["totals"]["complete"] is False


def test_the_test_kit_fails_on_an_unknown_type():
    import pulumi_alicloud as alicloud

    from blueprints.testing import assert_guardrails, offline_mocks

    with offline_mocks() as stack:
        alicloud.ehpc.JobTemplate("hpc-job", command_line="run.sh", job_template_name="hpc-job")
    with pytest.raises(
        AssertionError, match=r"error: \[AIT039\] hpc-job: alicloud:ehpc/jobTemplate:JobTemplate has no resource kind"
    ):
        assert_guardrails(stack.resources)


def test_a_preset_holds_no_unknown_type_and_a_retyped_resource_fires(medical_plan):
    """The preset has no AIT039 finding; the same plan with a resource of a type aitrain does not know has one."""
    assert [f for f in guardrails.check(medical_plan) if f.rule == "AIT039"] == []
    retyped = dataclasses.replace(
        medical_plan,
        resources=tuple(
            dataclasses.replace(r, type=UNKNOWN_TYPE) if r.short_type == "ecs.EcsDeploymentSet" else r
            for r in medical_plan.resources
        ),
    )
    assert [(f.rule, f.level) for f in guardrails.check(retyped) if f.rule == "AIT039"] == [("AIT039", "error")]
