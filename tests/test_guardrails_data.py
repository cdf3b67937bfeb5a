"""The data-safety and account rules (AIT004-006, 009, 010, 015, 016, 019, 021, 022, 024-026, 028, 029, 032).

Each case changes one thing in a preset plan made SECURE (the shapes common.md's defaults produce: root_squash, NAT
and EIP deletion protection, an Extreme NAS snapshot policy, a TLS 1.2+ HTTPS config) and OPTED IN (customer key,
flow log, trail, alarms, access logging), and asserts the one finding that change adds: rule, level, resource and
message. Findings other rules report on the base plan are subtracted, so the cases hold whatever other rules exist.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from blueprints.review import guardrails
from blueprints.review.guardrails import Finding, account, bucket, storage
from blueprints.review.plan import Plan, PlannedResource

MED = "medical-imaging"
AUTO = "autoscaling-training"
KEY = "key-0123456789abcdef"  # a KMS key id as the profile would pass it
OWNED = {rule.id for module in (storage, bucket, account) for rule in module.RULES}
NODE_TYPES = ("ecs.EcsLaunchTemplate", "ecs.EcsInstanceSet", "ecs.Instance", "ess.ScalingConfiguration")


# ---- building plans ----


def resource(short_type: str, name: str, inputs: dict[str, Any], **options: Any) -> PlannedResource:
    """A custom resource of ``short_type`` (``oss.BucketHttpsConfig``) as the offline plan records it."""
    module, kind = short_type.split(".")
    return PlannedResource(
        f"alicloud:{module}/{kind[0].lower() + kind[1:]}:{kind}", name, None, True, inputs, **options
    )


def add(plan: Plan, *resources: PlannedResource) -> Plan:
    return dataclasses.replace(plan, resources=(*plan.resources, *resources))


def change(plan: Plan, name: str, drop: tuple[str, ...] = (), **inputs: Any) -> Plan:
    """``plan`` with resource ``name``'s inputs merged with ``inputs`` (and ``drop`` keys removed)."""
    assert any(r.name == name for r in plan.resources), name
    return dataclasses.replace(
        plan,
        resources=tuple(
            dataclasses.replace(r, inputs={k: v for k, v in {**r.inputs, **inputs}.items() if k not in drop})
            if r.name == name
            else r
            for r in plan.resources
        ),
    )


def options(plan: Plan, name: str, **opts: Any) -> Plan:
    assert any(r.name == name for r in plan.resources), name
    return dataclasses.replace(
        plan, resources=tuple(dataclasses.replace(r, **opts) if r.name == name else r for r in plan.resources)
    )


def remove(plan: Plan, name: str) -> Plan:
    assert any(r.name == name for r in plan.resources), name
    return dataclasses.replace(plan, resources=tuple(r for r in plan.resources if r.name != name))


def named(plan: Plan, short_type: str) -> PlannedResource:
    return next(r for r in plan.resources if r.short_type == short_type)


def secure(plan: Plan) -> Plan:
    """The preset with the secure shapes the DEFAULTS helper adds (common.md "Resource shapes")."""
    p = plan.profile_name
    plan = change(plan, f"{p}-network-nat", deletionProtection=True)
    plan = change(plan, f"{p}-network-nat-eip", deletionProtection=True)
    plan = change(plan, f"{p}-storage-access-rule-cn-shanghai-a", userAccessType="root_squash")
    data = named(plan, "oss.Bucket").inputs["bucket"]
    log = f"{data}-logs"  # the access-log bucket the DataBucket unit creates by default
    # Whatever the defaults already add of these two gives way to the known shapes the cases below change by name.
    plan = dataclasses.replace(
        plan,
        resources=tuple(
            r for r in plan.resources if r.short_type not in ("oss.BucketHttpsConfig", "nas.AutoSnapshotPolicy")
        ),
    )
    plan = add(
        plan,
        resource(
            "oss.BucketHttpsConfig",
            f"{p}-data-https-config",
            {"bucket": data, "enable": True, "tlsVersions": ["TLSv1.2", "TLSv1.3"]},
        ),
        resource(
            "oss.BucketHttpsConfig",
            f"{p}-data-log-https-config",
            {"bucket": log, "enable": True, "tlsVersions": ["TLSv1.2", "TLSv1.3"]},
        ),
    )
    if named(plan, "nas.FileSystem").inputs.get("fileSystemType") == "extreme":
        plan = add(
            plan,
            resource(
                "nas.AutoSnapshotPolicy",
                f"{p}-storage-snapshots",
                {"fileSystemType": "extreme", "retentionDays": 7, "repeatWeekdays": ["1", "4"], "timePoints": ["2"]},
            ),
        )
    return plan


