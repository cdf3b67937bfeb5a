"""Node guardrails (network, compute, identity, access): each rule fires on a plan that breaks it, at its level,
with its message, and the secure shapes and presets hold.

Base plans have the secure shape from the issue-9 brief (pool from a launch template, egress allow-list, owner
tags, a login node with a key pair): the presets as built plus what a profile opts into. A case is judged by the
findings it ADDS to its base plan, so rules owned elsewhere (data, account) that report on the base do not blur the
assertion, and deleting a branch turns it red.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re

import pytest

from blueprints.review import guardrails
from blueprints.review.guardrails import Finding
from blueprints.review.plan import Plan, PlannedResource

MED, AUTO = "medical-imaging", "autoscaling-training"
OWNED = (
    "AIT001",
    "AIT002",
    "AIT003",
    "AIT007",
    "AIT008",
    "AIT011",
    "AIT012",
    "AIT013",
    "AIT014",
    "AIT017",
    "AIT018",
    "AIT020",
    "AIT023",
    "AIT027",
    "AIT030",
    "AIT031",
)
BUCKET = "med-train-data"
OWNER_TAGS = {"owner": "ml-platform", "data-classification": "confidential"}


def resource(short_type: str, name: str, inputs: dict, **options) -> PlannedResource:
    module, kind = short_type.split(".")
    return PlannedResource(
        f"alicloud:{module}/{kind[0].lower() + kind[1:]}:{kind}", name, None, True, inputs, **options
    )


def add(plan: Plan, *resources: PlannedResource) -> Plan:
    return dataclasses.replace(plan, resources=(*plan.resources, *resources))


def drop(plan: Plan, *names: str) -> Plan:
    assert all(any(r.name == n for r in plan.resources) for n in names), names
    return dataclasses.replace(plan, resources=tuple(r for r in plan.resources if r.name not in names))


def tamper(plan: Plan, name: str, *, remove: tuple[str, ...] = (), inputs: dict | None = None, **options) -> Plan:
    hit = []

    def change(r: PlannedResource) -> PlannedResource:
        if r.name != name:
            return r
        hit.append(r)
        merged = {k: v for k, v in {**r.inputs, **(inputs or {})}.items() if k not in remove}
        return dataclasses.replace(r, inputs=merged, **options)

    changed = dataclasses.replace(plan, resources=tuple(change(r) for r in plan.resources))
    assert hit, f"no resource {name}"
    return changed


def egress(group: str, name: str, **inputs) -> PlannedResource:
    base = {
        "type": "egress",
        "securityGroupId": f"${{{group}.id}}",
        "nicType": "intranet",
        "policy": "accept",
        "priority": 1,
    }
    return resource("ecs.SecurityGroupRule", name, {**base, **inputs})


def allow_list(group: str) -> tuple[PlannedResource, ...]:
    """The DEFAULTS helper's egress allow-list: accepts first, one drop-all at the lowest priority."""
    return (
        egress(group, f"{group}-egress-vpc", ipProtocol="all", portRange="-1/-1", cidrIp="10.30.0.0/16"),
        egress(
            group, f"{group}-egress-https", ipProtocol="tcp", portRange="443/443", cidrIp="203.0.113.0/24", priority=2
        ),
        egress(
            group,
            f"{group}-egress-drop-all",
            ipProtocol="all",
            portRange="-1/-1",
            cidrIp="0.0.0.0/0",
            policy="drop",
            priority=100,
        ),
    )


def owned(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule in OWNED]


def _key(f: Finding):
    # AIT019 reports once per resource family with a count ("(3 resource(s))") on the family's first resource: a
    # change that adds or removes a disk moves both, but the advisory is the one the base already had.
    if f.rule == "AIT019":
        return f.rule, f.level, re.sub(r" \(\d+ resource\(s\)\)", "", f.message)
    return f


def added(plan: Plan, base: Plan, rule: str | None = None) -> list[Finding]:
    """The findings ``plan`` has that ``base`` has not (only ``rule``'s when given)."""
    before = {_key(f) for f in guardrails.check(base)}
    return [f for f in guardrails.check(plan) if _key(f) not in before and (rule is None or f.rule == rule)]


def tagged(plan: Plan) -> Plan:
    return dataclasses.replace(
        plan,
        resources=tuple(
            dataclasses.replace(r, inputs={**r.inputs, "tags": {**r.inputs["tags"], **OWNER_TAGS}})
            if isinstance(r.inputs.get("tags"), dict)
            else r
            for r in plan.resources
        ),
    )


