"""The checks against recorded responses: numbers, statuses and messages, and what each check asks."""

from __future__ import annotations

import dataclasses

from blueprints.catalog import Catalog
from blueprints.preflight.checks import (
    ACCOUNT_ATTRIBUTES,
    AVAILABLE_RESOURCE,
    NAS_ZONES,
    OK,
    PRODUCT_QUOTAS,
    SHORT,
    UNKNOWN,
    WARN,
    CloudError,
    run_checks,
)
from blueprints.preflight.needs import needs_from_plan
from blueprints.preflight.report import SCHEMA, Report, render_text
from blueprints.review.plan import Plan
from tests.preflight.replay import FIXTURES, ReplayReader, load


def by_id(checks: list, prefix: str) -> list:  # type: ignore[type-arg]
    return [c for c in checks if c.id.startswith(prefix)]


def test_every_fixture_cites_its_doc_page() -> None:
    for api in FIXTURES:
        data = load(api)
        assert data["_source"].startswith("https://"), api
        assert data["responses"], api


def test_fixed_cluster_is_short_of_postpaid_vcpus(imaging_plan: Plan, catalog: Catalog) -> None:
    reader = ReplayReader()
    checks = run_checks(needs_from_plan(imaging_plan, catalog), reader)
    (vcpu,) = by_id(checks, "quota.vcpu.postpaid")
    # 12 × 128 vCPUs against a quota of 1000 with 200 in use.
    assert (vcpu.status, vcpu.needed, vcpu.available, vcpu.unit) == (SHORT, 1536, 800, "vCPUs")
    assert "short by 736" in vcpu.detail and "max-postpaid-instance-vcpu-count" in vcpu.detail
    assert not by_id(checks, "quota.vcpu.spot")  # nothing spot, so no spot question
    (spec,) = by_id(checks, "quota.instance_type.ecs.gn7e-c16g1.32xlarge")
    assert (spec.status, spec.needed, spec.available) == (OK, 1536, 2048)
    (stock,) = by_id(checks, "stock.")
    assert (stock.status, stock.needed, stock.detail) == (OK, 12, "Available (WithStock)")
    (storage,) = by_id(checks, "storage.")
    assert storage.status == OK and storage.subject.startswith("extreme_nas (extreme standard, NFS) in cn-shanghai-a")
    report = Report(needs_from_plan(imaging_plan, catalog), tuple(checks), "test")
    assert report.exit_code == 1


def test_requests_carry_the_documented_parameters(imaging_plan: Plan, catalog: Catalog) -> None:
    reader = ReplayReader()
    run_checks(needs_from_plan(imaging_plan, catalog), reader)
    calls = dict(reader.calls)
    assert calls[ACCOUNT_ATTRIBUTES] == {
        "RegionId": "cn-shanghai",
        "AttributeName": ["max-postpaid-instance-vcpu-count", "used-postpaid-instance-vcpu-count"],
    }
    assert calls[AVAILABLE_RESOURCE] == {
        "RegionId": "cn-shanghai",
        "ZoneId": "cn-shanghai-a",
        "DestinationResource": "InstanceType",
        "IoOptimized": "optimized",
        "InstanceType": "ecs.gn7e-c16g1.32xlarge",
        "InstanceChargeType": "PostPaid",
        "SpotStrategy": "NoSpot",
    }
    assert calls[NAS_ZONES] == {"RegionId": "cn-shanghai", "FileSystemType": "extreme"}
    assert calls[PRODUCT_QUOTAS]["ProductCode"] == "ecs-spec" and calls[PRODUCT_QUOTAS]["Dimensions"] == [
        {"Key": "regionId", "Value": "cn-shanghai"}
    ]


