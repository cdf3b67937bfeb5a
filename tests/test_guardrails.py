"""Every guardrail rule fires on a plan that breaks it, with its message, and on nothing else.

Each fixture is a preset plan with one resource changed (``dataclasses.replace``), so deleting a rule, or any
branch of one, turns a test red.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from blueprints.review import guardrails
from blueprints.review.guardrails import Finding

MED = "medical-imaging"
AUTO = "autoscaling-training"
ERDMA = (
    "erdma"  # autoscaling-training with compute.erdma_pool: its pool keeps an ess.ScalingConfiguration (see erdma_plan)
)
PUBLIC_TRUST = {
    "Version": "1",
    "Statement": [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": ["ecs.aliyuncs.com", "fc.aliyuncs.com"]},
        }
    ],
}
RAM_TRUST = {
    "Version": "1",
    "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"RAM": ["acs:ram::123:root"]}}],
}


def _key(f: Finding):
    # AIT019 reports once per resource family with a count ("(3 resource(s))") on the family's first resource: a
    # change that adds or removes a disk moves both, but the advisory is the one the base already had.
    if f.rule == "AIT019":
        return f.rule, f.level, re.sub(r" \(\d+ resource\(s\)\)", "", f.message)
    return f


def check(plan, skip=(), *, base):
    """``guardrails.check`` less what ``base``, the plan before the change, already reports (the presets' info
    advisories, the units' AIT019/AIT031 notes): the findings a change causes. tests/test_guardrails_nodes.py and
    test_presets_produce_no_errors assert the presets' own findings."""
    before = {_key(f) for f in guardrails.check(base)}
    return [f for f in guardrails.check(plan, skip) if _key(f) not in before]


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


UNKNOWN_TYPE_FINDING = (
    "alicloud:ehpc/jobTemplate:JobTemplate has no resource kind: aitrain cannot price, count, diff, export or guard a"
    " type it has no record of; add Kind(token='alicloud:ehpc/jobTemplate:JobTemplate', …) to blueprints/kinds/ehpc.py"
    " (a new service: create the module; the registry finds it)"
)

# (case id, preset, resource suffix, tamper kwargs, rule, expected message)
CASES = [
    (
        "public-ip-instance-set",
        MED,
        "cluster-nodes-0",
        dict(inputs={"internetMaxBandwidthOut": 100}),
        "AIT001",
        "internetMaxBandwidthOut=100 gives training nodes a public IP; use 0 and the NAT gateway",
    ),
    (
        "public-ip-launch-template",
        MED,
        "cluster-template",
        dict(inputs={"internetMaxBandwidthOut": 5}),
        "AIT001",
        "internetMaxBandwidthOut=5 gives training nodes a public IP; use 0 and the NAT gateway",
    ),
    (
        "public-ip-scaling-config",
        ERDMA,
        "pool-config",
        dict(inputs={"internetMaxBandwidthOut": 10}),
        "AIT001",
        "internetMaxBandwidthOut=10 gives training nodes a public IP; use 0 and the NAT gateway",
    ),
    (
        "ingress-from-internet",
        MED,
        "network-sg-intra-cluster",
        dict(
            inputs={"cidrIp": "0.0.0.0/0", "ipProtocol": "tcp", "portRange": "443/443"}, drop=("sourceSecurityGroupId",)
        ),
        "AIT002",
        "ingress tcp 443/443 is open to the internet",
    ),
    (
        "ingress-without-any-source",
        AUTO,
        "network-sg-intra-cluster",
        dict(drop=("sourceSecurityGroupId",)),
        "AIT002",
        "ingress all -1/-1 is open to the internet",
    ),
    (
        "template-disk-unencrypted",
        MED,
        "cluster-template",
        dict(inputs={"systemDisk": {"category": "cloud_essd", "encrypted": False, "size": 200}}),
        "AIT003",
        "launch template system disk is not encrypted",
    ),
    (
        "scaling-config-disk-unencrypted",
        ERDMA,
        "pool-config",
        dict(inputs={"systemDiskEncrypted": False}),
        "AIT003",
        "scaling configuration system disk is not encrypted",
    ),
    (
        "storage-unprotected",
        MED,
        "storage-fs",
        dict(protect=False),
        "AIT004",
        "stateful resource must have protect and retain_on_delete from its first deployment",
    ),
    (
        "storage-not-retained",
        AUTO,
        "storage-fs",
        dict(retain_on_delete=False),
        "AIT004",
        "stateful resource must have protect and retain_on_delete from its first deployment",
    ),
    (
        "extreme-nas-unencrypted",
        MED,
        "storage-fs",
        dict(drop=("encryptType",)),
        "AIT005",
        "NAS file system is not encrypted (encryptType 0)",
    ),
    (
        "standard-nas-unencrypted",
        AUTO,
        "storage-fs",
        dict(inputs={"encryptType": 0}),
        "AIT005",
        "NAS file system is not encrypted (encryptType 0)",
    ),
    (
        "access-rule-outside-vpc",
        MED,
        "storage-access-rule-cn-shanghai-a",
        dict(inputs={"sourceCidrIp": "0.0.0.0/0"}),
        "AIT006",
        "access rule admits 0.0.0.0/0, outside the VPC",
    ),
    (
        "access-rule-not-a-cidr",
        MED,
        "storage-access-rule-cn-shanghai-a",
        dict(inputs={"sourceCidrIp": "everyone"}),
        "AIT006",
        "access rule source 'everyone' is not a CIDR",
    ),
    (
        "default-access-group",
        AUTO,
        "storage-mount-target",
        dict(inputs={"accessGroupName": "DEFAULT_VPC_GROUP_NAME"}),
        "AIT006",
        "mount target uses the default access group",
    ),
    (
        "trust-other-service",
        MED,
        "cluster-node-role",
        dict(inputs={"assumeRolePolicyDocument": json.dumps(PUBLIC_TRUST)}),
        "AIT007",
        "trust policy admits more than the ECS service: {'Service': ['ecs.aliyuncs.com', 'fc.aliyuncs.com']}",
    ),
    (
        "trust-ram-account",
        AUTO,
        "pool-node-role",
        dict(inputs={"assumeRolePolicyDocument": json.dumps(RAM_TRUST)}),
        "AIT007",
        "trust policy admits more than the ECS service: {'RAM': ['acs:ram::123:root']}",
    ),
    (
        "trust-not-json",
        MED,
        "cluster-node-role",
        dict(inputs={"assumeRolePolicyDocument": "{not json"}),
        "AIT007",
        "trust policy is not JSON",
    ),
    (
        "imds-v1",
        MED,
        "cluster-template",
        dict(inputs={"httpTokens": "optional"}),
        "AIT008",
        "instance metadata must require tokens (IMDSv2: httpTokens=required)",
    ),
    (
        # A type aitrain has no record of (here a security group rule turned into an UNKNOWN_TYPE node) fails closed.
        "unknown-kind",
        MED,
        "network-sg-intra-cluster",
        dict(type="alicloud:ehpc/jobTemplate:JobTemplate"),
        "AIT039",
        UNKNOWN_TYPE_FINDING,
    ),
]


SCALING_CONFIG = {  # the pool's configuration as the eRDMA opt-in builds it (ERI needs it; AIT008 is then skipped)
    "active": True,
    "enable": True,
    "imageId": "img-1",
    "instanceType": "ecs.gn7i-c32g1.8xlarge",
    "internetMaxBandwidthOut": 0,
    "roleName": f"{AUTO}-pool-node",
    "scalingGroupId": f"${{{AUTO}-pool-group.id}}",
    "securityGroupId": f"${{{AUTO}-network-sg.id}}",
    "systemDiskCategory": "cloud_essd",
    "systemDiskEncrypted": True,
    "systemDiskSize": 200,
    "dataDisks": [
        {
            "category": "cloud_essd",
            "deleteWithInstance": True,
            "encrypted": True,
            "name": "aitrain-scratch",
            "size": 564,
        }
    ],
    "tags": {"aitrain-component": "gpu-pool", "managed-by": "aitrain"},
}


@pytest.fixture
def erdma_plan(autoscaling_plan):
    """autoscaling-training whose pool uses an ess.ScalingConfiguration instead of its launch template."""
    from blueprints.review.plan import PlannedResource

    config = PlannedResource(
        "alicloud:ess/scalingConfiguration:ScalingConfiguration",
        f"{AUTO}-pool-config",
        f"{AUTO}-pool",
        True,
        SCALING_CONFIG,
    )
    kept = tuple(r for r in autoscaling_plan.resources if r.name != f"{AUTO}-pool-template")
    assert len(kept) == len(autoscaling_plan.resources) - 1
    return dataclasses.replace(autoscaling_plan, resources=(*kept, config))


def preset_plan(preset, medical_plan, autoscaling_plan, erdma_plan=None):
    return {MED: medical_plan, AUTO: autoscaling_plan, ERDMA: erdma_plan}[preset]


@pytest.mark.parametrize("case, preset, suffix, changes, rule, message", CASES, ids=[c[0] for c in CASES])
def test_rule_fires_alone_with_its_message(
    case, preset, suffix, changes, rule, message, medical_plan, autoscaling_plan, erdma_plan
):
    name = f"{AUTO if preset == ERDMA else preset}-{suffix}"
    base = preset_plan(preset, medical_plan, autoscaling_plan, erdma_plan)
    plan = tamper(base, name, **dict(changes))
    level = {r.id: r.level for r in guardrails.RULES}[rule]
    assert check(plan, base=base) == [Finding(rule, level, name, message)]
    # Skipping that rule by id silences exactly it.
    assert check(plan, skip=[rule], base=base) == []


def test_every_rule_has_a_violating_fixture():
    from test_capacity_cluster import OWNED as CAPACITY_OWNED  # AIT041's cases: tests/test_capacity_cluster.py
    from test_guardrails_data import (
        OWNED as DATA_OWNED,
    )  # the data and account rules' cases: tests/test_guardrails_data.py
    from test_guardrails_kubernetes import (
        OWNED as KUBERNETES_OWNED,
    )  # the ACK rules' cases: tests/test_guardrails_kubernetes.py
    from test_guardrails_nodes import OWNED  # the node rules' cases live in tests/test_guardrails_nodes.py
    from test_metrics import OWNED as METRICS_OWNED  # AIT040's cases: tests/test_metrics.py

    # AIT013 reads the summary, not a resource: test_scratch_below_three_times_memory_is_a_warning_with_the_numbers.
    covered = (
        {c[4] for c in CASES}
        | {c[3] for c in UNIT_CASES}
        | {r for c in ALSO_CASES for r, _, _ in c[4]}
        | {"AIT013"}
        | set(OWNED)
        | DATA_OWNED
        | set(KUBERNETES_OWNED)
        | set(METRICS_OWNED)
        | set(CAPACITY_OWNED)
    )
    assert {r.id for r in guardrails.RULES} <= covered
    assert [r.id for r in guardrails.RULES] == sorted(r.id for r in guardrails.RULES)


def test_levels_and_titles():
    levels = {r.id: r.level for r in guardrails.RULES}
    assert {i: levels[i] for i in ("AIT008", "AIT009", "AIT013", "AIT027", "AIT031")} == {
        "AIT008": "error",
        "AIT009": "warning",
        "AIT013": "warning",
        "AIT027": "warning",
        "AIT031": "info",
    }
    assert all(level in guardrails.LEVELS for level in levels.values())
    assert all(r.title for r in guardrails.RULES)


@pytest.mark.parametrize(
    "fixture, errors",
    [
        ("medical_plan", []),
        ("autoscaling_plan", []),  # the pool comes from a launch template that requires IMDSv2
    ],
)
def test_presets_produce_no_errors(fixture, errors, request):
    plan = request.getfixturevalue(fixture)
    assert [(f.rule, f.resource) for f in guardrails.check(plan) if f.level == "error"] == errors
    assert plan.findings == tuple(dataclasses.asdict(f) for f in guardrails.check(plan))


# (case id, preset, resource suffix, tamper kwargs, [(rule, resource suffix, message)]): one change, several rules.
ALSO_CASES = [
    (
        "ingress-from-internet-ipv6",
        AUTO,
        "network-sg-intra-cluster",
        dict(inputs={"cidrIp": "::/0", "ipProtocol": "tcp", "portRange": "22/22"}, drop=("sourceSecurityGroupId",)),
        [
            ("AIT002", "network-sg-intra-cluster", "ingress tcp 22/22 is open to the internet"),
            (
                "AIT018",
                "network-sg-intra-cluster",
                "cidrIp ::/0 is IPv6; cidrIp takes IPv4 only (IPv6 ranges go in ipv6CidrIp)",
            ),
        ],
    ),
    (
        "all-from-internet",
        MED,
        "network-sg-intra-cluster",
        dict(inputs={"cidrIp": "0.0.0.0/0"}, drop=("sourceSecurityGroupId",)),
        [
            ("AIT002", "network-sg-intra-cluster", "ingress all -1/-1 is open to the internet"),
            (
                "AIT018",
                "network-sg-intra-cluster",
                "ingress all -1/-1 from 0.0.0.0/0, outside the private ranges, "
                "admits every protocol; from an admin range admit only TCP 22",
            ),
        ],
    ),
    (
        "storage-delete-before-replace",
        MED,
        "storage-fs",
        dict(delete_before_replace=True),
        [
            ("AIT004", "storage-fs", "delete_before_replace on stateful data can lose it on a failed replace"),
            (
                "AIT017",
                "storage-fs",
                "delete_before_replace on a stateful resource deletes the data before its replacement exists",
            ),
        ],
    ),
    (
        "cpfs-unencrypted",
        MED,
        "storage-fs",
        dict(inputs={"fileSystemType": "cpfs"}, drop=("encryptType",)),
        [
            (
                "AIT009",
                "storage-fs",
                "cpfs file system is not encrypted at rest: the NAS API "
                "encrypts only standard and extreme file systems, and the"
                " profile accepts this with storage.allow_unencrypted_cpfs; "
                "keep regulated data off it or use NAS extreme",
            ),
            (
                "AIT016",
                "storage-fs",
                "cpfs file system has no snapshot or recycle-bin API in "
                "the provider (nas.Snapshot and AutoSnapshotPolicy are"
                " Extreme-only, the recycle bin general-purpose-only): a deleted or overwritten file cannot be "
                "recovered; keep the only copy of data in"
                " OSS (versioned) and treat CPFS as a cache",
            ),
            (
                "AIT025",
                "storage-fs",
                "cpfs is reached without a NAS access group and is not "
                "encrypted at rest (the NAS API offers neither for CPFS):"
                " any host in its vSwitch can mount it; accept this only for data that may sit unencrypted in the VPC "
                "(storage.allow_unencrypted_cpfs),"
                " or use NAS extreme",
            ),
        ],
    ),
]


@pytest.mark.parametrize("case, preset, suffix, changes, expected", ALSO_CASES, ids=[c[0] for c in ALSO_CASES])
def test_one_change_several_rules(case, preset, suffix, changes, expected, medical_plan, autoscaling_plan):
    base = preset_plan(preset, medical_plan, autoscaling_plan)
    plan = tamper(base, f"{preset}-{suffix}", **dict(changes))
    levels = {r.id: r.level for r in guardrails.RULES}
    assert check(plan, base=base) == [
        Finding(rule, levels[rule], f"{preset}-{name}", message) for rule, name, message in expected
    ]


def test_safe_neighbours_do_not_fire(medical_plan, autoscaling_plan):
    """What the rules must not flag: SSH from an admin /24, egress to the VPC, a VPC subnet in the access rule.

    (Egress to anywhere before the drop-all is an AIT027 warning: tests/test_egress_guardrails.py.)"""
    admin = tamper(
        autoscaling_plan,
        f"{AUTO}-network-sg-intra-cluster",
        inputs={"cidrIp": "198.51.100.0/24", "ipProtocol": "tcp", "portRange": "22/22"},
        drop=("sourceSecurityGroupId",),
    )
    egress = tamper(
        medical_plan,
        f"{MED}-network-sg-intra-cluster",
        inputs={"type": "egress", "cidrIp": "10.20.0.0/16"},
        drop=("sourceSecurityGroupId",),
    )
    subnet = tamper(medical_plan, f"{MED}-storage-access-rule-cn-shanghai-a", inputs={"sourceCidrIp": "10.20.5.0/24"})
    for plan, base in ((admin, autoscaling_plan), (egress, medical_plan), (subnet, medical_plan)):
        assert check(plan, base=base) == []
    # An unencrypted CPFS is not an AIT005 error (the API cannot encrypt it): only warnings say so (AIT009, and the
    # CPFS limits AIT016 and AIT025).
    cpfs_like = tamper(medical_plan, f"{MED}-storage-fs", inputs={"fileSystemType": "cpfs"}, drop=("encryptType",))
    assert [(f.rule, f.level) for f in check(cpfs_like, base=medical_plan)] == [
        ("AIT009", "warning"),
        ("AIT016", "warning"),
        ("AIT025", "warning"),
    ]


def test_findings_keep_rule_order_and_skip_only_named_rules(medical_plan):
    plan = tamper(
        medical_plan, f"{MED}-cluster-template", inputs={"httpTokens": "optional", "internetMaxBandwidthOut": 1}
    )
    assert [f.rule for f in check(plan, base=medical_plan)] == ["AIT001", "AIT008"]
    assert [f.rule for f in check(plan, skip=["AIT008"], base=medical_plan)] == ["AIT001"]


def test_unknown_rule_id_is_an_error(medical_plan):
    with pytest.raises(ValueError, match=r"unknown guardrail ids \['AIT999'\]; known: \['AIT001'"):
        check(medical_plan, skip=["AIT999", "AIT001"], base=medical_plan)


def test_preview_records_findings_in_the_plan():
    """preview stores guardrails.check's findings in the plan (what every output format reports)."""
    import datetime as dt

    import pulumi_alicloud as alicloud

    from blueprints.catalog import load_catalog
    from blueprints.engine.preview import preview
    from blueprints.profile.stackconfig import PRESET_KEY

    def program():
        return alicloud.ecs.Instance(
            "public-node", internet_max_bandwidth_out=5, system_disk_encrypted=True, http_tokens="required"
        )

    plan = preview({PRESET_KEY: MED}, catalog=load_catalog(), today=dt.date(2026, 11, 30), program=program)
    assert plan.findings[0] == {
        "rule": "AIT001",
        "level": "error",
        "resource": "public-node",
        "message": "internetMaxBandwidthOut=5 gives training nodes a public IP; use 0 and the NAT gateway",
    }
    assert plan.findings == tuple(dataclasses.asdict(f) for f in guardrails.check(plan))


def with_resource(plan, short_type: str, name: str, inputs: dict, **options):
    """The plan plus one resource of ``short_type`` (e.g. ``oss.Bucket``), protected unless told otherwise."""
    from blueprints.review.plan import PlannedResource

    module, kind = short_type.split(".")
    token = f"alicloud:{module}/{kind[0].lower() + kind[1:]}:{kind}"
    resource = PlannedResource(
        token, name, None, True, inputs, **{"protect": True, "retain_on_delete": True, **options}
    )
    return dataclasses.replace(plan, resources=(*plan.resources, resource))


def test_unencrypted_disks_are_warned(medical_plan):
    plan = with_resource(medical_plan, "ecs.EcsDisk", "extra-data", {"size": 500, "encrypted": False})
    assert check(plan, base=medical_plan) == [Finding("AIT009", "warning", "extra-data", "data disk is not encrypted")]


def test_encrypted_disks_pass(medical_plan):
    assert (
        check(
            with_resource(medical_plan, "ecs.EcsDisk", "extra-data", {"size": 500, "encrypted": True}),
            base=medical_plan,
        )
        == []
    )


def test_a_bare_bucket_is_an_ait010_error_not_an_ait009_warning(medical_plan):
    """OSS can always encrypt, so a bucket without SSE (or any other setting) is an error, reported once per setting
    (ACL, public access block, versioning, SSE, noncurrent expiry, HTTPS policy); TLS and logging are AIT021/AIT022."""
    plan = with_resource(medical_plan, "oss.Bucket", "extra-data", {"bucket": "data"})
    assert [(f.rule, f.level) for f in check(plan, base=medical_plan)] == [("AIT010", "error")] * 6 + [
        ("AIT021", "warning"),
        ("AIT022", "info"),
    ]
    assert "bucket data has no server-side encryption (oss.BucketServerSideEncryption AES256 or KMS)" in [
        f.message for f in check(plan, base=medical_plan)
    ]


@pytest.mark.parametrize(
    "source, fires",
    [
        ("0.0.0.0/0", True),
        ("203.0.113.0/24", True),
        ("2001:db8::/32", True),
        ("10.8.0.0/16", False),
        ("172.16.4.0/24", False),
        ("192.168.1.0/24", False),
        ("fd00:1::/64", False),
    ],
)
def test_an_access_rule_without_a_vpc_in_the_plan_must_admit_a_private_range(source, fires):
    """A storage component tested alone has no VPC to compare with: its rule must at least stay private."""
    from blueprints.review.plan import Plan, PlannedResource

    rule = PlannedResource(
        "alicloud:nas/accessRule:AccessRule",
        "s-access-rule-cn-shanghai-a",
        None,
        True,
        {"sourceCidrIp": source, "userAccessType": "root_squash"},
    )
    findings = check(
        Plan("component", "cn-shanghai", "s", {}, (), (rule,)), base=Plan("component", "cn-shanghai", "s", {}, (), ())
    )
    expected = [
        Finding(
            "AIT006",
            "error",
            "s-access-rule-cn-shanghai-a",
            f"access rule admits {source}, which is not a private range (no VPC in this plan to compare with)",
        )
    ]
    assert findings == (expected if fires else [])


# ---- the bucket, the login node, data disks and scratch (AIT001, AIT003, AIT008, AIT010-AIT013) ----
# The base plan is the medical-imaging preset plus a DataBucket and a LoginNode recorded under the mocks: clean
# under every rule (asserted below), so each case's finding is caused by its one change alone.

BUCKET = "med-train-data"


@pytest.fixture(scope="module")
def unit_resources():
    from blueprints.components.access import LoginNode, LoginNodeArgs
    from blueprints.components.bucket import DataBucket, DataBucketArgs
    from blueprints.testing import record_program

    def program():
        DataBucket("med-data", DataBucketArgs(name="med", region="cn-shanghai", bucket=BUCKET, noncurrent_days=30))
        LoginNode(
            "med-login",
            LoginNodeArgs(
                name="med",
                instance_type="ecs.g7.large",
                image_id="img-1",
                vswitch_id="vsw-1",
                vpc_id="vpc-1",
                admin_cidr="203.0.113.0/24",
                vpc_cidr="10.20.0.0/16",
                key_pair_name="ops-key",
            ),
        )

    return tuple(record_program(program, zones=["cn-shanghai-a"]))


@pytest.fixture
def full_plan(medical_plan, unit_resources):
    summary = {**medical_plan.summary, "admin_cidr": "203.0.113.0/24", "bucket": BUCKET}
    # The preset's own bucket unit and its attachment give way to the unit under test (one bucket per plan).
    own = tuple(
        r
        for r in medical_plan.resources
        if not r.name.startswith(f"{MED}-data") and r.short_type != "ram.RolePolicyAttachment"
    )
    return dataclasses.replace(medical_plan, summary=summary, resources=(*own, *unit_resources))


def without(plan, name: str):
    assert any(r.name == name for r in plan.resources), name
    return dataclasses.replace(plan, resources=tuple(r for r in plan.resources if r.name != name))


def policy(*statements) -> str:
    return json.dumps({"Version": "1", "Statement": list(statements)})


def allow(*resources, actions=("oss:GetObject",)):
    return {"Effect": "Allow", "Action": list(actions), "Resource": list(resources)}


HTTPS_DENY = {
    "Effect": "Deny",
    "Principal": ["*"],
    "Action": ["oss:*"],
    "Condition": {"Bool": {"acs:SecureTransport": ["false"]}},
    "Resource": [f"acs:oss:*:*:{BUCKET}", f"acs:oss:*:*:{BUCKET}/*"],
}
DISK = {"category": "cloud_essd", "size": 500, "encrypted": False, "name": "aitrain-scratch"}
TRAINING_SG_RULE = f"{MED}-network-sg-intra-cluster"

# (case id, resource to change, change: tamper kwargs or "remove",
# rule, finding's resource or None = the changed one, message)
UNIT_CASES = [
    (
        "eip-on-a-training-instance",
        "med-login-instance",
        dict(inputs={"tags": {"aitrain-component": "gpu-cluster", "managed-by": "aitrain"}}),
        "AIT001",
        "med-login-eip-association",
        "EIP bound to 'med-login-instance' (EcsInstance): only the "
        "login node and the NAT gateway may have a public address",
    ),
    (
        "eip-to-an-unknown-instance",
        "med-login-eip-association",
        dict(inputs={"instanceId": "i-0abc"}),
        "AIT001",
        None,
        "EIP bound to 'i-0abc' (EcsInstance): only the login node and the NAT gateway may have a public address",
    ),
    (
        "nat-eip-as-ecs-instance",
        f"{MED}-network-nat-eip-association",
        dict(inputs={"instanceType": "EcsInstance"}),
        "AIT001",
        None,
        f"EIP bound to '{MED}-network-nat' (EcsInstance): only the "
        "login node and the NAT gateway may have a public address",
    ),
    (
        "eip-default-type-is-ecs",
        f"{MED}-network-nat-eip-association",
        dict(drop=("instanceType",)),
        "AIT001",
        None,
        f"EIP bound to '{MED}-network-nat' (EcsInstance): only the "
        "login node and the NAT gateway may have a public address",
    ),
    (
        "login-system-disk-unencrypted",
        "med-login-instance",
        dict(inputs={"systemDiskEncrypted": False}),
        "AIT003",
        None,
        "instance system disk is not encrypted",
    ),
    (
        "template-data-disk-unencrypted",
        f"{MED}-cluster-template",
        dict(inputs={"dataDisks": [{**DISK, "encrypted": True}, DISK]}),
        "AIT003",
        None,
        "data disk 1 (cloud_essd, 500 GiB) is not encrypted",
    ),
    (
        "instance-set-data-disk-unencrypted",
        f"{MED}-cluster-nodes-0",
        dict(inputs={"dataDisks": [{"diskCategory": "cloud_essd", "size": 800, "diskName": "aitrain-scratch"}]}),
        "AIT003",
        None,
        "data disk 0 (cloud_essd, 800 GiB) is not encrypted",
    ),
    (
        "instance-data-disk-unencrypted",
        "med-login-instance",
        dict(inputs={"dataDisks": [DISK]}),
        "AIT003",
        None,
        "data disk 0 (cloud_essd, 500 GiB) is not encrypted",
    ),
    (
        "login-imds-v1",
        "med-login-instance",
        dict(inputs={"httpTokens": "optional"}),
        "AIT008",
        None,
        "instance metadata must require tokens (IMDSv2: httpTokens=required)",
    ),
    (
        "bucket-acl-public",
        "med-data-acl",
        dict(inputs={"acl": "public-read"}),
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} has no private ACL (oss.BucketAcl acl=private)",
    ),
    (
        "bucket-acl-missing",
        "med-data-acl",
        "remove",
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} has no private ACL (oss.BucketAcl acl=private)",
    ),
    (
        "bucket-public-access-open",
        "med-data-public-access-block",
        dict(inputs={"blockPublicAccess": False}),
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} does not block public access (oss.BucketPublicAccessBlock block_public_access=True)",
    ),
    (
        "bucket-public-access-block-missing",
        "med-data-public-access-block",
        "remove",
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} does not block public access (oss.BucketPublicAccessBlock block_public_access=True)",
    ),
    (
        "bucket-versioning-suspended",
        "med-data-versioning",
        dict(inputs={"status": "Suspended"}),
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} is not versioned (oss.BucketVersioning "
        "status=Enabled); an overwritten checkpoint would be lost",
    ),
    (
        "bucket-unencrypted",
        "med-data-encryption",
        "remove",
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} has no server-side encryption (oss.BucketServerSideEncryption AES256 or KMS)",
    ),
    (
        "bucket-force-destroy",
        "med-data-bucket",
        dict(inputs={"forceDestroy": True}),
        "AIT010",
        None,
        f"bucket {BUCKET} has force_destroy, which deletes every object with the bucket",
    ),
    (
        "bucket-policy-missing",
        "med-data-https-only",
        "remove",
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} has no bucket policy that denies plain HTTP (acs:SecureTransport false)",
    ),
    (
        "bucket-policy-objects-only",
        "med-data-https-only",
        dict(inputs={"policy": policy({**HTTPS_DENY, "Resource": [f"acs:oss:*:*:{BUCKET}/*"]})}),
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} policy does not deny plain HTTP on the bucket and its objects (acs:SecureTransport false)",
    ),
    (
        "bucket-policy-secure-true",
        "med-data-https-only",
        dict(inputs={"policy": policy({**HTTPS_DENY, "Condition": {"Bool": {"acs:SecureTransport": "true"}}})}),
        "AIT010",
        "med-data-bucket",
        f"bucket {BUCKET} policy does not deny plain HTTP on the bucket and its objects (acs:SecureTransport false)",
    ),
    (
        "bucket-policy-allows-everyone",
        "med-data-https-only",
        dict(inputs={"policy": policy(HTTPS_DENY, {**allow(f"acs:oss:*:*:{BUCKET}/*"), "Principal": "*"})}),
        "AIT010",
        "med-data-bucket",
        f'bucket {BUCKET} policy allows Principal "*", which opens the bucket to everyone',
    ),
    (
        "node-policy-star",
        "med-data-node-policy",
        dict(inputs={"policyDocument": policy(allow("*", actions=("oss:*",)))}),
        "AIT011",
        None,
        "Resource '*' is not one named OSS bucket (no wildcards in the bucket name)",
    ),
    (
        "node-policy-other-bucket",
        "med-data-node-policy",
        dict(inputs={"policyDocument": policy(allow(f"acs:oss:*:*:{BUCKET}/*", "acs:oss:*:*:other-data/*"))}),
        "AIT011",
        None,
        f"Resource 'acs:oss:*:*:other-data/*' names bucket other-data, not this plan's ({BUCKET})",
    ),
    (
        "node-policy-bucket-wildcard",
        "med-data-node-policy",
        dict(inputs={"policyDocument": policy(allow("acs:oss:*:*:med-*/*"))}),
        "AIT011",
        None,
        "Resource 'acs:oss:*:*:med-*/*' is not one named OSS bucket (no wildcards in the bucket name)",
    ),
    (
        "node-policy-not-resource",
        "med-data-node-policy",
        dict(
            inputs={
                "policyDocument": policy(
                    {"Effect": "Allow", "Action": ["oss:GetObject"], "NotResource": ["acs:oss:*:*:x"]}
                )
            }
        ),
        "AIT011",
        None,
        "policy uses NotResource/NotAction, which grants everything not listed",
    ),
    (
        "node-policy-not-json",
        "med-data-node-policy",
        dict(inputs={"policyDocument": "{oops"}),
        "AIT011",
        None,
        "policy document is not JSON",
    ),
    (
        "cidr-ssh-on-training-nodes",
        TRAINING_SG_RULE,
        dict(inputs={"cidrIp": "10.8.0.0/16"}, drop=("sourceSecurityGroupId",)),
        "AIT012",
        None,
        "ingress all -1/-1 from 10.8.0.0/16 reaches SSH on training nodes; "
        "with a login node they admit SSH only from its security group",
    ),
    (
        "cidr-port-range-over-22",
        TRAINING_SG_RULE,
        dict(
            inputs={"cidrIp": "10.8.0.0/16", "ipProtocol": "tcp", "portRange": "20/30"}, drop=("sourceSecurityGroupId",)
        ),
        "AIT012",
        None,
        "ingress tcp 20/30 from 10.8.0.0/16 reaches SSH on training nodes; "
        "with a login node they admit SSH only from its security group",
    ),
    (
        "cidr-unreadable-port-range",
        TRAINING_SG_RULE,
        dict(
            inputs={"cidrIp": "10.8.0.0/16", "ipProtocol": "tcp", "portRange": "ssh"}, drop=("sourceSecurityGroupId",)
        ),
        "AIT012",
        None,
        "ingress tcp ssh from 10.8.0.0/16 reaches SSH on training nodes; "
        "with a login node they admit SSH only from its security group",
    ),
    (
        "login-admits-more-than-ssh",
        "med-login-sg-admin-ssh",
        dict(inputs={"portRange": "20/22"}),
        "AIT012",
        None,
        "login node admits tcp 20/22 from 203.0.113.0/24; it admits only TCP 22",
    ),
    (
        "login-ssh-from-another-range",
        "med-login-sg-admin-ssh",
        dict(inputs={"cidrIp": "198.51.100.0/24"}),
        "AIT012",
        None,
        "login node admits SSH from 198.51.100.0/24, not from network.admin_cidr 203.0.113.0/24",
    ),
]


