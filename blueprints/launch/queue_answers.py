"""Reading the answers of ``kubectl get … -o json`` for ``aitrain queue``: the list's items, Kubernetes resource
quantities, and the fields and status conditions of Kueue's objects, none of which is trusted to have its shape.

A malformed answer is a ``KubectlAnswerError`` (the CLI's exit 1); a field of another type reads as absent.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping

__all__ = [
    "KubectlAnswerError",
    "as_number",
    "conditions",
    "field",
    "is_true",
    "kubectl_items",
    "parse_quantity",
    "text_of",
]

# Kubernetes resource.Quantity suffixes (k8s.io/apimachinery/pkg/api/resource): binary, then decimal SI.
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal(10**3)}
_DECIMAL.update({"M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12), "P": Decimal(10**15)})
_DECIMAL["E"] = Decimal(10**18)
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?")


class KubectlAnswerError(ValueError):
    """An answer of ``kubectl get … -o json`` that is not the list it should be."""


def kubectl_items(answer: str, resource: str) -> list[dict[str, Any]]:
    """The ``items`` of a ``kubectl get RESOURCE -o json`` answer; ``KubectlAnswerError`` when it is not a list."""
    try:
        data = json.loads(answer)
    except (ValueError, RecursionError) as exc:
        raise KubectlAnswerError(f"not JSON ({exc})") from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise KubectlAnswerError(f"expected a List of {resource} with an `items` array")
    return items


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes resource quantity ("8", "1500m", "2Ki", 4) as a number; ``KubectlAnswerError`` otherwise."""
    if isinstance(value, bool):
        raise KubectlAnswerError(f"not a quantity: {value!r}")
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.fullmatch(str(value).strip()) if isinstance(value, str) else None
    if match is None:
        raise KubectlAnswerError(f"not a quantity: {value!r}")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        amount = Decimal(number)
    except InvalidOperation:
        raise KubectlAnswerError(f"not a quantity: {value!r}") from None
    return amount * (_BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix])


def field(data: Any, *keys: str) -> Any:
    """``data[k1][k2]…``, or None where a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def conditions(obj: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The object's ``status.conditions`` by type."""
    found = field(obj, "status", "conditions")
    if not isinstance(found, list):
        return {}
    return {c["type"]: c for c in found if isinstance(c, dict) and isinstance(c.get("type"), str)}


def is_true(condition: Mapping[str, Any] | None) -> bool:
    """Whether the condition is there and its status is True."""
    return condition is not None and condition.get("status") == "True"


def text_of(condition: Mapping[str, Any] | None, key: str) -> str | None:
    """A condition's string field (``reason``, ``message``…), its white space folded; None when empty or absent."""
    value = condition.get(key) if condition is not None else None
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


def as_number(value: Decimal) -> float:
    """A quantity as JSON shows it: a whole number as an int."""
    return int(value) if value == value.to_integral_value() else float(value)