@pytest.fixture(scope="module")
def login_and_bucket():
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
                vswitch_id=f"${{{MED}-network-vsw-login.id}}",
                vpc_id="vpc-1",
                admin_cidr="203.0.113.0/24",
                vpc_cidr="10.20.0.0/16",
                key_pair_name="ops-key",
            ),
        )

    return tuple(record_program(program, zones=["cn-shanghai-a"]))


@pytest.fixture
def med(medical_plan, login_and_bucket):
    """medical-imaging (egress allow-list on) with a login node (key pair), the unit bucket and owner tags."""
    summary = {**medical_plan.summary, "admin_cidr": "203.0.113.0/24", "bucket": BUCKET}
    own = tuple(
        r
        for r in medical_plan.resources
        if not r.name.startswith(f"{MED}-data") and r.short_type != "ram.RolePolicyAttachment"
    )
    # The login node in its own vSwitch (the last /20 slot's first /28), as the blueprint builds it.
    login_vsw = resource(
        "vpc.Switch",
        f"{MED}-network-vsw-login",
        {
            "cidrBlock": "10.20.240.0/28",
            "zoneId": "cn-shanghai-a",
            "vpcId": f"${{{MED}-network-vpc.id}}",
            "vswitchName": f"{MED}-network-login",
            "tags": {"managed-by": "aitrain"},
        },
    )
    login = (login_vsw, *login_and_bucket)
    assert any(r.name == f"{MED}-network-sg-egress-drop-all" for r in own)
    plan = dataclasses.replace(medical_plan, summary=summary, resources=(*own, *login))
    # The preset's HTTPS to any address is a warning (test_presets_hold_the_node_rules); the secure shape names a range.
    return tagged(tamper(plan, f"{NODE_SG}-egress-allow-0", inputs={"cidrIp": "203.0.113.0/24"}))


POOL_TEMPLATE = f"{AUTO}-pool-template"


@pytest.fixture
def pool(autoscaling_plan):
    """autoscaling-training as built (pool from a launch template, no scaling configuration), with an egress allow-list
    and owner tags."""
    template = next(r for r in autoscaling_plan.resources if r.name == POOL_TEMPLATE)
    assert template.short_type == "ecs.EcsLaunchTemplate" and not any(
        r.short_type == "ess.ScalingConfiguration" for r in autoscaling_plan.resources
    )
    return tagged(add(autoscaling_plan, *allow_list(f"{AUTO}-network-sg")))


@pytest.mark.parametrize("fixture", ["med", "pool"])
def test_the_secure_shapes_break_none_of_the_node_rules(fixture, request):
    assert owned(guardrails.check(request.getfixturevalue(fixture))) == []


def test_presets_hold_the_node_rules(medical_plan, autoscaling_plan):
    """What the presets report: medical-imaging turns the egress allow-list on, autoscaling-training does not (AIT027);
    neither sets owner tags (AIT031). No node rule finds an error."""
    no_owner = (
        "no resource carries an owner (owner or team) or a data "
        "classification (data-classification) tag; add them to the"
        " profile's tags so the owner and the data's sensitivity are on every resource"
    )
    egress_open = (
        "egress unrestricted: no egress drop-all rule (all, -1/-1, "
        "0.0.0.0/0, policy drop); a node can send data anywhere."
        " Turn on the profile's egress allow-list"
    )
    https_anywhere = (
        "egress accept tcp 443/443 to 0.0.0.0/0 reaches 4,294,967,296 "
        "addresses (wider than /8) outside the VPC and Alibaba Cloud's"
        " 100.64.0.0/10: the drop-all after it keeps little in; name the destination's own range and port"
    )
    assert owned(guardrails.check(medical_plan)) == [
        Finding("AIT027", "warning", f"{MED}-network-sg-egress-allow-0", https_anywhere),
        Finding("AIT031", "info", "tags", no_owner),
    ]
    assert owned(guardrails.check(autoscaling_plan)) == [
        Finding("AIT027", "warning", f"{AUTO}-network-sg", egress_open),
        Finding("AIT031", "info", "tags", no_owner),
    ]


def test_every_owned_rule_explains_itself():
    rules = {r.id: r for r in guardrails.RULES}
    assert set(OWNED) <= set(rules)
    for rule_id in OWNED:
        rule = rules[rule_id]
        assert rule.title and rule.rationale and rule.fix, rule_id
        assert rule.rationale.endswith(".") and "\n" not in rule.rationale + rule.fix, rule_id
        assert rule.references or rule_id == "AIT013", rule_id  # AIT013 is the article's sizing rule, not a §7 rule
    levels = {i: rules[i].level for i in OWNED}
    assert {i for i, level in levels.items() if level == "warning"} == {"AIT013", "AIT027"}
    assert {i for i, level in levels.items() if level == "info"} == {"AIT031"}
    assert (
        rules["AIT018"].references == (8, 9)
        and rules["AIT008"].references == (18,)
        and rules["AIT030"].references == (25,)
    )