def with_kms_keys(plan: Plan) -> Plan:
    """Every disk, the Extreme NAS and the bucket's SSE on the profile's own key (``security.kms_key_id``)."""

    def keyed(r: PlannedResource) -> PlannedResource:
        inputs = dict(r.inputs)
        if r.short_type in NODE_TYPES:
            inputs["dataDisks"] = [{**d, "kmsKeyId": KEY} for d in inputs.get("dataDisks") or []]
            if r.short_type == "ecs.EcsLaunchTemplate":
                inputs["systemDisk"] = {**inputs.get("systemDisk", {}), "kmsKeyId": KEY}
            elif r.short_type != "ecs.EcsInstanceSet":
                inputs["systemDiskKmsKeyId"] = KEY
        elif r.short_type == "nas.FileSystem" and inputs.get("fileSystemType") == "extreme":
            inputs.update(encryptType=2, kmsKeyId=KEY)
        elif r.short_type == "oss.BucketServerSideEncryption":
            inputs.update(sseAlgorithm="KMS", kmsMasterKeyId=KEY)
        return dataclasses.replace(r, inputs=inputs)

    return dataclasses.replace(plan, resources=tuple(keyed(r) for r in plan.resources))


def opted_in(plan: Plan) -> Plan:
    """``secure(plan)`` plus every opt-in control: customer key,
    flow log, trail, an alarm (access logging is on by default)."""
    p, plan = plan.profile_name, with_kms_keys(secure(plan))
    vpc = named(plan, "vpc.Network").name
    return add(
        plan,
        resource(
            "vpc.FlowLog",
            f"{p}-network-flow-log",
            {
                "resourceType": "VPC",
                "resourceId": f"${{{vpc}.id}}",
                "trafficType": "All",
                "projectName": "audit",
                "logStoreName": "vpc-flow",
            },
        ),
        resource(
            "actiontrail.Trail",
            f"{p}-trail",
            {
                "trailName": "aitrain",
                "trailRegion": "All",
                "eventRw": "All",
                "slsProjectArn": "acs:log:cn-shanghai:1:project/audit",
            },
            protect=True,
            retain_on_delete=True,
        ),
        resource(
            "cms.Alarm",
            f"{p}-gpu-alarm",
            {"name": "gpu", "project": "acs_ecs_dashboard", "metric": "GPUUtilization", "contactGroups": ["oncall"]},
        ),
    )


@pytest.fixture(scope="module")
def plans(medical_plan, autoscaling_plan) -> dict[str, Plan]:
    return {MED: medical_plan, AUTO: autoscaling_plan}


def added(base: Plan, plan: Plan) -> list[Finding]:
    """The findings ``plan`` has that ``base`` has not (so other rules' findings on the base do not matter)."""
    before = guardrails.check(base)
    return [f for f in guardrails.check(plan) if f not in before]


def owned(plan: Plan) -> list[Finding]:
    return [f for f in guardrails.check(plan) if f.rule in OWNED]


# ---- the presets ----


def test_opted_in_presets_break_none_of_these_rules(plans):
    """Only the Extreme NAS policy no resource can apply stays (AIT016:
    until ApplyAutoSnapshotPolicy runs, then a reasoned skip)."""
    assert [(f.rule, f.resource) for f in owned(opted_in(plans[MED]))] == [("AIT016", f"{MED}-storage-fs")]
    assert owned(opted_in(plans[AUTO])) == []


def test_secure_presets_carry_only_the_opt_in_infos(plans):
    """What a reviewer sees with the default profile: the opt-in controls that are off, each naming its switch."""
    med, auto = secure(plans[MED]), secure(plans[AUTO])
    assert [(f.rule, f.level, f.resource) for f in owned(med)] == [
        ("AIT016", "warning", f"{MED}-storage-fs"),
        ("AIT019", "info", f"{MED}-cluster-nodes-0"),
        ("AIT019", "info", f"{MED}-storage-fs"),
        ("AIT019", "info", f"{MED}-data-bucket"),
        ("AIT028", "info", f"{MED}-cluster-nodes-0"),
        ("AIT029", "info", f"{MED}-network-vpc"),
        ("AIT032", "info", f"{MED}-network-vpc"),
    ]
    assert {(f.rule, f.level) for f in owned(auto)} == {
        ("AIT019", "info"),
        ("AIT028", "info"),
        ("AIT029", "info"),
        ("AIT032", "info"),
    }
    messages = {f.rule: f.message for f in owned(auto)}
    # The bucket's message counts the data bucket alone (the log bucket keeps an OSS key: OSS writes the logs) and
    # points to the KMS instance's price in the cost block (costs.not_in_plan).
    assert [f.message for f in owned(auto) if f.rule == "AIT019" and f.resource == BUCKET_AUTO] == [
        "OSS objects are encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (SSE KMS + kmsMasterKeyId),"
        " which lives in a KMS instance billed apart (the cost block's 'not in this plan')"
    ]
    assert messages["AIT029"] == (
        "VPC has no flow log: set security.flow_log {project, "
        "logstore} to record its traffic in Log Service (billed per GB)"
    )
    assert messages["AIT032"].startswith(
        "no ActionTrail trail in this plan: set security.actiontrail to record every API call in all regions"
    )
    assert "add cms.Alarm resources to your stack" in messages["AIT028"]


