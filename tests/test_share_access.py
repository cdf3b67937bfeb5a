"""The share admits the compute subnets only (issue 26, item 4): one NAS access rule per compute vSwitch, the login
node in a vSwitch of its own, AIT006 refusing a rule that admits the VPC or the login vSwitch, and aitrain-torchrun
refusing a registry entry outside the compute subnets."""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprints import bootstrap as b
from blueprints.core.layout import LayoutError, login_vswitch_cidr, vswitch_cidr, vswitch_prefix
from blueprints.review import guardrails
from blueprints.review.plan import Plan
from blueprints.testing import offline_plan
from tests.test_bootstrap import spec
from tests.test_bootstrap_launcher import Node, head

MED = "medical-imaging"
LOGIN = {"access": {"login_node": True, "key_pair_name": "ops-key"}, "network": {"admin_cidr": "203.0.113.0/24"}}


@pytest.fixture(scope="module")
def with_login() -> Plan:
    return offline_plan(MED, profile=LOGIN)


def one(plan: Plan, name: str):
    (r,) = [r for r in plan.resources if r.name == name]
    return r


# ---- layout: the login subnet never overlaps a compute subnet ----


@given(prefix=st.integers(8, 24), first=st.integers(0, 255), zones=st.integers(1, 15))
def test_the_login_vswitch_is_inside_the_vpc_and_apart_from_every_zone(prefix, first, zones):
    vpc = ipaddress.ip_network(f"10.{first}.0.0/{prefix}", strict=False)
    region = tuple(f"r-{i}" for i in range(zones))
    login = ipaddress.ip_network(login_vswitch_cidr(str(vpc), region, region))
    assert login.subnet_of(vpc) and login.prefixlen == max(vswitch_prefix(str(vpc)), 28)
    for zone in region:
        assert not login.overlaps(ipaddress.ip_network(vswitch_cidr(str(vpc), zone, region)))


def test_a_zone_in_the_last_slot_is_refused_with_a_message():
    region = tuple(f"r-{i}" for i in range(16))
    with pytest.raises(
        LayoutError,
        match=r"zone r-15 is number 16 of the region and takes the last /20 of network.vpc_cidr 10.0.0.0/16",
    ):
        login_vswitch_cidr("10.0.0.0/16", region, region)
    assert login_vswitch_cidr("10.0.0.0/16", region[:15], region) == "10.0.240.0/28"


# ---- the plan: rules per compute vSwitch, the login node in its own ----


def test_one_access_rule_per_compute_vswitch_named_by_zone(autoscaling_plan):
    rules = {r.name: r.inputs["sourceCidrIp"] for r in autoscaling_plan.resources if r.short_type == "nas.AccessRule"}
    switches = {
        r.name.removeprefix("autoscaling-training-network-vsw-"): r.inputs["cidrBlock"]
        for r in autoscaling_plan.resources
        if r.short_type == "vpc.Switch"
    }
    assert rules == {f"autoscaling-training-storage-access-rule-{zone}": cidr for zone, cidr in switches.items()}
    assert "10.30.0.0/16" not in rules.values()


def test_resizing_compute_keeps_the_rules_and_the_file_system():
    small, big = offline_plan(MED), offline_plan(MED, profile={"compute": {"nodes": 4}})

    def share(p):
        return {
            (r.name, str(r.inputs.get("sourceCidrIp")))
            for r in p.resources
            if r.short_type in ("nas.AccessRule", "nas.FileSystem", "nas.AccessGroup", "nas.MountTarget")
        }

    assert share(small) == share(big)


def test_the_login_node_has_its_own_vswitch(with_login):
    login_vsw = one(with_login, f"{MED}-network-vsw-login")
    assert login_vsw.inputs["cidrBlock"] == "10.20.240.0/28" and login_vsw.inputs["zoneId"] == "cn-shanghai-a"
    assert one(with_login, f"{MED}-login-instance").inputs["vswitchId"] == f"${{{MED}-network-vsw-login.id}}"
    (rule,) = [r for r in with_login.resources if r.short_type == "nas.AccessRule"]
    assert not ipaddress.ip_network(rule.inputs["sourceCidrIp"]).overlaps(ipaddress.ip_network("10.20.240.0/28"))
    assert [
        f
        for f in with_login.findings
        if f["rule"] in ("AIT006", "AIT027") and f["resource"] != f"{MED}-network-sg-egress-allow-0"
    ] == []


