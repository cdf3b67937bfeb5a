"""Component tests under a recording mock: resource types, counts, parents and the inputs that keep nodes safe."""

from __future__ import annotations

import json

import pulumi
import pytest

from blueprints.components.compute import GpuCluster, GpuClusterArgs
from blueprints.components.errors import ResourceError
from blueprints.components.network import TrainingNetwork, TrainingNetworkArgs
from blueprints.components.node import NodeSpec
from blueprints.components.pool import AutoscalingGpuPool, AutoscalingGpuPoolArgs
from blueprints.components.storage import NFS_MOUNT_OPTIONS, SharedStorage, SharedStorageArgs
from blueprints.core import userdata
from blueprints.core.layout import off_hours_tasks
from blueprints.engine.preview import OfflineMocks
from blueprints.testing import record_program

ZONES = ["cn-shanghai-a", "cn-shanghai-b", "cn-shanghai-e"]


def by_type(resources, short_type):
    return [r for r in resources if r.short_type == short_type]


def node(**extra) -> NodeSpec:
    return NodeSpec(
        instance_type="ecs.gn7e-c16g1.32xlarge",
        image_id="img-test",
        security_group_id="sg-test",
        user_data="#cloud-config\n",
        system_disk_gib=200,
        system_disk_performance_level="PL1",
        **extra,
    )


def network_args(**extra) -> TrainingNetworkArgs:
    values = dict(
        region="cn-shanghai",
        vpc_cidr="10.0.0.0/16",
        region_zones=tuple(ZONES),
        storage_zone="cn-shanghai-a",
        instance_type="ecs.gn7e-c16g1.32xlarge",
        compute_zone_count=1,
    )
    values.update(extra)
    return TrainingNetworkArgs(**values)


def test_network_has_private_vpc_closed_security_group_and_nat_egress():
    resources = record_program(lambda: TrainingNetwork("net", network_args(admin_cidr="203.0.113.0/24")), zones=ZONES)
    (component,) = [r for r in resources if not r.custom]
    assert component.type == "aitrain:network:TrainingNetwork" and component.parent is None
    assert all(r.parent == "net" for r in resources if r.custom)
    (vpc,) = by_type(resources, "vpc.Network")
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    (vswitch,) = by_type(resources, "vpc.Switch")
    assert vswitch.inputs["zoneId"] == "cn-shanghai-a" and vswitch.inputs["cidrBlock"] == "10.0.0.0/20"
    rules = {r.name: r.inputs for r in by_type(resources, "ecs.SecurityGroupRule")}
    assert set(rules) == {"net-sg-intra-cluster", "net-sg-admin-ssh"}
    assert rules["net-sg-intra-cluster"]["sourceSecurityGroupId"] == "${net-sg.id}"
    assert rules["net-sg-admin-ssh"] == {
        "cidrIp": "203.0.113.0/24",
        "description": "SSH from the configured admin range only",
        "ipProtocol": "tcp",
        "nicType": "intranet",
        "policy": "accept",
        "portRange": "22/22",
        "priority": 1,
        "securityGroupId": "${net-sg.id}",
        "type": "ingress",
    }
    assert all(rule.get("cidrIp") not in ("0.0.0.0/0", "::/0") for rule in rules.values())
    (snat,) = by_type(resources, "vpc.SnatEntry")
    assert (
        snat.inputs["snatTableId"] == "${net-nat.snatTableIds}" and snat.inputs["snatIp"] == "${net-nat-eip.ipAddress}"
    )
    assert by_type(resources, "ecs.EipAssociation")[0].inputs["instanceType"] == "Nat"


def test_network_without_admin_cidr_opens_no_ssh():
    resources = record_program(lambda: TrainingNetwork("net", network_args()), zones=ZONES)
    assert [r.name for r in by_type(resources, "ecs.SecurityGroupRule")] == ["net-sg-intra-cluster"]


def test_network_places_vswitches_only_in_zones_the_cloud_offers():
    args = network_args(compute_zone_count=3, preferred_zones=("cn-shanghai-e", "cn-shanghai-z", "cn-shanghai-a"))
    resources = record_program(lambda: TrainingNetwork("net", args), zones=ZONES)
    assert [r.inputs["zoneId"] for r in by_type(resources, "vpc.Switch")] == ["cn-shanghai-a", "cn-shanghai-e"]
    assert len(by_type(resources, "vpc.SnatEntry")) == 2


