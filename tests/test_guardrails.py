"""Every guardrail rule fires on a plan that breaks it, with its message, and on nothing else.

Each fixture is a preset plan with one resource changed (``dataclasses.replace``), so deleting a rule, or any
branch of one, turns a test red.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from blueprints import guardrails
from blueprints.guardrails import Finding

MED = "medical-imaging"
AUTO = "autoscaling-training"
PUBLIC_TRUST = {"Version": "1", "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": ["ecs.aliyuncs.com", "fc.aliyuncs.com"]}}]}
RAM_TRUST = {"Version": "1", "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"RAM": ["acs:ram::123:root"]}}]}


def tamper(plan, name: str, *, drop: tuple[str, ...] = (), **changes):
    """The plan with resource ``name`` changed: ``inputs`` keys merged (``drop`` removed) or options replaced."""
    inputs = changes.pop("inputs", {})
    hit = []

    def change(r):
        if r.name != name:
            return r
        hit.append(r)
        merged = {k: v for k, v in {**r.inputs, **inputs}.items() if k not in drop}
        return dataclasses.replace(r, inputs=merged, **changes)

    tampered = dataclasses.replace(plan, resources=tuple(change(r) for r in plan.resources))
    assert hit, f"no resource {name} in the plan"
    return tampered


# (case id, preset, resource suffix, tamper kwargs, rule, expected message)
CASES = [
    ("public-ip-instance-set", MED, "cluster-nodes-0", dict(inputs={"internetMaxBandwidthOut": 100}), "AIT001",
     "internetMaxBandwidthOut=100 gives training nodes a public IP; use 0 and the NAT gateway"),
    ("public-ip-launch-template", MED, "cluster-template", dict(inputs={"internetMaxBandwidthOut": 5}), "AIT001",
     "internetMaxBandwidthOut=5 gives training nodes a public IP; use 0 and the NAT gateway"),
    ("public-ip-scaling-config", AUTO, "pool-config", dict(inputs={"internetMaxBandwidthOut": 10}), "AIT001",
     "internetMaxBandwidthOut=10 gives training nodes a public IP; use 0 and the NAT gateway"),
    ("ingress-from-internet", MED, "network-sg-intra-cluster", dict(inputs={"cidrIp": "0.0.0.0/0"}, drop=("sourceSecurityGroupId",)), "AIT002",
     "ingress all -1/-1 is open to the internet"),
    ("ingress-from-internet-ipv6", AUTO, "network-sg-intra-cluster",
     dict(inputs={"cidrIp": "::/0", "ipProtocol": "tcp", "portRange": "22/22"}, drop=("sourceSecurityGroupId",)), "AIT002",
     "ingress tcp 22/22 is open to the internet"),
    ("ingress-without-any-source", AUTO, "network-sg-intra-cluster", dict(drop=("sourceSecurityGroupId",)), "AIT002",
     "ingress all -1/-1 is open to the internet"),
    ("template-disk-unencrypted", MED, "cluster-template", dict(inputs={"systemDisk": {"category": "cloud_essd", "encrypted": False, "size": 200}}), "AIT003",
     "launch template system disk is not encrypted"),
    ("scaling-config-disk-unencrypted", AUTO, "pool-config", dict(inputs={"systemDiskEncrypted": False}), "AIT003",
     "scaling configuration system disk is not encrypted"),
    ("storage-unprotected", MED, "storage-fs", dict(protect=False), "AIT004",
     "stateful resource must have protect and retain_on_delete from its first deployment"),
    ("storage-not-retained", AUTO, "storage-fs", dict(retain_on_delete=False), "AIT004",
     "stateful resource must have protect and retain_on_delete from its first deployment"),
    ("storage-delete-before-replace", MED, "storage-fs", dict(delete_before_replace=True), "AIT004",
     "delete_before_replace on stateful data can lose it on a failed replace"),
    ("extreme-nas-unencrypted", MED, "storage-fs", dict(drop=("encryptType",)), "AIT005", "NAS file system is not encrypted (encryptType 0)"),
    ("standard-nas-unencrypted", AUTO, "storage-fs", dict(inputs={"encryptType": 0}), "AIT005", "NAS file system is not encrypted (encryptType 0)"),
    ("access-rule-outside-vpc", MED, "storage-access-rule-vpc", dict(inputs={"sourceCidrIp": "0.0.0.0/0"}), "AIT006", "access rule admits 0.0.0.0/0, outside the VPC"),
    ("access-rule-not-a-cidr", MED, "storage-access-rule-vpc", dict(inputs={"sourceCidrIp": "everyone"}), "AIT006", "access rule source 'everyone' is not a CIDR"),
    ("default-access-group", AUTO, "storage-mount-target", dict(inputs={"accessGroupName": "DEFAULT_VPC_GROUP_NAME"}), "AIT006",
     "mount target uses the default access group"),
    ("trust-other-service", MED, "cluster-node-role", dict(inputs={"assumeRolePolicyDocument": json.dumps(PUBLIC_TRUST)}), "AIT007",
     "trust policy admits more than the ECS service: {'Service': ['ecs.aliyuncs.com', 'fc.aliyuncs.com']}"),
    ("trust-ram-account", AUTO, "pool-node-role", dict(inputs={"assumeRolePolicyDocument": json.dumps(RAM_TRUST)}), "AIT007",
     "trust policy admits more than the ECS service: {'RAM': ['acs:ram::123:root']}"),
    ("trust-not-json", MED, "cluster-node-role", dict(inputs={"assumeRolePolicyDocument": "{not json"}), "AIT007", "trust policy is not JSON"),
    ("imds-v1", MED, "cluster-template", dict(inputs={"httpTokens": "optional"}), "AIT008",
     "instance metadata must require tokens (IMDSv2: httpTokens=required)"),
    ("cpfs-unencrypted", MED, "storage-fs", dict(inputs={"fileSystemType": "cpfs"}, drop=("encryptType",)), "AIT009",
     "cpfs file system is not encrypted at rest: the NAS API encrypts only standard and extreme file systems, and the profile"
     " accepts this with storage.allow_unencrypted_cpfs; keep regulated data off it or use NAS extreme"),
]


def preset_plan(preset, medical_plan, autoscaling_plan):
    return medical_plan if preset == MED else autoscaling_plan


@pytest.mark.parametrize("case, preset, suffix, changes, rule, message", CASES, ids=[c[0] for c in CASES])
def test_rule_fires_alone_with_its_message(case, preset, suffix, changes, rule, message, medical_plan, autoscaling_plan):
    name = f"{preset}-{suffix}"
    plan = tamper(preset_plan(preset, medical_plan, autoscaling_plan), name, **dict(changes))
    level = {r.id: r.level for r in guardrails.RULES}[rule]
    assert guardrails.check(plan) == [Finding(rule, level, name, message)]
    # Skipping that rule by id silences exactly it.
    assert guardrails.check(plan, skip=[rule]) == []


def test_every_rule_has_a_violating_fixture():
    assert {c[4] for c in CASES} == {r.id for r in guardrails.RULES}
    assert [r.id for r in guardrails.RULES] == [f"AIT00{i}" for i in range(1, 10)]


def test_levels_and_titles():
    levels = {r.id: r.level for r in guardrails.RULES}
    assert levels == {**{f"AIT00{i}": "error" for i in range(1, 8)}, "AIT008": "warning", "AIT009": "warning"}
    assert all(r.title for r in guardrails.RULES)


@pytest.mark.parametrize("fixture", ["medical_plan", "autoscaling_plan"])
def test_presets_produce_no_findings(fixture, request):
    plan = request.getfixturevalue(fixture)
    assert guardrails.check(plan) == []
    assert plan.findings == ()


def test_safe_neighbours_do_not_fire(medical_plan, autoscaling_plan):
    """What the rules must not flag: an admin /24, egress to anywhere, a VPC subnet in the access rule."""
    admin = tamper(autoscaling_plan, f"{AUTO}-network-sg-intra-cluster", inputs={"cidrIp": "198.51.100.0/24"}, drop=("sourceSecurityGroupId",))
    egress = tamper(medical_plan, f"{MED}-network-sg-intra-cluster", inputs={"type": "egress", "cidrIp": "0.0.0.0/0"}, drop=("sourceSecurityGroupId",))
    subnet = tamper(medical_plan, f"{MED}-storage-access-rule-vpc", inputs={"sourceCidrIp": "10.20.5.0/24"})
    for plan in (admin, egress, subnet):
        assert guardrails.check(plan) == []
    # An unencrypted CPFS is not an AIT005 error (the API cannot encrypt it): only the AIT009 warning says so.
    cpfs_like = tamper(medical_plan, f"{MED}-storage-fs", inputs={"fileSystemType": "cpfs"}, drop=("encryptType",))
    assert [f.rule for f in guardrails.check(cpfs_like)] == ["AIT009"]


def test_findings_keep_rule_order_and_skip_only_named_rules(medical_plan):
    plan = tamper(medical_plan, f"{MED}-cluster-template", inputs={"httpTokens": "optional", "internetMaxBandwidthOut": 1})
    assert [f.rule for f in guardrails.check(plan)] == ["AIT001", "AIT008"]
    assert [f.rule for f in guardrails.check(plan, skip=["AIT008"])] == ["AIT001"]


def test_unknown_rule_id_is_an_error(medical_plan):
    with pytest.raises(ValueError, match=r"unknown guardrail ids \['AIT999'\]; known: \['AIT001'"):
        guardrails.check(medical_plan, skip=["AIT999", "AIT001"])


def test_preview_records_findings_in_the_plan():
    """preview stores guardrails.check's findings in the plan (what every output format reports)."""
    import datetime as dt

    import pulumi_alicloud as alicloud

    from blueprints.catalog import load_catalog
    from blueprints.preview import preview
    from blueprints.stackconfig import PRESET_KEY

    program = lambda: alicloud.ecs.Instance("public-node", internet_max_bandwidth_out=5)  # noqa: E731
    plan = preview({PRESET_KEY: MED}, catalog=load_catalog(), today=dt.date(2026, 11, 30), program=program)
    assert plan.findings == (
        {"rule": "AIT001", "level": "error", "resource": "public-node",
         "message": "internetMaxBandwidthOut=5 gives training nodes a public IP; use 0 and the NAT gateway"},
    )


