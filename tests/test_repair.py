"""Repair paths in the plan: ACK auto repair with the node problem detector, the ESS pool's health check and SCALE_IN
lifecycle hook, and every blueprint's ``repair`` stack output."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from blueprints.components.kubernetes_cluster import REPAIR_MAX_UNAVAILABLE
from blueprints.components.pool import LEAVE_COMMAND, NOTIFICATION_METADATA_MAX
from blueprints.core.errors import UserInputError
from blueprints.testing import offline_plan

TODAY = dt.date(2026, 12, 1)
POOL = "autoscaling-training-pool"


@pytest.fixture(scope="module")
def k8s_plan():
    return offline_plan("kubernetes-training", today=TODAY)


def one(plan, name):
    (resource,) = [r for r in plan.resources if r.name == name]
    return resource


def test_both_ack_pools_repair_automatically_one_node_at_a_time(k8s_plan):
    for pool in ("kubernetes-training-k8s-gpu-pool", "kubernetes-training-k8s-system-pool"):
        management = one(k8s_plan, pool).inputs["management"]
        assert management["enable"] is True and management["autoRepair"] is True
        assert management["autoRepairPolicy"] == {"restartNode": True}
        # Nothing else may drain a node on its own: no auto upgrade, no CVE fixes.
        assert management["autoUpgrade"] is False and management["autoVulFix"] is False
        assert management["maxUnavailable"] == REPAIR_MAX_UNAVAILABLE == 1


@pytest.mark.parametrize("instance_type", [None, "ecs.gn7e-c16g1.32xlarge"])  # the preset's eRDMA type, and a TCP one
def test_the_cluster_installs_what_auto_repair_needs(k8s_plan, instance_type):
    plan = k8s_plan
    if instance_type is not None:
        plan = offline_plan("kubernetes-training", overrides={"compute.instance_type": instance_type}, today=TODAY)
    addons = {a["name"] for a in one(plan, "kubernetes-training-k8s-cluster").inputs["addons"]}
    assert {"ack-node-problem-detector", "node-lifecycle-controller"} <= addons


def test_the_plan_says_auto_repair_drains_and_restarts_a_node_mid_job(k8s_plan):
    (note,) = [n for n in k8s_plan.notes if n.startswith("Auto repair is on for both node pools")]
    assert "cordons, drains and restarts the node" in note and "evicts the training pods" in note
    assert "never replaces the instance" in note and "one node at a time" in note
    repair = k8s_plan.outputs["repair"]
    assert repair["auto_repair"] is True and repair["restart_node"] is True and repair["max_unavailable"] == 1
    assert repair["command"] is None and "drained and restarted, never replaced" in repair["mechanism"]


def test_the_pool_replaces_unhealthy_instances_through_the_ecs_health_check(autoscaling_plan):
    group = one(autoscaling_plan, f"{POOL}-group")
    assert group.inputs["healthCheckTypes"] == ["ECS"]
    assert "spotInstanceRemedy" not in group.inputs  # pay-as-you-go preset: nothing to remedy


def test_scale_in_waits_for_the_checkpoint_in_a_lifecycle_hook(autoscaling_plan):
    hook = one(autoscaling_plan, f"{POOL}-leave")
    inputs = hook.inputs
    assert hook.type == "alicloud:ess/lifecycleHook:LifecycleHook" and hook.parent == POOL
    assert inputs["lifecycleTransition"] == "SCALE_IN"
    assert inputs["heartbeatTimeout"] == 600 and inputs["defaultResult"] == "CONTINUE"
    assert inputs["scalingGroupId"] == f"${{{POOL}-group.id}}"
    assert inputs["notificationArn"] == "acs:ess:cn-shanghai:${caller.accountId}:oos/ACS-ESS-LifeCycleRunCommand"
    metadata = json.loads(inputs["notificationMetadata"])
    # The command ends before the hook does, so the node is held until the job has exited.
    assert metadata == {"commandContent": LEAVE_COMMAND, "timeout": 540}
    assert len(inputs["notificationMetadata"]) <= NOTIFICATION_METADATA_MAX
    assert hook.depends_on == (f"{POOL}-template",)


def test_the_grace_period_and_spot_remedy_follow_the_profile():
    plan = offline_plan(
        "autoscaling-training",
        overrides={"compute.checkpoint_grace_seconds": 1200, "cost.spot": True},
        today=TODAY,
    )
    hook = one(plan, f"{POOL}-leave").inputs
    assert hook["heartbeatTimeout"] == 1200 and json.loads(hook["notificationMetadata"])["timeout"] == 1140
    assert one(plan, f"{POOL}-group").inputs["spotInstanceRemedy"] is True
    assert plan.outputs["repair"]["lifecycle_hook"]["heartbeat_timeout_seconds"] == 1200
    assert plan.outputs["repair"]["spot_instance_remedy"] is True


@pytest.mark.parametrize("seconds", [89, 21601])
def test_a_grace_period_outside_what_ess_allows_is_refused(seconds):
    with pytest.raises(UserInputError) as error:
        offline_plan("autoscaling-training", overrides={"compute.checkpoint_grace_seconds": seconds}, today=TODAY)
    assert "checkpoint_grace_seconds" in str(error.value)


def test_the_pool_note_names_the_prerequisite_and_what_is_unverified(autoscaling_plan):
    (note,) = [n for n in autoscaling_plan.notes if n.startswith("Scale-in waits up to 600 s")]
    assert "OOSServiceRole" in note and "UNVERIFIED" in note and "SetInstanceHealth" in note
    assert autoscaling_plan.outputs["repair"]["command"].startswith("aliyun ess SetInstanceHealth")


def test_every_preset_exports_its_repair_path(medical_plan, autoscaling_plan, k8s_plan):
    for plan in (medical_plan, autoscaling_plan, k8s_plan):
        repair = plan.outputs["repair"]
        assert isinstance(repair["mechanism"], str) and repair["mechanism"]
        assert "command" in repair
    # The preset's type has no eRDMA: its nodes are instance sets, so no replace-node; ECS's own repair instead.
    assert medical_plan.outputs["repair"]["replace_node"] is False
    assert medical_plan.outputs["repair"]["command"].startswith("aliyun ecs RedeployInstance")
