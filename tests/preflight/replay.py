"""Replay recorded API responses (tests/data/preflight/*.json) as a CloudReader: no SDK, no sockets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from blueprints.preflight.checks import ACCOUNT_ATTRIBUTES, AVAILABLE_RESOURCE, NAS_ZONES, PRODUCT_QUOTAS, CloudError

DATA = Path(__file__).resolve().parents[1] / "data" / "preflight"
FIXTURES = {
    ACCOUNT_ATTRIBUTES: "describe_account_attributes.json",
    AVAILABLE_RESOURCE: "describe_available_resource.json",
    NAS_ZONES: "nas_describe_zones.json",
    PRODUCT_QUOTAS: "list_product_quotas.json",
}


def load(api: str) -> dict[str, Any]:
    """One fixture file (a ``_source`` and its recorded ``responses``)."""
    data: dict[str, Any] = json.loads((DATA / FIXTURES[api]).read_text(encoding="utf-8"))
    return data


class ReplayReader:
    """Answers each call with the first recorded response whose ``request`` keys all equal the call's parameters."""

    def __init__(self, overrides: Mapping[str, Any] | None = None):
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.overrides = dict(overrides or {})  # api → body, or an Exception to raise

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append((api, dict(params)))
        if api in self.overrides:
            answer = self.overrides[api]
            if isinstance(answer, Exception):
                raise answer
            return dict(answer)
        for recorded in load(api)["responses"]:
            if all(params.get(k) == v for k, v in recorded["request"].items()):
                return dict(recorded["body"])
        raise CloudError(api, "NoRecording", f"no recorded response for {dict(params)}")


def unreachable_failures() -> list[dict[str, Any]]:
    """The recorded failures of tests/data/preflight/unreachable.json (one per API)."""
    failures: list[dict[str, Any]] = json.loads((DATA / "unreachable.json").read_text(encoding="utf-8"))["failures"]
    return failures


def sdk_exception(failure: Mapping[str, Any]) -> Exception:
    """Rebuild the SDK's own exception from a recorded failure, the way the SDK builds it after its retries."""
    from darabonba.exceptions import RetryError, UnretryableException
    from darabonba.policy.retry import RetryPolicyContext

    assert (failure["exception"], failure["inner"]) == (
        "darabonba.exceptions.UnretryableException",
        "darabonba.exceptions.RetryError",
    )
    return UnretryableException(RetryPolicyContext(retries_attempted=0, exception=RetryError(failure["inner_message"])))


def unreachable_client_classes() -> dict[str, Any]:
    """SDK client classes (per product) whose every call raises the recorded 'unreachable' exception of its API."""
    from blueprints.preflight.aliyun import build_request

    by_method: dict[tuple[str, str], Mapping[str, Any]] = {}
    for failure in unreachable_failures():
        product, method, _ = build_request(failure["api"], failure["request"])
        by_method[(product, method)] = failure

    def client_class(product: str) -> Any:
        class Unreachable:
            def __init__(self, config: Any):
                self.config = config

            def __getattr__(self, method: str) -> Any:
                def call(request: Any) -> Any:
                    raise sdk_exception(by_method[(product, method)])

                return call

        return Unreachable

    return {product: client_class(product) for product, _ in by_method}
