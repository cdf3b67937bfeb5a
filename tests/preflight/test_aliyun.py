"""The SDK adapter builds the SDK's own request objects and maps failures; fake client classes, no sockets."""

from __future__ import annotations

from typing import Any

import pytest

from blueprints.preflight.aliyun import SdkReader, build_request
from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS, CloudError

pytest.importorskip("alibabacloud_ecs20140526")
from alibabacloud_ecs20140526 import models as ecs
from alibabacloud_nas20170626 import models as nas
from alibabacloud_quotas20200510 import models as quotas


def test_requests_are_sdk_models_with_the_api_parameters() -> None:
    product, method, req = build_request(AVAILABLE_RESOURCE, {"RegionId": "cn-shanghai", "ZoneId": "cn-shanghai-a", "DestinationResource": "InstanceType",
                                                              "IoOptimized": "optimized", "InstanceType": "ecs.gn7i-c32g1.8xlarge", "InstanceChargeType": "PostPaid", "SpotStrategy": "SpotAsPriceGo"})
    assert (product, method) == ("ecs", "describe_available_resource") and isinstance(req, ecs.DescribeAvailableResourceRequest)
    assert req.to_map() == {"RegionId": "cn-shanghai", "ZoneId": "cn-shanghai-a", "DestinationResource": "InstanceType", "IoOptimized": "optimized",
                            "InstanceType": "ecs.gn7i-c32g1.8xlarge", "InstanceChargeType": "PostPaid", "SpotStrategy": "SpotAsPriceGo"}
    _, method, req = build_request(ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ("max-spot-instance-vcpu-count",)})
    assert method == "describe_account_attributes" and isinstance(req, ecs.DescribeAccountAttributesRequest)
    assert req.to_map() == {"RegionId": "cn-shanghai", "AttributeName": ["max-spot-instance-vcpu-count"]}
    product, method, req = build_request(NAS_ZONES, {"RegionId": "cn-shanghai", "FileSystemType": "cpfs"})
    assert (product, method) == ("nas", "describe_zones") and isinstance(req, nas.DescribeZonesRequest) and req.to_map() == {"RegionId": "cn-shanghai", "FileSystemType": "cpfs"}
    product, method, req = build_request(PRODUCT_QUOTAS, {"ProductCode": "ecs-spec", "QuotaActionCode": "ecs.g7.large", "Dimensions": [{"Key": "regionId", "Value": "cn-shanghai"}], "MaxResults": 100})
    assert (product, method) == ("quotas", "list_product_quotas") and isinstance(req, quotas.ListProductQuotasRequest)
    assert req.to_map() == {"ProductCode": "ecs-spec", "QuotaActionCode": "ecs.g7.large", "Dimensions": [{"Key": "regionId", "Value": "cn-shanghai"}], "MaxResults": 100}
    with pytest.raises(ValueError, match="unknown API"):
        build_request("ecs.RunInstances", {})


class _Body:
    def __init__(self, data: dict[str, Any]):
        self.data = data

    def to_map(self) -> dict[str, Any]:
        return self.data


class _Response:
    def __init__(self, data: dict[str, Any]):
        self.body = _Body(data)


class FakeEcs:
    """Stands in for alibabacloud_ecs20140526.client.Client: records its config and requests."""

    instances: list["FakeEcs"] = []

    def __init__(self, config: Any):
        self.config = config
        self.requests: list[Any] = []
        FakeEcs.instances.append(self)

    def describe_account_attributes(self, request: Any) -> _Response:
        self.requests.append(request)
        return _Response({"RequestId": "x", "AccountAttributeItems": {"AccountAttributeItem": []}})

    def describe_available_resource(self, request: Any) -> _Response:
        raise RuntimeError("code: 403, Forbidden.RAM request id: 1")


def test_reader_builds_one_client_per_product_with_region_and_credential() -> None:
    FakeEcs.instances.clear()
    credential = object()
    reader = SdkReader("cn-shanghai", client_classes={"ecs": FakeEcs}, credential=credential)
    body = reader.call(ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ["max-postpaid-instance-vcpu-count"]})
    reader.call(ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ["used-postpaid-instance-vcpu-count"]})
    assert body == {"RequestId": "x", "AccountAttributeItems": {"AccountAttributeItem": []}}
    (client,) = FakeEcs.instances  # reused, not rebuilt per call
    assert client.config.region_id == "cn-shanghai" and client.config.credential is credential
    assert [r.attribute_name for r in client.requests] == [["max-postpaid-instance-vcpu-count"], ["used-postpaid-instance-vcpu-count"]]


def test_sdk_failure_becomes_cloud_error() -> None:
    reader = SdkReader("cn-shanghai", client_classes={"ecs": FakeEcs}, credential=object())
    with pytest.raises(CloudError) as info:
        reader.call(AVAILABLE_RESOURCE, {"RegionId": "cn-shanghai", "ZoneId": "cn-shanghai-a", "DestinationResource": "InstanceType", "InstanceType": "ecs.g7.large"})
    assert info.value.api == AVAILABLE_RESOURCE and info.value.code == "RuntimeError" and "Forbidden.RAM" in info.value.message


def test_real_clients_build_offline_with_regional_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the SDK clients (default credential chain, region) sends nothing; ECS and NAS are regional, Quota Center central."""
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "id")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "secret")
    reader = SdkReader("cn-shanghai")
    endpoints = {p: reader._client(p)._endpoint for p in ("ecs", "nas", "quotas")}
    assert endpoints == {"ecs": "ecs.cn-shanghai.aliyuncs.com", "nas": "nas.cn-shanghai.aliyuncs.com", "quotas": "quotas.aliyuncs.com"}