def policy(*statements) -> str:
    return json.dumps({"Version": "1", "Statement": list(statements)})


def allow(*resources, actions=("oss:GetObject",)):
    return {"Effect": "Allow", "Action": list(actions), "Resource": list(resources)}


LTAI = "LTAI5tAbCdEfGhIjKlMnOpQr"
NODES = f"{MED}-cluster-nodes-0"
TEMPLATE = f"{MED}-cluster-template"
NODE_SG = f"{MED}-network-sg"
VSW = f"{MED}-network-vsw-cn-shanghai-a"
LOGIN = "med-login-instance"
PASSWORD = (
    "a login password is set: passwords are guessed and shared; log in with a key pair (keyName / keyPairName) only"
)


def shrink(plan: Plan, cidr: str) -> Plan:
    """The compute vSwitch (and the share's rule for it) narrowed to ``cidr``."""
    return tamper(
        tamper(plan, VSW, inputs={"cidrBlock": cidr}),
        f"{MED}-storage-access-rule-cn-shanghai-a",
        inputs={"sourceCidrIp": cidr},
    )


# (case id, fixture, change(plan) -> plan, rule, resource, message)
CASES = [
    (
        "public-ip-pool-template",
        "pool",
        lambda p: tamper(p, POOL_TEMPLATE, inputs={"internetMaxBandwidthOut": 5}),
        "AIT001",
        POOL_TEMPLATE,
        "internetMaxBandwidthOut=5 gives training nodes a public IP; use 0 and the NAT gateway",
    ),
    (
        "https-from-internet",
        "med",
        lambda p: add(
            p,
            resource(
                "ecs.SecurityGroupRule",
                "web",
                {
                    "type": "ingress",
                    "securityGroupId": f"${{{NODE_SG}.id}}",
                    "ipProtocol": "tcp",
                    "portRange": "443/443",
                    "cidrIp": "0.0.0.0/0",
                },
            ),
        ),
        "AIT002",
        "web",
        "ingress tcp 443/443 is open to the internet",
    ),
    (
        "pool-scratch-unencrypted",
        "pool",
        lambda p: tamper(
            p, POOL_TEMPLATE, inputs={"dataDisks": [{"name": "aitrain-scratch", "category": "cloud_essd", "size": 564}]}
        ),
        "AIT003",
        POOL_TEMPLATE,
        "data disk 0 (cloud_essd, 564 GiB) is not encrypted",
    ),
    (
        "trust-another-service",
        "pool",
        lambda p: tamper(
            p,
            f"{AUTO}-pool-node-role",
            inputs={
                "assumeRolePolicyDocument": json.dumps(
                    {"Statement": [{"Principal": {"Service": ["ecs.aliyuncs.com", "fc.aliyuncs.com"]}}]}
                )
            },
        ),
        "AIT007",
        f"{AUTO}-pool-node-role",
        "trust policy admits more than the ECS service: {'Service': ['ecs.aliyuncs.com', 'fc.aliyuncs.com']}",
    ),
    (
        "pool-imds-v1",
        "pool",
        lambda p: tamper(p, POOL_TEMPLATE, remove=("httpTokens",)),
        "AIT008",
        POOL_TEMPLATE,
        "instance metadata must require tokens (IMDSv2: httpTokens=required)",
    ),
    (
        "erdma-scaling-configuration",
        "pool",
        lambda p: add(
            p,
            resource(
                "ess.ScalingConfiguration", "eri-config", {"systemDiskEncrypted": True, "internetMaxBandwidthOut": 0}
            ),
        ),
        "AIT008",
        "eri-config",
        "a scaling configuration cannot require metadata tokens (it has no "
        "httpTokens); build the pool from a launch template with httpTokens=required,"
        " or skip AIT008 with a reason when eRDMA needs the configuration",
    ),
    (
        "instance-set-without-template",
        "med",
        lambda p: tamper(p, NODES, remove=("launchTemplateId",)),
        "AIT008",
        NODES,
        "an instance set without a launchTemplateId cannot require metadata "
        "tokens; build it from a launch template with httpTokens=required",
    ),
    (
        "node-policy-every-bucket",
        "med",
        lambda p: tamper(p, "med-data-node-policy", inputs={"policyDocument": policy(allow("acs:oss:*:*:*"))}),
        "AIT011",
        "med-data-node-policy",
        "Resource 'acs:oss:*:*:*' is not one named OSS bucket (no wildcards in the bucket name)",
    ),
    (
        "login-admits-udp",
        "med",
        lambda p: tamper(p, "med-login-sg-admin-ssh", inputs={"ipProtocol": "udp"}),
        "AIT012",
        "med-login-sg-admin-ssh",
        "login node admits udp 22/22 from 203.0.113.0/24; it admits only TCP 22",
    ),
    (
        "scratch-small",
        "med",
        lambda p: dataclasses.replace(p, summary={**p.summary, "scratch_gib_per_node": 100}),
        "AIT013",
        "summary.scratch_gib_per_node",
        "scratch 100 GiB per node is below 3 × 1,000 GiB memory = 3,000 GiB (the article's memory : SSD = 1 : 3); "
        "raise compute.scratch_gib to at least 3,000",
    ),
    (
        "inline-disk-named-data",
        "med",
        lambda p: tamper(
            p,
            NODES,
            inputs={
                "dataDisks": [
                    {"diskCategory": "cloud_essd", "diskName": "datasets", "diskSize": 3000, "encrypted": True}
                ]
            },
        ),
        "AIT014",
        NODES,
        "inline data disk 0 is named 'datasets', not 'aitrain-scratch': inline disks are scratch and are deleted with "
        "the node; keep persistent data on NAS, OSS or a separate ecs.EcsDisk",
    ),
    (
        "inline-disk-unnamed",
        "pool",
        lambda p: tamper(
            p, POOL_TEMPLATE, inputs={"dataDisks": [{"category": "cloud_essd", "encrypted": True, "size": 564}]}
        ),
        "AIT014",
        POOL_TEMPLATE,
        "inline data disk 0 is named None, not 'aitrain-scratch': inline disks are scratch and are deleted with the "
        "node; keep persistent data on NAS, OSS or a separate ecs.EcsDisk",
    ),
    (
        "inline-scratch-kept",
        "pool",
        lambda p: tamper(
            p,
            POOL_TEMPLATE,
            inputs={
                "dataDisks": [
                    {
                        "category": "cloud_essd",
                        "encrypted": True,
                        "name": "aitrain-scratch",
                        "size": 564,
                        "deleteWithInstance": False,
                    }
                ]
            },
        ),
        "AIT014",
        POOL_TEMPLATE,
        "inline scratch disk 0 has deleteWithInstance=false: it would outlive "
        "the node unmanaged; persistent data belongs on a separate ecs.EcsDisk",
    ),
    (
        "disk-deleted-with-node",
        "med",
        lambda p: add(
            p,
            resource(
                "ecs.EcsDisk",
                "ckpt",
                {"encrypted": True, "size": 500, "deleteWithInstance": True},
                protect=True,
                retain_on_delete=True,
            ),
        ),
        "AIT014",
        "ckpt",
        "data disk has deleteWithInstance=true: releasing the node deletes the data; set it false",
    ),
    (
        "disk-snapshots-deleted",
        "med",
        lambda p: add(
            p,
            resource(
                "ecs.EcsDisk",
                "ckpt",
                {"encrypted": True, "size": 500, "deleteAutoSnapshot": True},
                protect=True,
                retain_on_delete=True,
            ),
        ),
        "AIT014",
        "ckpt",
        "data disk has deleteAutoSnapshot=true: releasing the disk deletes its automatic snapshots; set it false",
    ),
    (
        "ignore-disk-encryption",
        "pool",
        lambda p: tamper(p, POOL_TEMPLATE, ignore_changes=("systemDisk.encrypted",)),
        "AIT017",
        POOL_TEMPLATE,
        "ignore_changes lists 'systemDisk.encrypted', a encryption "
        "input: drift there would never be shown or corrected",
    ),
    (
        "ignore-security-groups",
        "pool",
        lambda p: tamper(p, POOL_TEMPLATE, ignore_changes=("securityGroupIds[0]",)),
        "AIT017",
        POOL_TEMPLATE,
        "ignore_changes lists 'securityGroupIds[0]', a security-group "
        "input: drift there would never be shown or corrected",
    ),
    (
        "ignore-acl",
        "med",
        lambda p: tamper(p, "med-data-acl", ignore_changes=("acl",)),
        "AIT017",
        "med-data-acl",
        "ignore_changes lists 'acl', a ACL input: drift there would never be shown or corrected",
    ),
    (
        "ignore-policy",
        "med",
        lambda p: tamper(p, "med-data-node-policy", ignore_changes=("policyDocument",)),
        "AIT017",
        "med-data-node-policy",
        "ignore_changes lists 'policyDocument', a policy input: drift there would never be shown or corrected",
    ),
    (
        "ignore-public-ip",
        "med",
        lambda p: tamper(p, TEMPLATE, ignore_changes=("internetMaxBandwidthOut",)),
        "AIT017",
        TEMPLATE,
        "ignore_changes lists 'internetMaxBandwidthOut', a public-IP "
        "input: drift there would never be shown or corrected",
    ),
    (
        "password-on-template",
        "med",
        lambda p: tamper(p, TEMPLATE, inputs={"password": "Hunter2!"}),
        "AIT023",
        TEMPLATE,
        PASSWORD,
    ),
    (
        "kms-password-on-login",
        "med",
        lambda p: tamper(p, LOGIN, inputs={"kmsEncryptedPassword": "ciphertext"}),
        "AIT023",
        LOGIN,
        PASSWORD,
    ),
    (
        "login-without-key",
        "med",
        lambda p: tamper(p, LOGIN, remove=("keyName",)),
        "AIT023",
        LOGIN,
        "the login node has no keyName: set access.key_pair_name to an existing ECS key pair",
    ),
    (
        "egress-drop-all-missing",
        "pool",
        lambda p: drop(p, f"{AUTO}-network-sg-egress-drop-all"),
        "AIT027",
        f"{AUTO}-network-sg",
        "egress unrestricted: no egress drop-all rule (all, -1/-1, 0.0.0.0/0, policy drop); a node can send data "
        "anywhere. Turn on the profile's egress allow-list",
    ),
    (
        "egress-drop-all-accepting",
        "pool",
        lambda p: tamper(p, f"{AUTO}-network-sg-egress-drop-all", inputs={"policy": "accept"}),
        "AIT027",
        f"{AUTO}-network-sg",
        "egress unrestricted: no egress drop-all rule (all, -1/-1, 0.0.0.0/0, policy drop); a node can send data "
        "anywhere. Turn on the profile's egress allow-list",
    ),
    (
        "egress-drop-all-above-accepts",
        "med",
        lambda p: tamper(
            tamper(p, f"{NODE_SG}-egress-drop-all", inputs={"priority": 2}),
            f"{NODE_SG}-egress-allow-0",
            inputs={"priority": 3},
        ),
        "AIT027",
        NODE_SG,
        "the egress drop-all (priority 2) is not below the accept rule(s) "
        f"{NODE_SG}-egress-allow-0: give it a larger priority number than every accept",
    ),
    (
        "egress-drop-all-default-priority",
        "med",
        lambda p: tamper(p, f"{NODE_SG}-egress-drop-all", remove=("priority",)),
        "AIT027",
        NODE_SG,
        f"the egress drop-all (priority 1) is not below the accept rule(s) {NODE_SG}-egress-alibaba-services, "
        f"{NODE_SG}-egress-allow-0, {NODE_SG}-egress-vpc:"
        " give it a larger priority number than every accept",
    ),
    (
        "vswitch-too-small",
        "med",
        lambda p: shrink(p, "10.20.0.0/28"),
        "AIT030",
        VSW,
        f"compute vSwitches ({VSW} 10.20.0.0/28) have 12 free addresses (4 reserved per vSwitch), below 12 nodes + 8 "
        "headroom = 20; use a larger network.vpc_cidr or fewer nodes",
    ),
    (
        "tags-without-managed-by",
        "pool",
        lambda p: tamper(p, POOL_TEMPLATE, inputs={"tags": {"aitrain-component": "gpu-pool", **OWNER_TAGS}}),
        "AIT031",
        POOL_TEMPLATE,
        "tags lack managed-by: a reviewer cannot tell this resource is managed by aitrain",
    ),
]


