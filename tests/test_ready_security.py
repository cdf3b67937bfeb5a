"""Issue 9 over real plans: the security section reaches every resource it names, notes say what is left to do,
and no security option renames or moves the data."""

from __future__ import annotations

from blueprints.testing import assert_guardrails, offline_plan

KEY = "key-hzz630494463ejqjx0001"
SLS_ARN = "acs:log:cn-shanghai:1234567890:project/audit-logs"
SECURITY = {
    "kms_key_id": KEY,
    "flow_log": {"project": "audit-logs", "logstore": "vpc_flow"},
    "actiontrail": {"sls_project_arn": SLS_ARN},
}


def data_names(plan):
    """(type, name) of everything under the storage and bucket components: what must never move."""
    return sorted(
        (r.type, r.name)
        for r in plan.resources
        if r.name.startswith(("medical-imaging-storage", "medical-imaging-data"))
    )


def test_security_options_reach_disks_file_system_bucket_network_and_trail():
    plan = offline_plan("medical-imaging", profile={"security": SECURITY})
    (template,) = plan.find("ecs.EcsLaunchTemplate")
    assert template.inputs["systemDisk"]["kmsKeyId"] == KEY
    assert all(d["kmsKeyId"] == KEY for s in plan.find("ecs.EcsInstanceSet") for d in s.inputs["dataDisks"])
    (fs,) = plan.find("nas.FileSystem")
    assert (fs.inputs["encryptType"], fs.inputs["kmsKeyId"]) == (2, KEY)
    (sse,) = [r for r in plan.find("oss.BucketServerSideEncryption") if r.inputs["bucket"] == plan.summary["bucket"]]
    assert (sse.inputs["sseAlgorithm"], sse.inputs["kmsMasterKeyId"]) == ("KMS", KEY)
    # The access-log bucket keeps OSS-managed keys: OSS writes the logs itself (components/bucket.py).
    (log_sse,) = [
        r for r in plan.find("oss.BucketServerSideEncryption") if r.inputs["bucket"] != plan.summary["bucket"]
    ]
    assert log_sse.inputs == {"bucket": f"{plan.summary['bucket']}-logs", "sseAlgorithm": "AES256"}
    (flow,) = plan.find("vpc.FlowLog")
    assert (flow.inputs["resourceType"], flow.inputs["trafficType"], flow.inputs["resourceId"]) == (
        "VPC",
        "All",
        "${medical-imaging-network-vpc.id}",
    )
    (trail,) = plan.find("actiontrail.Trail")
    assert (trail.inputs["trailRegion"], trail.inputs["eventRw"], trail.inputs["slsProjectArn"]) == (
        "All",
        "All",
        SLS_ARN,
    )
    # The trail is its own unit: a component that parents it and registers its output, like every other unit.
    (audit,) = [r for r in plan.resources if not r.custom and r.name == "medical-imaging-audit"]
    assert trail.parent == audit.name and audit.registered_outputs == ("trail_name",)


def test_security_options_never_rename_or_add_to_the_data():
    plain = offline_plan("medical-imaging")
    secured = offline_plan(
        "medical-imaging",
        profile={"security": SECURITY, "storage": {"snapshot_retention_days": 30, "nfs_squash": "all_squash"}},
    )
    assert data_names(plain) == data_names(secured)
    (fs_plain,), (fs_secured,) = plain.find("nas.FileSystem"), secured.find("nas.FileSystem")
    assert fs_plain.name == fs_secured.name and fs_plain.protect and fs_secured.protect


def test_medical_imaging_egress_is_an_allow_list_ending_in_drop_all():
    plan = offline_plan("medical-imaging")
    egress = {
        r.name.removeprefix("medical-imaging-network-sg-egress-"): r.inputs
        for r in plan.find("ecs.SecurityGroupRule")
        if r.inputs["type"] == "egress"
    }
    assert set(egress) == {"vpc", "alibaba-services", "allow-0", "drop-all"}
    assert (egress["allow-0"]["cidrIp"], egress["allow-0"]["portRange"], egress["allow-0"]["ipProtocol"]) == (
        "0.0.0.0/0",
        "443/443",
        "tcp",
    )
    assert (egress["drop-all"]["policy"], egress["drop-all"]["cidrIp"], egress["drop-all"]["priority"]) == (
        "drop",
        "0.0.0.0/0",
        100,
    )
    assert not plan.find("vpc.FlowLog") and not plan.find("actiontrail.Trail")
    # The unapplied snapshot policy (AIT016) and HTTPS to any address (AIT027: the boot's CDNs publish no stable ranges)
    # are the warnings, shown, not skipped.
    assert_guardrails(plan, skip=["AIT016", "AIT027"])
    assert [(f["rule"], f["resource"]) for f in plan.findings if f["level"] == "warning"] == [
        ("AIT016", "medical-imaging-storage-fs"),
        ("AIT027", "medical-imaging-network-sg-egress-allow-0"),
    ]


def test_extreme_nas_plan_says_how_to_apply_the_snapshot_policy():
    plan = offline_plan("medical-imaging")
    (policy,) = plan.find("nas.AutoSnapshotPolicy")
    assert policy.name == "medical-imaging-storage-snapshots" and policy.inputs["retentionDays"] == 7
    assert "snapshot_policy_id" in plan.outputs
    (note,) = [n for n in plan.notes if n.startswith("Extreme NAS snapshots")]
    assert "medical-imaging-storage-daily" in note and "kept 7 days" in note
    assert note.endswith(
        "aliyun nas ApplyAutoSnapshotPolicy --AutoSnapshotPolicyId $(pulumi stack output snapshot_policy_id) "
        "--FileSystemIds $(pulumi stack output file_system_id)"
    )


def test_cpfs_plan_says_deleted_files_cannot_be_recovered():
    plan = offline_plan(
        "medical-imaging",
        profile={"storage": {"kind": "cpfs", "throughput_tier": "advance_200", "allow_unencrypted_cpfs": True}},
    )
    assert not plan.find("nas.AutoSnapshotPolicy") and not plan.find("nas.AccessRule")
    assert any(n.startswith("CPFS has no snapshot or recycle-bin API") for n in plan.notes)
    assert not any("nfs_squash" in n for n in plan.notes)


def test_squashed_nas_plan_warns_about_the_host_registry():
    plan = offline_plan("autoscaling-training")
    rules = plan.find("nas.AccessRule")
    assert len(rules) == 3 and {r.inputs["userAccessType"] for r in rules} == {"root_squash"}
    assert any(
        n.startswith("storage.nfs_squash root_squash") and "job user aitrain (uid 2000)" in n for n in plan.notes
    )
    assert not plan.find("nas.AutoSnapshotPolicy") and "snapshot_policy_id" not in plan.outputs


def test_the_squash_note_of_an_ecs_plan_names_the_host_registry_it_affects():
    from blueprints.testing import offline_plan

    (note,) = [n for n in offline_plan("medical-imaging").notes if n.startswith("storage.nfs_squash")]
    assert (
        "(host registry, runs, the job) as the job user aitrain (uid 2000)" in note
        and "gives /mnt/shared/.aitrain to uid 2000" in note
    )
