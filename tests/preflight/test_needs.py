"""needs_from_plan reads instance types, nodes, zones and the file system from the plan's resources."""

from __future__ import annotations

from blueprints.catalog import Catalog
from blueprints.preflight.needs import needs_from_plan
from blueprints.review.plan import Plan, PlannedResource
from tests.preflight.conftest import plan_of


def test_fixed_cluster_needs(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)
    assert needs.region == "cn-shanghai" and needs.blueprint == "fixed-cluster"
    (group,) = needs.compute
    assert (group.instance_type, group.nodes, group.zones) == ("ecs.gn7e-c16g1.32xlarge", 12, ("cn-shanghai-a",))
    assert (group.charge_type, group.spot_strategy, group.spot) == ("PostPaid", "NoSpot", False)
    assert (group.vcpus, group.gpus) == (12 * 128, 96)
    assert needs.vcpus(spot=False) == 1536 and needs.vcpus(spot=True) == 0 and needs.gpus == 96
    assert needs.storage is not None
    assert (
        needs.storage.kind,
        needs.storage.file_system_type,
        needs.storage.storage_type,
        needs.storage.protocol_type,
        needs.storage.zone,
    ) == ("extreme_nas", "extreme", "standard", "NFS", "cn-shanghai-a")


def test_pool_counts_at_max_nodes_over_its_vswitch_zones(pool_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(pool_plan, catalog)
    (group,) = needs.compute
    assert group.instance_type == "ecs.gn7i-c32g1.8xlarge"
    assert group.nodes == 8  # max_nodes, not min or desired
    assert group.zones == ("cn-shanghai-a", "cn-shanghai-b", "cn-shanghai-c")
    assert (group.vcpus, group.gpus) == (256, 8)
    assert needs.storage is not None and (needs.storage.file_system_type, needs.storage.storage_type) == (
        "standard",
        "Performance",
    )


def test_login_node_and_spot_are_separate_needs(catalog: Catalog) -> None:
    plan = plan_of(
        "autoscaling-training",
        "access.login_node=true",
        "network.admin_cidr=203.0.113.0/24",
        "access.key_pair_name=kp-train",
        "cost.spot=true",
    )
    needs = needs_from_plan(plan, catalog)
    by_type = {c.instance_type: c for c in needs.compute}
    login = by_type["ecs.g7.large"]
    assert (login.nodes, login.zones, login.spot) == (1, ("cn-shanghai-a",), False)  # zone from its vSwitch
    pool = by_type["ecs.gn7i-c32g1.8xlarge"]
    assert pool.spot and pool.spot_strategy != "NoSpot"
    assert needs.vcpus(spot=True) == 256
    assert needs.vcpus(spot=False) == login.vcpus == catalog.instance_type("ecs.g7.large").vcpus


def test_needs_json_has_totals(imaging_plan: Plan, catalog: Catalog) -> None:
    data = needs_from_plan(imaging_plan, catalog).to_dict()
    assert data["totals"] == {"postpaid_vcpus": 1536, "spot_vcpus": 0, "gpus": 96}
    assert data["compute"][0]["zones"] == ["cn-shanghai-a"]
    storage = data["storage"]
    assert (
        storage["kind"],
        storage["file_system_type"],
        storage["storage_type"],
        storage["protocol_type"],
        storage["zone"],
    ) == (
        "extreme_nas",
        "extreme",
        "standard",
        "NFS",
        "cn-shanghai-a",
    )


def _node_pool(name: str, inputs: dict) -> PlannedResource:
    return PlannedResource(type="alicloud:cs/nodePool:NodePool", name=name, parent=None, custom=True, inputs=inputs)


def test_ack_node_pools_count_at_max_size_when_autoscaling_else_desired(catalog: Catalog) -> None:
    switch = PlannedResource(
        type="alicloud:vpc/switch:Switch", name="sw-a", parent=None, custom=True, inputs={"zoneId": "cn-shanghai-b"}
    )
    gpu = _node_pool(
        "gpu",
        {
            "instanceTypes": ["ecs.gn7i-c32g1.8xlarge"],
            "scalingConfig": {"enable": True, "minSize": 0, "maxSize": 6},
            "vswitchIds": ["${sw-a.id}"],
            "spotStrategy": "SpotAsPriceGo",
        },
    )
    system = _node_pool("system", {"instanceTypes": ["ecs.g7.large"], "desiredSize": 2, "vswitchIds": ["${sw-a.id}"]})
    plan = Plan("kubernetes", "cn-shanghai", "k8s", {}, (), (switch, gpu, system))
    by_type = {c.instance_type: c for c in needs_from_plan(plan, catalog).compute}
    pool, cpu = by_type["ecs.gn7i-c32g1.8xlarge"], by_type["ecs.g7.large"]
    assert (pool.nodes, pool.zones, pool.spot, pool.gpus) == (6, ("cn-shanghai-b",), True, 6)
    assert (cpu.nodes, cpu.zones, cpu.spot, cpu.gpus) == (2, ("cn-shanghai-b",), False, 0)