def test_the_storage_zone_keeps_its_vswitch_and_cidr_whatever_compute_does():
    """Storage is bound to its zone's vSwitch: compute elsewhere adds a vSwitch, never moves that one."""
    alone = record_program(
        lambda: TrainingNetwork("net", network_args(storage_zone="cn-shanghai-b")), zones=["cn-shanghai-b"]
    )
    apart = record_program(
        lambda: TrainingNetwork("net", network_args(storage_zone="cn-shanghai-b")), zones=["cn-shanghai-e"]
    )

    def switch(resources, zone):
        return next(r for r in resources if r.short_type == "vpc.Switch" and r.inputs["zoneId"] == zone)

    assert switch(alone, "cn-shanghai-b").name == switch(apart, "cn-shanghai-b").name == "net-vsw-cn-shanghai-b"
    assert switch(alone, "cn-shanghai-b").inputs == switch(apart, "cn-shanghai-b").inputs
    assert switch(apart, "cn-shanghai-e").inputs["cidrBlock"] == "10.0.32.0/20"
    (nat,) = by_type(apart, "vpc.NatGateway")
    assert nat.inputs["vswitchId"] == "${net-vsw-cn-shanghai-b.id}"


def test_network_fails_clearly_when_no_zone_offers_the_type():
    with pytest.raises(ResourceError, match=r"^aitrain:network:TrainingNetwork \(net\): no zone among network.zones"):
        record_program(lambda: TrainingNetwork("net", network_args(preferred_zones=("cn-shanghai-z",))), zones=ZONES)


def storage_args(kind: str, tier: str, **extra) -> SharedStorageArgs:
    values = dict(
        kind=kind,
        region="cn-shanghai",
        throughput_tier=tier,
        capacity_gib=32768,
        zone_id="cn-shanghai-a",
        vpc_id="vpc-1",
        vswitch_id="vsw-1",
        client_cidrs={"cn-shanghai-a": "10.0.0.0/20"},
    )
    values.update(extra)
    return SharedStorageArgs(**values)


@pytest.mark.parametrize(
    "kind, tier, fs_type, export",
    [("extreme_nas", "advance", "extreme", ":/share"), ("nas", "Performance", "standard", ":/")],
)
def test_nas_storage_is_encrypted_protected_and_vpc_only(kind, tier, fs_type, export):
    holder = {}
    resources = record_program(
        lambda: holder.setdefault("s", SharedStorage("data", storage_args(kind, tier))), zones=ZONES
    )
    (fs,) = by_type(resources, "nas.FileSystem")
    assert fs.protect and fs.retain_on_delete and not fs.delete_before_replace
    assert fs.inputs["fileSystemType"] == fs_type and fs.inputs["encryptType"] == 1 and fs.inputs["storageType"] == tier
    (rule,) = by_type(resources, "nas.AccessRule")
    assert rule.inputs["sourceCidrIp"] == "10.0.0.0/20"
    (group,) = by_type(resources, "nas.AccessGroup")
    (mount,) = by_type(resources, "nas.MountTarget")
    assert mount.inputs["accessGroupName"] == group.inputs["accessGroupName"] == "data-vpc-only"
    assert mount.inputs["vswitchId"] == "vsw-1"
    assert holder["s"].mount_options == NFS_MOUNT_OPTIONS
    if kind == "nas":
        assert fs.inputs["recycleBin"] == {"reservedDays": 7, "status": "Enable"} and "capacity" not in fs.inputs
    else:
        assert fs.inputs["capacity"] == 32768


def test_cpfs_storage_binds_to_the_vswitch_and_has_no_access_group():
    resources = record_program(lambda: SharedStorage("data", storage_args("cpfs", "advance_200")), zones=ZONES)
    (fs,) = by_type(resources, "nas.FileSystem")
    assert fs.protect and fs.retain_on_delete
    assert fs.inputs["protocolType"] == "cpfs" and fs.inputs["vswitchId"] == "vsw-1" and fs.inputs["vpcId"] == "vpc-1"
    assert not by_type(resources, "nas.AccessGroup") and not by_type(resources, "nas.MountTarget")


