"""Pricing a kubernetes-pool plan: the ACK Pro management fee (cited, CNY in the mainland, converted USD elsewhere),
the API server's load balancer (unknown, never 0), node pools at their minimum with scenarios at max, a fixed
system pool at its desired size, and Kubernetes objects free."""

from __future__ import annotations

import pytest

from blueprints.catalog import instance_price, load_catalog
from blueprints.review.costing import HOURS_PER_MONTH, price_plan
from blueprints.review.plan import PlannedResource

CATALOG = load_catalog()
GN7E = "ecs.gn7e-c16g1.32xlarge"
GN7E_HOUR = 277.93  # instance_types.csv list price (cn-shanghai, 2023-06)
RATE = CATALOG.price("usd_cny", None, "cn-shanghai")[0].amount  # type: ignore[index]


def res(token: str, name: str, **inputs: object) -> PlannedResource:
    return PlannedResource(type=token, name=name, parent=None, custom=True, inputs=dict(inputs))


CLUSTER = res(
    "alicloud:cs/managedKubernetes:ManagedKubernetes", "cluster", clusterSpec="ack.pro.small", slbInternetEnabled=False
)


def gpu_pool(low: int, high: int, **extra: object) -> PlannedResource:
    return res(
        "alicloud:cs/nodePool:NodePool",
        "gpu",
        clusterId="${cluster.id}",
        instanceTypes=[GN7E],
        systemDiskSize=200,
        systemDiskPerformanceLevel="PL1",
        dataDisks=[{"category": "cloud_essd", "size": 3000, "performanceLevel": "PL1", "name": "aitrain-scratch"}],
        scalingConfig={"enable": True, "minSize": low, "maxSize": high},
        **extra,
    )


def lines_of(costs: dict, resource: str) -> list[dict]:
    return [x for x in costs["lines"] if x["resource"] == resource]


def test_ack_pro_fee_is_the_official_cny_price_in_the_mainland() -> None:
    costs = price_plan([CLUSTER], CATALOG, "cn-wulanchabu")
    fee = next(x for x in lines_of(costs, "cluster") if x["item"].startswith("ACK cluster management fee"))
    assert (fee["unit_price_cny"], fee["status"], fee["billing"]) == (0.64, "list", "hourly")
    assert fee["cny_per_month"] == pytest.approx(0.64 * HOURS_PER_MONTH, abs=0.01)
    assert "help.aliyun.com/zh/ack" in fee["source"]


def test_ack_pro_fee_outside_the_mainland_is_the_usd_price_converted() -> None:
    fee = next(
        x for x in price_plan([CLUSTER], CATALOG, "ap-southeast-1")["lines"] if x["item"].startswith("ACK cluster")
    )
    assert fee["status"] == "converted"
    assert fee["unit_price_cny"] == pytest.approx(0.09 * RATE, rel=1e-6)


def test_other_cluster_specs_and_the_api_server_load_balancer_stay_unknown_never_zero() -> None:
    xl = res("alicloud:cs/managedKubernetes:ManagedKubernetes", "cluster", clusterSpec="ack.pro.xlarge")
    costs = price_plan([xl], CATALOG, "cn-wulanchabu")
    assert [(x["item"], x["cny_per_month"]) for x in costs["lines"]] == [
        ("ACK cluster management fee (ack.pro.xlarge)", None),
        ("API server load balancer (CLB instance and LCU fees)", None),
    ]
    assert costs["totals"]["complete"] is False
    assert "cluster: API server load balancer (CLB instance and LCU fees)" in costs["totals"]["unknown"]


def test_gpu_pool_is_priced_at_its_minimum_with_scenarios_at_max() -> None:
    costs = price_plan([CLUSTER, gpu_pool(1, 4)], CATALOG, "cn-shanghai")
    node = next(x for x in lines_of(costs, "gpu") if GN7E in x["item"])
    assert (node["item"], node["quantity"], node["unit_price_cny"]) == (
        f"1 × {GN7E} (scales 1–4; at min)",
        1.0,
        GN7E_HOUR,
    )
    assert [x["item"] for x in lines_of(costs, "gpu")] == [
        f"1 × {GN7E} (scales 1–4; at min)",
        "1 × system disk ESSD PL1 200 GiB",
        "1 × data disk aitrain-scratch ESSD PL1 3000 GiB",
    ]
    at_min, at_max = costs["scenarios"]
    fee_month = 0.64 * HOURS_PER_MONTH  # cn-shanghai is in the mainland
    assert (at_min["nodes"], at_max["nodes"]) == (1, 4)
    assert at_min["cny_per_month"] == pytest.approx(fee_month + GN7E_HOUR * HOURS_PER_MONTH, abs=0.1)
    assert at_max["cny_per_month"] == pytest.approx(fee_month + 4 * GN7E_HOUR * HOURS_PER_MONTH, abs=0.1)
    # ESSD has no price in the catalog: the scenarios say they are incomplete rather than count the disks as 0.
    assert at_min["complete"] is False and at_max["complete"] is False


