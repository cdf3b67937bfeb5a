"""Account- and VPC-wide controls: customer-managed keys, KMS key hygiene, monitoring, flow logs, audit trail.

Most are opt-in (they cost money or live at account level), so their rules report the ABSENCE at level info: the
reviewer sees the choice and the profile switch that turns the control on.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from blueprints.kinds import Role
from blueprints.review.guardrails.bucket import log_buckets
from blueprints.review.guardrails.inputs import as_list, of_role, of_types, referenced
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan, PlannedResource

# ---- customer-managed keys (AIT019) ----

KMS_SWITCH = "security.kms_key_id"


def _disk_keys(r: PlannedResource) -> list[tuple[bool, Any]]:
    """(encrypted, KMS key id) of every disk a resource creates, from the input names its type uses (SDK 4.0.0)."""
    inputs = r.inputs
    if r.short_type == "ecs.EcsDisk":
        return [(bool(inputs.get("encrypted")), inputs.get("kmsKeyId"))]
    disks = [
        (bool(d.get("encrypted")), d.get("kmsKeyId")) for d in as_list(inputs.get("dataDisks")) if isinstance(d, dict)
    ]
    if r.short_type == "ecs.EcsLaunchTemplate":
        system = inputs.get("systemDisk") or {}
        disks.append((bool(system.get("encrypted")), system.get("kmsKeyId")))
    elif r.short_type in ("ecs.Instance", "ess.ScalingConfiguration"):
        disks.append((bool(inputs.get("systemDiskEncrypted")), inputs.get("systemDiskKmsKeyId")))
    # ecs.EcsInstanceSet has no system-disk key input: its system disk follows its launch template, judged above.
    return disks


def customer_managed_keys(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT019: one info per resource family (disks, Extreme NAS, OSS) whose encryption uses a service-managed key."""
    disks = [
        r.name for r in of_role(plan, Role.DISKS) if any(encrypted and not key for encrypted, key in _disk_keys(r))
    ]
    nas = [
        r.name
        for r in of_types(plan, ("nas.FileSystem",))
        if r.inputs.get("fileSystemType") == "extreme"
        and r.inputs.get("encryptType")
        and not (r.inputs.get("encryptType") == 2 and r.inputs.get("kmsKeyId"))
    ]
    sse = {str(r.inputs.get("bucket")): r.inputs for r in of_types(plan, ("oss.BucketServerSideEncryption",))}
    # A bucket that receives another bucket's access logs keeps an OSS-managed key: OSS writes the log objects itself
    # (components/bucket.py), so the switch below would not change it.
    receiving = log_buckets(plan)
    oss = []
    for r in of_types(plan, ("oss.Bucket",)):
        if str(r.inputs.get("bucket")) in receiving:
            continue
        rule = sse.get(str(r.inputs.get("bucket"))) or r.inputs.get("serverSideEncryptionRule") or {}
        if rule.get("sseAlgorithm") and not (rule.get("sseAlgorithm") == "KMS" and rule.get("kmsMasterKeyId")):
            oss.append(r.name)
    for names, what, how in (
        (disks, "disks are", "kmsKeyId on every disk"),
        (nas, "Extreme NAS is", "encryptType 2 + kmsKeyId"),
        (oss, "OSS objects are", "SSE KMS + kmsMasterKeyId"),
    ):
        if names:
            yield (
                names[0],
                f"{what} encrypted with a service-managed key ({len(names)} resource(s)); "
                f"set {KMS_SWITCH} to use your own KMS key ({how}), which lives in a KMS "
                "instance billed apart (the cost block's 'not in this plan')",
            )


# ---- KMS keys a user's stack creates (AIT026) ----

MAX_ROTATION_DAYS = 365
MIN_PENDING_DAYS = 30  # our choice above the API's minimum of 7 (§7 rule 21)
_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def _interval_days(text: Any) -> float | None:
    """``rotation_interval`` ("365d", "8760h", "31536000s") in days, or None when unreadable."""
    match = re.fullmatch(r"(\d+)([dhms])", str(text))
    return int(match.group(1)) * _SECONDS[match.group(2)] / 86400 if match else None


