"""Network rules: no public addresses on nodes, no internet ingress, SSH only through the login node."""

from __future__ import annotations

from typing import Any, Iterator

from blueprints.guardrails.inputs import NODE_TYPES, PUBLIC_CIDRS, of_types, referenced
from blueprints.guardrails.model import Rule
from blueprints.plan import Plan, PlannedResource

# The ``aitrain-component`` tag value of the login node's instance and security group (components/access.py).
LOGIN_TAG = "login"


def node_public_ip(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT001: no public IP on training nodes; EIPs only on the login node and the NAT gateway."""
    for r in of_types(plan, NODE_TYPES):
        bandwidth = r.inputs.get("internetMaxBandwidthOut", 0)
        if bandwidth:
            yield r.name, f"internetMaxBandwidthOut={bandwidth} gives training nodes a public IP; use 0 and the NAT gateway"
    # An EIP is a public address too: only the login node and the NAT gateway may hold one.
    by_name = {r.name: r for r in plan.resources}
    for r in of_types(plan, ("ecs.EipAssociation",)):
        kind = r.inputs.get("instanceType", "EcsInstance")  # the API's default (EipAssociation docstring)
        target = by_name.get(referenced(r.inputs.get("instanceId")) or "")
        if kind == "Nat" and target is not None and target.short_type == "vpc.NatGateway":
            continue
        if kind == "EcsInstance" and target is not None and target.short_type == "ecs.Instance" and _is_login(target):
            continue
        shown = target.name if target is not None else r.inputs.get("instanceId")
        yield r.name, f"EIP bound to {shown!r} ({kind}): only the login node and the NAT gateway may have a public address"


def public_ingress(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT002: no security-group ingress from the internet."""
    for r in of_types(plan, ("ecs.SecurityGroupRule",)):
        if r.inputs.get("type") == "ingress" and "sourceSecurityGroupId" not in r.inputs and r.inputs.get("cidrIp", "") in PUBLIC_CIDRS:
            yield r.name, f"ingress {r.inputs.get('ipProtocol')} {r.inputs.get('portRange')} is open to the internet"


# ---- the login node (AIT012) ----


def ssh_only_via_login(plan: Plan) -> Iterator[tuple[str, str]]:
    """With a login node in the plan, SSH from an address range reaches only it, and it admits nothing else.

    Without a login node the rule has nothing to compare with: the admin range may then reach the nodes'
    private addresses (through a VPN), as ``network.admin_cidr`` always allowed; AIT002 keeps the internet out.
    """
    login_groups = {f"${{{r.name}.id}}" for r in of_types(plan, ("ecs.SecurityGroup",)) if _is_login(r)}
    if not login_groups:
        return
    admin = plan.summary.get("admin_cidr")
    for r in of_types(plan, ("ecs.SecurityGroupRule",)):
        if r.inputs.get("type") != "ingress" or "sourceSecurityGroupId" in r.inputs:
            continue
        protocol, ports, source = r.inputs.get("ipProtocol"), r.inputs.get("portRange"), r.inputs.get("cidrIp")
        if r.inputs.get("securityGroupId") in login_groups:
            if (protocol, ports) != ("tcp", "22/22"):
                yield r.name, f"login node admits {protocol} {ports} from {source}; it admits only TCP 22"
            elif isinstance(admin, str) and source != admin:
                yield r.name, f"login node admits SSH from {source}, not from network.admin_cidr {admin}"
        elif _admits_port(protocol, ports, 22):
            yield r.name, f"ingress {protocol} {ports} from {source} reaches SSH on training nodes; with a login node they admit SSH only from its security group"


def _admits_port(protocol: Any, ports: Any, port: int) -> bool:
    """Whether an ingress rule of ``protocol`` and ``portRange`` ("a/b", "-1/-1" = all) lets TCP ``port`` in."""
    if protocol not in ("tcp", "all"):
        return False
    low, _, high = str(ports).partition("/")
    try:
        first, last = int(low), int(high)
    except ValueError:
        return True  # an unreadable range: assume the worst
    return (first, last) == (-1, -1) or first <= port <= last


def _is_login(r: PlannedResource) -> bool:
    return (r.inputs.get("tags") or {}).get("aitrain-component") == LOGIN_TAG


RULES: tuple[Rule, ...] = (
    Rule("AIT001", "error", "training nodes have no public IP (EIPs only on the login node and the NAT)", node_public_ip),
    Rule("AIT002", "error", "no security-group ingress from the internet", public_ingress),
    Rule("AIT012", "error", "SSH from an address range reaches only the login node", ssh_only_via_login),
)