@pytest.mark.parametrize("case, fixture, change, rule, name, message", CASES, ids=[c[0] for c in CASES])
def test_each_rule_fires_with_its_message(case, fixture, change, rule, name, message, request):
    base = request.getfixturevalue(fixture)
    plan = change(base)
    level = {r.id: r.level for r in guardrails.RULES}[rule]
    assert added(plan, base) == [Finding(rule, level, name, message)]
    assert [f for f in guardrails.check(plan, skip=[rule]) if f.rule in OWNED] == []


def test_every_owned_rule_has_a_violating_case():
    assert {c[3] for c in CASES} | {"AIT018", "AIT020"} == set(OWNED)  # AIT018 and AIT020 have their own tables below


# ---- AIT018: risky ingress from non-private ranges, by range overlap ----

RISK = "; from an admin range admit only TCP 22"


@pytest.mark.parametrize(
    "protocol, ports, key, source, message",
    [
        (
            "all",
            "-1/-1",
            "cidrIp",
            "203.0.113.0/24",
            "ingress all -1/-1 from 203.0.113.0/24, outside the private ranges, admits every protocol" + RISK,
        ),
        (
            "tcp",
            "1/65535",
            "cidrIp",
            "203.0.113.0/24",
            "ingress tcp 1/65535 from 203.0.113.0/24, outside the private ranges, admits every port" + RISK,
        ),
        (
            "udp",
            "-1/-1",
            "cidrIp",
            "198.51.100.7/32",
            "ingress udp -1/-1 from 198.51.100.7/32, outside the private ranges, admits every port" + RISK,
        ),
        (
            "tcp",
            "20/30",
            "cidrIp",
            "203.0.113.0/24",
            "ingress tcp 20/30 from 203.0.113.0/24, outside the private ranges, opens risky port(s) 23 telnet" + RISK,
        ),
        (
            "tcp",
            "3000/7000",
            "cidrIp",
            "0.0.0.0/0",
            "ingress tcp 3000/7000 from 0.0.0.0/0, outside the private ranges, opens risky port(s)"
            " 3306 MySQL, 3389 RDP, 5432 PostgreSQL, 6006 TensorBoard, 6379 Redis" + RISK,
        ),
        (
            "tcp",
            "8888/8888",
            "cidrIp",
            "100.64.0.0/10",
            "ingress tcp 8888/8888 from 100.64.0.0/10, outside the private ranges, opens risky port(s) 8888 Jupyter"
            + RISK,
        ),
        (
            "tcp",
            "1433/1433",
            "cidrIp",
            "203.0.113.0/24",
            "ingress tcp 1433/1433 from 203.0.113.0/24, outside the private ranges, opens risky port(s) 1433 SQL Server"
            + RISK,
        ),
        (
            "tcp",
            "27017/27017",
            "cidrIp",
            "203.0.113.0/24",
            "ingress tcp 27017/27017 from 203.0.113.0/24, outside the private ranges, opens risky port(s) 27017 MongoDB"
            + RISK,
        ),
        (
            "udp",
            "2375/2376",
            "cidrIp",
            "203.0.113.0/24",
            "ingress udp 2375/2376 from 203.0.113.0/24, outside the private ranges, opens risky port(s)"
            " 2375 Docker API, 2376 Docker API (TLS)" + RISK,
        ),
        (
            "tcp",
            "6006/6006",
            "ipv6CidrIp",
            "2001:db8::/32",
            "ingress tcp 6006/6006 from 2001:db8::/32, outside the private ranges, opens risky port(s) 6006 TensorBoard"
            + RISK,
        ),
        (
            "tcp",
            "ssh",
            "cidrIp",
            "203.0.113.0/24",
            "ingress tcp ssh from 203.0.113.0/24, outside the private ranges, has an unreadable port range 'ssh'"
            + RISK,
        ),
        (
            "tcp",
            "22/22",
            "cidrIp",
            "2001:db8::/32",
            "cidrIp 2001:db8::/32 is IPv6; cidrIp takes IPv4 only (IPv6 ranges go in ipv6CidrIp)",
        ),
        (
            "tcp",
            "22/22",
            "cidrIp",
            "fd00::/8",
            "cidrIp fd00::/8 is IPv6; cidrIp takes IPv4 only (IPv6 ranges go in ipv6CidrIp)",
        ),
        ("tcp", "22/22", "cidrIp", "the office", "cidrIp 'the office' is not a CIDR"),
        # Acceptable: SSH from an admin range, anything from private ranges, ports next to the risky ones, ICMP.
        ("tcp", "22/22", "cidrIp", "203.0.113.0/24", None),
        ("all", "-1/-1", "cidrIp", "10.8.0.0/16", None),
        ("tcp", "3389/3389", "cidrIp", "192.168.4.0/24", None),
        ("tcp", "3389/3389", "ipv6CidrIp", "fd00:1::/64", None),
        ("tcp", "24/1432", "cidrIp", "203.0.113.0/24", None),
        ("tcp", "27018/65534", "cidrIp", "203.0.113.0/24", None),
        ("icmp", "-1/-1", "cidrIp", "203.0.113.0/24", None),
    ],
)
def test_ait018_risky_ingress(protocol, ports, key, source, message, medical_plan):
    rule = resource(
        "ecs.SecurityGroupRule",
        "open",
        {
            "type": "ingress",
            "securityGroupId": f"${{{NODE_SG}.id}}",
            "ipProtocol": protocol,
            "portRange": ports,
            key: source,
        },
    )
    found = added(add(medical_plan, rule), medical_plan, "AIT018")
    assert found == ([Finding("AIT018", "error", "open", message)] if message else [])


