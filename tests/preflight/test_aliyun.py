"""The SDK adapter builds the SDK's own request objects and maps failures; fake client classes, no sockets."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from blueprints.preflight.aliyun import SdkReader, build_request, credential_client, describe_failure
from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS, CloudError
from blueprints.preflight.credentials import CredentialSource
from tests.preflight.replay import sdk_exception, unreachable_failures

pytest.importorskip("alibabacloud_ecs20140526")
from alibabacloud_ecs20140526 import models as ecs
from alibabacloud_nas20170626 import models as nas
from alibabacloud_quotas20200510 import models as quotas


def test_requests_are_sdk_models_with_the_api_parameters() -> None:
    product, method, req = build_request(
        AVAILABLE_RESOURCE,
        {
            "RegionId": "cn-shanghai",
            "ZoneId": "cn-shanghai-a",
            "DestinationResource": "InstanceType",
            "IoOptimized": "optimized",
            "InstanceType": "ecs.gn7i-c32g1.8xlarge",
            "InstanceChargeType": "PostPaid",
            "SpotStrategy": "SpotAsPriceGo",
        },
    )
    assert (product, method) == ("ecs", "describe_available_resource") and isinstance(
        req, ecs.DescribeAvailableResourceRequest
    )
    assert req.to_map() == {
        "RegionId": "cn-shanghai",
        "ZoneId": "cn-shanghai-a",
        "DestinationResource": "InstanceType",
        "IoOptimized": "optimized",
        "InstanceType": "ecs.gn7i-c32g1.8xlarge",
        "InstanceChargeType": "PostPaid",
        "SpotStrategy": "SpotAsPriceGo",
    }
    _, method, req = build_request(
        ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ("max-spot-instance-vcpu-count",)}
    )
    assert method == "describe_account_attributes" and isinstance(req, ecs.DescribeAccountAttributesRequest)
    assert req.to_map() == {"RegionId": "cn-shanghai", "AttributeName": ["max-spot-instance-vcpu-count"]}
    product, method, req = build_request(NAS_ZONES, {"RegionId": "cn-shanghai", "FileSystemType": "cpfs"})
    assert (
        (product, method) == ("nas", "describe_zones")
        and isinstance(req, nas.DescribeZonesRequest)
        and req.to_map() == {"RegionId": "cn-shanghai", "FileSystemType": "cpfs"}
    )
    product, method, req = build_request(
        PRODUCT_QUOTAS,
        {
            "ProductCode": "ecs-spec",
            "QuotaActionCode": "ecs.g7.large",
            "Dimensions": [{"Key": "regionId", "Value": "cn-shanghai"}],
            "MaxResults": 100,
        },
    )
    assert (product, method) == ("quotas", "list_product_quotas") and isinstance(req, quotas.ListProductQuotasRequest)
    assert req.to_map() == {
        "ProductCode": "ecs-spec",
        "QuotaActionCode": "ecs.g7.large",
        "Dimensions": [{"Key": "regionId", "Value": "cn-shanghai"}],
        "MaxResults": 100,
    }
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
    body = reader.call(
        ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ["max-postpaid-instance-vcpu-count"]}
    )
    reader.call(ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ["used-postpaid-instance-vcpu-count"]})
    assert body == {"RequestId": "x", "AccountAttributeItems": {"AccountAttributeItem": []}}
    (client,) = FakeEcs.instances  # reused, not rebuilt per call
    assert client.config.region_id == "cn-shanghai" and client.config.credential is credential
    assert [r.attribute_name for r in client.requests] == [
        ["max-postpaid-instance-vcpu-count"],
        ["used-postpaid-instance-vcpu-count"],
    ]


def test_sdk_failure_becomes_cloud_error() -> None:
    reader = SdkReader("cn-shanghai", client_classes={"ecs": FakeEcs}, credential=object())
    with pytest.raises(CloudError) as info:
        reader.call(
            AVAILABLE_RESOURCE,
            {
                "RegionId": "cn-shanghai",
                "ZoneId": "cn-shanghai-a",
                "DestinationResource": "InstanceType",
                "InstanceType": "ecs.g7.large",
            },
        )
    assert (
        info.value.api == AVAILABLE_RESOURCE
        and info.value.code == "RuntimeError"
        and "Forbidden.RAM" in info.value.message
    )


def test_real_clients_build_offline_with_regional_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the SDK clients (default credential chain, region)
    sends nothing; ECS and NAS are regional, Quota Center central."""
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "id")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "secret")
    reader = SdkReader("cn-shanghai")
    endpoints = {p: reader._client(p)._endpoint for p in ("ecs", "nas", "quotas")}
    assert endpoints == {
        "ecs": "ecs.cn-shanghai.aliyuncs.com",
        "nas": "nas.cn-shanghai.aliyuncs.com",
        "quotas": "quotas.aliyuncs.com",
    }


