"""How nodes are reached and what they reach: key-pair logins, egress, addresses, tags."""

from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from blueprints.core.layout import RESERVED_PER_VSWITCH, vswitch_headroom
from blueprints.kinds import Role
from blueprints.review.guardrails.inputs import as_list, of_role, of_types, referenced
from blueprints.review.guardrails.model import Rule
from blueprints.review.guardrails.network import port_range
from blueprints.review.plan import Plan, PlannedResource

LOGIN_COMPONENT = "login"  # the ``aitrain-component`` tag of the login node (components/access.py; network.LOGIN_TAG)


def _component(r: PlannedResource) -> Any:
    return (r.inputs.get("tags") or {}).get("aitrain-component")


# ---- key-pair logins only (AIT023) ----


def key_pair_login(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT023: no node type carries a password; the login node logs in with a key pair."""
    for r in of_role(plan, Role.NODE):
        if r.inputs.get("password") or r.inputs.get("kmsEncryptedPassword"):
            yield (
                r.name,
                "a login password is set: passwords are guessed and shared; "
                "log in with a key pair (keyName / keyPairName) only",
            )
    for r in of_types(plan, ("ecs.Instance",)):
        if _component(r) == LOGIN_COMPONENT and not r.inputs.get("keyName"):
            yield r.name, "the login node has no keyName: set access.key_pair_name to an existing ECS key pair"


# ---- egress allow-list (AIT027) ----

# Alibaba Cloud's service range (metadata, DNS, mirrors, OSS internal endpoints; components/network.py
# ALIBABA_SERVICE_CIDR): accepted by every allow-list, so never "too wide".
SERVICE_CIDR = ipaddress.ip_network("100.64.0.0/10")
# An accept wider than this prefix (a /7 or shorter: 2 × 16.7 M addresses and more) outside the VPC and the service
# range is the internet in all but name; /8 is the widest block one organisation holds.
WIDEST_EGRESS_PREFIX = 8
# A service listens on one port or a handful (HTTP and HTTPS are two entries); more than 16 ports in one accept is a
# range of many services, wide enough for any tunnel. Port ranges of the allow-list read 'low/high'.
MAX_EGRESS_PORTS = 16


def _priority(r: PlannedResource) -> int:
    value = r.inputs.get("priority", 1)  # the API's default (SecurityGroupRule docstring, SDK 4.0.0)
    return value if isinstance(value, int) else 1


def egress_allow_list(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT027: every security group ends its egress with a drop-all below every accept, and no accept is the internet.

    Every group, the login node's included: a host whose group has no list is the way out for data the others
    keep in. A drop-all after an accept of 0.0.0.0/0 on every port is a list in name only, so each accept of a
    group with a drop-all is judged too (wider than /8, every protocol, or more than ``MAX_EGRESS_PORTS`` ports,
    outside the VPC and Alibaba Cloud's service range).
    """
    rules = [r for r in of_types(plan, ("ecs.SecurityGroupRule",)) if r.inputs.get("type") == "egress"]
    vpcs = [
        ipaddress.ip_network(r.inputs["cidrBlock"], strict=False)
        for r in of_types(plan, ("vpc.Network",))
        if isinstance(r.inputs.get("cidrBlock"), str)
    ]
    for group in of_types(plan, ("ecs.SecurityGroup",)):
        mine = [r for r in rules if referenced(r.inputs.get("securityGroupId")) == group.name]
        drops = [r for r in mine if _drops_everything(r)]
        accepts = [r for r in mine if r.inputs.get("policy", "accept") == "accept"]
        if not drops:
            yield (
                group.name,
                "egress unrestricted: no egress drop-all rule (all, -1/-1, 0.0.0.0/0, policy drop); a node can send "
                "data anywhere. Turn on the profile's egress allow-list",
            )
            continue
        # A lower number is evaluated first, and on equal priority a drop applies before an accept (ECS security
        # group rule priority; verify against the ECS docs), so the drop-all must have the larger number.
        lowest = max(_priority(d) for d in drops)
        shadowed = [a.name for a in accepts if _priority(a) >= lowest]
        if shadowed:
            yield (
                group.name,
                f"the egress drop-all (priority {lowest}) is not below the accept rule(s) {', '.join(shadowed)}: give "
                "it a larger priority number than every accept",
            )
        for a in accepts:
            problem = _too_wide(a, vpcs)
            if problem:
                yield (
                    a.name,
                    f"egress accept {a.inputs.get('ipProtocol')} {a.inputs.get('portRange')} to "
                    f"{a.inputs.get('cidrIp')} {problem}: the drop-all after it keeps little in; name the "
                    "destination's own range and port",
                )


def _too_wide(r: PlannedResource, vpcs: list[Any]) -> str | None:
    """Why an egress accept is wider than an allow-list entry should be, or None."""
    if r.inputs.get("sourceSecurityGroupId") or r.inputs.get("ipv6CidrIp"):
        # sourceSecurityGroupId is the peer group on egress too (SDK 4.0.0 SecurityGroupRule): judged itself. IPv6:
        # the allow-list is IPv4 only.
        return None
    try:
        net = ipaddress.ip_network(str(r.inputs.get("cidrIp") or "0.0.0.0/0"), strict=False)
    except ValueError:
        return "has a destination that is not a CIDR"
    if net.version == 4 and any(v.version == 4 and net.subnet_of(v) for v in (*vpcs, SERVICE_CIDR)):
        return None
    if net.prefixlen < WIDEST_EGRESS_PREFIX:
        return (
            f"reaches {net.num_addresses:,} addresses (wider than "
            f"/{WIDEST_EGRESS_PREFIX}) outside the VPC and Alibaba Cloud's 100.64.0.0/10"
        )
    protocol = r.inputs.get("ipProtocol")
    if protocol == "all":
        return "accepts every protocol and port outside the VPC and Alibaba Cloud's 100.64.0.0/10"
    if protocol in ("tcp", "udp"):
        span = port_range(r.inputs.get("portRange"))
        if span is None:
            return "has an unreadable port range"
        ports = span[1] - span[0] + 1
        if ports > MAX_EGRESS_PORTS:
            return f"opens {ports:,} ports (more than {MAX_EGRESS_PORTS}, a range of many services)"
    return None


def _drops_everything(r: PlannedResource) -> bool:
    return (r.inputs.get("policy"), r.inputs.get("ipProtocol"), r.inputs.get("portRange"), r.inputs.get("cidrIp")) == (
        "drop",
        "all",
        "-1/-1",
        "0.0.0.0/0",
    )


# ---- vSwitch capacity (AIT030) ----


def vswitch_capacity(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT030: the compute vSwitches have free addresses for every node the plan can start, plus headroom."""
    switches = {r.name: r for r in of_types(plan, ("vpc.Switch",))}
    used: list[Any] = []
    nodes = 0
    single_zone_groups = []
    for r in of_types(plan, ("ess.ScalingGroup",)):
        nodes += _count(r.inputs.get("maxSize"))
        ids = as_list(r.inputs.get("vswitchIds"))
        used += ids
        if len(ids) < 2:
            single_zone_groups.append(r.name)
    # An ACK node pool holds up to scalingConfig.maxSize nodes when it scales, else desiredSize (older: nodeCount).
    for r in of_types(plan, ("cs.NodePool",)):
        scaling = r.inputs.get("scalingConfig") or {}
        nodes += _count(
            scaling.get("maxSize")
            if scaling.get("enable")
            else r.inputs.get("desiredSize") or r.inputs.get("nodeCount")
        )
        ids = as_list(r.inputs.get("vswitchIds"))
        used += ids
        if scaling.get("enable") and len(ids) < 2:
            single_zone_groups.append(r.name)
    for r in of_types(plan, ("ecs.EcsInstanceSet", "ecs.Instance")):
        if _component(r) == LOGIN_COMPONENT:
            continue  # the login node has a vSwitch of its own (components/network.py login_vswitch), not a compute one
        nodes += _count(r.inputs.get("amount")) if r.short_type == "ecs.EcsInstanceSet" else 1
        used.append(r.inputs.get("vswitchId"))
    names = list(dict.fromkeys(referenced(v) for v in used if v is not None))
    if not names or not all(n in switches and "cidrBlock" in switches[n].inputs for n in names):
        return  # an adopted vSwitch (an ID, not a resource of the plan) has a CIDR the plan cannot see
    known = [switches[n] for n in names if n]
    free = sum(
        max(ipaddress.ip_network(s.inputs["cidrBlock"], strict=False).num_addresses - RESERVED_PER_VSWITCH, 0)
        for s in known
    )
    headroom = vswitch_headroom(nodes)
    if free < nodes + headroom:
        cidrs = ", ".join(f"{s.name} {s.inputs['cidrBlock']}" for s in known)
        spread = (
            f"; {', '.join(single_zone_groups)} also uses one vSwitch only: spread it over two zones or more"
            if single_zone_groups
            else ""
        )
        yield (
            known[0].name,
            f"compute vSwitches ({cidrs}) have {free} free addresses "
            f"({RESERVED_PER_VSWITCH} reserved per vSwitch), below {nodes} nodes"
            f" + {headroom} headroom = {nodes + headroom}; use a larger network.vpc_cidr or fewer nodes{spread}",
        )


def _count(value: Any) -> int:
    if isinstance(value, str) and value.isdigit():
        return int(value)  # cs.NodePool desiredSize is a string (SDK 4.0.0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# ---- tags (AIT031) ----

MANAGED_BY = "managed-by"
OWNER_KEYS = ("owner", "team")
CLASSIFICATION_KEYS = ("data-classification", "data_classification", "classification")


def tags(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT031: tagged resources carry managed-by; a profile's plan names an owner and a data classification."""
    keys: set[str] = set()
    for r in plan.resources:
        value = r.inputs.get("tags")
        if not isinstance(value, dict):
            continue
        keys |= {str(k).lower() for k in value}
        if MANAGED_BY not in value:
            yield r.name, f"tags lack {MANAGED_BY}: a reviewer cannot tell this resource is managed by aitrain"
    if not plan.summary.get("blueprint") or plan.summary.get("blueprint") == "component":
        return  # a component tested alone has no profile to add the tags to
    missing = [
        what
        for what, names in (
            ("an owner (owner or team)", OWNER_KEYS),
            ("a data classification (data-classification)", CLASSIFICATION_KEYS),
        )
        if not keys & set(names)
    ]
    if missing:
        yield (
            "tags",
            f"no resource carries {' or '.join(missing)} tag; add them to the profile's tags so the owner and the "
            "data's sensitivity are on every resource",
        )


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT023",
        "error",
        "key-pair login only",
        key_pair_login,
        rationale="Passwords are guessed and shared, key pairs are not; infraguard ecs-instance-login-use-keypair.",
        fix="Remove password inputs; set access.key_pair_name for the login node.",
        references=(19,),
    ),
    Rule(
        "AIT027",
        "warning",
        "every security group's egress is an allow-list of narrow accepts",
        egress_allow_list,
        rationale=(
            "Open egress lets a compromised node (or the login node) copy the dataset "
            "anywhere, and an accept of 0.0.0.0/0 before the drop-all is open egress; "
            "infraguard ecs-security-group-egress-not-all-access; CIS 3.5."
        ),
        fix=(
            "Turn on the profile's egress allow-list (accepts for the VPC, Alibaba internal services and listed CIDRs, "
            "then a drop-all); list each destination's own range (/8 or narrower) and at most 16 TCP ports."
        ),
        references=(22,),
    ),
    Rule(
        "AIT030",
        "error",
        "compute vSwitches have addresses for every node",
        vswitch_capacity,
        rationale=(
            "A pool that cannot get addresses fails to scale mid-run; infraguard vswitch-available-ip-count, "
            "ess-scaling-group-attach-multi-switch."
        ),
        fix="Widen network.vpc_cidr (larger vSwitches) or lower the node count; spread pools over two zones or more.",
        references=(25,),
    ),
    Rule(
        "AIT031",
        "info",
        "resources carry managed-by, owner and data-classification tags",
        tags,
        rationale="Untagged resources cannot be attributed or audited; infraguard ecs-instance-tags-required.",
        fix="Add owner (or team) and data-classification to the profile's tags; keep the components' managed-by tag.",
        references=(26,),
    ),
)