def test_ait018_ignores_group_sources_and_egress(medical_plan):
    from_group = resource(
        "ecs.SecurityGroupRule",
        "g",
        {
            "type": "ingress",
            "ipProtocol": "all",
            "portRange": "-1/-1",
            "sourceSecurityGroupId": "${x.id}",
            "cidrIp": "203.0.113.0/24",
        },
    )
    out = resource(
        "ecs.SecurityGroupRule",
        "e",
        {"type": "egress", "ipProtocol": "all", "portRange": "-1/-1", "cidrIp": "0.0.0.0/0"},
    )
    assert added(add(medical_plan, from_group, out), medical_plan, "AIT018") == []


def test_ait018_adds_to_ait002_on_internet_ranges(medical_plan):
    rule = resource(
        "ecs.SecurityGroupRule",
        "rdp",
        {"type": "ingress", "ipProtocol": "tcp", "portRange": "3389/3389", "cidrIp": "0.0.0.0/0"},
    )
    assert [f.rule for f in added(add(medical_plan, rule), medical_plan)] == ["AIT002", "AIT018"]


# ---- AIT020: least privilege ----

USER_MESSAGE = "in the plan: attach policies to roles only and let nodes use their instance role"


@pytest.mark.parametrize(
    "change, name, message",
    [
        (
            lambda p: tamper(
                p,
                "med-data-node-policy",
                inputs={"policyDocument": policy(allow(f"acs:oss:*:*:{BUCKET}/*", actions=("*",)))},
            ),
            "med-data-node-policy",
            "policy allows Action '*': every action on every service; list the actions the nodes need",
        ),
        (
            lambda p: tamper(
                p,
                "med-data-node-policy",
                inputs={"policyDocument": policy(allow(f"acs:oss:*:*:{BUCKET}/*", actions=("oss:GetObject", "*:*")))},
            ),
            "med-data-node-policy",
            "policy allows Action '*:*': every action on every service; list the actions the nodes need",
        ),
        (lambda p: add(p, resource("ram.User", "robot", {"name": "robot"})), "robot", f"a RAM user {USER_MESSAGE}"),
        (
            lambda p: add(p, resource("ram.AccessKey", "robot-key", {"userName": "robot"})),
            "robot-key",
            f"an AccessKey (a long-lived secret) {USER_MESSAGE}",
        ),
        (
            lambda p: add(p, resource("ram.UserPolicyAttachment", "robot-attach", {"userName": "robot"})),
            "robot-attach",
            f"a policy attached to a user {USER_MESSAGE}",
        ),
        (
            lambda p: add(p, resource("ram.GroupPolicyAttachment", "ops-attach", {"groupName": "ops"})),
            "ops-attach",
            f"a policy attached to a group {USER_MESSAGE}",
        ),
        (
            lambda p: tamper(p, TEMPLATE, inputs={"userData": f"export ALIBABA_CLOUD_ACCESS_KEY_ID={LTAI}"}),
            TEMPLATE,
            "userData holds an AccessKey ID (LTAI…): use the node's "
            "RAM role (STS tokens from the metadata service) instead",
        ),
        (
            lambda p: tamper(
                p, TEMPLATE, inputs={"userData": base64.b64encode(f"#!/bin/sh\nAK={LTAI}\n".encode()).decode()}
            ),
            TEMPLATE,
            "userData holds an AccessKey ID (LTAI…): use the node's "
            "RAM role (STS tokens from the metadata service) instead",
        ),
    ],
)
def test_ait020_least_privilege(change, name, message, med):
    assert added(change(med), med) == [Finding("AIT020", "error", name, message)]


