"""Property tests: any valid profile synthesises under mocks with every guardrail holding and node counts exact."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprints.catalog import load_catalog
from blueprints.core.errors import UserInputError
from blueprints.testing import assert_guardrails, offline_plan

CATALOG = load_catalog()


def storage_tiers(kind):
    return [t.storage_type for t in CATALOG.storage_tiers(kind) if t.storage_type]


GPU_TYPES = sorted(t.instance_type for t in CATALOG.instance_types.values() if t.is_gpu)
SHANGHAI_ZONES = list(CATALOG.zones("cn-shanghai"))


@st.composite
def profiles(draw):
    blueprint = draw(st.sampled_from(["fixed-cluster", "autoscaling-pool"]))
    kind = draw(st.sampled_from(["nas", "extreme_nas", "cpfs"]))
    storage = {
        "kind": kind,
        "capacity_gib": draw(st.integers(100, 200_000)),
        "throughput_tier": draw(st.sampled_from(storage_tiers(kind))),
    }
    if kind == "cpfs":
        storage["allow_unencrypted_cpfs"] = True
    network = {
        "vpc_cidr": draw(st.sampled_from(["10.0.0.0/16", "172.16.0.0/12", "192.168.0.0/20"])),
        "zones": draw(st.lists(st.sampled_from(SHANGHAI_ZONES), unique=True, max_size=3)),
        "admin_cidr": draw(st.sampled_from([None, "203.0.113.0/24", "10.8.0.0/16"])),
    }
    data = {
        "name": "prop",
        "blueprint": blueprint,
        "region": "cn-shanghai",
        "storage": storage,
        "network": network,
        "cost": {"spot": draw(st.booleans())},
    }
    instance_type = draw(st.sampled_from(GPU_TYPES))
    if blueprint == "fixed-cluster":
        # eRDMA types get one ecs.Instance per node: fewer nodes keep the example fast.
        eri = CATALOG.instance_type(instance_type).fabric_link == "erdma"
        data["compute"] = {"instance_type": instance_type, "nodes": draw(st.integers(1, 40 if eri else 450))}
    else:
        low = draw(st.integers(0, 20))
        high = draw(st.integers(max(low, 1), 300))
        data["compute"] = {
            "instance_type": instance_type,
            "min_nodes": low,
            "max_nodes": high,
            "scale_out_cpu_percent": draw(st.floats(65, 75)),
        }
        if draw(st.booleans()):
            data["cost"]["off_hours"] = {
                "enabled": True,
                "timezone": draw(st.sampled_from(["Asia/Shanghai", "Europe/Berlin", "America/New_York"])),
            }
    return data


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles())
def test_every_valid_profile_synthesises_safely(data):
    try:
        plan = offline_plan(profile=data)
    except UserInputError as exc:
        # Refused only when the nodes cannot fit their vSwitches: a /20 VPC gives /24 vSwitches (252 free addresses,
        # so at most 229 nodes + 23 headroom in one).
        most = data["compute"].get("nodes", data["compute"].get("max_nodes"))
        assert data["network"]["vpc_cidr"] == "192.168.0.0/20" and most > 229, exc.render()
        assert "network.vpc_cidr 192.168.0.0/20 gives each zone a /24 vSwitch" in exc.render()
        return
    # Unencrypted CPFS is allowed on purpose, and then the plan must say so as a warning (AIT009).
    cpfs = (data.get("storage") or {}).get("kind") == "cpfs"
    # No error; warnings only for what the profile chose (CPFS: unencrypted, no snapshots, no access group; the egress
    # allow-list left off). The property: for accepted profiles, no error-level finding.
    assert_guardrails(plan, fail_level="error")
    # Extreme NAS: AIT016 until the snapshot policy is applied by hand (no resource in pulumi-alicloud 4.0.0 can).
    extreme = (data.get("storage") or {}).get("kind", "extreme_nas") == "extreme_nas"
    allowed = {"AIT027", *(("AIT009", "AIT016", "AIT025") if cpfs else ()), *(("AIT016",) if extreme else ())}
    warnings = {f["rule"] for f in plan.findings if f["level"] == "warning"}
    assert warnings - {"AIT041"} <= allowed
    # AIT041 exactly when a fixed cluster of two or more nodes can start partly: eRDMA nodes are separate
    # ecs.Instance calls, and more than 100 nodes are several instance sets.
    nodes = data["compute"].get("nodes", 0)
    erdma = CATALOG.instance_type(data["compute"]["instance_type"]).fabric_link == "erdma"
    assert ("AIT041" in warnings) == (data["blueprint"] == "fixed-cluster" and nodes > 1 and (erdma or nodes > 100))
    (fs,) = plan.find("nas.FileSystem")
    assert fs.protect and fs.retain_on_delete and fs.name == "prop-storage-fs"
    switches = plan.find("vpc.Switch")
    zones = data["network"]["zones"]
    compute_zones = plan.outputs["compute_zone_ids"]
    assert all(z in (zones or SHANGHAI_ZONES) for z in compute_zones)
    assert sorted(s.inputs["zoneId"] for s in switches) == sorted({fs.inputs["zoneId"], *compute_zones})
    if data["blueprint"] == "fixed-cluster":
        nodes = data["compute"]["nodes"]
        if CATALOG.instance_type(data["compute"]["instance_type"]).fabric_link == "erdma":
            instances = plan.find("ecs.Instance")
            assert len(instances) == nodes and not plan.find("ecs.EcsInstanceSet")
            assert {i.inputs["networkInterfaceTrafficMode"] for i in instances} == {"HighPerformance"}
        else:
            amounts = [s.inputs["amount"] for s in plan.find("ecs.EcsInstanceSet")]
            assert sum(amounts) == nodes and max(amounts) <= 100 and len(amounts) == math.ceil(nodes / 100)
        assert len(compute_zones) == 1
    else:
        (group,) = plan.find("ess.ScalingGroup")
        assert (group.inputs["minSize"], group.inputs["maxSize"]) == (
            data["compute"]["min_nodes"],
            data["compute"]["max_nodes"],
        )
        assert len(plan.find("ess.ScheduledTask")) == (2 if "off_hours" in data["cost"] else 0)
    ssh_rules = [r for r in plan.find("ecs.SecurityGroupRule") if r.inputs.get("portRange") == "22/22"]
    assert [r.inputs["cidrIp"] for r in ssh_rules] == (
        [data["network"]["admin_cidr"]] if data["network"]["admin_cidr"] else []
    )
