"""Shared-storage rules: protected, encrypted, reachable only from the VPC."""

from __future__ import annotations

import ipaddress
from typing import Iterator

from blueprints.guardrails.inputs import STATEFUL_TYPES, of_types, private
from blueprints.guardrails.model import Rule
from blueprints.plan import Plan


def storage_protected(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT004: stateful resources are protected and retained, never replaced delete-first."""
    for r in of_types(plan, STATEFUL_TYPES):
        if not (r.protect and r.retain_on_delete):
            yield r.name, "stateful resource must have protect and retain_on_delete from its first deployment"
        if r.delete_before_replace:
            yield r.name, "delete_before_replace on stateful data can lose it on a failed replace"


NAS_ENCRYPTABLE = ("standard", "extreme")  # the NAS API's encrypt_type applies to these file system types only


def storage_encrypted(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT005: NAS standard and extreme file systems are encrypted."""
    for r in of_types(plan, ("nas.FileSystem",)):
        if r.inputs.get("fileSystemType") in NAS_ENCRYPTABLE and not r.inputs.get("encryptType"):
            yield r.name, "NAS file system is not encrypted (encryptType 0)"


def unencrypted_storage(plan: Plan) -> Iterator[tuple[str, str]]:
    """Stored data that is not encrypted at rest, including what the API cannot encrypt (so AIT005 does not fire)."""
    for r in of_types(plan, ("nas.FileSystem",)):
        kind = r.inputs.get("fileSystemType")
        if kind not in NAS_ENCRYPTABLE and not r.inputs.get("encryptType"):
            yield (
                r.name,
                (
                    f"{kind or 'NAS'} file system is not encrypted at rest: the NAS API encrypts only standard and extreme file"
                    " systems, and the profile accepts this with storage.allow_unencrypted_cpfs; keep regulated data off it"
                    " or use NAS extreme"
                ),
            )
    # OSS buckets are not here: OSS can always encrypt, so a bucket without SSE is AIT010's error.
    for r in of_types(plan, ("ecs.EcsDisk",)):
        if not r.inputs.get("encrypted"):
            yield r.name, "data disk is not encrypted"


def nas_access_vpc_only(plan: Plan) -> Iterator[tuple[str, str]]:
    """Inside a VPC of the plan; a plan without a VPC (a component tested alone) can only be held to private ranges."""
    vpcs = [ipaddress.ip_network(r.inputs["cidrBlock"]) for r in of_types(plan, ("vpc.Network",)) if "cidrBlock" in r.inputs]
    for r in of_types(plan, ("nas.AccessRule",)):
        source = r.inputs.get("sourceCidrIp", "")
        try:
            net = ipaddress.ip_network(source)
        except ValueError:
            yield r.name, f"access rule source {source!r} is not a CIDR"
            continue
        if vpcs:
            if not any(net.version == v.version and net.subnet_of(v) for v in vpcs):  # type: ignore[arg-type]
                yield r.name, f"access rule admits {source}, outside the VPC"
        elif not private(net):
            yield r.name, f"access rule admits {source}, which is not a private range (no VPC in this plan to compare with)"
    for r in of_types(plan, ("nas.MountTarget",)):
        if r.inputs.get("accessGroupName") in (None, "DEFAULT_VPC_GROUP_NAME"):
            yield r.name, "mount target uses the default access group"


RULES: tuple[Rule, ...] = (
    Rule("AIT004", "error", "stateful storage is protected and retained", storage_protected),
    Rule("AIT005", "error", "NAS standard and extreme file systems are encrypted", storage_encrypted),
    Rule("AIT006", "error", "NAS access is limited to the VPC", nas_access_vpc_only),
    Rule("AIT009", "warning", "all stored data is encrypted at rest", unencrypted_storage),
)
