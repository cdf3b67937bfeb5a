"""LoginNode under the recording mocks: SSH only from the admin
range, an EIP as its only public address, a hardened instance."""

from __future__ import annotations

from conftest import beyond_opt_in

from blueprints.components.access import LoginNode, LoginNodeArgs
from blueprints.core import userdata
from blueprints.review import guardrails
from blueprints.testing import as_plan, offline_mocks, record_program

ZONES = ["cn-shanghai-a"]


def args(**extra) -> LoginNodeArgs:
    values = dict(
        name="med",
        instance_type="ecs.g7.large",
        image_id="img-1",
        vswitch_id="vsw-1",
        vpc_id="vpc-1",
        admin_cidr="203.0.113.0/24",
        vpc_cidr="10.20.0.0/16",
    )
    values.update(extra)
    return LoginNodeArgs(**values)


def one(resources, short_type):
    (r,) = [r for r in resources if r.short_type == short_type]
    return r


def test_own_security_group_admits_only_ssh_from_the_admin_range():
    resources = record_program(lambda: LoginNode("med-login", args()), zones=ZONES)
    group = one(resources, "ecs.SecurityGroup")
    assert group.inputs["innerAccessPolicy"] == "Drop" and group.inputs["vpcId"] == "vpc-1"
    assert group.inputs["tags"]["aitrain-component"] == "login"
    (rule,) = [r for r in resources if r.short_type == "ecs.SecurityGroupRule" and r.inputs["type"] == "ingress"]
    assert {k: rule.inputs[k] for k in ("type", "ipProtocol", "portRange", "cidrIp", "policy", "securityGroupId")} == {
        "type": "ingress",
        "ipProtocol": "tcp",
        "portRange": "22/22",
        "cidrIp": "203.0.113.0/24",
        "policy": "accept",
        "securityGroupId": "${med-login-sg.id}",
    }


def test_instance_is_private_encrypted_imdsv2_and_roleless():
    resources = record_program(
        lambda: LoginNode("med-login", args(user_data="#cloud-config\n", key_pair_name="ops", system_disk_gib=60)),
        zones=ZONES,
    )
    instance = one(resources, "ecs.Instance")
    assert instance.inputs["internetMaxBandwidthOut"] == 0
    assert instance.inputs["systemDiskEncrypted"] is True and instance.inputs["systemDiskCategory"] == "cloud_essd"
    assert instance.inputs["systemDiskSize"] == 60
    assert instance.inputs["httpTokens"] == "required"
    assert instance.inputs["securityGroups"] == ["${med-login-sg.id}"] and instance.inputs["vswitchId"] == "vsw-1"
    assert instance.inputs["keyName"] == "ops"
    assert userdata.decode(instance.inputs["userData"]) == "#cloud-config\n"
    assert "roleName" not in instance.inputs
    assert instance.inputs["tags"]["aitrain-component"] == "login"


def test_eip_is_bound_to_the_login_instance():
    resources = record_program(lambda: LoginNode("med-login", args(key_pair_name="ops")), zones=ZONES)
    association = one(resources, "ecs.EipAssociation")
    assert association.inputs == {
        "allocationId": "${med-login-eip.id}",
        "instanceId": "${med-login-instance.id}",
        "instanceType": "EcsInstance",
    }
    assert one(resources, "ecs.EipAddress").inputs["internetChargeType"] == "PayByTraffic"
    # The whole unit passes every guardrail: the EIP is the login node's, SSH comes only from the admin range.
    assert beyond_opt_in(guardrails.check(as_plan(resources))) == []


def test_outputs():
    with offline_mocks(zones=ZONES) as stack:
        login = LoginNode("med-login", args())
        assert stack.resolve(login.security_group_id) == "${med-login-sg.id}"
        assert stack.resolve(login.instance_id) == "${med-login-instance.id}"
        assert stack.resolve(login.public_ip) == "${med-login-eip.ipAddress}"
    (component,) = [r for r in stack.resources if not r.custom]
    assert component.type == "aitrain:access:LoginNode"
    assert component.registered_outputs == ("instance_id", "private_ip", "public_ip", "security_group_id")
    assert all(r.parent == "med-login" for r in stack.resources if r.custom)


def test_login_eip_has_deletion_protection_and_disk_takes_the_kms_key():
    key = "key-hzz630494463ejqjx0001"
    resources = record_program(lambda: LoginNode("med-login", args(kms_key_id=key)), zones=["cn-shanghai-a"])
    assert one(resources, "ecs.EipAddress").inputs["deletionProtection"] is True
    instance = one(resources, "ecs.Instance")
    assert instance.inputs["systemDiskEncrypted"] is True and instance.inputs["systemDiskKmsKeyId"] == key


def test_account_trail_covers_all_regions_and_events():
    from blueprints.components.audit import AccountTrail, AccountTrailArgs

    arn = "acs:log:cn-shanghai:1234567890:project/audit-logs"
    resources = record_program(
        lambda: AccountTrail("med-audit", AccountTrailArgs("aitrain-trail", sls_project_arn=arn)),
        zones=["cn-shanghai-a"],
    )
    trail = one(resources, "actiontrail.Trail")
    assert trail.parent == "med-audit"
    assert trail.inputs == {
        "eventRw": "All",
        "slsProjectArn": arn,
        "status": "Enable",
        "trailName": "aitrain-trail",
        "trailRegion": "All",
    }
    assert trail.protect and trail.retain_on_delete  # an account's audit record outlives any training stack
