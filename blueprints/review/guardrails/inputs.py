"""Reading plan inputs for the rules: resources by type, JSON policy documents, references, private ranges."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from blueprints.kinds import Role, has_role
from blueprints.review.plan import Plan, PlannedResource

PUBLIC_CIDRS = ("0.0.0.0/0", "::/0", "")

# Address space a VPC can use (RFC 1918, RFC 4193). Not ``ip_network.is_private``: that includes documentation
# and benchmarking ranges which are not private network space.
PRIVATE_RANGES = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))


def private(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """Inside one private range (so never the whole internet)."""
    for private in PRIVATE_RANGES:
        if (
            isinstance(net, ipaddress.IPv4Network)
            and isinstance(private, ipaddress.IPv4Network)
            and net.subnet_of(private)
        ):
            return True
        if (
            isinstance(net, ipaddress.IPv6Network)
            and isinstance(private, ipaddress.IPv6Network)
            and net.subnet_of(private)
        ):
            return True
    return False


# ---- JSON documents in inputs ----


def json_document(text: Any) -> dict[str, Any] | None:
    """The JSON object in a policy input, or None when it is not one."""
    if not isinstance(text, str):
        return None
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return None
    return document if isinstance(document, dict) else None


def statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The statements of a policy document that are objects."""
    return [s for s in as_list(document.get("Statement")) if isinstance(s, dict)]


def as_list(value: Any) -> list[Any]:
    """Policy fields take one value or a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def referenced(value: Any) -> str | None:
    """The logical name in a plan reference ``${name.id}`` (how the offline plan shows another resource's ID)."""
    match = re.fullmatch(r"\$\{(.+)\.id\}", str(value))
    return match.group(1) if match else None


def of_types(plan: Plan, types: tuple[str, ...]) -> list[PlannedResource]:
    """The plan's resources of the given short types, in plan order."""
    return [r for r in plan.resources if r.short_type in types]


def of_role(plan: Plan, role: Role) -> list[PlannedResource]:
    """The plan's resources whose kind plays ``role`` (``blueprints.kinds``: nodes, stateful data…), in plan order."""
    return [r for r in plan.resources if has_role(r.type, role)]
