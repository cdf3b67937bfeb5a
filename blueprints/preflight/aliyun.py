"""The SDK adapter: a CloudReader backed by Alibaba Cloud's Python SDKs (ECS, NAS, Quota Center).

Imported only by ``aitrain preflight`` (the SDKs are the ``preflight`` extra), and it imports them only when it
builds its clients, so nothing else in aitrain needs them. Signing, endpoints and the credential chain are the
SDK's (``alibabacloud_credentials``: an explicit provider for the sources `pulumi up` reads, else its default
chain), never ours. A failed call becomes one readable line (``describe_failure``), never a repr of the SDK's exception.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Mapping

from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS, CloudError
from blueprints.preflight.credentials import CredentialSource, resolve_credentials
from blueprints.preflight.prices import DESCRIBE_PRICE

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

        return (
            "ecs",
            "describe_account_attributes",
            ecs.DescribeAccountAttributesRequest(
                region_id=params["RegionId"], attribute_name=list(params["AttributeName"])
            ),
        )
    if api == AVAILABLE_RESOURCE:
        from alibabacloud_ecs20140526 import models as ecs

        return (
            "ecs",
            "describe_available_resource",
            ecs.DescribeAvailableResourceRequest(
                region_id=params["RegionId"],
                zone_id=params.get("ZoneId"),
                destination_resource=params["DestinationResource"],
                io_optimized=params.get("IoOptimized"),
                instance_type=params.get("InstanceType"),
                instance_charge_type=params.get("InstanceChargeType"),
                spot_strategy=params.get("SpotStrategy"),
            ),
        )
    if api == DESCRIBE_PRICE:
        from alibabacloud_ecs20140526 import models as ecs

        return (
            "ecs",
            "describe_price",
            ecs.DescribePriceRequest(
                region_id=params["RegionId"],
                resource_type=params["ResourceType"],
                instance_type=params["InstanceType"],
                price_unit=params["PriceUnit"],
            ),
        )
    if api == NAS_ZONES:
        from alibabacloud_nas20170626 import models as nas

        return (
            "nas",
            "describe_zones",
            nas.DescribeZonesRequest(region_id=params["RegionId"], file_system_type=params.get("FileSystemType")),
        )
    if api == PRODUCT_QUOTAS:
        from alibabacloud_quotas20200510 import models as quotas

        dimensions = [
            quotas.ListProductQuotasRequestDimensions(key=d["Key"], value=d["Value"])
            for d in params.get("Dimensions", [])
        ]
        return (
            "quotas",
            "list_product_quotas",
            quotas.ListProductQuotasRequest(
                product_code=params["ProductCode"],
                quota_action_code=params.get("QuotaActionCode"),
                dimensions=dimensions or None,
                max_results=params.get("MaxResults"),
            ),
        )
    raise ValueError(f"unknown API {api}")


class SdkReader:
    """CloudReader over the SDK clients of one region; clients are built on first use and reused."""

    def __init__(
        self, region: str, *, client_classes: Mapping[str, Callable[[Any], Any]] | None = None, credential: Any = None
    ):
        self.region = region
        self._classes = client_classes
        self._credential = credential
        self._clients: dict[str, Any] = {}

    def _client(self, product: str) -> Any:
        if product not in self._clients:
            from alibabacloud_tea_openapi import models as open_api

            classes = self._classes if self._classes is not None else sdk_client_classes()
            if self._credential is None:
                self._credential = credential_client(resolve_credentials())
            config = open_api.Config(
                credential=self._credential,
                region_id=self.region,
                connect_timeout=CONNECT_TIMEOUT_MS,
                read_timeout=READ_TIMEOUT_MS,
            )
            self._clients[product] = classes[product](config)
        return self._clients[product]

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request; any failure (permission, throttling, network, credentials) becomes a CloudError."""
        product, method, request = build_request(api, params)
        try:
            response = getattr(self._client(product), method)(request)
            body = response.body.to_map()
        except Exception as exc:  # every SDK failure (Tea, HTTP, credential chain) means "unanswered", with its message
            raise CloudError(api, *describe_failure(exc)) from None
        return body if isinstance(body, dict) else {}


