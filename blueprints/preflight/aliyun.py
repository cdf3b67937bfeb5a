"""The SDK adapter: a CloudReader backed by Alibaba Cloud's Python SDKs (ECS, NAS, Quota Center).

Imported only by ``aitrain preflight`` (the SDKs are the ``preflight`` extra), and it imports them only when it
builds its clients, so nothing else in aitrain needs them. Signing, endpoints and the credential chain are the
SDK's (``alibabacloud_credentials.client.Client`` with the default chain), never ours.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS, CloudError

# Milliseconds (the SDK Config's unit): a preflight waits for an answer, not forever.
CONNECT_TIMEOUT_MS = 5_000
READ_TIMEOUT_MS = 15_000

INSTALL_HINT = "install the SDKs with `pip install 'aitrain[preflight]'`"


class SdkMissing(Exception):
    """The preflight extra is not installed."""


def sdk_client_classes() -> dict[str, Callable[[Any], Any]]:
    """The SDK client class per product (``ecs``, ``nas``, ``quotas``); SdkMissing when the extra is absent."""
    try:
        from alibabacloud_ecs20140526.client import Client as EcsClient
        from alibabacloud_nas20170626.client import Client as NasClient
        from alibabacloud_quotas20200510.client import Client as QuotasClient
    except ImportError as exc:
        raise SdkMissing(f"{exc.name or exc}: {INSTALL_HINT}") from None
    return {"ecs": EcsClient, "nas": NasClient, "quotas": QuotasClient}


def build_request(api: str, params: Mapping[str, Any]) -> tuple[str, str, Any]:
    """(product, client method, SDK request object) for one API call given in the API's own parameter names."""
    if api == ACCOUNT_ATTRIBUTES:
        from alibabacloud_ecs20140526 import models as ecs

        return "ecs", "describe_account_attributes", ecs.DescribeAccountAttributesRequest(region_id=params["RegionId"], attribute_name=list(params["AttributeName"]))
    if api == AVAILABLE_RESOURCE:
        from alibabacloud_ecs20140526 import models as ecs

        return "ecs", "describe_available_resource", ecs.DescribeAvailableResourceRequest(
            region_id=params["RegionId"],
            zone_id=params.get("ZoneId"),
            destination_resource=params["DestinationResource"],
            io_optimized=params.get("IoOptimized"),
            instance_type=params.get("InstanceType"),
            instance_charge_type=params.get("InstanceChargeType"),
            spot_strategy=params.get("SpotStrategy"),
        )
    if api == NAS_ZONES:
        from alibabacloud_nas20170626 import models as nas

        return "nas", "describe_zones", nas.DescribeZonesRequest(region_id=params["RegionId"], file_system_type=params.get("FileSystemType"))
    if api == PRODUCT_QUOTAS:
        from alibabacloud_quotas20200510 import models as quotas

        dimensions = [quotas.ListProductQuotasRequestDimensions(key=d["Key"], value=d["Value"]) for d in params.get("Dimensions", [])]
        return "quotas", "list_product_quotas", quotas.ListProductQuotasRequest(
            product_code=params["ProductCode"], quota_action_code=params.get("QuotaActionCode"), dimensions=dimensions or None, max_results=params.get("MaxResults"),
        )
    raise ValueError(f"unknown API {api}")


class SdkReader:
    """CloudReader over the SDK clients of one region; clients are built on first use and reused."""

    def __init__(self, region: str, *, client_classes: Mapping[str, Callable[[Any], Any]] | None = None, credential: Any = None):
        self.region = region
        self._classes = client_classes
        self._credential = credential
        self._clients: dict[str, Any] = {}

    def _client(self, product: str) -> Any:
        if product not in self._clients:
            from alibabacloud_tea_openapi import models as open_api

            classes = self._classes if self._classes is not None else sdk_client_classes()
            if self._credential is None:
                from alibabacloud_credentials.client import Client as CredentialClient

                self._credential = CredentialClient()  # the SDK's default chain (env, OIDC, CLI profile, file, RAM role)
            config = open_api.Config(credential=self._credential, region_id=self.region, connect_timeout=CONNECT_TIMEOUT_MS, read_timeout=READ_TIMEOUT_MS)
            self._clients[product] = classes[product](config)
        return self._clients[product]

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request; any failure (permission, throttling, network, credentials) becomes a CloudError."""
        product, method, request = build_request(api, params)
        try:
            response = getattr(self._client(product), method)(request)
            body = response.body.to_map()
        except Exception as exc:  # every SDK failure (Tea, HTTP, credential chain) means "unanswered", with its message
            code = getattr(exc, "code", None) or type(exc).__name__
            message = " ".join(str(getattr(exc, "message", None) or exc).split())[:300]
            raise CloudError(api, str(code), message) from None
        return body if isinstance(body, dict) else {}