def test_pool_with_one_sold_out_zone_is_not_short(pool_plan: Plan, catalog: Catalog) -> None:
    checks = run_checks(needs_from_plan(pool_plan, catalog), ReplayReader())
    stock = {c.id.rsplit(".", 1)[-1]: c for c in by_id(checks, "stock.")}
    assert stock["cn-shanghai-a"].status == WARN and "SoldOut (WithoutStock)" in stock["cn-shanghai-a"].detail
    assert "other zones of the group have stock" in stock["cn-shanghai-a"].detail
    assert stock["cn-shanghai-b"].status == WARN and "ClosedWithStock" in stock["cn-shanghai-b"].detail
    assert stock["cn-shanghai-c"].status == OK
    (vcpu,) = by_id(checks, "quota.vcpu.postpaid")
    assert (vcpu.status, vcpu.needed, vcpu.available) == (OK, 256, 800)
    (spec,) = by_id(checks, "quota.instance_type.")
    assert spec.status == UNKNOWN and "no ecs-spec quota" in spec.detail
    report = Report(needs_from_plan(pool_plan, catalog), tuple(checks), "test")
    assert (report.exit_code, report.verdict) == (4, "unanswered")  # nothing short, but one question went unanswered
    assert report.to_dict()["counts"] == {OK: 3, WARN: 2, SHORT: 0, UNKNOWN: 1}
    accepted = Report(report.needs, report.checks, "test", ("instance-type-quota",))
    assert (accepted.exit_code, accepted.verdict) == (0, "ok")
    assert (
        Report(report.needs, report.checks, "test", ("stock",)).exit_code == 4
    )  # accepting another kind does not cover it


def test_short_wins_over_unanswered(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)
    denied = CloudError(NAS_ZONES, "Forbidden.RAM", "User not authorized")
    report = Report(needs, tuple(run_checks(needs, ReplayReader({NAS_ZONES: denied}))), "test")
    assert report.count(SHORT) == 1 and report.count(UNKNOWN) == 1
    assert (report.exit_code, report.to_dict()["verdict"]) == (1, "short")


def test_cloud_error_is_one_line() -> None:
    error = CloudError(NAS_ZONES, "Forbidden.RAM\n", "code: 403, not\n  authorized\r\n request id: 1")
    assert str(error) == "nas.DescribeZones: Forbidden.RAM: code: 403, not authorized request id: 1"


def test_single_zone_sold_out_is_short(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)
    sold_out = {
        "AvailableZones": {
            "AvailableZone": [
                {
                    "ZoneId": "cn-shanghai-a",
                    "AvailableResources": {
                        "AvailableResource": [
                            {
                                "Type": "InstanceType",
                                "SupportedResources": {
                                    "SupportedResource": [
                                        {
                                            "Value": "ecs.gn7e-c16g1.32xlarge",
                                            "Status": "SoldOut",
                                            "StatusCategory": "WithoutStock",
                                        }
                                    ]
                                },
                            }
                        ]
                    },
                }
            ]
        }
    }
    (stock,) = by_id(run_checks(needs, ReplayReader({AVAILABLE_RESOURCE: sold_out})), "stock.")
    assert stock.status == SHORT and "none to start now" in stock.detail
    (absent,) = by_id(
        run_checks(needs, ReplayReader({AVAILABLE_RESOURCE: {"AvailableZones": {"AvailableZone": []}}})), "stock."
    )
    assert absent.status == SHORT and "not offered in this zone" in absent.detail
    # The shipped catalog lists no zones for the type, so the plan assumed this one: the check says how to fix that.
    assert needs.compute[0].zones_from_catalog is False
    assert "the offline plan assumed this zone" in absent.detail and "aitrain zones --write" in absent.detail
    listed = dataclasses.replace(needs, compute=(dataclasses.replace(needs.compute[0], zones_from_catalog=True),))
    (plain,) = by_id(
        run_checks(listed, ReplayReader({AVAILABLE_RESOURCE: {"AvailableZones": {"AvailableZone": []}}})), "stock."
    )
    assert plain.detail == "not offered in this zone (absent from DescribeAvailableResource)"


def test_storage_zone_not_offered_lists_the_zones_that_are(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)
    assert needs.storage is not None
    cpfs = dataclasses.replace(
        needs,
        storage=dataclasses.replace(
            needs.storage, kind="cpfs", file_system_type="cpfs", storage_type="advance_100", protocol_type="cpfs"
        ),
    )
    (storage,) = by_id(run_checks(cpfs, ReplayReader()), "storage.")
    assert (
        storage.status == SHORT
        and "not offered in cn-shanghai-a" in storage.detail
        and "cn-shanghai-b" in storage.detail
    )
    advance = dataclasses.replace(needs, storage=dataclasses.replace(needs.storage, storage_type="premium"))
    (wrong_type,) = by_id(run_checks(advance, ReplayReader()), "storage.")
    assert wrong_type.status == SHORT and "offers advance/nfs, standard/nfs, not premium/NFS" in wrong_type.detail


