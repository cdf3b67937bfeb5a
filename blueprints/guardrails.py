"""Guardrails: security and data-safety rules checked over a Plan (pure; no Pulumi objects)."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from blueprints import objectstore
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


# The ``aitrain-component`` tag value of the login node's instance and security group (components/access.py).
LOGIN_TAG = "login"


def _node_public_ip(plan: Plan) -> Iterator[tuple[str, str]]:
    for r in _of(plan, NODE_TYPES):
        bandwidth = r.inputs.get("internetMaxBandwidthOut", 0)
        if bandwidth:
            yield r.name, f"internetMaxBandwidthOut={bandwidth} gives training nodes a public IP; use 0 and the NAT gateway"
    # An EIP is a public address too: only the login node and the NAT gateway may hold one.
    by_name = {r.name: r for r in plan.resources}
    for r in _of(plan, ("ecs.EipAssociation",)):
        kind = r.inputs.get("instanceType", "EcsInstance")  # the API's default (EipAssociation docstring)
        target = by_name.get(_referenced(r.inputs.get("instanceId")) or "")
        if kind == "Nat" and target is not None and target.short_type == "vpc.NatGateway":
            continue
        if kind == "EcsInstance" and target is not None and target.short_type == "ecs.Instance" and _is_login(target):
            continue
        shown = target.name if target is not None else r.inputs.get("instanceId")
        yield r.name, f"EIP bound to {shown!r} ({kind}): only the login node and the NAT gateway may have a public address"


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
    for r in _of(plan, ("ecs.Instance",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "instance system disk is not encrypted"
    # Scratch lives on data disks: every one a node is built with (each of these types takes ``dataDisks[].encrypted``).
    for r in _of(plan, NODE_TYPES):
        for index, disk in enumerate(r.inputs.get("dataDisks") or []):
            if not (disk or {}).get("encrypted"):
                yield r.name, f"data disk {index} ({disk.get('category') or disk.get('diskCategory') or 'disk'}, {disk.get('size')} GiB) is not encrypted"


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
    # OSS buckets are not here: OSS can always encrypt, so a bucket without SSE is AIT010's error.
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
    for r in _of(plan, ("ecs.EcsLaunchTemplate", "ecs.Instance")):
        if r.inputs.get("httpTokens") != "required":
            yield r.name, "instance metadata must require tokens (IMDSv2: httpTokens=required)"


# ---- the dataset and checkpoint bucket (AIT010, AIT011) ----

# Split resources that configure a bucket, keyed by their ``bucket`` input (the bucket's name).
_BUCKET_SETTINGS = ("oss.BucketAcl", "oss.BucketPublicAccessBlock", "oss.BucketVersioning", "oss.BucketServerSideEncryption", "oss.BucketPolicy")
SSE_ALGORITHMS = ("AES256", "KMS")  # oss.BucketServerSideEncryption ``sse_algorithm`` values (SDK 4.0.0)


def _bucket_safety(plan: Plan) -> Iterator[tuple[str, str]]:
    """Each created bucket: private, public access blocked, versioned, encrypted, HTTPS-only, never force-destroyed."""
    settings: dict[tuple[str, str], PlannedResource] = {}
    for r in _of(plan, _BUCKET_SETTINGS):
        settings[(r.short_type, str(r.inputs.get("bucket")))] = r
    for r in _of(plan, ("oss.Bucket",)):
        name = str(r.inputs.get("bucket"))
        acl = settings.get(("oss.BucketAcl", name))
        if (acl.inputs.get("acl") if acl else r.inputs.get("acl")) != "private":
            yield r.name, f"bucket {name} has no private ACL (oss.BucketAcl acl=private)"
        block = settings.get(("oss.BucketPublicAccessBlock", name))
        if not (block and block.inputs.get("blockPublicAccess") is True):
            yield r.name, f"bucket {name} does not block public access (oss.BucketPublicAccessBlock block_public_access=True)"
        versioning = settings.get(("oss.BucketVersioning", name))
        status = versioning.inputs.get("status") if versioning else (r.inputs.get("versioning") or {}).get("status")
        if status != "Enabled":
            yield r.name, f"bucket {name} is not versioned (oss.BucketVersioning status=Enabled); an overwritten checkpoint would be lost"
        sse = settings.get(("oss.BucketServerSideEncryption", name))
        algorithm = sse.inputs.get("sseAlgorithm") if sse else (r.inputs.get("serverSideEncryptionRule") or {}).get("sseAlgorithm")
        if algorithm not in SSE_ALGORITHMS:
            yield r.name, f"bucket {name} has no server-side encryption (oss.BucketServerSideEncryption AES256 or KMS)"
        if r.inputs.get("forceDestroy"):
            yield r.name, f"bucket {name} has force_destroy, which deletes every object with the bucket"
        policy = settings.get(("oss.BucketPolicy", name))
        document = _json(policy.inputs.get("policy") if policy else r.inputs.get("policy"))
        if document is None:
            yield r.name, f"bucket {name} has no bucket policy that denies plain HTTP (acs:SecureTransport false)"
            continue
        statements = _statements(document)
        if any(s.get("Effect") == "Allow" and "*" in _list(s.get("Principal")) for s in statements):
            yield r.name, f"bucket {name} policy allows Principal \"*\", which opens the bucket to everyone"
        if not any(_denies_plain_http(s, name) for s in statements):
            yield r.name, f"bucket {name} policy does not deny plain HTTP on the bucket and its objects (acs:SecureTransport false)"


def _denies_plain_http(statement: dict[str, Any], bucket: str) -> bool:
    """A Deny of every OSS action, for everyone, on the bucket and its objects, when the request is not HTTPS."""
    condition = (statement.get("Condition") or {}).get("Bool") or {}
    insecure = [str(v).lower() for v in _list(condition.get("acs:SecureTransport"))] == ["false"]
    return (
        statement.get("Effect") == "Deny"
        and "*" in _list(statement.get("Principal"))
        and bool({"oss:*", "*"} & set(_list(statement.get("Action"))))
        and {objectstore.bucket_arn(bucket), objectstore.objects_arn(bucket)} <= set(_list(statement.get("Resource")))
        and insecure
    )


def _bucket_policy_scope(plan: Plan) -> Iterator[tuple[str, str]]:
    """Every RAM policy that grants OSS actions names, in each Resource, one of the plan's buckets and nothing wider."""
    buckets = {str(r.inputs.get("bucket")) for r in _of(plan, ("oss.Bucket",))}
    if isinstance(plan.summary.get("bucket"), str):  # an adopted bucket has no oss.Bucket; the summary names it
        buckets.add(plan.summary["bucket"])
    for r in _of(plan, ("ram.Policy",)):
        document = _json(r.inputs.get("policyDocument"))
        if document is None:
            yield r.name, "policy document is not JSON"
            continue
        statements = _statements(document)
        if not any(a == "*" or str(a).startswith("oss:") for s in statements for a in _list(s.get("Action"))):
            continue  # not about OSS
        named: set[str] = set()
        for s in statements:
            if "NotResource" in s or "NotAction" in s:
                yield r.name, "policy uses NotResource/NotAction, which grants everything not listed"
            for resource in _list(s.get("Resource")):
                bucket = _bucket_of(str(resource))
                if bucket is None:
                    yield r.name, f"Resource {resource!r} is not one named OSS bucket (no wildcards in the bucket name)"
                elif buckets and bucket not in buckets:
                    yield r.name, f"Resource {resource!r} names bucket {bucket}, not this plan's ({', '.join(sorted(buckets))})"
                else:
                    named.add(bucket)
        if not buckets and len(named) > 1:
            yield r.name, f"policy names {len(named)} buckets ({', '.join(sorted(named))}); a node policy names one"


