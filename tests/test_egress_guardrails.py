"""AIT027 judges what an egress allow-list accepts, on every security group (the login node's too), not only that a
drop-all exists: `0.0.0.0/0` on ports 1–65535 before the drop-all is open egress (issue 26, item 3)."""

from __future__ import annotations

import dataclasses

import pytest

from blueprints.components.access import LoginNode, LoginNodeArgs
from blueprints.review import guardrails
from blueprints.review.plan import Plan, PlannedResource
from blueprints.testing import as_plan, record_program

MED = "medical-imaging"
SG = f"{MED}-network-sg"
ALLOW = f"{SG}-egress-allow-0"


def with_inputs(plan: Plan, name: str, **inputs) -> Plan:
    assert any(r.name == name for r in plan.resources), name
    return dataclasses.replace(
        plan,
        resources=tuple(
            dataclasses.replace(r, inputs={**r.inputs, **inputs}) if r.name == name else r for r in plan.resources
        ),
    )


def ait027(plan: Plan) -> list[tuple[str, str]]:
    return [(f.resource, f.message) for f in guardrails.check(plan) if f.rule == "AIT027"]


@pytest.fixture
def narrow(medical_plan) -> Plan:
    """medical-imaging with its HTTPS entry narrowed to one range: a list AIT027 accepts."""
    plan = with_inputs(medical_plan, ALLOW, cidrIp="203.0.113.0/24")
    assert ait027(plan) == []
    return plan


def test_the_issue_case_every_port_to_anywhere_before_the_drop_all_warns(narrow):
    plan = with_inputs(narrow, ALLOW, cidrIp="0.0.0.0/0", portRange="1/65535")
    assert ait027(plan) == [
        (
            ALLOW,
            "egress accept tcp 1/65535 to 0.0.0.0/0 reaches 4,294,967,296 addresses (wider than /8) outside the VPC and"
            " Alibaba Cloud's 100.64.0.0/10: the drop-all after it "
            "keeps little in; name the destination's own range and port",
        )
    ]


@pytest.mark.parametrize(
    "inputs, problem",
    [
        (dict(cidrIp="0.0.0.0/1"), "reaches 2,147,483,648 addresses (wider than /8)"),
        (dict(cidrIp="8.0.0.0/7"), "reaches 33,554,432 addresses (wider than /8)"),
        (
            dict(cidrIp="203.0.113.0/24", portRange="8000/8100"),
            "opens 101 ports (more than 16, a range of many services)",
        ),
        (
            dict(cidrIp="203.0.113.0/24", portRange="-1/-1"),
            "opens 65,535 ports (more than 16, a range of many services)",
        ),
        (
            dict(cidrIp="203.0.113.0/24", ipProtocol="all", portRange="-1/-1"),
            "accepts every protocol and port outside the VPC",
        ),
        (
            dict(cidrIp="172.16.0.0/12", ipProtocol="all", portRange="-1/-1"),
            "accepts every protocol and port outside the VPC",
        ),  # private, not the VPC
        (dict(cidrIp="everyone"), "has a destination that is not a CIDR"),
    ],
)
def test_wide_accepts_warn(narrow, inputs, problem):
    (finding,) = ait027(with_inputs(narrow, ALLOW, **inputs))
    assert finding[0] == ALLOW and problem in finding[1]


@pytest.mark.parametrize(
    "inputs",
    [
        dict(cidrIp="9.0.0.0/8"),  # a /8 is not wider than /8
        dict(cidrIp="203.0.113.0/24", portRange="8000/8015"),  # 16 ports
        dict(cidrIp="10.20.4.0/24", ipProtocol="all", portRange="-1/-1"),  # inside the VPC
        dict(cidrIp="100.100.100.200/32", ipProtocol="all", portRange="-1/-1"),  # inside Alibaba Cloud's service range
    ],
)
def test_narrow_accepts_hold(narrow, inputs):
    assert ait027(with_inputs(narrow, ALLOW, **inputs)) == []


def test_a_wide_accept_in_a_group_without_a_drop_all_reports_the_missing_list_once(medical_plan):
    plan = with_inputs(medical_plan, f"{SG}-egress-drop-all", policy="accept")
    assert [r for r, _ in ait027(plan)] == [SG]


def login(**extra) -> list[PlannedResource]:
    args = dict(
        name="med",
        instance_type="ecs.g7.large",
        image_id="img-1",
        vswitch_id="vsw-1",
        vpc_id="vpc-1",
        admin_cidr="203.0.113.0/24",
        vpc_cidr="10.20.0.0/16",
        key_pair_name="ops",
    )
    return record_program(lambda: LoginNode("med-login", LoginNodeArgs(**{**args, **extra})), zones=["cn-shanghai-a"])


def test_the_login_node_has_its_own_allow_list():
    """SSH into the VPC, Alibaba Cloud's service range, then a drop of everything else, at the nodes' priorities."""
    rules = {
        r.name: r.inputs for r in login() if r.short_type == "ecs.SecurityGroupRule" and r.inputs["type"] == "egress"
    }
    shape = {
        n: (i["ipProtocol"], i["portRange"], i["cidrIp"], i["policy"], i["priority"], i["securityGroupId"])
        for n, i in rules.items()
    }
    assert shape == {
        "med-login-sg-egress-ssh-vpc": ("tcp", "22/22", "10.20.0.0/16", "accept", 1, "${med-login-sg.id}"),
        "med-login-sg-egress-alibaba-services": ("all", "-1/-1", "100.64.0.0/10", "accept", 1, "${med-login-sg.id}"),
        "med-login-sg-egress-drop-all": ("all", "-1/-1", "0.0.0.0/0", "drop", 100, "${med-login-sg.id}"),
    }
    assert ait027(as_plan(login())) == []


def test_a_login_group_without_egress_rules_warns():
    """The login node is judged like any group: without its list it is the way out past the nodes' list."""
    bare = [r for r in login() if not (r.short_type == "ecs.SecurityGroupRule" and r.inputs["type"] == "egress")]
    assert [r for r, _ in ait027(as_plan(bare))] == ["med-login-sg"]


def test_the_plan_says_what_the_service_range_leaves_open(medical_plan, autoscaling_plan):
    """With the allow-list on, the plan notes that 100.64.0.0/10 reaches every tenant's OSS and names the control."""
    (note,) = [n for n in medical_plan.notes if "100.64.0.0/10" in n]
    assert "every tenant's OSS internal endpoint (oss-cn-shanghai-internal.aliyuncs.com)" in note
    assert (
        "vpc.GatewayEndpoint (service_name com.aliyun.cn-shanghai.oss, policy_document" in note
        and "acs:SourceVpc" in note
    )
    # Without the list egress is unrestricted anyway (AIT027 says so): no note about a hole in it.
    assert not [n for n in autoscaling_plan.notes if "100.64.0.0/10" in n]