def test_gpu_cluster_low_latency_encrypted_no_public_ip_batched():
    resources = record_program(
        lambda: GpuCluster("gpu", GpuClusterArgs(node=node(), nodes=250, zone_id="cn-shanghai-a", vswitch_id="vsw-1")),
        zones=ZONES,
    )
    (placement,) = by_type(resources, "ecs.EcsDeploymentSet")
    assert placement.inputs["strategy"] == "LowLatency"
    (template,) = by_type(resources, "ecs.EcsLaunchTemplate")
    assert (
        template.inputs["systemDisk"]["encrypted"] is True and template.inputs["systemDisk"]["category"] == "cloud_essd"
    )
    assert template.inputs["internetMaxBandwidthOut"] == 0 and template.inputs["httpTokens"] == "required"
    assert userdata.decode(template.inputs["userData"]) == "#cloud-config\n"
    sets = by_type(resources, "ecs.EcsInstanceSet")
    assert [s.inputs["amount"] for s in sets] == [84, 83, 83]
    for s in sets:
        assert s.parent == "gpu" and s.delete_before_replace
        assert s.inputs["internetMaxBandwidthOut"] == 0
        assert (
            s.inputs["deploymentSetId"] == "${gpu-placement.id}"
            and s.inputs["launchTemplateId"] == "${gpu-template.id}"
        )
        assert s.inputs["ramRoleName"] == "gpu-node" and s.inputs["spotStrategy"] == "NoSpot"
    (role,) = by_type(resources, "ram.Role")
    trust = json.loads(role.inputs["assumeRolePolicyDocument"])
    assert trust["Statement"][0]["Principal"] == {"Service": ["ecs.aliyuncs.com"]}


def test_spot_cluster_uses_market_price_capped_at_on_demand():
    resources = record_program(
        lambda: GpuCluster(
            "gpu", GpuClusterArgs(node=node(spot=True), nodes=2, zone_id="cn-shanghai-a", vswitch_id="vsw-1")
        ),
        zones=ZONES,
    )
    assert {r.inputs["spotStrategy"] for r in resources if "spotStrategy" in r.inputs} == {"SpotAsPriceGo"}


def pool_args(**extra) -> AutoscalingGpuPoolArgs:
    import datetime as dt

    values = dict(
        node=node(),
        min_nodes=1,
        max_nodes=8,
        working_hours_nodes=2,
        vswitch_ids=["vsw-a", "vsw-b"],
        scale_out_cpu_percent=70.0,
        scale_in_gpu_percent=40.0,
        off_hours=off_hours_tasks(
            dt.date(2026, 12, 1), "Asia/Shanghai", "09:00", "19:00", True, created=dt.date(2026, 11, 30)
        ),
    )
    values.update(extra)
    return AutoscalingGpuPoolArgs(**values)


