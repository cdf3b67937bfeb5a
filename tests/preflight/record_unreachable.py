"""Re-record tests/data/preflight/unreachable.json: what the real SDK raises for each API when no endpoint resolves.

Offline: the real ``SdkReader`` and SDK clients send each request, but ``socket.getaddrinfo`` is replaced by one that
fails as a machine without DNS or network does, so nothing leaves the machine. Run:
``python -m tests.preflight.record_unreachable``.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from blueprints.preflight.aliyun import SdkReader
from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS
from tests.preflight.replay import DATA

REGION = "cn-shanghai"
REQUESTS = {
    ACCOUNT_ATTRIBUTES: {
        "RegionId": REGION,
        "AttributeName": ["max-postpaid-instance-vcpu-count", "used-postpaid-instance-vcpu-count"],
    },
    PRODUCT_QUOTAS: {
        "ProductCode": "ecs-spec",
        "QuotaActionCode": "ecs.gn7e-c16g1.32xlarge",
        "Dimensions": [{"Key": "regionId", "Value": REGION}],
        "MaxResults": 100,
    },
    AVAILABLE_RESOURCE: {
        "RegionId": REGION,
        "ZoneId": "cn-shanghai-b",
        "DestinationResource": "InstanceType",
        "IoOptimized": "optimized",
        "InstanceType": "ecs.gn7e-c16g1.32xlarge",
        "InstanceChargeType": "PostPaid",
        "SpotStrategy": "NoSpot",
    },
    NAS_ZONES: {"RegionId": REGION, "FileSystemType": "extreme"},
}


class _Credential:
    """A static key for signing (the SDK asks for it before it connects)."""

    def get_credential(self) -> Any:
        from alibabacloud_credentials.models import CredentialModel

        return CredentialModel(
            access_key_id="id", access_key_secret="secret", type="access_key", provider_name="static_ak"
        )


def record() -> dict[str, Any]:
    """Call each API once with name resolution failing; keep the SDK's exception classes and inner message."""

    def no_dns(host: Any, *_: Any, **__: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    real, socket.getaddrinfo = socket.getaddrinfo, no_dns
    failures = []
    try:
        reader = SdkReader(REGION, credential=_Credential())
        for api, params in REQUESTS.items():
            from blueprints.preflight.aliyun import build_request

            product, method, request = build_request(api, params)
            try:
                getattr(reader._client(product), method)(request)
            except Exception as exc:  # the SDK's own wrapping, kept as recorded text
                inner = exc.inner_exception  # type: ignore[attr-defined]
                failures.append(
                    {
                        "api": api,
                        "request": params,
                        "exception": f"{type(exc).__module__}.{type(exc).__name__}",
                        "inner": f"{type(inner).__module__}.{type(inner).__name__}",
                        "inner_message": inner.message,
                    }
                )
    finally:
        socket.getaddrinfo = real
    return {
        "_source": "Recorded by tests/preflight/record_unreachable.py "
        "with alibabacloud-tea-openapi 0.4.6, darabonba-core 1.0.9 and "
        "alibabacloud-ecs20140526 7.11.8, nas20170626 3.7.5, quotas20200510 1.2.2: the real SDK clients, with name "
        "resolution failing (no DNS, no network), so each endpoint is unreachable.",
        "failures": failures,
    }


if __name__ == "__main__":
    (DATA / "unreachable.json").write_text(json.dumps(record(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
