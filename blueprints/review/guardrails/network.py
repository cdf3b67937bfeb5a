"""Network rules: no public addresses on nodes, no internet ingress, SSH only through the login node, no risky ports."""

from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from blueprints.kinds import Role
from blueprints.review.guardrails.inputs import PUBLIC_CIDRS, of_role, of_types, private, referenced
from blueprints.review.guardrails.kubernetes import node_pool_public_ip
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan, PlannedResource

# The ``aitrain-component`` tag value of the login node's instance and security group (components/access.py).
LOGIN_TAG = "login"


def node_public_ip(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT001: no public IP on training nodes; EIPs only on the login node and the NAT gateway."""
    for r in of_role(plan, Role.NODE):
        bandwidth = r.inputs.get("internetMaxBandwidthOut", 0)
        if bandwidth:
            yield (
                r.name,
                f"internetMaxBandwidthOut={bandwidth} gives training nodes a public IP; use 0 and the NAT gateway",
            )
    for r in of_types(plan, ("cs.NodePool",)):
        for message in node_pool_public_ip(r):
            yield r.name, message
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
        yield (
            r.name,
            f"EIP bound to {shown!r} ({kind}): only the login node and the NAT gateway may have a public address",
        )


def public_ingress(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT002: no security-group ingress from the internet."""
    for r in of_types(plan, ("ecs.SecurityGroupRule",)):
        if (
            r.inputs.get("type") == "ingress"
            and "sourceSecurityGroupId" not in r.inputs
            and r.inputs.get("cidrIp", "") in PUBLIC_CIDRS
        ):
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
            yield (
                r.name,
                f"ingress {protocol} {ports} from {source} reaches SSH on training "
                "nodes; with a login node they admit SSH only from its security group",
            )


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


# ---- risky ingress from outside the private ranges (AIT018) ----

# Ports scanners and worms try first: telnet, RDP, databases and caches, Jupyter, TensorBoard, the Docker API
# (infraguard sg-risky-ports-check; KICS 60587dbd, 2ae9d554, dd706080; CIS 4.3/4.4).
RISKY_PORTS = {
    23: "telnet",
    3389: "RDP",
    3306: "MySQL",
    1433: "SQL Server",
    5432: "PostgreSQL",
    27017: "MongoDB",
    6379: "Redis",
    8888: "Jupyter",
    6006: "TensorBoard",
    2375: "Docker API",
    2376: "Docker API (TLS)",
}
_PORTED = ("tcp", "udp")  # icmp and gre take -1/-1 as their only range: it does not mean "every port"


def port_range(ports: Any) -> tuple[int, int] | None:
    """``"a/b"`` as ``(a, b)``, ``"-1/-1"`` as ``(1, 65535)``; None when it cannot be read."""
    low, _, high = str(ports).partition("/")
    try:
        first, last = int(low), int(high)
    except ValueError:
        return None
    return (1, 65535) if (first, last) == (-1, -1) else (first, last)


def risky_ingress(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT018: from a non-private range (admin ranges included)
    no ingress of every protocol, every port or a risky port.

    Ranges overlap, never compare as strings: ``20/30`` opens telnet, ``1/65535`` is ``-1/-1``. ``cidrIp`` takes IPv4
    only (IPv6 belongs in ``ipv6CidrIp``, SecurityGroupRule docstring, SDK 4.0.0).
    """
    for r in of_types(plan, ("ecs.SecurityGroupRule",)):
        if r.inputs.get("type") != "ingress" or r.inputs.get("sourceSecurityGroupId"):
            continue
        protocol, ports = r.inputs.get("ipProtocol"), r.inputs.get("portRange")
        for key in ("cidrIp", "ipv6CidrIp"):
            source = r.inputs.get(key)
            if not source:
                continue  # an empty source is the whole internet: AIT002 reports it
            try:
                net = ipaddress.ip_network(str(source), strict=False)
            except ValueError:
                yield r.name, f"{key} {source!r} is not a CIDR"
                continue
            if key == "cidrIp" and net.version == 6:
                yield r.name, f"cidrIp {source} is IPv6; cidrIp takes IPv4 only (IPv6 ranges go in ipv6CidrIp)"
            if private(net):
                continue
            problem = _risk(protocol, ports)
            if problem:
                yield (
                    r.name,
                    f"ingress {protocol} {ports} from {source}, outside the private "
                    f"ranges, {problem}; from an admin range admit only TCP 22",
                )


def _risk(protocol: Any, ports: Any) -> str | None:
    """What an ingress rule of ``protocol`` and ``portRange`` opens that must stay closed to non-private ranges."""
    if protocol == "all":
        return "admits every protocol"
    if protocol not in _PORTED:
        return None
    span = port_range(ports)
    if span is None:
        return f"has an unreadable port range {ports!r}"
    first, last = span
    if (first, last) == (1, 65535):
        return "admits every port"
    hit = [f"{port} {RISKY_PORTS[port]}" for port in sorted(RISKY_PORTS) if first <= port <= last]
    return f"opens risky port(s) {', '.join(hit)}" if hit else None


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT001",
        "error",
        "training nodes have no public IP (EIPs only on the login node and the NAT)",
        node_public_ip,
        rationale=(
            "A node with a public address is reachable by the whole internet; infraguard ecs-instance-no-public-ip, "
            "ess-scaling-configuration-enabled-internet-check."
        ),
        fix=(
            "Keep internetMaxBandwidthOut=0 on nodes; reach the internet "
            "through the NAT gateway and admins through the login node."
        ),
        references=(10,),
    ),
    Rule(
        "AIT002",
        "error",
        "no security-group ingress from the internet",
        public_ingress,
        rationale="0.0.0.0/0, ::/0 or an empty source admits everyone; CKV_ALI_2/3; CIS 4.3/4.4.",
        fix="Set network.admin_cidr to your office or VPN range, or reach the nodes through the login node.",
        references=(8,),
    ),
    Rule(
        "AIT012",
        "error",
        "SSH from an address range reaches only the login node",
        ssh_only_via_login,
        rationale=(
            "One audited entry point (a bastion) instead of SSH on "
            "every node; infraguard ecs-instance-no-public-ip; CIS 4.3."
        ),
        fix=(
            "Admit TCP 22 from network.admin_cidr on the login node "
            "only; nodes admit SSH from the login node's security group."
        ),
        references=(8,),
    ),
    Rule(
        "AIT018",
        "error",
        "no all-protocol, all-port or risky-port ingress from non-private ranges",
        risky_ingress,
        rationale=(
            "Open databases, Jupyter, TensorBoard and Docker APIs are the first things scanned; infraguard "
            "sg-risky-ports-check; KICS 60587dbd, 2ae9d554, dd706080."
        ),
        fix=(
            "Admit only TCP 22 from network.admin_cidr (IPv4 in cidrIp); "
            "reach other services through an SSH tunnel via the login node."
        ),
        references=(8, 9),
    ),
)
