"""Pure profile validation: every bad input gets a located, explained error; good input is resolved."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
from pydantic import ValidationError

from blueprints import architectures
from blueprints.architectures.autoscaling_pool.spec import AutoscalingProfile
from blueprints.architectures.fixed_cluster.spec import FixedClusterProfile
from blueprints.catalog import load_catalog
from blueprints.core.errors import UserInputError
from blueprints.profile.stackconfig import load_preset, parse_overrides, resolve, with_cli_inputs
from blueprints.review.guardrails import rule_ids

CATALOG = load_catalog()
TODAY = dt.date(2026, 11, 30)
MODELS = architectures.profile_models()


def parse_profile(data, today=TODAY):
    return architectures.parse(data, catalog=CATALOG, today=today)


def alias_note(profile):
    return profile.alias_note


def medical() -> dict:
    return copy.deepcopy(load_preset("medical-imaging"))


def autoscaling() -> dict:
    return copy.deepcopy(load_preset("autoscaling-training"))


def problems(data: dict) -> list:
    with pytest.raises(UserInputError) as info:
        parse_profile(data)
    return info.value.problems


def test_presets_parse_into_their_blueprint_models():
    assert isinstance(parse_profile(medical()), FixedClusterProfile)
    profile = parse_profile(autoscaling())
    assert isinstance(profile, AutoscalingProfile)
    assert profile.compute.working_hours_nodes == 2


def test_profiles_are_frozen():
    profile = parse_profile(medical())
    with pytest.raises(ValidationError, match="frozen"):
        profile.compute.nodes = 3  # type: ignore[misc]


def test_unknown_key_gets_did_you_mean_and_allowed_keys():
    data = medical()
    data["storage"]["capacity_gb"] = data["storage"].pop("capacity_gib")
    found = problems(data)
    unknown = [p for p in found if p.path == "storage.capacity_gb"]
    assert unknown and unknown[0].hint == "did you mean 'capacity_gib'?"
    assert "allowed keys here" in unknown[0].message and "throughput_tier" in unknown[0].message


def test_every_error_is_reported_together_with_path_and_value():
    data = medical()
    data["compute"]["nodes"] = -1
    data["network"]["vpc_cidr"] = "10.0.0.300/16"
    found = {p.path: p for p in problems(data)}
    assert set(found) >= {"compute.nodes", "network.vpc_cidr"}
    assert found["compute.nodes"].value == -1 and "greater than or equal to 0" in found["compute.nodes"].message
    assert (
        found["network.vpc_cidr"].value == "10.0.0.300/16" and "not a valid CIDR" in found["network.vpc_cidr"].message
    )


def test_wrong_type_is_rejected_in_strict_mode():
    data = medical()
    data["compute"]["nodes"] = "twelve"
    (p,) = [p for p in problems(data) if p.path == "compute.nodes"]
    assert p.value == "twelve" and "integer" in p.message


def test_min_greater_than_max_is_rejected():
    data = autoscaling()
    data["compute"].update(min_nodes=5, max_nodes=3, desired_nodes=None)
    (p,) = problems(data)
    assert p.path == "compute" and "min_nodes (5) is greater than max_nodes (3)" in p.message


def test_desired_outside_bounds_is_rejected():
    data = autoscaling()
    data["compute"]["desired_nodes"] = 9
    (p,) = problems(data)
    assert "desired_nodes (9) is outside [min_nodes, max_nodes] = [1, 8]" in p.message


def test_fake_instance_type_is_rejected_with_suggestion():
    data = medical()
    data["compute"]["instance_type"] = "ecs.gn7e-c16g1.32xlage"
    (p,) = problems(data)
    assert p.path == "compute.instance_type" and p.value == "ecs.gn7e-c16g1.32xlage"
    assert "not a real Alibaba Cloud ECS instance type" in p.message
    assert "ecs.gn7e-c16g1.32xlarge" in p.hint


def test_cpu_only_type_is_rejected_for_training_nodes():
    data = medical()
    data["compute"]["instance_type"] = "ecs.g7.8xlarge"
    (p,) = problems(data)
    assert "CPU-only" in p.message


def test_article_alias_resolves_to_real_hardware_with_same_gpu_count():
    data = medical()
    data["compute"].update(instance_type="m6i.32xlarge", nodes=3)
    profile = parse_profile(data)
    assert profile.compute.instance_type == "ecs.gn7e-c16g1.32xlarge"
    assert profile.compute.nodes == 12  # 3 article units × 4 real nodes × 8 A100 = 96 GPUs
    note = alias_note(profile)
    assert note and note.startswith("`m6i.32xlarge` is not an Alibaba Cloud type")
    assert note.endswith("Counts are in article units: nodes 3 × m6i.32xlarge = 12 × ecs.gn7e-c16g1.32xlarge.")


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "8.0.0.0/4"])
def test_admin_cidr_open_to_the_internet_is_rejected(cidr):
    data = medical()
    data["network"]["admin_cidr"] = cidr
    (p,) = problems(data)
    assert p.path == "network.admin_cidr" and p.value == cidr


def test_public_vpc_cidr_is_rejected():
    data = medical()
    data["network"]["vpc_cidr"] = "8.8.0.0/16"
    (p,) = problems(data)
    assert "10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16" in p.message


def test_scale_out_threshold_outside_article_band_needs_explicit_override():
    data = autoscaling()
    data["compute"]["scale_out_cpu_percent"] = 90
    (p,) = problems(data)
    assert "65–75 %" in p.message and "allow_scale_out_outside_article_band" in p.message
    data["compute"]["allow_scale_out_outside_article_band"] = True
    assert parse_profile(data).compute.scale_out_cpu_percent == 90


def test_cpfs_needs_explicit_acceptance_of_no_encryption():
    data = medical()
    data["storage"].update(kind="cpfs", throughput_tier="advance_200")
    (p,) = problems(data)
    assert "cannot be encrypted" in p.message
    data["storage"]["allow_unencrypted_cpfs"] = True
    assert parse_profile(data).storage.kind == "cpfs"


def test_tier_must_match_kind():
    data = medical()
    data["storage"]["throughput_tier"] = "advance_200"
    (p,) = problems(data)
    assert "not valid for kind 'extreme_nas'" in p.message and "'advance'" in p.message


def test_off_hours_start_defaults_to_tomorrow_by_the_given_clock():
    profile = parse_profile(autoscaling())
    assert profile.cost.off_hours.start_date is None
    assert profile.cost.off_hours.first_day(TODAY) == dt.date(2026, 12, 1)


@pytest.mark.parametrize("start", ["2026-11-30", "2026-11-01", "2027-02-28", "9999-12-31", "0001-01-01"])
def test_off_hours_start_outside_the_ess_window_names_the_allowed_range(start):
    data = autoscaling()
    data["cost"]["off_hours"]["start_date"] = start
    (p,) = problems(data)
    assert p.path == "cost.off_hours.start_date" and p.value == start
    assert "must be from 2026-12-01 to 2027-02-27" in p.message and "today is 2026-11-30" in p.message


def test_off_hours_start_inside_the_window_is_kept():
    data = autoscaling()
    data["cost"]["off_hours"]["start_date"] = "2027-02-27"
    assert parse_profile(data).cost.off_hours.first_day(TODAY) == dt.date(2027, 2, 27)


@pytest.mark.parametrize(
    "path, value",
    [
        (("cost", "off_hours", "work_end"), "19:00\n"),
        (("cost", "off_hours", "start_date"), "2026-12-01\n"),
        (("name",), "medical\n"),
        (("description",), "fine\n## guardrails: all passed"),
    ],
)
def test_names_times_and_text_are_matched_whole(path, value):
    data = autoscaling()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    found = problems(data)
    assert [p.path for p in found] == [".".join(path)]


def test_numbers_written_as_text_keep_their_meaning_and_words_do_not():
    data = autoscaling()
    data["compute"].update(max_nodes="8", scale_in_gpu_percent="37.5")
    profile = parse_profile(data)
    assert profile.compute.max_nodes == 8 and profile.compute.scale_in_gpu_percent == 37.5


def test_repeated_zones_are_rejected():
    data = medical()
    data["network"]["zones"] = ["cn-shanghai-a", "cn-shanghai-a", "cn-shanghai-a"]
    (p,) = problems(data)
    assert p.path == "network.zones" and "cn-shanghai-a more than once" in p.message


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("https://x", "v", "contains 'http://' or 'https://'"),
        ("aliyun-owner", "v", "reserves ('aliyun', 'acs:')"),
        ("ACS:team", "v", "reserves ('aliyun', 'acs:')"),
        ("team", "acs:x", "reserved prefix 'acs:'"),
        ("team", "x" * 129, "at most 128"),
        ("managed-by", "me", "set by aitrain itself"),
        ("team", "a\x1b[31m", "control characters"),
    ],
)
def test_tags_follow_alibaba_cloud_tag_rules(key, value, expected):
    data = medical()
    data["tags"] = {key: value}
    (p,) = problems(data)
    assert p.path == "tags" and expected in p.message


def test_too_many_tags_are_rejected():
    data = medical()
    data["tags"] = {f"k{i}": "v" for i in range(19)}
    (p,) = problems(data)
    assert "at most 18" in p.message


def test_the_other_blueprints_keys_name_the_blueprint_that_takes_them():
    data = medical()
    data["compute"].update(min_nodes=1, max_nodes=4)
    del data["compute"]["nodes"]
    found = {p.path: p for p in problems(data)}
    assert (
        "is a key of blueprints 'autoscaling-pool', 'kubernetes-pool', not of 'fixed-cluster'"
        in found["compute.min_nodes"].message
    )
    assert "'nodes'" in found["compute.min_nodes"].message
    assert found["compute.min_nodes"].hint == "set blueprint: autoscaling-pool or kubernetes-pool to use it"
    data = autoscaling()
    data["compute"]["nodes"] = 3
    (p,) = problems(data)
    assert p.path == "compute.nodes" and "blueprints 'fixed-cluster', 'lingjun-cluster'" in p.message
    assert p.hint == "set blueprint: fixed-cluster or lingjun-cluster to use it"


def test_storage_zone_must_be_a_zone_of_the_region():
    data = medical()
    data["storage"]["zone"] = "cn-hangzhou-h"
    (p,) = problems(data)
    # Named by its field with its value, never "(top level)" with the whole profile.
    assert (p.path, p.value) == (
        "storage.zone",
        "cn-hangzhou-h",
    ) and "is not a zone of region cn-shanghai; allowed: 'cn-shanghai-a'" in p.message


def test_hostile_blueprint_values_are_clean_errors():
    for value in ({"a": 1}, ["x"], 3):
        data = medical()
        data["blueprint"] = value
        (p,) = problems(data)
        assert p.path == "blueprint" and "unknown blueprint" in p.message


def test_off_hours_needs_a_real_time_zone():
    data = autoscaling()
    data["cost"]["off_hours"]["timezone"] = "Asia/Shangai"
    (p,) = problems(data)
    assert p.path == "cost.off_hours.timezone" and "did you mean 'Asia/Shanghai'?" in p.message


def test_fixed_cluster_cannot_sleep_off_hours():
    data = medical()
    data["cost"] = {"off_hours": {"enabled": True}}
    (p,) = problems(data)
    assert "autoscaling-pool" in p.message


def test_unknown_region_and_foreign_zone():
    data = medical()
    data["region"] = "cn-shangai"
    (p,) = problems(data)
    assert p.path == "region" and "did you mean 'cn-shanghai'?" in p.message
    data = medical()
    data["network"]["zones"] = ["cn-hangzhou-h"]
    (p,) = problems(data)
    assert (p.path, p.value) == (
        "network.zones",
        ["cn-hangzhou-h"],
    ) and "['cn-hangzhou-h'] are not zones of region cn-shanghai" in p.message


def test_unknown_blueprint_and_preset_get_suggestions():
    data = medical()
    data["blueprint"] = "fixed-clustr"
    (p,) = problems(data)
    assert p.hint == "did you mean 'fixed-cluster'?"
    with pytest.raises(UserInputError) as info:
        load_preset("medical-imagin")
    assert info.value.problems[0].hint == "did you mean 'medical-imaging'?"


def test_set_overrides_are_typed_and_applied_after_the_preset():
    config = with_cli_inputs(
        {}, "medical-imaging", parse_overrides(["compute.nodes=128", "network.admin_cidr=203.0.113.0/24"], MODELS)
    )
    from blueprints.profile.stackconfig import read_settings

    data, profile = resolve(read_settings(config, source="t"), MODELS, catalog=CATALOG, today=TODAY)
    assert profile.compute.nodes == 128 and data["compute"]["nodes"] == 128
    assert profile.network.admin_cidr == "203.0.113.0/24"


def test_set_rejects_unknown_paths_with_suggestion():
    with pytest.raises(UserInputError) as info:
        parse_overrides(["compute.node=3", "nonsense"], MODELS)
    paths = [p.path for p in info.value.problems]
    assert paths == ["--set compute.node", "--set"]
    assert info.value.problems[0].hint == "did you mean 'compute.nodes'?"


def test_error_message_is_one_block_listing_each_problem():
    data = medical()
    data["compute"]["nodes"] = -1
    data["storage"]["kind"] = "s3"
    with pytest.raises(UserInputError) as info:
        parse_profile(data)
    text = info.value.render()
    assert text.startswith("error: invalid profile (")
    assert "  - compute.nodes = -1:" in text and "storage.kind = 's3':" in text
    assert "Traceback" not in text


# --- security section and secure-default switches (issue 9) ---

SKIP_AIT008 = {"rule": "AIT008", "reason": "eRDMA between pool nodes needs the ERI scaling configuration"}
SKIP_AIT024 = {"rule": "AIT024", "reason": "a legacy tool chowns files as root on the share"}


def test_ipv6_admin_cidr_is_refused_with_the_field_named():
    data = medical()
    data["network"]["admin_cidr"] = "2001:db8::/64"
    (p,) = problems(data)
    assert p.path == "network.admin_cidr" and p.value == "2001:db8::/64"
    assert "must be an IPv4 CIDR; the security group rule's cidrIp takes IPv4 only" in p.message


def test_storage_squashes_root_by_default_and_no_squash_needs_a_reasoned_skip():
    assert parse_profile(medical()).storage.nfs_squash == "root_squash"
    data = medical()
    data["storage"]["nfs_squash"] = "no_squash"
    (p,) = problems(data)
    assert p.path == "storage.nfs_squash" and p.value == "no_squash"
    assert "allowed: root_squash, all_squash" in p.message and "AIT024" in p.message


@pytest.mark.skipif("AIT024" not in rule_ids(), reason="AIT024 is registered by the RULES-DATA branch")
def test_no_squash_with_a_reasoned_skip_of_ait024_is_kept():
    data = medical()
    data["storage"]["nfs_squash"] = "no_squash"
    data["guardrails"] = {"skip": [SKIP_AIT024]}
    assert parse_profile(data).storage.nfs_squash == "no_squash"


def test_unknown_squash_value_lists_the_allowed_ones():
    data = medical()
    data["storage"]["nfs_squash"] = "squash_everything"
    (p,) = problems(data)
    assert p.path == "storage.nfs_squash" and "root_squash" in p.message and "no_squash" in p.message


@pytest.mark.parametrize("days, ok", [(7, True), (-1, True), (65536, True), (0, False), (-2, False), (65537, False)])
def test_snapshot_retention_is_1_to_65536_days_or_minus_1(days, ok):
    data = medical()
    data["storage"]["snapshot_retention_days"] = days
    if ok:
        assert parse_profile(data).storage.snapshot_retention_days == days
    else:
        (p,) = problems(data)
        assert p.path == "storage.snapshot_retention_days" and p.value == days


def test_erdma_pool_is_refused_without_skipping_imdsv2_and_kept_with_it():
    data = autoscaling()
    data["compute"]["erdma_pool"] = True
    (p,) = problems(data)
    assert p.path == "compute.erdma_pool" and p.value is True
    assert "AIT008" in p.message and "cannot require IMDSv2" in p.message and "allowed: false" in p.message
    data["guardrails"] = {"skip": [SKIP_AIT008]}
    assert parse_profile(data).compute.erdma_pool is True


@pytest.mark.parametrize("key", ["key-hzz630494463ejqjx0001", "05754286-3ba2-4fa6-8d41-4323aca60001"])
def test_kms_key_id_takes_both_documented_forms(key):
    data = medical()
    data["security"] = {"kms_key_id": key}
    assert parse_profile(data).security.kms_key_id == key


@pytest.mark.parametrize(
    "key", ["alias/my-key", "key-", "KEY-HZZ630494463EJQJX", "acs:kms:cn-shanghai:123:key/key-abc12345"]
)
def test_other_kms_key_ids_are_refused_with_the_allowed_forms(key):
    data = medical()
    data["security"] = {"kms_key_id": key}
    (p,) = problems(data)
    assert (
        p.path == "security.kms_key_id"
        and p.value == key
        and "key-<8–64 lowercase letters or digits>" in p.message
        and "UUID" in p.message
    )


def test_flow_log_needs_project_and_logstore_with_sls_names():
    data = medical()
    data["security"] = {"flow_log": {"project": "audit-logs"}}
    (p,) = problems(data)
    assert p.path == "security.flow_log.logstore"
    data["security"] = {"flow_log": {"project": "Audit_Logs", "logstore": "vpc_flow"}}
    (p,) = problems(data)
    assert p.path == "security.flow_log.project" and "lowercase letters, digits or hyphens" in p.message
    data["security"] = {"flow_log": {"project": "audit-logs", "logstore": "VPC flow"}}
    (p,) = problems(data)
    assert (
        p.path == "security.flow_log.logstore"
        and p.value == "VPC flow"
        and "lowercase letters, digits, '-' or '_'" in p.message
    )
    data["security"] = {"flow_log": {"project": "audit-logs", "logstore": "vpc_flow"}}
    assert parse_profile(data).security.flow_log.logstore == "vpc_flow"


def test_actiontrail_needs_a_destination_and_real_arns():
    data = medical()
    data["security"] = {"actiontrail": {}}
    (p,) = problems(data)
    assert p.path == "security.actiontrail" and "sls_project_arn" in p.message and "oss_bucket" in p.message
    data["security"] = {"actiontrail": {"sls_project_arn": "audit-logs"}}
    (p,) = problems(data)
    assert (
        p.path == "security.actiontrail.sls_project_arn"
        and "acs:log:<region>:<account id>:project/<project name>" in p.message
    )
    data["security"] = {"actiontrail": {"sls_project_arn": "acs:log:cn-shanghai:1234567890:project/audit-logs"}}
    assert parse_profile(data).security.actiontrail.name is None  # the component names it <profile name>-audit


@pytest.mark.parametrize(
    "trail, path, text",
    [
        (
            {"name": "Trail"},
            "security.actiontrail.name",
            "6–36 lowercase letters, digits, '-' or '_', starting with a letter",
        ),
        (
            {"sls_write_role_arn": "role/writer"},
            "security.actiontrail.sls_write_role_arn",
            "acs:ram::<account id>:role/<role name>",
        ),
        (
            {"oss_write_role_arn": "acs:ram::x:role/w"},
            "security.actiontrail.oss_write_role_arn",
            "acs:ram::<account id>:role/<role name>",
        ),
    ],
)
def test_actiontrail_names_and_role_arns_are_checked(trail, path, text):
    data = medical()
    data["security"] = {
        "actiontrail": {"sls_project_arn": "acs:log:cn-shanghai:1234567890:project/audit-logs", **trail}
    }
    (p,) = problems(data)
    assert p.path == path and text in p.message
    ok = {"name": "audit_trail-1", "sls_write_role_arn": "acs:ram::1234567890:role/aliyunactiontraildefaultrole"}
    data["security"] = {"actiontrail": {"sls_project_arn": "acs:log:cn-shanghai:1234567890:project/audit-logs", **ok}}
    trail = parse_profile(data).security.actiontrail
    assert (trail.name, trail.sls_write_role_arn) == (
        "audit_trail-1",
        "acs:ram::1234567890:role/aliyunactiontraildefaultrole",
    )


def test_actiontrail_to_oss_takes_a_valid_bucket_name():
    data = medical()
    data["security"] = {"actiontrail": {"oss_bucket": "Audit_Logs"}}
    (p,) = problems(data)
    assert p.path == "security.actiontrail.oss_bucket"
    data["security"] = {"actiontrail": {"oss_bucket": "audit-logs-1234"}}
    assert parse_profile(data).security.actiontrail.oss_bucket == "audit-logs-1234"


@pytest.mark.parametrize(
    "entry, path, text",
    [
        ({"cidr": "2001:db8::/32"}, "security.egress.allow[0].cidr", "must be an IPv4 CIDR"),
        ({"cidr": "203.0.113.7/24"}, "security.egress.allow[0].cidr", "not a valid CIDR"),
        ({"cidr": "203.0.113.0/24", "ports": "0"}, "security.egress.allow[0].ports", "outside 1–65535"),
        ({"cidr": "203.0.113.0/24", "ports": "9000/8000"}, "security.egress.allow[0].ports", "low > high"),
        ({"cidr": "203.0.113.0/24", "ports": "https"}, "security.egress.allow[0].ports", "write 443 or 8000/8100"),
        (
            {"cidr": "203.0.113.0/24", "description": "mirror\nrm -rf"},
            "security.egress.allow[0].description",
            "one line of text",
        ),
        (
            {"cidr": "203.0.113.0/24", "description": "x" * 201},
            "security.egress.allow[0].description",
            "201 characters long; at most 200",
        ),
    ],
)
def test_egress_entries_are_ipv4_cidrs_and_tcp_ports(entry, path, text):
    data = medical()
    data["security"] = {"egress": {"allow": [entry]}}
    (p,) = problems(data)
    assert p.path == path and text in p.message


def test_egress_ports_are_normalised_to_the_security_group_form():
    data = medical()
    data["security"] = {"egress": {"allow": [{"cidr": "203.0.113.0/24", "ports": "8443"}]}}
    (rule,) = parse_profile(data).security.egress.allow
    assert rule.ports == "8443/8443"


def test_medical_imaging_preset_turns_the_egress_allow_list_on_and_leaves_account_resources_off():
    security = parse_profile(medical()).security
    assert security.egress is not None and [(r.cidr, r.ports) for r in security.egress.allow] == [
        ("0.0.0.0/0", "443/443")
    ]
    assert security.kms_key_id is None and security.flow_log is None and security.actiontrail is None
    assert parse_profile(autoscaling()).security.egress is None


def test_access_logging_defaults_on_with_a_year_of_logs_and_a_derived_bucket():
    profile = parse_profile(medical())
    assert (profile.bucket.access_logging, profile.bucket.access_log_days) == (True, 366)
    assert profile.access_log_bucket_name == f"{profile.bucket_name}-logs"
    data = medical()
    data["bucket"] = {"access_log_bucket": "team-audit-logs"}
    assert parse_profile(data).access_log_bucket_name == "team-audit-logs"
    data["bucket"] = {"access_logging": False}
    assert parse_profile(data).access_log_bucket_name is None
    data["bucket"] = {"existing": True, "name": "team-datasets"}
    assert parse_profile(data).access_log_bucket_name is None


@pytest.mark.parametrize(
    ("bucket", "path", "text"),
    [
        (
            {"access_log_bucket": "Audit_Logs"},
            "bucket.access_log_bucket",
            "OSS allows only lowercase letters, digits and hyphens",
        ),
        ({"access_log_days": 0}, "bucket.access_log_days", "greater than or equal to 1"),
        (
            {"name": "team-data", "access_log_bucket": "team-data"},
            "bucket.access_log_bucket",
            "is the data bucket itself",
        ),
        (
            {"access_log_bucket": "medical-imaging-cn-shanghai-data"},
            "bucket.access_log_bucket",
            "is the data bucket itself",
        ),
    ],
)
def test_bad_access_log_settings_name_the_field(bucket, path, text):
    data = medical()
    data["bucket"] = bucket
    (p,) = problems(data)
    assert p.path == path and text in p.message
