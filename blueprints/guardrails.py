"""Guardrails: security and data-safety rules checked over a Plan (pure; no Pulumi objects)."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from blueprints.plan import Plan, PlannedResource

NODE_TYPES = ("ecs.EcsInstanceSet", "ecs.EcsLaunchTemplate", "ess.ScalingConfiguration", "ecs.Instance")
STATEFUL_TYPES = ("nas.FileSystem", "oss.Bucket", "ecs.EcsDisk", "kms.Key")
PUBLIC_CIDRS = ("0.0.0.0/0", "::/0", "")


@dataclass(frozen=True)
class Finding:
    """One rule violated by one resource."""

    rule: str
    level: str  # error | warning
    resource: str
    message: str


@dataclass(frozen=True)
class Rule:
    """A named check with an id that can be skipped on purpose."""

    id: str
    level: str
    title: str
    check: Callable[[Plan], Iterable[tuple[str, str]]]  # yields (resource name, message)


def _node_public_ip(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, NODE_TYPES):
        bandwidth = r.inputs.get("internetMaxBandwidthOut", 0)
        if bandwidth:
            yield r.name, f"internetMaxBandwidthOut={bandwidth} gives training nodes a public IP; use 0 and the NAT gateway"


def _public_ingress(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, ("ecs.SecurityGroupRule",)):
        if r.inputs.get("type") == "ingress" and "sourceSecurityGroupId" not in r.inputs and r.inputs.get("cidrIp", "") in PUBLIC_CIDRS:
            yield r.name, f"ingress {r.inputs.get('ipProtocol')} {r.inputs.get('portRange')} is open to the internet"


def _disk_encryption(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, ("ecs.EcsLaunchTemplate",)):
        if not (r.inputs.get("systemDisk") or {}).get("encrypted"):
            yield r.name, "launch template system disk is not encrypted"
    for r in _of(plan, ("ess.ScalingConfiguration",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "scaling configuration system disk is not encrypted"


def _storage_protected(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, STATEFUL_TYPES):
        if not (r.protect and r.retain_on_delete):
            yield r.name, "stateful resource must have protect and retain_on_delete from its first deployment"
        if r.delete_before_replace:
            yield r.name, "delete_before_replace on stateful data can lose it on a failed replace"


NAS_ENCRYPTABLE = ("standard", "extreme")  # the NAS API's encrypt_type applies to these file system types only


def _storage_encrypted(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, ("nas.FileSystem",)):
        if r.inputs.get("fileSystemType") in NAS_ENCRYPTABLE and not r.inputs.get("encryptType"):
            yield r.name, "NAS file system is not encrypted (encryptType 0)"


def _unencrypted_storage(plan: Plan) -> Iterator[tuple[str, str]]:
    """Stored data that is not encrypted at rest, including what the API cannot encrypt (so AIT005 does not fire)."""
    for r in _of(plan, ("nas.FileSystem",)):
        kind = r.inputs.get("fileSystemType")
        if kind not in NAS_ENCRYPTABLE and not r.inputs.get("encryptType"):
            yield r.name, (
                f"{kind or 'NAS'} file system is not encrypted at rest: the NAS API encrypts only standard and extreme file"
                " systems, and the profile accepts this with storage.allow_unencrypted_cpfs; keep regulated data off it"
                " or use NAS extreme"
            )
    for r in _of(plan, ("oss.Bucket",)):
        if not r.inputs.get("serverSideEncryptionRule"):
            yield r.name, "OSS bucket has no server-side encryption rule"
    for r in _of(plan, ("ecs.EcsDisk",)):
        if not r.inputs.get("encrypted"):
            yield r.name, "data disk is not encrypted"


def _nas_access_vpc_only(plan: Plan) -> Iterator[tuple[str, str]]:
    """Inside a VPC of the plan; a plan without a VPC (a component tested alone) can only be held to private ranges."""
    vpcs = [ipaddress.ip_network(r.inputs["cidrBlock"]) for r in _of(plan, ("vpc.Network",)) if "cidrBlock" in r.inputs]
    for r in _of(plan, ("nas.AccessRule",)):
        source = r.inputs.get("sourceCidrIp", "")
        try:
            net = ipaddress.ip_network(source)
        except ValueError:
            yield r.name, f"access rule source {source!r} is not a CIDR"
            continue
        if vpcs:
            if not any(net.version == v.version and net.subnet_of(v) for v in vpcs):  # type: ignore[arg-type]
                yield r.name, f"access rule admits {source}, outside the VPC"
        elif not _private(net):
            yield r.name, f"access rule admits {source}, which is not a private range (no VPC in this plan to compare with)"
    for r in _of(plan, ("nas.MountTarget",)):
        if r.inputs.get("accessGroupName") in (None, "DEFAULT_VPC_GROUP_NAME"):
            yield r.name, "mount target uses the default access group"


# Address space a VPC can use (RFC 1918, RFC 4193). Not ``ip_network.is_private``: that includes documentation
# and benchmarking ranges which are not private network space.
PRIVATE_RANGES = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))


def _private(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """Inside one private range (so never the whole internet)."""
    for private in PRIVATE_RANGES:
        if isinstance(net, ipaddress.IPv4Network) and isinstance(private, ipaddress.IPv4Network) and net.subnet_of(private):
            return True
        if isinstance(net, ipaddress.IPv6Network) and isinstance(private, ipaddress.IPv6Network) and net.subnet_of(private):
            return True
    return False


def _role_trust(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, ("ram.Role",)):
        try:
            document = json.loads(r.inputs.get("assumeRolePolicyDocument", "{}"))
        except json.JSONDecodeError:
            yield r.name, "trust policy is not JSON"
            continue
        for statement in document.get("Statement", []):
            services = statement.get("Principal", {}).get("Service", [])
            if set(services) - {"ecs.aliyuncs.com"} or statement.get("Principal", {}).get("RAM"):
                yield r.name, f"trust policy admits more than the ECS service: {statement.get('Principal')}"


def _imdsv2(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, ("ecs.EcsLaunchTemplate",)):
        if r.inputs.get("httpTokens") != "required":
            yield r.name, "instance metadata must require tokens (IMDSv2: httpTokens=required)"


RULES: tuple[Rule, ...] = (
    Rule("AIT001", "error", "training nodes have no public IP", _node_public_ip),
    Rule("AIT002", "error", "no security-group ingress from the internet", _public_ingress),
    Rule("AIT003", "error", "node system disks are encrypted", _disk_encryption),
    Rule("AIT004", "error", "stateful storage is protected and retained", _storage_protected),
    Rule("AIT005", "error", "NAS standard and extreme file systems are encrypted", _storage_encrypted),
    Rule("AIT006", "error", "NAS access is limited to the VPC", _nas_access_vpc_only),
    Rule("AIT007", "error", "node roles trust only the ECS service", _role_trust),
    Rule("AIT008", "warning", "instance metadata requires tokens", _imdsv2),
    Rule("AIT009", "warning", "all stored data is encrypted at rest", _unencrypted_storage),
)


def check(plan: Plan, skip: Iterable[str] = ()) -> list[Finding]:
    """Every finding of every rule not skipped by id, in rule order."""
    skipped = set(skip)
    unknown = skipped - {rule.id for rule in RULES}
    if unknown:
        raise ValueError(f"unknown guardrail ids {sorted(unknown)}; known: {[r.id for r in RULES]}")
    return [Finding(rule.id, rule.level, name, message) for rule in RULES if rule.id not in skipped for name, message in rule.check(plan)]


def with_findings(plan: Plan, skip: Iterable[str] = ()) -> Plan:
    """``plan`` with its ``findings`` filled in from ``check`` (what every output format reports)."""
    return dataclasses.replace(plan, findings=tuple(dataclasses.asdict(f) for f in check(plan, skip)))


def _of(plan: Plan, types: tuple[str, ...]) -> list[PlannedResource]:
    return [r for r in plan.resources if r.short_type in types]