def with_resource(plan, short_type: str, name: str, inputs: dict, **options):
    """The plan plus one resource of ``short_type`` (e.g. ``oss.Bucket``), protected unless told otherwise."""
    from blueprints.plan import PlannedResource

    module, kind = short_type.split(".")
    token = f"alicloud:{module}/{kind[0].lower() + kind[1:]}:{kind}"
    resource = PlannedResource(token, name, None, True, inputs, **{"protect": True, "retain_on_delete": True, **options})
    return dataclasses.replace(plan, resources=(*plan.resources, resource))


@pytest.mark.parametrize("short_type, inputs, message", [
    ("oss.Bucket", {"bucket": "data"}, "OSS bucket has no server-side encryption rule"),
    ("ecs.EcsDisk", {"size": 500, "encrypted": False}, "data disk is not encrypted"),
])
def test_unencrypted_buckets_and_disks_are_warned(short_type, inputs, message, medical_plan):
    plan = with_resource(medical_plan, short_type, "extra-data", inputs)
    assert guardrails.check(plan) == [Finding("AIT009", "warning", "extra-data", message)]


@pytest.mark.parametrize("short_type, inputs", [
    ("oss.Bucket", {"bucket": "data", "serverSideEncryptionRule": {"sseAlgorithm": "KMS"}}),
    ("ecs.EcsDisk", {"size": 500, "encrypted": True}),
])
def test_encrypted_buckets_and_disks_pass(short_type, inputs, medical_plan):
    assert guardrails.check(with_resource(medical_plan, short_type, "extra-data", inputs)) == []


@pytest.mark.parametrize("source, fires", [
    ("0.0.0.0/0", True), ("203.0.113.0/24", True), ("2001:db8::/32", True),
    ("10.8.0.0/16", False), ("172.16.4.0/24", False), ("192.168.1.0/24", False), ("fd00:1::/64", False),
])
def test_an_access_rule_without_a_vpc_in_the_plan_must_admit_a_private_range(source, fires):
    """A storage component tested alone has no VPC to compare with: its rule must at least stay private."""
    from blueprints.plan import Plan, PlannedResource

    rule = PlannedResource("alicloud:nas/accessRule:AccessRule", "s-access-rule-vpc", None, True, {"sourceCidrIp": source})
    findings = guardrails.check(Plan("component", "cn-shanghai", "s", {}, (), (rule,)))
    expected = [Finding("AIT006", "error", "s-access-rule-vpc", f"access rule admits {source}, which is not a private range (no VPC in this plan to compare with)")]
    assert findings == (expected if fires else [])