def test_each_opt_in_switch_silences_exactly_its_info(plans):
    base = secure(plans[AUTO])
    assert {f.rule for f in owned(base)} - {f.rule for f in owned(with_kms_keys(base))} == {"AIT019"}


# ---- one change, one finding ----

NAT, EIP, GROUP = f"{AUTO}-network-nat", f"{AUTO}-network-nat-eip", f"{AUTO}-pool-group"
FS_MED, FS_AUTO, RULE_AUTO = f"{MED}-storage-fs", f"{AUTO}-storage-fs", f"{AUTO}-storage-access-rule-cn-shanghai-a"
BUCKET_AUTO, DATA_AUTO = f"{AUTO}-data-bucket", "autoscaling-training-cn-shanghai-data"
LOG_AUTO = f"{DATA_AUTO}-logs"
STD_RECYCLE = (
    "recycle bin is off or keeps deleted files under 7 days (recycleBin "
    "status Enable, reservedDays 7-180, or a nas.RecycleBin);"
    " a deleted file is gone at once"
)
NO_SNAPSHOTS = (
    "no Extreme NAS auto-snapshot policy keeps snapshots 7 days or more "
    "(nas.AutoSnapshotPolicy fileSystemType extreme, retentionDays >= 7 or -1)"
)
NOT_EXPIRED = (
    f"bucket {DATA_AUTO} keeps noncurrent versions forever (no "
    "enabled lifecycleRules entry with noncurrentVersionExpirations);"
    " every overwritten checkpoint stays billed"
)
NO_TLS = (
    f"bucket {DATA_AUTO} accepts TLS 1.0 and 1.1: add an "
    "oss.BucketHttpsConfig with enable true and tlsVersions [TLSv1.2, TLSv1.3]"
)
CPFS_RECOVERY = (
    "cpfs file system has no snapshot or recycle-bin API in the "
    "provider (nas.Snapshot and AutoSnapshotPolicy are Extreme-only,"
    " the recycle bin general-purpose-only): a deleted or overwritten "
    "file cannot be recovered; keep the only copy of data in"
    " OSS (versioned) and treat CPFS as a cache"
)


def squash(access: str) -> str:
    return (
        f"access rule userAccessType {access}: root on any host in 10.30.0.0/20 is root on the share; use root_squash "
        "(storage.nfs_squash), or skip AIT024 with a reason"
    )


def rotate(plan: Plan, **key: Any) -> Plan:
    good = {
        "automaticRotation": "Enabled",
        "rotationInterval": "365d",
        "deletionProtection": "Enabled",
        "pendingWindowInDays": 30,
    }
    return add(
        plan,
        resource(
            "kms.Key",
            "user-key",
            {k: v for k, v in {**good, **key}.items() if v is not None},
            protect=True,
            retain_on_delete=True,
        ),
    )