@pytest.mark.parametrize(
    "document",
    [
        policy({"Effect": "Deny", "Action": ["*"], "Resource": ["*"]}),
        policy(allow(f"acs:oss:*:*:{BUCKET}/*", actions=("oss:*",))),
    ],
)
def test_ait020_allows_denies_and_service_wildcards(document, med):
    assert added(tamper(med, "med-data-node-policy", inputs={"policyDocument": document}), med) == []


def test_ait020_user_data_without_a_key_is_fine(med):
    plain = tamper(med, TEMPLATE, inputs={"userData": base64.b64encode(b"#!/bin/sh\necho LTAI\n").decode()})
    assert added(plain, med) == []


# ---- AIT017, AIT030, AIT031 details ----


def test_ait017_delete_before_replace_on_stateful_data(med):
    plan = tamper(med, f"{MED}-storage-fs", delete_before_replace=True)
    assert added(plan, med, "AIT017") == [
        Finding(
            "AIT017",
            "error",
            f"{MED}-storage-fs",
            "delete_before_replace on a stateful resource deletes the data before its replacement exists",
        )
    ]
    # An instance set is replaced delete-first on purpose (its nodes hold only scratch).
    assert med.resources and any(r.name == NODES and r.delete_before_replace for r in med.resources)


@pytest.mark.parametrize("paths", [("desiredCapacity",), ("tags",), ("description", "imageId")])
def test_ait017_lets_harmless_inputs_be_ignored(paths, pool):
    assert added(tamper(pool, POOL_TEMPLATE, ignore_changes=paths), pool) == []