def test_gpu_pool_at_zero_is_zero_lines_and_prices_its_max() -> None:
    costs = price_plan([gpu_pool(0, 2)], CATALOG, "cn-shanghai")
    assert [(x["item"], x["cny_per_month"]) for x in lines_of(costs, "gpu")][0] == (
        f"0 × {GN7E} (scales 0–2; at min)",
        0.0,
    )
    assert [s["nodes"] for s in costs["scenarios"]] == [0, 2]
    assert costs["scenarios"][1]["cny_per_month"] == pytest.approx(2 * GN7E_HOUR * HOURS_PER_MONTH, abs=0.1)


def test_fixed_system_pool_runs_its_desired_size_at_its_catalog_price() -> None:
    system = res(
        "alicloud:cs/nodePool:NodePool", "system", instanceTypes=["ecs.g7.xlarge"], desiredSize="2", systemDiskSize=120
    )
    costs = price_plan([system], CATALOG, "cn-shanghai")
    node = next(x for x in lines_of(costs, "system") if "ecs.g7.xlarge" in x["item"])
    per_hour = instance_price(CATALOG, "ecs.g7.xlarge", "cn-shanghai").cny
    assert (node["item"], node["quantity"], node["unit_price_cny"]) == ("2 × ecs.g7.xlarge", 2.0, per_hour)
    assert node["cny_per_month"] == pytest.approx(2 * per_hour * HOURS_PER_MONTH, abs=0.01)  # type: ignore[operator]
    assert costs["scenarios"] == []


def test_a_system_pool_type_the_catalog_lacks_stays_unknown() -> None:
    assert "ecs.c8y.large" not in CATALOG.instance_types
    system = res("alicloud:cs/nodePool:NodePool", "system", instanceTypes=["ecs.c8y.large"], nodeCount=2)
    node = price_plan([system], CATALOG, "cn-shanghai")["lines"][0]
    assert (node["item"], node["cny_per_month"], node["status"]) == ("2 × ecs.c8y.large", None, "unknown")


def test_kubernetes_objects_cost_nothing() -> None:
    objects = [
        res("kubernetes:core/v1:PersistentVolume", "pv", spec={"capacity": {"storage": "1024Gi"}}),
        res("kubernetes:core/v1:Namespace", "ns"),
        res("kubernetes:apps/v1:Deployment", "operator"),
    ]
    assert price_plan(objects, CATALOG, "cn-shanghai")["lines"] == []


def test_the_kubernetes_presets_gpu_pool_is_a_line_and_its_max_says_incomplete_in_every_format() -> None:
    """The preset's 0–8 × ebmgn7ex pool (no catalog price) was neither a line nor "not priced": at max read ¥37,396."""
    from blueprints.review.render import render_markdown, render_table
    from blueprints.testing import offline_plan

    plan = offline_plan("kubernetes-training")
    gpu = [x for x in plan.costs["lines"] if x["resource"].endswith("gpu-pool")]
    assert gpu[0]["item"] == "0 × ecs.ebmgn7ex.32xlarge (scales 0–8; at min)"
    at_min, at_max = plan.costs["scenarios"]
    assert at_max["nodes"] == 8 and at_max["complete"] is False
    assert at_max["unpriced_nodes"][0] == "kubernetes-training-k8s-gpu-pool: 8 × ecs.ebmgn7ex.32xlarge"
    terminal, pr = render_table(plan), render_markdown(plan)
    assert "at max: ¥37,396.44 (incomplete) per month" in terminal
    assert "no catalog price for kubernetes-training-k8s-gpu-pool: 8 × ecs.ebmgn7ex.32xlarge" in terminal
    assert "| at max | 8 | ¥37,396.44 (incomplete) |" in pr
    assert '"unpriced_nodes": [' in plan.to_json()