# (case, preset, change: plan -> plan, rule, level, resource, message)
CASES: list[tuple[str, str, Any, str, str, str, str]] = [
    (
        "kms-key-unprotected",
        AUTO,
        lambda p: options(rotate(p), "user-key", protect=False),
        "AIT004",
        "error",
        "user-key",
        "stateful resource must have protect and retain_on_delete from its first deployment",
    ),
    (
        "ecs-disk-delete-first",
        AUTO,
        lambda p: add(
            p,
            resource(
                "ecs.EcsDisk",
                "d",
                {"encrypted": True, "kmsKeyId": KEY},
                protect=True,
                retain_on_delete=True,
                delete_before_replace=True,
            ),
        ),
        "AIT004",
        "error",
        "d",
        "delete_before_replace on stateful data can lose it on a failed replace",
    ),
    (
        "nas-unencrypted",
        AUTO,
        lambda p: change(p, FS_AUTO, encryptType=0),
        "AIT005",
        "error",
        FS_AUTO,
        "NAS file system is not encrypted (encryptType 0)",
    ),
    (
        "access-rule-public",
        AUTO,
        lambda p: change(p, RULE_AUTO, sourceCidrIp="0.0.0.0/0"),
        "AIT006",
        "error",
        RULE_AUTO,
        "access rule admits 0.0.0.0/0, outside the VPC",
    ),
    (
        "disk-unencrypted",
        AUTO,
        lambda p: add(p, resource("ecs.EcsDisk", "d", {"encrypted": False}, protect=True, retain_on_delete=True)),
        "AIT009",
        "warning",
        "d",
        "data disk is not encrypted",
    ),
    (
        "no-noncurrent-expiry",
        AUTO,
        lambda p: change(p, BUCKET_AUTO, drop=("lifecycleRules",)),
        "AIT010",
        "error",
        BUCKET_AUTO,
        NOT_EXPIRED,
    ),
    (
        "noncurrent-rule-disabled",
        AUTO,
        lambda p: change(
            p, BUCKET_AUTO, lifecycleRules=[{"enabled": False, "noncurrentVersionExpirations": [{"days": 30}]}]
        ),
        "AIT010",
        "error",
        BUCKET_AUTO,
        NOT_EXPIRED,
    ),
    (
        "noncurrent-zero-days",
        AUTO,
        lambda p: change(
            p, BUCKET_AUTO, lifecycleRules=[{"enabled": True, "noncurrentVersionExpirations": [{"days": 0}]}]
        ),
        "AIT010",
        "error",
        BUCKET_AUTO,
        NOT_EXPIRED,
    ),
    (
        "only-multipart-rule",
        AUTO,
        lambda p: change(p, BUCKET_AUTO, lifecycleRules=[{"enabled": True, "abortMultipartUploads": [{"days": 7}]}]),
        "AIT010",
        "error",
        BUCKET_AUTO,
        NOT_EXPIRED,
    ),
    (
        "group-unprotected",
        AUTO,
        lambda p: change(p, GROUP, groupDeletionProtection=False),
        "AIT015",
        "error",
        GROUP,
        "ess.ScalingGroup has no deletion protection (groupDeletionProtection=False, "
        "wanted True); the console or API can release it",
    ),
    (
        "nat-unprotected",
        AUTO,
        lambda p: change(p, NAT, drop=("deletionProtection",)),
        "AIT015",
        "error",
        NAT,
        "vpc.NatGateway has no deletion protection (deletionProtection=None, "
        "wanted True); the console or API can release it",
    ),
    (
        "eip-unprotected",
        AUTO,
        lambda p: change(p, EIP, deletionProtection=False),
        "AIT015",
        "error",
        EIP,
        "ecs.EipAddress has no deletion protection (deletionProtection=False, "
        "wanted True); the console or API can release it",
    ),
    (
        "recycle-bin-off",
        AUTO,
        lambda p: change(p, FS_AUTO, recycleBin={"status": "Disable", "reservedDays": 7}),
        "AIT016",
        "warning",
        FS_AUTO,
        STD_RECYCLE,
    ),
    (
        "recycle-bin-short",
        AUTO,
        lambda p: change(p, FS_AUTO, recycleBin={"status": "Enable", "reservedDays": 3}),
        "AIT016",
        "warning",
        FS_AUTO,
        STD_RECYCLE,
    ),
    (
        "recycle-bin-missing-default-type",
        AUTO,
        lambda p: change(p, FS_AUTO, drop=("recycleBin", "fileSystemType")),
        "AIT016",
        "warning",
        FS_AUTO,
        STD_RECYCLE,
    ),
    (
        "recycle-bin-resource-short",
        AUTO,
        lambda p: add(
            change(p, FS_AUTO, drop=("recycleBin",)),
            resource("nas.RecycleBin", "rb", {"fileSystemId": f"${{{FS_AUTO}.id}}", "reservedDays": 3}),
        ),
        "AIT016",
        "warning",
        FS_AUTO,
        STD_RECYCLE,
    ),
    (
        "extreme-no-policy",
        MED,
        lambda p: remove(p, f"{MED}-storage-snapshots"),
        "AIT016",
        "warning",
        FS_MED,
        NO_SNAPSHOTS,
    ),
    (
        "extreme-policy-short",
        MED,
        lambda p: change(p, f"{MED}-storage-snapshots", retentionDays=3),
        "AIT016",
        "warning",
        FS_MED,
        NO_SNAPSHOTS,
    ),
    (
        "extreme-policy-for-standard",
        MED,
        lambda p: change(p, f"{MED}-storage-snapshots", fileSystemType="standard"),
        "AIT016",
        "warning",
        FS_MED,
        NO_SNAPSHOTS,
    ),
    (
        "cpfs-unrecoverable",
        AUTO,
        lambda p: change(p, FS_AUTO, fileSystemType="cpfs", drop=("recycleBin",)),
        "AIT016",
        "warning",
        FS_AUTO,
        CPFS_RECOVERY,
    ),
    (
        "disks-service-key",
        AUTO,
        lambda p: _unkeyed_disk(p),
        "AIT019",
        "info",
        "d",
        "disks are encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (kmsKeyId on every disk), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "template-system-disk-service-key",
        MED,
        lambda p: _template_system_disk_unkeyed(p),
        "AIT019",
        "info",
        f"{MED}-cluster-template",
        "disks are encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (kmsKeyId on every disk), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "scaling-config-system-disk-service-key",
        AUTO,
        lambda p: add(
            p,
            resource(
                "ess.ScalingConfiguration",
                "cfg",
                {"systemDiskEncrypted": True, "dataDisks": [{"encrypted": True, "kmsKeyId": KEY}]},
            ),
        ),
        "AIT019",
        "info",
        "cfg",
        "disks are encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (kmsKeyId on every disk), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "extreme-nas-service-key",
        MED,
        lambda p: change(p, FS_MED, encryptType=1, drop=("kmsKeyId",)),
        "AIT019",
        "info",
        FS_MED,
        "Extreme NAS is encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (encryptType 2 + kmsKeyId), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "extreme-nas-type-2-without-key",
        MED,
        lambda p: change(p, FS_MED, drop=("kmsKeyId",)),
        "AIT019",
        "info",
        FS_MED,
        "Extreme NAS is encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (encryptType 2 + kmsKeyId), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "oss-aes256",
        AUTO,
        lambda p: change(p, f"{AUTO}-data-encryption", sseAlgorithm="AES256", drop=("kmsMasterKeyId",)),
        "AIT019",
        "info",
        BUCKET_AUTO,
        "OSS objects are encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (SSE KMS + kmsMasterKeyId), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "oss-kms-without-key",
        AUTO,
        lambda p: change(p, f"{AUTO}-data-encryption", drop=("kmsMasterKeyId",)),
        "AIT019",
        "info",
        BUCKET_AUTO,
        "OSS objects are encrypted with a service-managed key (1 resource(s)); set "
        "security.kms_key_id to use your own KMS key (SSE KMS + kmsMasterKeyId), which "
        "lives in a KMS instance billed apart (the cost block's 'not in this plan')",
    ),
    (
        "https-config-missing",
        AUTO,
        lambda p: remove(p, f"{AUTO}-data-https-config"),
        "AIT021",
        "warning",
        BUCKET_AUTO,
        NO_TLS,
    ),
    (
        "https-config-disabled",
        AUTO,
        lambda p: change(p, f"{AUTO}-data-https-config", enable=False),
        "AIT021",
        "warning",
        BUCKET_AUTO,
        NO_TLS,
    ),
    (
        "tls-1-1-allowed",
        AUTO,
        lambda p: change(p, f"{AUTO}-data-https-config", tlsVersions=["TLSv1.1", "TLSv1.2"]),
        "AIT021",
        "warning",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} allows TLS versions ['TLSv1.1', 'TLSv1.2']; allow only ['TLSv1.2', 'TLSv1.3']",
    ),
    (
        "tls-versions-empty",
        AUTO,
        lambda p: change(p, f"{AUTO}-data-https-config", drop=("tlsVersions",)),
        "AIT021",
        "warning",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} allows TLS versions []; allow only ['TLSv1.2', 'TLSv1.3']",
    ),
    (
        "no-access-logging",
        AUTO,
        lambda p: _logging_off(p),
        "AIT022",
        "info",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} has no access logging: set bucket.access_logging "
        "true (aitrain then writes the logs to a separate log bucket it creates),"
        " or add an oss.BucketLogging with targetBucket a separate private, "
        "encrypted log bucket, so reads of the data can be audited",
    ),
    (
        "logging-to-itself",
        AUTO,
        lambda p: _logging_off(p, keep_logging=True, targetBucket=DATA_AUTO),
        "AIT022",
        "info",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} logs access to itself; log to a "
        "separate bucket so the log cannot be changed with the data",
    ),
    (
        "logging-to-a-public-bucket",
        AUTO,
        lambda p: change(p, f"{AUTO}-data-log-acl", acl="public-read"),
        "AIT022",
        "info",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} logs access to {LOG_AUTO}, which is not private: "
        "the audit trail of the data would be readable or unprotected",
    ),
    (
        "logging-to-an-open-unencrypted-bucket",
        AUTO,
        lambda p: remove(remove(p, f"{AUTO}-data-log-public-access-block"), f"{AUTO}-data-log-encryption"),
        "AIT022",
        "info",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} logs access to {LOG_AUTO}, which does not block "
        "public access, is not encrypted: the audit trail of the data would be"
        " readable or unprotected",
    ),
    (
        "logging-to-a-bucket-outside-the-plan",
        AUTO,
        lambda p: _logging_off(p, keep_logging=True, targetBucket="team-audit-logs"),
        "AIT022",
        "info",
        BUCKET_AUTO,
        f"bucket {DATA_AUTO} logs access to team-audit-logs, which this plan does not create: check that it is "
        "private, blocks public access and is encrypted",
    ),
    (
        "no-squash",
        AUTO,
        lambda p: change(p, RULE_AUTO, userAccessType="no_squash"),
        "AIT024",
        "error",
        RULE_AUTO,
        squash("no_squash"),
    ),
    (
        "squash-default",
        AUTO,
        lambda p: change(p, RULE_AUTO, drop=("userAccessType",)),
        "AIT024",
        "error",
        RULE_AUTO,
        squash("no_squash"),
    ),
    (
        "cpfsse-controls",
        AUTO,
        lambda p: _cpfs(p, "cpfsse"),
        "AIT025",
        "warning",
        "cpfs",
        "cpfsse is reached without a NAS access group and is not encrypted at "
        "rest (the NAS API offers neither for CPFS): any host in its vSwitch can"
        " mount it; accept this only for data that may sit unencrypted "
        "in the VPC (storage.allow_unencrypted_cpfs), or use NAS extreme",
    ),
    (
        "kms-no-rotation",
        AUTO,
        lambda p: rotate(p, automaticRotation=None),
        "AIT026",
        "error",
        "user-key",
        "automaticRotation is Disabled; set Enabled with rotationInterval of 365d or less",
    ),
    (
        "kms-rotation-too-slow",
        AUTO,
        lambda p: rotate(p, rotationInterval="366d"),
        "AIT026",
        "error",
        "user-key",
        "rotationInterval '366d' is not 365d or less",
    ),
    (
        "kms-rotation-seconds",
        AUTO,
        lambda p: rotate(p, rotationInterval="31536001s"),
        "AIT026",
        "error",
        "user-key",
        "rotationInterval '31536001s' is not 365d or less",
    ),
    (
        "kms-rotation-unreadable",
        AUTO,
        lambda p: rotate(p, rotationInterval="1y"),
        "AIT026",
        "error",
        "user-key",
        "rotationInterval '1y' is not 365d or less",
    ),
    (
        "kms-deletable",
        AUTO,
        lambda p: rotate(p, deletionProtection=None),
        "AIT026",
        "error",
        "user-key",
        "deletionProtection is Disabled; set Enabled so the key (and "
        "every disk it encrypts) cannot be scheduled for deletion",
    ),
    (
        "kms-short-window",
        AUTO,
        lambda p: rotate(p, pendingWindowInDays=29),
        "AIT026",
        "error",
        "user-key",
        "pendingWindowInDays is 29; use 30 or more (7-366) to leave time to cancel a deletion",
    ),
    (
        "alarm-without-contacts",
        AUTO,
        lambda p: add(p, resource("cms.Alarm", "quiet", {"name": "q", "metric": "cpu"})),
        "AIT028",
        "info",
        "quiet",
        "CloudMonitor alarm has no contactGroups: nobody is told when it fires",
    ),
    (
        "no-alarms",
        AUTO,
        lambda p: remove(p, f"{AUTO}-gpu-alarm"),
        "AIT028",
        "info",
        GROUP,
        "no CloudMonitor alarm with contactGroups watches the 1 compute unit(s): "
        "add cms.Alarm resources to your stack (GPU utilisation, instance health,"
        " NAS usage), each with a contact group; aitrain's ess.Alarms only drive scaling",
    ),
    (
        "health-check-off",
        AUTO,
        # The older single field alone (the program sets healthCheckTypes, so the variant drops it).
        lambda p: change(p, GROUP, drop=("healthCheckTypes",), healthCheckType="NONE"),
        "AIT028",
        "info",
        GROUP,
        "scaling group health check is ['NONE']: ESS will not replace an unhealthy node; use ECS",
    ),
    (
        "health-checks-off",
        AUTO,
        lambda p: change(p, GROUP, healthCheckTypes=["NONE"]),
        "AIT028",
        "info",
        GROUP,
        "scaling group health check is ['NONE']: ESS will not replace an unhealthy node; use ECS",
    ),
    (
        "no-flow-log",
        AUTO,
        lambda p: remove(p, f"{AUTO}-network-flow-log"),
        "AIT029",
        "info",
        f"{AUTO}-network-vpc",
        "VPC has no flow log: set security.flow_log {project, logstore} "
        "to record its traffic in Log Service (billed per GB)",
    ),
    (
        "flow-log-of-a-vswitch",
        AUTO,
        lambda p: change(p, f"{AUTO}-network-flow-log", resourceType="VSwitch"),
        "AIT029",
        "info",
        f"{AUTO}-network-vpc",
        "VPC has no flow log: set security.flow_log {project, logstore} "
        "to record its traffic in Log Service (billed per GB)",
    ),
    (
        "flow-log-accepts-only",
        AUTO,
        lambda p: change(p, f"{AUTO}-network-flow-log", trafficType="Allow"),
        "AIT029",
        "info",
        f"{AUTO}-network-vpc",
        f"flow log {AUTO}-network-flow-log records trafficType 'Allow' only; record All",
    ),
    (
        "no-trail",
        AUTO,
        lambda p: remove(p, f"{AUTO}-trail"),
        "AIT032",
        "info",
        f"{AUTO}-network-vpc",
        "no ActionTrail trail in this plan: set security.actiontrail to record every API call in all regions, or "
        "confirm the account already has such a trail",
    ),
    (
        "trail-one-region",
        AUTO,
        lambda p: change(p, f"{AUTO}-trail", trailRegion="cn-shanghai"),
        "AIT032",
        "info",
        f"{AUTO}-trail",
        "trail records region 'cn-shanghai' only; set trailRegion All",
    ),
    (
        "trail-writes-only",
        AUTO,
        lambda p: change(p, f"{AUTO}-trail", eventRw="Write"),
        "AIT032",
        "info",
        f"{AUTO}-trail",
        "trail records Write events only; set eventRw All",
    ),
]


