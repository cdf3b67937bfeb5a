"""The checks' edge paths: failed calls, incomplete answers, answers for other zones or resources, older NAS answers,
the eRDMA pool's scaling configuration, and the last credential source."""

from __future__ import annotations

from pathlib import Path

from blueprints.catalog import Catalog
from blueprints.engine.preview import preview
from blueprints.preflight.checks import (
    AVAILABLE_RESOURCE,
    NAS_ZONES,
    OK,
    PRODUCT_QUOTAS,
    SHORT,
    UNKNOWN,
    CloudError,
    instance_type_quota,
    stock,
    storage_zone,
)
from blueprints.preflight.credentials import find_credentials
from blueprints.preflight.needs import ComputeNeed, StorageNeed, needs_from_plan
from blueprints.profile.stackconfig import with_cli_inputs
from tests.preflight.conftest import DAY
from tests.preflight.replay import ReplayReader

GROUP = ComputeNeed("nodes", "ecs.gn7e-c16g1.32xlarge", 4, ("cn-shanghai-a",), "PostPaid", "NoSpot", 128, 8)


def test_each_failed_call_is_unanswered_with_the_apis_own_words():
    for api, check in (
        (PRODUCT_QUOTAS, lambda r: instance_type_quota("cn-shanghai", [GROUP], r)[0]),
        (AVAILABLE_RESOURCE, lambda r: stock("cn-shanghai", GROUP, r)[0]),
        (
            NAS_ZONES,
            lambda r: storage_zone(
                "cn-shanghai", StorageNeed("fs", "nas", "standard", "Performance", "NFS", "cn-shanghai-a"), r
            ),
        ),
    ):
        result = check(
            ReplayReader({api: CloudError(api, "Throttling", "Request was denied due to request throttling.")})
        )
        assert (result.status, result.detail) == (
            UNKNOWN,
            f"{api}: Throttling: Request was denied due to request throttling.",
        ), api


def test_a_quota_without_a_total_is_unknown_and_dimensions_need_not_be_a_mapping():
    body = {
        "Quotas": [
            {"QuotaActionCode": GROUP.instance_type, "Dimensions": {"regionId": "cn-shanghai"}, "QuotaUnit": "vCPU"},
            {
                "QuotaActionCode": GROUP.instance_type,
                "Dimensions": None,
                "TotalQuota": 1024,
                "TotalUsage": 0,
                "QuotaUnit": "vCPU",
            },
        ]
    }
    no_total, plain = instance_type_quota("cn-shanghai", [GROUP], ReplayReader({PRODUCT_QUOTAS: body}))
    assert (no_total.status, no_total.detail, no_total.unit) == (UNKNOWN, "the quota has no TotalQuota", "vCPU")
    assert (plain.status, plain.needed, plain.available) == (OK, 512, 1024)


def test_stock_reads_only_its_zone_and_the_instance_type_resource():
    def supported(value: str, status: str) -> dict:  # type: ignore[type-arg]
        return {
            "SupportedResource": [
                {
                    "Value": value,
                    "Status": status,
                    "StatusCategory": "WithStock" if status == "Available" else "WithoutStock",
                }
            ]
        }

    body = {
        "AvailableZones": {
            "AvailableZone": [
                # Another zone with stock comes first, then a resource
                # of another kind naming the type: neither may count.
                {
                    "ZoneId": "cn-shanghai-b",
                    "AvailableResources": {
                        "AvailableResource": [
                            {"Type": "InstanceType", "SupportedResources": supported(GROUP.instance_type, "Available")}
                        ]
                    },
                },
                {
                    "ZoneId": "cn-shanghai-a",
                    "AvailableResources": {
                        "AvailableResource": [
                            {"Type": "SystemDisk", "SupportedResources": supported(GROUP.instance_type, "Available")},
                            {"Type": "InstanceType", "SupportedResources": supported(GROUP.instance_type, "SoldOut")},
                        ]
                    },
                },
            ]
        }
    }
    (check,) = stock("cn-shanghai", GROUP, ReplayReader({AVAILABLE_RESOURCE: body}))
    assert (check.status, check.detail) == (
        SHORT,
        "SoldOut (WithoutStock): none to start now; try another zone or later",
    )


def test_older_nas_answers_list_protocols_under_the_storage_type():
    need = StorageNeed("fs", "nas", "standard", "Performance", "NFS", "cn-shanghai-a")
    old = {
        "Zones": {
            "Zone": [
                {"ZoneId": "cn-shanghai-a", "Performance": {"Protocol": ["NFS"]}, "Capacity": {"Protocol": ["SMB"]}}
            ]
        }
    }
    assert storage_zone("cn-shanghai", need, ReplayReader({NAS_ZONES: old})).status == OK
    capacity_only = {"Zones": {"Zone": [{"ZoneId": "cn-shanghai-a", "Capacity": {"Protocol": ["NFS"]}}]}}
    check = storage_zone("cn-shanghai", need, ReplayReader({NAS_ZONES: capacity_only}))
    assert (check.status, check.detail) == (SHORT, "cn-shanghai-a offers capacity/nfs, not Performance/NFS")


def test_an_erdma_pool_is_sized_from_its_scaling_configuration(catalog: Catalog):
    overrides = [
        ("compute.instance_type", "ecs.ebmgn7ex.32xlarge"),
        ("compute.erdma_pool", True),
        ("guardrails.skip", [{"rule": "AIT008", "reason": "an eRDMA pool needs a scaling configuration"}]),
    ]
    plan = preview(with_cli_inputs({}, "autoscaling-training", overrides), catalog=catalog, today=DAY)
    assert plan.find("ess.ScalingConfiguration")
    (pool,) = [c for c in needs_from_plan(plan, catalog).compute if c.instance_type == "ecs.ebmgn7ex.32xlarge"]
    group = plan.find("ess.ScalingGroup")[0]
    assert pool.nodes == int(group.inputs["maxSize"]) and pool.vcpus_per_node == 128


def test_a_credentials_uri_is_the_last_source(tmp_path: Path):
    assert (
        find_credentials({"ALIBABA_CLOUD_CREDENTIALS_URI": "http://127.0.0.1:8080/creds"}, home=tmp_path)
        == "credentials URI (ALIBABA_CLOUD_CREDENTIALS_URI)"
    )
    assert find_credentials({}, home=tmp_path) is None