# ---- AIT006 ----

RULE = f"{MED}-storage-access-rule-cn-shanghai-a"


def admitting(plan: Plan, source: str) -> list[tuple[str, str]]:
    changed = dataclasses.replace(
        plan,
        resources=tuple(
            dataclasses.replace(r, inputs={**r.inputs, "sourceCidrIp": source}) if r.name == RULE else r
            for r in plan.resources
        ),
    )
    return [(f.resource, f.message) for f in guardrails.check(changed) if f.rule == "AIT006"]


def test_ait006_refuses_a_rule_admitting_the_vpc(with_login):
    assert admitting(with_login, "10.20.0.0/16") == [
        (
            RULE,
            "access rule admits 10.20.0.0/16, which includes the login node's vSwitch 10.20.240.0/28"
            " (the one host with a public address); admit the compute vSwitches only",
        )
    ]


def test_without_a_vpc_a_public_source_is_one_finding_not_also_the_login_overlap(with_login):
    """A component tested without its VPC: a rule admitting the internet is refused once, for what it is."""
    no_vpc = dataclasses.replace(
        with_login, resources=tuple(r for r in with_login.resources if r.short_type != "vpc.Network")
    )
    assert admitting(no_vpc, "0.0.0.0/0") == [
        (RULE, "access rule admits 0.0.0.0/0, which is not a private range (no VPC in this plan to compare with)")
    ]


def test_ait006_refuses_the_login_vswitch_and_what_is_wider_than_a_compute_vswitch(with_login, medical_plan):
    (finding,) = admitting(with_login, "10.20.240.0/28")
    assert "includes the login node's vSwitch 10.20.240.0/28" in finding[1]
    # Without a login node the VPC still holds more than the nodes: wider than every compute vSwitch is refused.
    assert admitting(medical_plan, "10.20.0.0/16") == [
        (
            RULE,
            "access rule admits 10.20.0.0/16, wider than any compute vSwitch (10.20.0.0/20);"
            " give each compute vSwitch its own rule",
        )
    ]
    assert admitting(medical_plan, "10.20.4.0/24") == []


# ---- the launcher refuses registry entries outside the compute subnets ----


@pytest.fixture
def node(tmp_path) -> Node:
    n = Node(tmp_path, expected=2)
    n.launcher.write_text(
        b.code_only(b.render_launcher(replace(spec(), registry_cidrs=("10.0.0.0/20", "10.0.16.0/20"))))
    )
    return n


def test_registry_entries_inside_the_compute_subnets_run(node):
    node.register(["10.0.17.4", "10.0.0.9"])
    run = node.run("--", "python", "train.py", self_ip="10.0.17.4")
    assert run.returncode == 0, run.stderr
    assert node.argv()[:7] == head(2, "10.0.17.4", "10.0.0.9")


@pytest.mark.parametrize("forged", ["10.0.0.1", "203.0.113.7", "10.0.32.5", "10.0.0.300", "evil.example"])
def test_a_forged_registry_entry_is_refused_not_made_the_rendezvous(node, forged):
    # "10.0.0.1" sorts first: today it would become the rendezvous endpoint. It is inside 10.0.0.0/20, so it passes
    # the subnet check; the others are outside and are refused.
    node.register([forged, "10.0.17.4"])
    run = node.run("--", "python", "train.py", self_ip="10.0.17.4")
    if forged == "10.0.0.1":
        assert run.returncode == 0
        return
    assert run.returncode == 2 and not node.argv_file.exists()
    assert (
        f"aitrain-torchrun: host(s) outside the compute subnets 10.0.0.0/20 10.0.16.0/20: {forged} (check" in run.stderr
    )


def test_the_cidrs_are_one_quoted_shell_word():
    script = b.render_launcher(replace(spec(), registry_cidrs=("10.0.0.0/20", "10.0.16.0/20")))
    assert "NETS='10.0.0.0/20 10.0.16.0/20'" in script
    assert "NETS=" not in b.render_launcher(spec())  # no CIDRs (a Kubernetes pod, a test): no check