def _logging_off(plan: Plan, keep_logging: bool = False, **logging: Any) -> Plan:
    """``bucket.access_logging: false``: no log bucket and its
    settings (and, unless kept and changed, no BucketLogging)."""
    p = plan.profile_name
    kept = tuple(
        r
        for r in plan.resources
        if not r.name.startswith(f"{p}-data-log-") and (keep_logging or r.name != f"{p}-data-logging")
    )
    plan = dataclasses.replace(plan, resources=kept)
    return change(plan, f"{p}-data-logging", **logging) if keep_logging else plan


def _unkeyed_disk(plan: Plan) -> Plan:
    return add(plan, resource("ecs.EcsDisk", "d", {"encrypted": True}, protect=True, retain_on_delete=True))


def _template_system_disk_unkeyed(plan: Plan) -> Plan:
    template = named(plan, "ecs.EcsLaunchTemplate")
    return change(
        plan, template.name, systemDisk={k: v for k, v in template.inputs["systemDisk"].items() if k != "kmsKeyId"}
    )


def _cpfs(plan: Plan, kind: str) -> Plan:
    """A CPFS file system the user accepts unencrypted: its AIT009 and AIT016 warnings are expected alongside."""
    return add(
        plan,
        resource(
            "nas.FileSystem",
            "cpfs",
            {"fileSystemType": kind, "protocolType": "cpfs"},
            protect=True,
            retain_on_delete=True,
        ),
    )