_OSS_RESOURCE = re.compile(r"acs:oss:[^:]*:[^:]*:([^/]*)(?:/.*)?")


def _bucket_of(resource: str) -> str | None:
    """The bucket an ``acs:oss:…:<bucket>[/key]`` resource names, or None when it is not exactly one bucket."""
    match = _OSS_RESOURCE.fullmatch(resource)
    if not match or any(c in match.group(1) for c in "*?") or not match.group(1):
        return None
    return match.group(1)


# ---- the login node (AIT012) ----


def _ssh_only_via_login(plan: Plan) -> Iterator[tuple[str, str]]:
    """With a login node in the plan, SSH from an address range reaches only it, and it admits nothing else.

    Without a login node the rule has nothing to compare with: the admin range may then reach the nodes'
    private addresses (through a VPN), as ``network.admin_cidr`` always allowed; AIT002 keeps the internet out.
    """
    login_groups = {f"${{{r.name}.id}}" for r in _of(plan, ("ecs.SecurityGroup",)) if _is_login(r)}
    if not login_groups:
        return
    admin = plan.summary.get("admin_cidr")
    for r in _of(plan, ("ecs.SecurityGroupRule",)):
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


# ---- local scratch (AIT013) ----

SCRATCH_PER_MEMORY = 3  # the article's "memory : SSD = 1 : 3"