@pytest.mark.parametrize("case, name, change, rule, resource, message", UNIT_CASES, ids=[c[0] for c in UNIT_CASES])
def test_store_and_access_rules_fire_alone_with_their_message(case, name, change, rule, resource, message, full_plan):
    plan = without(full_plan, name) if change == "remove" else tamper(full_plan, name, **dict(change))
    level = {r.id: r.level for r in guardrails.RULES}[rule]
    assert check(plan, base=full_plan) == [Finding(rule, level, resource or name, message)]
    assert check(plan, skip=[rule], base=full_plan) == []


def test_the_full_plan_is_clean(full_plan, unit_resources):
    """No error; one warning, the preset's HTTPS to any address (AIT027, kept on purpose: the boot's CDNs publish no
    stable ranges); the preset's advisories (customer KMS key, access logging, alarms, flow log, owner tags,
    ActionTrail), now about the unit bucket where it replaced the preset's."""
    assert [(f.rule, f.level, f.resource) for f in guardrails.check(full_plan)] == [
        (
            "AIT016",
            "warning",
            f"{MED}-storage-fs",
        ),  # the snapshot policy no resource can apply (ApplyAutoSnapshotPolicy by hand)
        ("AIT019", "info", f"{MED}-cluster-nodes-0"),
        ("AIT019", "info", f"{MED}-storage-fs"),
        ("AIT019", "info", "med-data-bucket"),
        ("AIT022", "info", "med-data-bucket"),
        ("AIT027", "warning", f"{MED}-network-sg-egress-allow-0"),
        ("AIT028", "info", f"{MED}-cluster-nodes-0"),
        ("AIT029", "info", f"{MED}-network-vpc"),
        ("AIT031", "info", "tags"),
        ("AIT032", "info", f"{MED}-network-vpc"),
    ]
    from blueprints.testing import assert_guardrails

    assert_guardrails(list(unit_resources))  # the two units alone, too


