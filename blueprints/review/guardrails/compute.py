"""Node rules: encrypted disks, IMDSv2, scratch-only inline
disks, local scratch sized to memory, safe resource options."""

from __future__ import annotations

import re
from typing import Any, Iterator, TypeGuard

from blueprints.kinds import Role, has_role
from blueprints.review.guardrails.inputs import of_role, of_types
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan


def disk_encryption(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT003: every system and data disk a node is built with is encrypted."""
    for r in of_types(plan, ("ecs.EcsLaunchTemplate",)):
        if not (r.inputs.get("systemDisk") or {}).get("encrypted"):
            yield r.name, "launch template system disk is not encrypted"
    for r in of_types(plan, ("ess.ScalingConfiguration",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "scaling configuration system disk is not encrypted"
    for r in of_types(plan, ("ecs.Instance",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "instance system disk is not encrypted"
    for r in of_types(plan, ("cs.NodePool",)):
        if not r.inputs.get("systemDiskEncrypted"):
            yield r.name, "node pool system disk is not encrypted (systemDiskEncrypted)"
    # Scratch lives on data disks: every one a node is built with (each of these types takes ``dataDisks[].encrypted``).
    for r in of_role(plan, Role.NODE):
        for index, disk in enumerate(r.inputs.get("dataDisks") or []):
            disk = disk or {}
            if not disk.get("encrypted"):
                yield (
                    r.name,
                    f"data disk {index} ({disk.get('category') or disk.get('diskCategory') or 'disk'}, "
                    f"{disk.get('size')} GiB) is not encrypted",
                )


def imdsv2(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT008: node metadata requires a session token (IMDSv2), which only launch templates and instances can say."""
    for r in of_types(plan, ("ecs.EcsLaunchTemplate", "ecs.Instance")):
        if r.inputs.get("httpTokens") != "required":
            yield r.name, "instance metadata must require tokens (IMDSv2: httpTokens=required)"
    # ess.ScalingConfiguration has no http_tokens argument (pulumi-alicloud 4.0.0), so its nodes always answer IMDSv1.
    for r in of_types(plan, ("ess.ScalingConfiguration",)):
        yield (
            r.name,
            "a scaling configuration cannot require metadata tokens "
            "(it has no httpTokens); build the pool from a launch"
            " template with httpTokens=required, or skip AIT008 with a reason when eRDMA needs the configuration",
        )
    # An ACK node pool says it in instanceMetadataOptions.httpTokens
    # (default 'optional'; SDK 4.0.0 NodePoolInstanceMetadataOptions).
    for r in of_types(plan, ("cs.NodePool",)):
        if (r.inputs.get("instanceMetadataOptions") or {}).get("httpTokens") != "required":
            yield (
                r.name,
                "node pool metadata must require tokens (IMDSv2: "
                "instanceMetadataOptions.httpTokens=required; ACK 1.28 or later)",
            )
    # ecs.EcsInstanceSet has no http_tokens either: it gets IMDSv2 only from the launch template it is built from.
    for r in of_types(plan, ("ecs.EcsInstanceSet",)):
        if not r.inputs.get("launchTemplateId"):
            yield (
                r.name,
                "an instance set without a launchTemplateId cannot require metadata tokens; build it from a launch "
                "template with httpTokens=required",
            )


# ---- inline data disks are scratch (AIT014) ----

SCRATCH_DISK_NAME = "aitrain-scratch"  # the name the components give every inline data disk (components/base.py)


def inline_disks_are_scratch(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT014: inline data disks are named scratch and go with
    the node; separate disks outlive it and keep snapshots."""
    for r in of_role(plan, Role.NODE):
        for index, disk in enumerate(r.inputs.get("dataDisks") or []):
            disk = disk or {}
            name = disk.get("name") or disk.get("diskName")
            if name != SCRATCH_DISK_NAME:
                yield (
                    r.name,
                    f"inline data disk {index} is named {name!r}, not {SCRATCH_DISK_NAME!r}: inline disks are scratch "
                    "and are deleted with the node; keep persistent data on NAS, OSS or a separate ecs.EcsDisk",
                )
            elif disk.get("deleteWithInstance") is False:
                yield (
                    r.name,
                    f"inline scratch disk {index} has deleteWithInstance=false: it would outlive the node unmanaged; "
                    "persistent data belongs on a separate ecs.EcsDisk",
                )
    # The API defaults are false for both (EcsDisk docstring, SDK 4.0.0): only an explicit true loses data.
    for r in of_types(plan, ("ecs.EcsDisk",)):
        if r.inputs.get("deleteWithInstance") is True:
            yield r.name, "data disk has deleteWithInstance=true: releasing the node deletes the data; set it false"
        if r.inputs.get("deleteAutoSnapshot") is True:
            yield (
                r.name,
                "data disk has deleteAutoSnapshot=true: releasing the "
                "disk deletes its automatic snapshots; set it false",
            )


# ---- local scratch (AIT013) ----

SCRATCH_PER_MEMORY = 3  # the article's "memory : SSD = 1 : 3"


def _is_number(value: object) -> TypeGuard[int | float]:
    """A summary figure: an int or a float, never a bool (which Python counts as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def scratch_ratio(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT013: local scratch per node is at least 3 × its memory."""
    scratch, memory = plan.summary.get("scratch_gib_per_node"), plan.summary.get("memory_gib_per_node")
    if not (_is_number(scratch) and _is_number(memory)):
        return  # a plan without the figures (a component alone) has nothing to compare
    wanted = SCRATCH_PER_MEMORY * memory
    if scratch < wanted:
        yield (
            "summary.scratch_gib_per_node",
            (
                f"scratch {_gib(scratch)} GiB per node is below {SCRATCH_PER_MEMORY} "
                f"× {_gib(memory)} GiB memory = {_gib(wanted)} GiB"
                f" (the article's memory : SSD = 1 : {SCRATCH_PER_MEMORY}); "
                f"raise compute.scratch_gib to at least {_gib(wanted)}"
            ),
        )


def _gib(value: Any) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


# ---- resource options (AIT017) ----

# Input names (any segment of an ignore_changes path, engine camelCase) whose drift must never be ignored, by what
# they guard: ignoring them lets the cloud console weaken the resource while every preview stays clean.
_GUARDED_INPUTS = {
    "encryption": (
        "encrypted",
        "systemDiskEncrypted",
        "encryptType",
        "kmsKeyId",
        "kmsMasterKeyId",
        "sseAlgorithm",
        "serverSideEncryptionRule",
    ),
    "ACL": ("acl", "blockPublicAccess", "userAccessType", "rwAccessType", "sourceCidrIp", "accessGroupName"),
    "policy": ("policy", "policyDocument", "assumeRolePolicyDocument", "httpTokens"),
    "security-group": (
        "securityGroupId",
        "securityGroupIds",
        "cidrIp",
        "ipv6CidrIp",
        "portRange",
        "ipProtocol",
        "sourceSecurityGroupId",
        "innerAccessPolicy",
    ),
    "public-IP": ("internetMaxBandwidthOut", "internetMaxBandwidthIn", "allocatePublicIp", "associatePublicIpAddress"),
}
_GUARDED = {name.lower(): kind for kind, names in _GUARDED_INPUTS.items() for name in names}


def safe_options(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT017: ignore_changes never hides a safety input; stateful resources are never replaced delete-first."""
    for r in plan.resources:
        for path in r.ignore_changes:
            hits = sorted({_GUARDED[s.lower()] for s in re.split(r"[.\[\]]+", path) if s.lower() in _GUARDED})
            if hits:
                yield (
                    r.name,
                    f"ignore_changes lists {path!r}, a {'/'.join(hits)} "
                    "input: drift there would never be shown or corrected",
                )
        if r.delete_before_replace and has_role(r.type, Role.STATEFUL):
            yield r.name, "delete_before_replace on a stateful resource deletes the data before its replacement exists"


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT003",
        "error",
        "node system and data disks are encrypted",
        disk_encryption,
        rationale=(
            "A disk snapshot or a released disk must not expose training "
            "data; infraguard ecs-disk-encrypted, CKV_ALI_7/8/32; CIS 4.1/4.2."
        ),
        fix=(
            "Keep the components' encrypted=True on systemDisk and every "
            "dataDisks entry (and systemDiskEncrypted on instances)."
        ),
        references=(11,),
    ),
    Rule(
        "AIT008",
        "error",
        "instance metadata requires tokens (IMDSv2)",
        imdsv2,
        rationale=(
            "IMDSv1 hands the node role's STS token to any SSRF in a training container; infraguard "
            "ecs-instance-meta-data-mode-check."
        ),
        fix=(
            "Build nodes from a launch template with httpTokens=required; an eRDMA pool that needs "
            "ess.ScalingConfiguration skips AIT008 with a reason."
        ),
        references=(18,),
    ),
    Rule(
        "AIT013",
        "warning",
        "local scratch is at least 3 × memory per node",
        scratch_ratio,
        rationale=(
            "Checkpoints and shuffled shards staged locally need room; the source article's memory : SSD = 1 : 3."
        ),
        fix="Raise compute.scratch_gib to at least 3 × the node's memory.",
        references=(),
    ),
    Rule(
        "AIT014",
        "error",
        "inline node disks hold scratch only; separate data disks outlive the node",
        inline_disks_are_scratch,
        rationale=(
            "Inline disks are released with the instance "
            "(https://github.com/aliyun/terraform-provider-alicloud/issues/2035, "
            "https://github.com/aliyun/terraform-provider-alicloud/issues/9194); "
            "infraguard ecs-disk-retain-auto-snapshot."
        ),
        fix=(
            "Name inline data disks aitrain-scratch and keep data on NAS/OSS or "
            "an ecs.EcsDisk with deleteWithInstance and deleteAutoSnapshot false."
        ),
        references=(2,),
    ),
    Rule(
        "AIT017",
        "error",
        "resource options never weaken safety",
        safe_options,
        rationale=(
            "ignore_changes hides console drift from every preview and delete-first replacement loses data "
            "(https://github.com/pulumi/pulumi/issues/16179, https://github.com/pulumi/pulumi/issues/16629, "
            "https://github.com/pulumi/pulumi/issues/19924)."
        ),
        fix="Remove the safety input from ignore_changes (or the delete_before_replace option) in the program.",
        references=(7,),
    ),
)
