"""Property: any accepted profile gives a plan that breaks no error-level node rule, puts no node on a public
address, and admits ingress only from the VPC, the plan's own security groups or network.admin_cidr."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st
from test_properties import profiles  # the suite's strategy of valid profiles (tests/ is on sys.path under pytest)

from blueprints.core.errors import UserInputError
from blueprints.kinds import Role, has_role
from blueprints.review import guardrails
from blueprints.review.guardrails.inputs import referenced
from blueprints.testing import offline_plan

NODE_RULES = {
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
}


@st.composite
def accepted_profiles(draw):
    data = draw(profiles())
    if data["network"]["admin_cidr"] and draw(st.booleans()):
        data["access"] = {"login_node": True, "key_pair_name": "ops-key"}
    return data


# No shrinking: each example synthesises a whole program (seconds), and shrinking one failure took over five
# minutes; the unshrunk example is printed and reproducible from the seed.
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
@given(accepted_profiles())
def test_accepted_profiles_keep_the_node_rules(data):
    try:
        plan = offline_plan(profile=data)
    except UserInputError as exc:
        # The strategy draws up to 450 nodes in a 192.168.0.0/20 VPC; planning refuses more nodes than the vSwitches
        # hold (what AIT030 found): not an accepted profile. Any other refusal is a failure.
        assert "reserved per vSwitch" in str(exc), str(exc)
        reject()
    skipped = {s["rule"] for s in plan.skipped}
    errors = [f for f in guardrails.check(plan) if f.rule in NODE_RULES - skipped and f.level == "error"]
    assert errors == []

    # No node has a public address: no bandwidth of its own, and an EIP only on the login node or the NAT gateway.
    for r in plan.resources:
        if has_role(r.type, Role.NODE):
            assert not r.inputs.get("internetMaxBandwidthOut"), r.name
    by_name = {r.name: r for r in plan.resources}
    for r in plan.find("ecs.EipAssociation"):
        target = by_name[referenced(r.inputs["instanceId"]) or ""]
        assert (
            target.short_type == "vpc.NatGateway"
            or (target.inputs.get("tags") or {}).get("aitrain-component") == "login"
        ), r.name

    # Ingress comes from the plan's own security groups, the VPC or the admin range, and nothing else.
    (vpc,) = plan.find("vpc.Network")
    groups = {f"${{{g.name}.id}}" for g in plan.find("ecs.SecurityGroup")}
    admin = data["network"]["admin_cidr"]
    for r in plan.find("ecs.SecurityGroupRule"):
        if r.inputs.get("type") != "ingress":
            continue
        if r.inputs.get("sourceSecurityGroupId"):
            assert r.inputs["sourceSecurityGroupId"] in groups, r.name
            continue
        source = ipaddress.ip_network(r.inputs["cidrIp"])
        assert source.subnet_of(ipaddress.ip_network(vpc.inputs["cidrBlock"])) or r.inputs["cidrIp"] == admin, r.name  # type: ignore[arg-type]
        if r.inputs["cidrIp"] == admin:
            assert (r.inputs["ipProtocol"], r.inputs["portRange"]) == ("tcp", "22/22"), r.name


TOO_MANY_NODES = {
    "name": "prop",
    "blueprint": "fixed-cluster",
    "region": "cn-shanghai",
    "storage": {"kind": "nas", "capacity_gib": 100, "throughput_tier": "Capacity"},
    "network": {"vpc_cidr": "192.168.0.0/20", "zones": [], "admin_cidr": None},
    "cost": {"spot": False},
    "compute": {"instance_type": "ecs.ebmgn6e.24xlarge", "nodes": 370},
}


def test_the_profile_refuses_more_nodes_than_its_vswitch_holds():
    """Found by the property (AIT030 fired on the plan): the layout gives this VPC one /24 vSwitch (252 free addresses)
    for 370 nodes. The profile now refuses it with AIT030's
    arithmetic; AIT030 on a plan: tests/test_guardrails_nodes.py."""
    with pytest.raises(
        UserInputError,
        match=r"network\.vpc_cidr 192\.168\.0\.0/20 gives each zone a /24 vSwitch: 1 × 256 addresses less 4"
        r" reserved per vSwitch = 252 free, below 370 nodes \+ 37 headroom = 407",
    ):
        offline_plan(profile=TOO_MANY_NODES)