@pytest.mark.parametrize(
    "change",
    [
        dict(
            inputs={"cidrIp": "10.8.0.0/16", "ipProtocol": "tcp", "portRange": "443/443"},
            drop=("sourceSecurityGroupId",),
        ),
        dict(
            inputs={"cidrIp": "10.8.0.0/16", "ipProtocol": "udp", "portRange": "22/22"}, drop=("sourceSecurityGroupId",)
        ),
        dict(
            inputs={"sourceSecurityGroupId": "${med-login-sg.id}", "ipProtocol": "tcp", "portRange": "22/22"}
        ),  # the lead's login → nodes rule
        dict(inputs={"type": "egress", "cidrIp": "10.20.0.0/16"}, drop=("sourceSecurityGroupId",)),
    ],
)
def test_what_ait012_must_not_flag(change, full_plan):
    assert check(tamper(full_plan, TRAINING_SG_RULE, **change), base=full_plan) == []


def test_without_a_login_node_an_admin_range_may_reach_nodes(medical_plan):
    """AIT012 applies only when a login node exists (otherwise network.admin_cidr is a VPN range to the nodes)."""
    plan = tamper(
        medical_plan,
        TRAINING_SG_RULE,
        inputs={"cidrIp": "10.8.0.0/16", "portRange": "22/22", "ipProtocol": "tcp"},
        drop=("sourceSecurityGroupId",),
    )
    assert check(plan, base=medical_plan) == []