def kms_key_hygiene(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT026: keys rotate within a year, cannot be deleted by accident, and wait 30+ days before deletion."""
    for r in of_types(plan, ("kms.Key",)):
        rotation, interval = r.inputs.get("automaticRotation", "Disabled"), r.inputs.get("rotationInterval")
        days = _interval_days(interval)
        if rotation != "Enabled":
            yield (
                r.name,
                f"automaticRotation is {rotation}; set Enabled with rotationInterval of {MAX_ROTATION_DAYS}d or less",
            )
        elif days is None or days > MAX_ROTATION_DAYS:
            yield r.name, f"rotationInterval {interval!r} is not {MAX_ROTATION_DAYS}d or less"
        if r.inputs.get("deletionProtection") != "Enabled":
            yield (
                r.name,
                f"deletionProtection is {r.inputs.get('deletionProtection', 'Disabled')}; set Enabled so the key (and "
                "every disk it encrypts) cannot be scheduled for deletion",
            )
        pending = r.inputs.get("pendingWindowInDays")
        if not (isinstance(pending, int) and pending >= MIN_PENDING_DAYS):
            yield (
                r.name,
                f"pendingWindowInDays is {pending}; use {MIN_PENDING_DAYS} "
                "or more (7-366) to leave time to cancel a deletion",
            )


# ---- monitoring (AIT028) ----


def monitoring(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT028: CloudMonitor alarms reach someone (about every compute group), and ESS replaces unhealthy nodes."""
    units = of_role(plan, Role.COMPUTE_GROUP)
    alarms = of_types(plan, ("cms.Alarm",))
    for r in alarms:
        if not as_list(r.inputs.get("contactGroups")):
            yield r.name, "CloudMonitor alarm has no contactGroups: nobody is told when it fires"
    if units and not any(as_list(r.inputs.get("contactGroups")) for r in alarms):
        yield (
            units[0].name,
            (
                "no CloudMonitor alarm with contactGroups watches the "
                f"{len(units)} compute unit(s): add cms.Alarm resources to your"
                " stack (GPU utilisation, instance health, NAS usage), each "
                "with a contact group; aitrain's ess.Alarms only drive scaling"
            ),
        )
    for r in of_types(plan, ("ess.ScalingGroup",)):
        checks = as_list(r.inputs.get("healthCheckTypes")) or [
            r.inputs.get("healthCheckType", "ECS")
        ]  # the API's default is ECS
        if "ECS" not in checks and "LOAD_BALANCER" not in checks:
            yield r.name, f"scaling group health check is {checks}: ESS will not replace an unhealthy node; use ECS"


# ---- VPC flow logs (AIT029) and ActionTrail (AIT032) ----


def flow_logs(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT029: every VPC has a flow log of all its traffic."""
    logs: dict[str | None, PlannedResource] = {
        referenced(r.inputs.get("resourceId")): r
        for r in of_types(plan, ("vpc.FlowLog",))
        if r.inputs.get("resourceType") == "VPC"
    }
    for net in of_types(plan, ("vpc.Network",)):
        log = logs.get(net.name)
        if log is None:
            yield (
                net.name,
                "VPC has no flow log: set security.flow_log {project, logstore} "
                "to record its traffic in Log Service (billed per GB)",
            )
        elif log.inputs.get("trafficType") != "All":
            yield (
                net.name,
                f"flow log {log.name} records trafficType {log.inputs.get('trafficType')!r} only; record All",
            )


def audit_trail(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT032: an ActionTrail trail records every event in every region (the absence is said on the plan's VPC)."""
    trails = of_types(plan, ("actiontrail.Trail",))
    networks = of_types(plan, ("vpc.Network",))
    if not trails and networks:
        yield (
            networks[0].name,
            (
                "no ActionTrail trail in this plan: set security.actiontrail to record every API call in all regions,"
                " or confirm the account already has such a trail"
            ),
        )
    for r in trails:
        region, events = (
            r.inputs.get("trailRegion"),
            r.inputs.get("eventRw", "All"),
        )  # eventRw defaults to All (provider doc)
        if region != "All":
            yield r.name, f"trail records region {region!r} only; set trailRegion All"
        if events != "All":
            yield r.name, f"trail records {events} events only; set eventRw All"


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT019",
        "info",
        "disks, Extreme NAS and OSS use a customer-managed KMS key",
        customer_managed_keys,
        rationale=(
            "a key you own can be disabled, rotated and audited; CKV_ALI_6, "
            "CKV_ALI_8; KICS f262118c, 5f670f9d, f20e97f9; CIS 5.9"
        ),
        fix=f"set {KMS_SWITCH} to a KMS key id in the region",
        references=(11, 13),
    ),
    Rule(
        "AIT026",
        "error",
        "KMS keys rotate, are deletion-protected and wait 30 days before deletion",
        kms_key_hygiene,
        rationale=(
            "a deleted key makes every disk and object it encrypts unreadable; CKV_ALI_27; KICS cb319d87; infraguard "
            "kms-key-delete-protection-enabled, kms-key-rotation-enabled"
        ),
        fix=(
            "kms.Key(automatic_rotation='Enabled', rotation_interval='365d', "
            "deletion_protection='Enabled', pending_window_in_days=30)"
        ),
        references=(21,),
    ),
    Rule(
        "AIT028",
        "info",
        "alarms reach a contact group and ESS checks node health",
        monitoring,
        rationale=(
            "a failed GPU node or full NAS goes unseen without alarms; "
            "infraguard cms-alarm-name-required, ess-group-health-check; CIS 2.x"
        ),
        fix=(
            "add cms.Alarm resources with contact_groups for each "
            "compute unit; keep the scaling group's health check at ECS"
        ),
        references=(23,),
    ),
    Rule(
        "AIT029",
        "info",
        "every VPC has a flow log of all traffic",
        flow_logs,
        rationale=(
            "without flow logs an exfiltration through the NAT leaves no record; "
            "KICS d2731f3d; CIS 2.5, 3.3; infraguard vpc-flow-logs-enabled"
        ),
        fix="set security.flow_log {project, logstore} (vpc.FlowLog resourceType VPC, trafficType All)",
        references=(24,),
    ),
    Rule(
        "AIT032",
        "info",
        "ActionTrail records all events in all regions",
        audit_trail,
        rationale="API calls that change the infrastructure need an audit record; CKV_ALI_4, CKV_ALI_5; CIS 2.1",
        fix="set security.actiontrail (actiontrail.Trail trailRegion All, eventRw All, to SLS or OSS)",
        references=(27,),
    ),
)