@pytest.mark.parametrize("cidr, fires", [("10.20.0.0/27", False), ("10.20.0.0/28", True)])
def test_ait030_counts_reserved_addresses(cidr, fires, med):
    """/27 = 32 - 4 reserved = 28 ≥ 12 nodes + 8; /28 = 12 is not (the login node has its own vSwitch)."""
    assert [f.rule for f in added(shrink(med, cidr), med)] == (["AIT030"] if fires else [])


def test_ait030_pool_counts_max_size_and_names_a_single_vswitch(pool):
    switch = f"{AUTO}-network-vsw-cn-shanghai-a"
    plan = tamper(pool, f"{AUTO}-pool-group", inputs={"maxSize": 4093, "vswitchIds": [f"${{{switch}.id}}"]})
    assert added(plan, pool) == [
        Finding(
            "AIT030",
            "error",
            switch,
            f"compute vSwitches ({switch} 10.30.0.0/20) have 4092 free addresses "
            "(4 reserved per vSwitch), below 4093 nodes + 410 headroom = 4503;"
            f" use a larger network.vpc_cidr or fewer nodes; {AUTO}-pool-group "
            "also uses one vSwitch only: spread it over two zones or more",
        )
    ]
    # Three /20s hold it.
    assert added(tamper(pool, f"{AUTO}-pool-group", inputs={"maxSize": 4093}), pool) == []