def _scratch_ratio(plan: Plan) -> Iterator[tuple[str, str]]:
    scratch, memory = plan.summary.get("scratch_gib_per_node"), plan.summary.get("memory_gib_per_node")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (scratch, memory)):
        return  # a plan without the figures (a component alone) has nothing to compare
    wanted = SCRATCH_PER_MEMORY * memory  # type: ignore[operator]
    if scratch < wanted:  # type: ignore[operator]
        yield "summary.scratch_gib_per_node", (
            f"scratch {_gib(scratch)} GiB per node is below {SCRATCH_PER_MEMORY} × {_gib(memory)} GiB memory = {_gib(wanted)} GiB"
            f" (the article's memory : SSD = 1 : {SCRATCH_PER_MEMORY}); raise compute.scratch_gib to at least {_gib(wanted)}"
        )


def _gib(value: Any) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


# ---- JSON documents in inputs ----


def _json(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return None
    return document if isinstance(document, dict) else None


def _statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in _list(document.get("Statement")) if isinstance(s, dict)]


def _list(value: Any) -> list[Any]:
    """Policy fields take one value or a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _referenced(value: Any) -> str | None:
    """The logical name in a plan reference ``${name.id}`` (how the offline plan shows another resource's ID)."""
    match = re.fullmatch(r"\$\{(.+)\.id\}", str(value))
    return match.group(1) if match else None


RULES: tuple[Rule, ...] = (
    Rule("AIT001", "error", "training nodes have no public IP (EIPs only on the login node and the NAT)", _node_public_ip),
    Rule("AIT002", "error", "no security-group ingress from the internet", _public_ingress),
    Rule("AIT003", "error", "node system and data disks are encrypted", _disk_encryption),
    Rule("AIT004", "error", "stateful storage is protected and retained", _storage_protected),
    Rule("AIT005", "error", "NAS standard and extreme file systems are encrypted", _storage_encrypted),
    Rule("AIT006", "error", "NAS access is limited to the VPC", _nas_access_vpc_only),
    Rule("AIT007", "error", "node roles trust only the ECS service", _role_trust),
    Rule("AIT008", "warning", "instance metadata requires tokens", _imdsv2),
    Rule("AIT009", "warning", "all stored data is encrypted at rest", _unencrypted_storage),
    Rule("AIT010", "error", "OSS buckets are private, versioned, encrypted and HTTPS-only", _bucket_safety),
    Rule("AIT011", "error", "node OSS policies name only the plan's bucket", _bucket_policy_scope),
    Rule("AIT012", "error", "SSH from an address range reaches only the login node", _ssh_only_via_login),
    Rule("AIT013", "warning", "local scratch is at least 3 × memory per node", _scratch_ratio),
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