def test_recorded_unreachable_failures_read_as_one_line_each() -> None:
    """tests/data/preflight/unreachable.json: the SDK's own exceptions (a repr inside a repr) become code + reason."""
    failures = unreachable_failures()
    assert {f["api"] for f in failures} == {ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS}
    hosts = {
        ACCOUNT_ATTRIBUTES: "ecs.cn-shanghai.aliyuncs.com",
        AVAILABLE_RESOURCE: "ecs.cn-shanghai.aliyuncs.com",
        NAS_ZONES: "nas.cn-shanghai.aliyuncs.com",
        PRODUCT_QUOTAS: "quotas.aliyuncs.com",
    }
    for failure in failures:
        exc = sdk_exception(failure)
        assert "RetryError(" in exc.message  # type: ignore[attr-defined]  # what the SDK hands over: a Python repr
        host = hosts[failure["api"]]
        assert describe_failure(exc) == (
            "Unreachable",
            f"cannot reach {host}:443: Failed to resolve '{host}' ([Errno -2] Name or service not known)",
        )


def test_a_refused_connection_through_the_real_client_is_one_line() -> None:
    """The real ECS client against a closed local port (nothing leaves the machine): Unreachable, host, port, reason."""
    from alibabacloud_ecs20140526.client import Client as EcsClient

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now: the connection is refused

    class LocalEcs(EcsClient):  # type: ignore[misc]
        def __init__(self, config: Any):
            config.endpoint = f"127.0.0.1:{port}"
            super().__init__(config)

    reader = SdkReader(
        "cn-shanghai",
        client_classes={"ecs": LocalEcs},
        credential=credential_client(CredentialSource("test", "access_key", "id", "secret")),
    )
    with pytest.raises(CloudError) as info:
        reader.call(
            ACCOUNT_ATTRIBUTES, {"RegionId": "cn-shanghai", "AttributeName": ["max-postpaid-instance-vcpu-count"]}
        )
    assert (info.value.code, info.value.message) == (
        "Unreachable",
        f"cannot reach 127.0.0.1:{port}: Failed to establish a new connection: [Errno 111] Connection refused",
    )
    assert str(info.value) == f"ecs.DescribeAccountAttributes: Unreachable: {info.value.message}"


def test_api_and_credential_errors_are_one_line() -> None:
    from alibabacloud_credentials.exceptions import CredentialException
    from alibabacloud_tea_openapi.exceptions import ClientException

    denied = ClientException(
        status_code=403,
        code="Forbidden.RAM",
        message="code: 403, User not authorized to operate on the specified resource.\nrequest id: 1A2B",
        data={"Code": "Forbidden.RAM"},
        request_id="1A2B",
    )
    assert describe_failure(denied) == (
        "Forbidden.RAM",
        "code: 403, User not authorized to operate on the specified resource. request id: 1A2B",
    )
    chain = CredentialException(
        "unable to load credentials from any of the providers in the chain: "
        "['EnvironmentVariableCredentialsProvider: the access key "
        "id is empty', 'EcsRamRoleCredentialsProvider: timed out']"
    )
    assert describe_failure(chain) == (
        "CredentialException",
        "unable to load credentials from any of the providers in the chain: "
        "EnvironmentVariableCredentialsProvider: the access key id is empty; EcsRamRoleCredentialsProvider: timed out",
    )
    code, message = describe_failure(RuntimeError("x" * 1000))
    assert code == "RuntimeError" and len(message) == 300 and message.endswith("…")


def test_reader_signs_with_the_credentials_pulumi_up_uses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ALICLOUD_ACCESS_KEY/SECRET_KEY (+ SECURITY_TOKEN) and ALICLOUD_PROFILE reach the SDK client; read offline."""
    for name in (
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        "ALIBABA_CLOUD_SECURITY_TOKEN",
        "ALICLOUD_PROFILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALICLOUD_ACCESS_KEY", "pulumi-id")
    monkeypatch.setenv("ALICLOUD_SECRET_KEY", "pulumi-secret")
    monkeypatch.setenv("ALICLOUD_SECURITY_TOKEN", "pulumi-token")
    FakeEcs.instances.clear()
    SdkReader("cn-shanghai", client_classes={"ecs": FakeEcs})._client("ecs")
    credential = FakeEcs.instances[-1].config.credential.get_credential()
    assert (credential.access_key_id, credential.access_key_secret, credential.security_token) == (
        "pulumi-id",
        "pulumi-secret",
        "pulumi-token",
    )

    for name in ("ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALICLOUD_SECURITY_TOKEN"):
        monkeypatch.delenv(name)
    config = tmp_path / ".aliyun" / "config.json"
    config.parent.mkdir()
    config.write_text(
        json.dumps(
            {
                "current": "dev",
                "profiles": [
                    {"name": "dev", "mode": "AK", "access_key_id": "dev-id", "access_key_secret": "dev-secret"},
                    {"name": "prod", "mode": "AK", "access_key_id": "prod-id", "access_key_secret": "prod-secret"},
                ],
            }
        )
    )
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ALICLOUD_PROFILE", "prod")
    SdkReader("cn-shanghai", client_classes={"ecs": FakeEcs})._client("ecs")
    credential = FakeEcs.instances[-1].config.credential.get_credential()
    assert (credential.access_key_id, credential.access_key_secret) == (
        "prod-id",
        "prod-secret",
    )  # the named profile, not `current`