def test_ait030_skips_vswitches_it_cannot_see(med):
    adopted = tamper(shrink(med, "10.20.0.0/28"), NODES, inputs={"vswitchId": "vsw-adopted"})
    assert [f.rule for f in guardrails.check(adopted)] == [f.rule for f in guardrails.check(med)]


def test_ait031_names_what_is_missing(medical_plan, med):
    only_owner = dataclasses.replace(
        med,
        resources=tuple(
            dataclasses.replace(
                r,
                inputs={**r.inputs, "tags": {k: v for k, v in r.inputs["tags"].items() if k != "data-classification"}},
            )
            if isinstance(r.inputs.get("tags"), dict)
            else r
            for r in med.resources
        ),
    )
    assert added(only_owner, med) == [
        Finding(
            "AIT031",
            "info",
            "tags",
            "no resource carries a data classification (data-classification) tag; add them to the profile's tags so "
            "the owner and the data's sensitivity are on every resource",
        )
    ]
    # A component tested alone has no profile: only managed-by is asked of it.
    component = Plan(
        "component", "offline", "c", {}, (), tuple(r for r in medical_plan.resources if r.short_type == "vpc.Network")
    )
    assert [f for f in guardrails.check(component) if f.rule == "AIT031"] == []


def test_ait027_judges_every_group(med, medical_plan):
    """Every security group of the plan needs its own list: a
    group no node joins (say, for a database) is a way out too."""
    other = resource("ecs.SecurityGroup", "db-sg", {"vpcId": "vpc-1", "tags": {"managed-by": "aitrain", **OWNER_TAGS}})
    assert [(f.rule, f.resource) for f in added(add(med, other), med)] == [("AIT027", "db-sg")]
    network_only = Plan(
        "component",
        "offline",
        "n",
        {},
        (),
        (*(r for r in medical_plan.resources if r.short_type == "ecs.SecurityGroup"), other),
    )
    assert [(f.rule, f.resource) for f in guardrails.check(network_only)] == [
        ("AIT027", f"{MED}-network-sg"),
        ("AIT027", "db-sg"),
    ]


def test_an_empty_inline_disk_entry_is_unencrypted_and_unnamed(pool):
    plan = tamper(pool, POOL_TEMPLATE, inputs={"dataDisks": [None]})
    assert [(f.rule, f.message) for f in added(plan, pool)] == [
        ("AIT003", "data disk 0 (disk, None GiB) is not encrypted"),
        (
            "AIT014",
            "inline data disk 0 is named None, not 'aitrain-scratch': "
            "inline disks are scratch and are deleted with the node;"
            " keep persistent data on NAS, OSS or a separate ecs.EcsDisk",
        ),
    ]