# Cases whose one change rightly breaks other rules too (a CPFS is unencrypted, unrecoverable and ungrouped at once).
# A log bucket made public or unencrypted breaks the bucket
# safety rule (AIT010) too: it holds for the log bucket as well.
ALSO = {
    "cpfs-unrecoverable": {"AIT025"},
    "cpfsse-controls": {"AIT009", "AIT016"},
    "logging-to-a-public-bucket": {"AIT010"},
    "logging-to-an-open-unencrypted-bucket": {"AIT010"},
}


@pytest.mark.parametrize("case, preset, mutate, rule, level, name, message", CASES, ids=[c[0] for c in CASES])
def test_one_change_adds_one_finding(case, preset, mutate, rule, level, name, message, plans):
    base = opted_in(plans[preset])
    plan = mutate(base)
    found = [f for f in added(base, plan) if f.rule in OWNED]  # a synthetic node may break the node rules too: not ours
    assert {f.rule for f in found} == {rule} | ALSO.get(case, set())
    assert [f for f in found if f.rule == rule] == [Finding(rule, level, name, message)]
    # Skipping the rule by id silences exactly it.
    assert {f.rule for f in found if f in guardrails.check(plan, skip=[rule])} == ALSO.get(case, set())


def test_every_owned_rule_has_a_violating_case():
    assert {c[3] for c in CASES} == OWNED