@pytest.mark.parametrize(
    "name, change",
    [
        ("med-data-encryption", "remove"),  # with the inline rule below instead
        ("med-data-acl", "remove"),
    ],
)
def test_inline_bucket_settings_count_too(name, change, full_plan):
    plan = without(full_plan, name)
    plan = tamper(
        plan, "med-data-bucket", inputs={"serverSideEncryptionRule": {"sseAlgorithm": "KMS"}, "acl": "private"}
    )
    assert check(plan, base=full_plan) == []


def test_an_adopted_bucket_is_judged_by_the_summary(full_plan):
    adopted = full_plan
    for name in (
        "med-data-bucket",
        "med-data-acl",
        "med-data-public-access-block",
        "med-data-versioning",
        "med-data-encryption",
        "med-data-https-only",
    ):
        adopted = without(adopted, name)
    assert check(adopted, base=full_plan) == []
    other = tamper(
        adopted, "med-data-node-policy", inputs={"policyDocument": policy(allow("acs:oss:*:*:other-data/*"))}
    )
    assert [f.message for f in check(other, base=adopted)] == [
        f"Resource 'acs:oss:*:*:other-data/*' names bucket other-data, not this plan's ({BUCKET})"
    ]
    # No bucket anywhere to compare with: the policy must still name one bucket only.
    unnamed = dataclasses.replace(adopted, summary={k: v for k, v in adopted.summary.items() if k != "bucket"})
    two = tamper(
        unnamed,
        "med-data-node-policy",
        inputs={"policyDocument": policy(allow(f"acs:oss:*:*:{BUCKET}/*", "acs:oss:*:*:other-data/*"))},
    )
    assert [f.message for f in check(two, base=unnamed)] == [
        f"policy names 2 buckets ({BUCKET}, other-data); a node policy names one"
    ]
    assert (
        check(
            tamper(
                unnamed, "med-data-node-policy", inputs={"policyDocument": policy(allow("acs:oss:*:*:other-data/*"))}
            ),
            base=unnamed,
        )
        == []
    )