def test_autoscaling_pool_alarms_thresholds_and_schedule():
    resources = record_program(lambda: AutoscalingGpuPool("pool", pool_args()), zones=ZONES)
    (group,) = by_type(resources, "ess.ScalingGroup")
    assert (group.inputs["minSize"], group.inputs["maxSize"], group.inputs["desiredCapacity"]) == (1, 8, 2)
    assert group.inputs["vswitchIds"] == ["vsw-a", "vsw-b"] and group.inputs["groupDeletionProtection"] is True
    assert group.ignore_changes == ("desiredCapacity",)
    assert not by_type(resources, "ess.ScalingConfiguration")
    (template,) = by_type(resources, "ecs.EcsLaunchTemplate")
    assert template.inputs["systemDisk"]["encrypted"] is True and template.inputs["internetMaxBandwidthOut"] == 0
    assert group.inputs["launchTemplateId"] == "${pool-template.id}"
    rules = {r.name: r.inputs for r in by_type(resources, "ess.ScalingRule")}
    assert rules["pool-scale-out"]["adjustmentValue"] == 1 and rules["pool-scale-in"]["adjustmentValue"] == -1
    alarms = {r.name: r.inputs for r in by_type(resources, "ess.Alarm")}
    busy, idle = alarms["pool-cpu-busy"], alarms["pool-gpu-idle"]
    assert (busy["metricName"], busy["comparisonOperator"], float(busy["threshold"])) == ("CpuUtilization", ">=", 70.0)
    assert (
        busy["alarmActions"] == ["${pool-scale-out.ari}"]
        and busy["metricType"] == "system"
        and busy["statistics"] == "Average"
    )
    assert (idle["metricName"], idle["comparisonOperator"], float(idle["threshold"])) == (
        "GpuUtilizationAgent",
        "<",
        40.0,
    )
    assert idle["alarmActions"] == ["${pool-scale-in.ari}"]
    tasks = {r.name: r.inputs for r in by_type(resources, "ess.ScheduledTask")}
    assert tasks["pool-sleep"]["desiredCapacity"] == 0 and tasks["pool-sleep"]["minValue"] == 0
    assert tasks["pool-wake"]["desiredCapacity"] == 2 and tasks["pool-wake"]["minValue"] == 1
    assert (
        tasks["pool-wake"]["launchTime"] == "2026-12-01T01:00Z" and tasks["pool-wake"]["recurrenceValue"] == "1,2,3,4,5"
    )


def test_autoscaling_pool_without_off_hours_has_no_schedule():
    resources = record_program(lambda: AutoscalingGpuPool("pool", pool_args(off_hours=None)), zones=ZONES)
    assert not by_type(resources, "ess.ScheduledTask")
    assert len(by_type(resources, "ess.Alarm")) == 2


@pytest.fixture
def offline_mocks():
    from pulumi.runtime import settings

    settings.reset_options(project="aitrain", stack="unit")
    mocks = OfflineMocks(ZONES, None)
    pulumi.runtime.set_mocks(mocks, project="aitrain", stack="unit", preview=False)
    return mocks


@pulumi.runtime.test
def test_network_outputs_resolve_under_mocks(offline_mocks):
    # Returning the Output makes pulumi.runtime.test await it, so a failing assertion fails the test.
    network = TrainingNetwork("net", network_args(compute_zone_count=2))
    assert network.zone_ids == ["cn-shanghai-a", "cn-shanghai-b"]

    def check(values):
        vpc_id, vswitch_ids, sg_id = values
        assert vpc_id == "${net-vpc.id}"
        assert vswitch_ids == ["${net-vsw-cn-shanghai-a.id}", "${net-vsw-cn-shanghai-b.id}"]
        assert sg_id == "${net-sg.id}"

    return pulumi.Output.all(network.vpc_id, pulumi.Output.all(*network.vswitch_ids), network.security_group_id).apply(
        check
    )


# --- secure defaults (issue 9) ---


def test_nat_gateway_and_its_eip_have_deletion_protection():
    resources = record_program(lambda: TrainingNetwork("net", network_args()), zones=ZONES)
    (nat,) = by_type(resources, "vpc.NatGateway")
    (eip,) = by_type(resources, "ecs.EipAddress")
    assert nat.inputs["deletionProtection"] is True and eip.inputs["deletionProtection"] is True


def test_network_without_security_options_has_no_egress_rules_and_no_flow_log():
    resources = record_program(lambda: TrainingNetwork("net", network_args()), zones=ZONES)
    assert not [r for r in by_type(resources, "ecs.SecurityGroupRule") if r.inputs["type"] == "egress"]
    assert not by_type(resources, "vpc.FlowLog")