def credential_client(source: CredentialSource | None) -> Any:
    """The SDK credential client for ``source``: a static key,
    an STS token, a named CLI profile, or the default chain."""
    from alibabacloud_credentials.client import Client as CredentialClient
    from alibabacloud_credentials.provider import (
        CLIProfileCredentialsProvider,
        StaticAKCredentialsProvider,
        StaticSTSCredentialsProvider,
    )

    if source is None or source.kind == "default_chain":
        return CredentialClient()  # the SDK's default chain (env, OIDC, CLI profile, file, RAM role)
    if source.kind == "access_key":
        return CredentialClient(
            provider=StaticAKCredentialsProvider(
                access_key_id=source.access_key_id, access_key_secret=source.access_key_secret
            )
        )
    if source.kind == "sts":
        return CredentialClient(
            provider=StaticSTSCredentialsProvider(
                access_key_id=source.access_key_id,
                access_key_secret=source.access_key_secret,
                security_token=source.security_token,
            )
        )
    if source.kind == "cli_profile":
        return CredentialClient(
            provider=CLIProfileCredentialsProvider(profile_name=source.profile, profile_file=source.profile_file)
        )
    raise ValueError(f"unknown credential kind {source.kind}")


MAX_MESSAGE = 300
# urllib3's connection failures, as requests words them inside the SDK's RetryError:
# "HTTPSConnectionPool(host='H', port=P): Max retries exceeded
# with url: /… (Caused by NewConnectionError(\"…: REASON\"))".
_POOL = re.compile(r"HTTPS?ConnectionPool\(host='(?P<host>[^']*)', port=(?P<port>\d+)\): (?P<rest>.*)", re.S)
_OBJECT = re.compile(r"<[^<>]* object at 0x[0-9a-fA-F]+>(: )?")
_CONNECTION = re.compile(r"\w+\(host='[^']*', port=\d+\): ")


def describe_failure(exc: BaseException) -> tuple[str, str]:
    """(code, message) of an SDK failure as one line: the API's error code and message, or "Unreachable" and why.

    The SDK wraps a network failure in ``UnretryableException(RetryError(str(requests error)))`` whose message is a
    Python repr; this unwraps to the innermost message and reduces urllib3's text to host, port and reason.
    """
    inner = getattr(exc, "inner_exception", None)
    while isinstance(inner, BaseException):
        exc, inner = inner, getattr(inner, "inner_exception", None)
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) and message else str(exc) or type(exc).__name__
    pool = _POOL.search(text)
    if pool is not None:
        code, text = "Unreachable", f"cannot reach {pool['host']}:{pool['port']}: {_reason(pool['rest'])}"
    elif type(exc).__name__ == "CredentialException":
        text = _chain_errors(text)
    one_line = " ".join(str(text).split())
    if len(one_line) > MAX_MESSAGE:
        one_line = one_line[: MAX_MESSAGE - 1] + "…"
    return str(code or type(exc).__name__), one_line


def _reason(rest: str) -> str:
    """The human part of urllib3's failure text: "Connection
    refused", "Failed to resolve 'H' (…)", "Read timed out."."""
    if "(Caused by " in rest:
        rest = rest.split("(Caused by ", 1)[1]
        rest = re.sub(r"^\w+\(", "", rest).rstrip(")")
    rest = _CONNECTION.sub("", _OBJECT.sub("", rest))
    return rest.strip(" \"',")


def _chain_errors(text: str) -> str:
    """The default chain's "unable to load credentials …: ['Provider: why', …]" as "…: Provider: why; …"."""
    head, sep, tail = text.partition(": [")
    if not sep:
        return text
    try:
        items = ast.literal_eval("[" + tail)
    except (ValueError, SyntaxError):
        return text
    return f"{head}: {'; '.join(str(i) for i in items)}" if isinstance(items, list) else text