@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: change(p, f"{AUTO}-storage-fs", recycleBin={"status": "Enable", "reservedDays": 180}),
        lambda p: add(
            change(p, FS_AUTO, drop=("recycleBin",)),
            resource("nas.RecycleBin", "rb", {"fileSystemId": f"${{{FS_AUTO}.id}}", "reservedDays": 7}),
        ),
        lambda p: change(p, RULE_AUTO, userAccessType="all_squash"),
        lambda p: change(p, f"{AUTO}-data-https-config", tlsVersions=["TLSv1.3"]),
        lambda p: change(remove(p, f"{AUTO}-data-logging"), BUCKET_AUTO, logging={"targetBucket": LOG_AUTO}),
        lambda p: change(p, GROUP, healthCheckTypes=["ECS", "LOAD_BALANCER"]),
        lambda p: rotate(p, rotationInterval="8760h"),
        lambda p: rotate(p, rotationInterval="7d", pendingWindowInDays=366),
        lambda p: change(p, f"{AUTO}-trail", drop=("eventRw",)),  # the API's default is All
        lambda p: add(
            p, resource("ecs.EcsDisk", "plain", {"encrypted": False}, protect=True, retain_on_delete=True)
        ),  # AIT009's, not AIT019's
    ],
    ids=[
        "recycle-180",
        "recycle-bin-resource",
        "all-squash",
        "tls-1-3-only",
        "inline-logging",
        "health-checks",
        "rotation-hours",
        "rotation-7d",
        "trail-default-events",
        "unencrypted-disk-is-not-a-key-question",
    ],
)
def test_safe_neighbours_add_no_owned_finding(mutate, plans):
    base = opted_in(plans[AUTO])
    assert [f for f in added(base, mutate(base)) if f.rule in OWNED - {"AIT009"}] == []