def test_egress_allow_list_accepts_vpc_services_and_entries_then_drops_the_rest():
    from blueprints.components.network import ALIBABA_SERVICE_CIDR, EgressAllow

    allow = (EgressAllow("203.0.113.0/24", "443/443", "registry"),)
    resources = record_program(lambda: TrainingNetwork("net", network_args(egress_allow=allow)), zones=ZONES)
    egress = {r.name: r.inputs for r in by_type(resources, "ecs.SecurityGroupRule") if r.inputs["type"] == "egress"}
    assert set(egress) == {
        "net-sg-egress-vpc",
        "net-sg-egress-alibaba-services",
        "net-sg-egress-allow-0",
        "net-sg-egress-drop-all",
    }
    assert ALIBABA_SERVICE_CIDR == "100.64.0.0/10"
    assert (egress["net-sg-egress-vpc"]["cidrIp"], egress["net-sg-egress-vpc"]["policy"]) == ("10.0.0.0/16", "accept")
    assert (
        egress["net-sg-egress-alibaba-services"]["cidrIp"],
        egress["net-sg-egress-alibaba-services"]["ipProtocol"],
    ) == ("100.64.0.0/10", "all")
    entry = egress["net-sg-egress-allow-0"]
    assert (entry["cidrIp"], entry["ipProtocol"], entry["portRange"], entry["policy"], entry["description"]) == (
        "203.0.113.0/24",
        "tcp",
        "443/443",
        "accept",
        "registry",
    )
    drop = egress["net-sg-egress-drop-all"]
    assert (drop["cidrIp"], drop["ipProtocol"], drop["portRange"], drop["policy"]) == (
        "0.0.0.0/0",
        "all",
        "-1/-1",
        "drop",
    )
    # The drop comes after every accept (priority 1 is evaluated first, 100 last).
    assert drop["priority"] == 100 and all(
        r["priority"] < drop["priority"] for n, r in egress.items() if n != "net-sg-egress-drop-all"
    )


def test_flow_log_captures_all_traffic_of_the_vpc():
    resources = record_program(
        lambda: TrainingNetwork("net", network_args(flow_log=("audit-logs", "vpc_flow"))), zones=ZONES
    )
    (flow,) = by_type(resources, "vpc.FlowLog")
    assert (
        flow.inputs["resourceType"] == "VPC"
        and flow.inputs["resourceId"] == "${net-vpc.id}"
        and flow.inputs["trafficType"] == "All"
    )
    assert (flow.inputs["projectName"], flow.inputs["logStoreName"]) == ("audit-logs", "vpc_flow")


@pytest.mark.parametrize("squash", ["root_squash", "all_squash", "no_squash"])
def test_nas_access_rule_takes_the_profiles_squash(squash):
    resources = record_program(
        lambda: SharedStorage("data", storage_args("nas", "Performance", nfs_squash=squash)), zones=ZONES
    )
    (rule,) = by_type(resources, "nas.AccessRule")
    assert rule.inputs["userAccessType"] == squash


def test_nas_access_rule_squashes_root_by_default():
    resources = record_program(lambda: SharedStorage("data", storage_args("extreme_nas", "advance")), zones=ZONES)
    (rule,) = by_type(resources, "nas.AccessRule")
    assert rule.inputs["userAccessType"] == "root_squash"


def test_extreme_nas_gets_a_daily_snapshot_policy_and_other_kinds_none():
    resources = record_program(
        lambda: SharedStorage("data", storage_args("extreme_nas", "advance", snapshot_retention_days=30)), zones=ZONES
    )
    (policy,) = by_type(resources, "nas.AutoSnapshotPolicy")
    assert policy.name == "data-snapshots" and policy.parent == "data"
    assert policy.inputs == {
        "autoSnapshotPolicyName": "data-daily",
        "fileSystemType": "extreme",
        "retentionDays": 30,
        "repeatWeekdays": ["1", "2", "3", "4", "5", "6", "7"],
        "timePoints": ["2"],
    }
    nas = record_program(lambda: SharedStorage("data", storage_args("nas", "Performance")), zones=ZONES)
    assert not by_type(nas, "nas.AutoSnapshotPolicy")


def test_customer_kms_key_goes_to_extreme_nas_but_not_general_purpose_nas():
    key = "key-hzz630494463ejqjx0001"
    extreme = record_program(
        lambda: SharedStorage("data", storage_args("extreme_nas", "advance", kms_key_id=key)), zones=ZONES
    )
    (fs,) = by_type(extreme, "nas.FileSystem")
    assert fs.inputs["encryptType"] == 2 and fs.inputs["kmsKeyId"] == key
    nas = record_program(lambda: SharedStorage("data", storage_args("nas", "Performance", kms_key_id=key)), zones=ZONES)
    (fs,) = by_type(nas, "nas.FileSystem")
    # General-purpose NAS takes only the NAS-managed key (encrypt_type 2 is extreme-only).
    assert fs.inputs["encryptType"] == 1 and "kmsKeyId" not in fs.inputs