def test_failed_call_is_unanswered_not_short(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)
    denied = CloudError(
        ACCOUNT_ATTRIBUTES, "Forbidden.RAM", "User not authorized to operate on the specified resource."
    )
    (vcpu,) = by_id(run_checks(needs, ReplayReader({ACCOUNT_ATTRIBUTES: denied})), "quota.vcpu.")
    assert vcpu.status == UNKNOWN and vcpu.needed == 1536
    assert (
        vcpu.detail
        == "ecs.DescribeAccountAttributes: Forbidden.RAM: User not authorized to operate on the specified resource."
    )
    (missing,) = by_id(
        run_checks(needs, ReplayReader({ACCOUNT_ATTRIBUTES: {"AccountAttributeItems": {"AccountAttributeItem": []}}})),
        "quota.vcpu.",
    )
    assert missing.status == UNKNOWN and "max-postpaid-instance-vcpu-count" in missing.detail


def test_instance_type_quota_compares_in_the_stated_unit(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)

    def quota(unit: str, total: float, usage: float) -> dict:  # type: ignore[type-arg]
        return {
            "Quotas": [
                {
                    "QuotaActionCode": "ecs.gn7e-c16g1.32xlarge",
                    "QuotaUnit": unit,
                    "TotalQuota": total,
                    "TotalUsage": usage,
                    "Dimensions": {"regionId": "cn-shanghai"},
                }
            ]
        }

    (gpus,) = by_id(run_checks(needs, ReplayReader({PRODUCT_QUOTAS: quota("GPU", 64, 0)})), "quota.instance_type.")
    assert (gpus.status, gpus.needed, gpus.available, gpus.unit) == (
        SHORT,
        96,
        64,
        "GPUs",
    ) and "short by 32" in gpus.detail
    (nodes,) = by_id(run_checks(needs, ReplayReader({PRODUCT_QUOTAS: quota("台", 20, 4)})), "quota.instance_type.")
    assert (nodes.status, nodes.needed, nodes.available) == (OK, 12, 16)
    (odd,) = by_id(run_checks(needs, ReplayReader({PRODUCT_QUOTAS: quota("furlongs", 5, 0)})), "quota.instance_type.")
    assert odd.status == UNKNOWN and "not compared" in odd.detail
    other_region = {
        "Quotas": [
            {
                "QuotaActionCode": "ecs.gn7e-c16g1.32xlarge",
                "QuotaUnit": "vCPU",
                "TotalQuota": 1,
                "TotalUsage": 0,
                "Dimensions": {"regionId": "cn-beijing"},
            }
        ]
    }
    (ignored,) = by_id(run_checks(needs, ReplayReader({PRODUCT_QUOTAS: other_region})), "quota.instance_type.")
    assert ignored.status == UNKNOWN


def test_report_text_and_json(imaging_plan: Plan, catalog: Catalog) -> None:
    needs = needs_from_plan(imaging_plan, catalog)
    report = Report(needs, tuple(run_checks(needs, ReplayReader())), "environment (ALIBABA_CLOUD_ACCESS_KEY_ID)")
    data = report.to_dict()
    assert data["schema"] == SCHEMA == "aitrain.preflight/v1"
    assert data["short"] is True and data["needs"]["totals"]["gpus"] == 96
    text = render_text(report)
    assert "ecs.gn7e-c16g1.32xlarge × 12 nodes in cn-shanghai-a (PostPaid): 1536 vCPUs, 96 GPUs" in text
    assert "SHORT pay-as-you-go vCPUs in cn-shanghai" in text
    assert text.rstrip().endswith("SHORT: 1 check(s) fall short (exit 1); 0 warning(s), 0 unanswered.")