@pytest.mark.parametrize("days", [7, 30, -1])
def test_extreme_snapshot_retention_accepted(days, plans):
    base = opted_in(plans[MED])
    assert added(base, change(base, f"{MED}-storage-snapshots", retentionDays=days)) == []
    assert (
        added(base, change(base, f"{MED}-storage-snapshots", drop=("retentionDays",))) == []
    )  # the API's default: -1, forever


def test_a_component_alone_has_no_account_findings():
    """A bucket tested alone has no VPC: no flow-log or trail finding to attach, and no compute to monitor."""
    plan = Plan(
        "component",
        "cn-shanghai",
        "s",
        {},
        (),
        (resource("nas.AccessRule", "rule", {"sourceCidrIp": "10.0.0.0/8", "userAccessType": "root_squash"}),),
    )
    assert guardrails.check(plan) == []


# ---- rule metadata ----

REFERENCES = {
    "AIT004": (1, 7),
    "AIT005": (20,),
    "AIT006": (20,),
    "AIT009": (11, 20),
    "AIT010": (4, 12, 13, 15, 16),
    "AIT015": (3,),
    "AIT016": (5, 6),
    "AIT019": (11, 13),
    "AIT021": (15,),
    "AIT022": (17,),
    "AIT024": (20,),
    "AIT025": (20,),
    "AIT026": (21,),
    "AIT028": (23,),
    "AIT029": (24,),
    "AIT032": (27,),
}
LEVELS = {
    "AIT009": "warning",
    "AIT016": "warning",
    "AIT021": "warning",
    "AIT025": "warning",
    "AIT019": "info",
    "AIT022": "info",
    "AIT028": "info",
    "AIT029": "info",
    "AIT032": "info",
}


@pytest.mark.parametrize("rule", sorted(REFERENCES))
def test_owned_rules_say_why_with_a_source_and_how_to_fix(rule):
    found = {r.id: r for r in guardrails.RULES}[rule]
    assert found.references == REFERENCES[rule]
    assert found.level == LEVELS.get(rule, "error")
    assert found.title and found.fix and "\n" not in found.rationale + found.fix
    # A rationale ends with where it comes from: a scanner id, a benchmark, a provider/SDK doc or a Pulumi issue.
    source = found.rationale.rsplit(";", 1)[-1]
    assert any(
        marker in source
        for marker in (
            "CKV_ALI_",
            "KICS",
            "CIS",
            "infraguard",
            "SDK",
            "github.com/pulumi/pulumi/issues/",
            "§7",
            "nas.",
            "provider",
        )
    ), source
