"""Preflight and held capacity: the reserved nodes no node draws from are asked for too (quota and stock), so a
reservation larger than the quota allows is short before `pulumi up`, with the numbers."""

from __future__ import annotations

from blueprints.catalog import load_catalog
from blueprints.preflight.checks import SHORT, run_checks
from blueprints.preflight.needs import needs_from_plan
from tests.preflight.conftest import plan_of
from tests.preflight.replay import ReplayReader

RESERVED = "capacity.reservation.kind=capacity_reservation"
QUOTA = {  # recorded-shape Quota Center answer: 2,048 vCPUs of ecs.gn7e-c16g1.32xlarge (16 nodes of 128)
    "Quotas": [
        {
            "QuotaActionCode": "ecs.gn7e-c16g1.32xlarge",
            "QuotaUnit": "vCPU",
            "Dimensions": {"regionId": "cn-shanghai"},
            "TotalQuota": 2048.0,
            "TotalUsage": 0.0,
        }
    ]
}
ATTRIBUTES = {
    "AccountAttributeItems": {
        "AccountAttributeItem": [
            {
                "AttributeName": "max-postpaid-instance-vcpu-count",
                "AttributeValues": {"ValueItem": [{"Value": "9000"}]},
            },
            {"AttributeName": "used-postpaid-instance-vcpu-count", "AttributeValues": {"ValueItem": [{"Value": "0"}]}},
        ]
    }
}


def needs(*assignments: str):  # type: ignore[no-untyped-def]
    return needs_from_plan(plan_of("medical-imaging", *assignments), load_catalog())


def test_a_reservation_every_node_draws_from_adds_nothing() -> None:
    found = needs(RESERVED)
    assert sum(g.nodes for g in found.compute) == 12
    assert found.vcpus(spot=False) == 12 * 128


def test_spare_reserved_nodes_are_asked_for_in_the_reservation_zone() -> None:
    found = needs(RESERVED, "capacity.reservation.nodes=14")
    (spare,) = [g for g in found.compute if g.resource == "medical-imaging-cluster-reservation"]
    assert (spare.instance_type, spare.nodes, spare.zones) == ("ecs.gn7e-c16g1.32xlarge", 2, ("cn-shanghai-a",))
    assert found.vcpus(spot=False) == 14 * 128


def test_a_reservation_larger_than_the_quota_allows_is_short_with_the_numbers() -> None:
    found = needs(RESERVED, "capacity.reservation.nodes=20")
    reader = ReplayReader({"quotas.ListProductQuotas": QUOTA, "ecs.DescribeAccountAttributes": ATTRIBUTES})
    checks = [c for c in run_checks(found, reader) if c.id.startswith("quota.instance_type.")]
    (check,) = checks
    assert check.status == SHORT and (check.needed, check.available) == (20 * 128, 2048)
    assert "short by 512" in check.detail