def test_policies_without_oss_actions_are_not_ait011s(full_plan):
    plan = tamper(
        full_plan,
        "med-data-node-policy",
        inputs={"policyDocument": policy(allow("*", actions=("ecs:DescribeInstances",)))},
    )
    assert check(plan, base=full_plan) == []


@pytest.mark.parametrize(
    "scratch, memory, message",
    [
        (
            500,
            1000,
            "scratch 500 GiB per node is below 3 × 1,000 GiB memory = 3,000 GiB (the article's memory : SSD = 1 : 3);"
            " raise compute.scratch_gib to at least 3,000",
        ),
        (
            20,
            7.5,
            "scratch 20 GiB per node is below 3 × 7.5 GiB memory = 22.5 GiB (the article's memory : SSD = 1 : 3);"
            " raise compute.scratch_gib to at least 22.5",
        ),
        (2999, 1000, None),
        (3000, 1000, None),
        (3001, 1000, None),
    ],
)
def test_scratch_below_three_times_memory_is_a_warning_with_the_numbers(scratch, memory, message, medical_plan):
    plan = dataclasses.replace(
        medical_plan, summary={**medical_plan.summary, "scratch_gib_per_node": scratch, "memory_gib_per_node": memory}
    )
    findings = check(plan, base=medical_plan)
    if scratch >= 3 * memory:
        assert findings == []
    elif message:
        assert findings == [Finding("AIT013", "warning", "summary.scratch_gib_per_node", message)]
    else:
        assert [f.rule for f in findings] == ["AIT013"]


@pytest.mark.parametrize(
    "summary", [{}, {"memory_gib_per_node": 1000}, {"scratch_gib_per_node": "local NVMe", "memory_gib_per_node": 1000}]
)
def test_scratch_rule_needs_both_numbers(summary, medical_plan):
    base = {k: v for k, v in medical_plan.summary.items() if k != "scratch_gib_per_node"}
    plan = dataclasses.replace(medical_plan, summary={**base, **summary})
    assert check(plan, base=medical_plan) == []


def test_any_action_counts_as_oss_and_is_never_least_privilege(full_plan):
    plan = tamper(
        full_plan, "med-data-node-policy", inputs={"policyDocument": policy(allow("acs:ecs:*:*:*", actions=("*",)))}
    )
    assert check(plan, base=full_plan) == [
        Finding(
            "AIT011",
            "error",
            "med-data-node-policy",
            "Resource 'acs:ecs:*:*:*' is not one named OSS bucket (no wildcards in the bucket name)",
        ),
        Finding(
            "AIT020",
            "error",
            "med-data-node-policy",
            "policy allows Action '*': every action on every service; list the actions the nodes need",
        ),
    ]