def test_storage_names_do_not_change_with_security_options():
    def names(**extra):
        return sorted(
            (r.type, r.name)
            for r in record_program(
                lambda: SharedStorage("data", storage_args("extreme_nas", "advance", **extra)), zones=ZONES
            )
            if r.short_type != "nas.AutoSnapshotPolicy"
        )

    assert names() == names(kms_key_id="key-hzz630494463ejqjx0001", nfs_squash="all_squash", snapshot_retention_days=-1)


def test_pool_launch_template_is_imdsv2_encrypted_private_with_role_and_scratch():
    resources = record_program(
        lambda: AutoscalingGpuPool("pool", pool_args(node=node(scratch_disk_gib=3000, spot=True))), zones=ZONES
    )
    (template,) = by_type(resources, "ecs.EcsLaunchTemplate")
    inputs = template.inputs
    assert inputs["httpTokens"] == "required" and inputs["internetMaxBandwidthOut"] == 0
    assert inputs["ramRoleName"] == "pool-node" and inputs["securityGroupIds"] == ["sg-test"]
    assert inputs["spotStrategy"] == "SpotAsPriceGo" and userdata.decode(inputs["userData"]) == "#cloud-config\n"
    assert inputs["systemDisk"]["encrypted"] is True and "kmsKeyId" not in inputs["systemDisk"]
    (disk,) = inputs["dataDisks"]
    assert (disk["encrypted"], disk["name"], disk["size"], disk["deleteWithInstance"]) == (
        True,
        "aitrain-scratch",
        3000,
        True,
    )
    (group,) = by_type(resources, "ess.ScalingGroup")
    assert (group.inputs["launchTemplateId"], group.inputs["launchTemplateVersion"]) == (
        "${pool-template.id}",
        "Latest",
    )
    assert not by_type(resources, "ess.ScalingConfiguration")


def test_pool_disks_use_the_customer_kms_key():
    key = "key-hzz630494463ejqjx0001"
    resources = record_program(
        lambda: AutoscalingGpuPool("pool", pool_args(node=node(scratch_disk_gib=3000, kms_key_id=key))), zones=ZONES
    )
    (template,) = by_type(resources, "ecs.EcsLaunchTemplate")
    assert template.inputs["systemDisk"]["kmsKeyId"] == key and template.inputs["dataDisks"][0]["kmsKeyId"] == key


def test_erdma_pool_keeps_the_eri_scaling_configuration_and_no_template():
    resources = record_program(
        lambda: AutoscalingGpuPool("pool", pool_args(node=node(eri=True), erdma_pool=True)), zones=ZONES
    )
    assert not by_type(resources, "ecs.EcsLaunchTemplate")
    (config,) = by_type(resources, "ess.ScalingConfiguration")
    assert config.inputs["networkInterfaces"][0]["networkInterfaceTrafficMode"] == "HighPerformance"
    assert config.inputs["systemDiskEncrypted"] is True and config.inputs["internetMaxBandwidthOut"] == 0
    (group,) = by_type(resources, "ess.ScalingGroup")
    assert "launchTemplateId" not in group.inputs
    assert all(r.depends_on == ("pool-config",) for r in by_type(resources, "ess.ScalingRule"))


def test_fixed_cluster_disks_use_the_customer_kms_key():
    key = "key-hzz630494463ejqjx0001"
    resources = record_program(
        lambda: GpuCluster(
            "gpu",
            GpuClusterArgs(
                node=node(scratch_disk_gib=3000, kms_key_id=key), nodes=2, zone_id="cn-shanghai-a", vswitch_id="vsw-1"
            ),
        ),
        zones=ZONES,
    )
    (template,) = by_type(resources, "ecs.EcsLaunchTemplate")
    assert template.inputs["systemDisk"]["kmsKeyId"] == key
    (instance_set,) = by_type(resources, "ecs.EcsInstanceSet")
    assert instance_set.inputs["dataDisks"][0]["kmsKeyId"] == key
