"""Profile fields of a cluster you can train on: scratch, parking, the bucket section and the login node."""

from __future__ import annotations

import copy
import datetime as dt

import pytest

from blueprints import architectures
from blueprints.catalog import load_catalog
from blueprints.core.errors import UserInputError
from blueprints.profile.stackconfig import load_preset

CATALOG = load_catalog()
TODAY = dt.date(2026, 11, 30)


def parse(data):
    return architectures.parse(data, catalog=CATALOG, today=TODAY)


def medical(**compute) -> dict:
    data = copy.deepcopy(load_preset("medical-imaging"))
    data["compute"].update(compute)
    return data


def problem(data) -> tuple[str, str]:
    with pytest.raises(UserInputError) as info:
        parse(data)
    (found,) = info.value.problems
    return found.path, found.message


def test_scratch_defaults_to_three_times_memory_the_articles_ratio():
    data = medical()
    data["compute"].pop("scratch_gib", None)
    scratch = parse(data).compute.scratch(CATALOG)
    memory = CATALOG.instance_type("ecs.gn7e-c16g1.32xlarge").memory_gib
    assert (scratch.gib, scratch.local_nvme, scratch.cloud_disk_gib) == (3 * memory, False, 3 * memory)


def test_scratch_default_stays_inside_the_disk_limits():
    small = medical(instance_type="ecs.gn7i-c8g1.2xlarge", scratch_performance_level="PL3")
    small["compute"].pop("scratch_gib", None)
    assert parse(small).compute.scratch(CATALOG).gib == 1261  # 3 × 30 GiB = 90 is below ESSD PL3's 1,261 GiB minimum


def test_scratch_beyond_the_disk_limits_names_the_field_value_and_range():
    path, message = problem(medical(scratch_gib=40000))
    assert path == "compute.scratch_gib"
    assert message == (
        "40,000 GiB is outside ESSD PL1's 20–32,768 GiB (catalog disks.csv); "
        "choose a size in that range, another scratch_performance_level, or 0 for no scratch"
    )


def test_scratch_below_the_level_minimum_is_refused():
    _, message = problem(medical(scratch_gib=100, scratch_performance_level="PL2"))
    assert "100 GiB is outside ESSD PL2's 461–32,768 GiB" in message


def test_zero_scratch_means_none():
    assert parse(medical(scratch_gib=0)).compute.scratch(CATALOG).cloud_disk_gib == 0


def test_local_nvme_is_the_scratch_of_a_type_that_has_it():
    data = medical(instance_type="ecs.gn5-c8g1.14xlarge")
    data["compute"].pop("scratch_gib", None)
    scratch = parse(data).compute.scratch(CATALOG)
    assert (scratch.gib, scratch.local_nvme, scratch.cloud_disk_gib) == (3520, True, 0)
    _, message = problem(medical(instance_type="ecs.gn5-c8g1.14xlarge", scratch_gib=500))
    assert message.startswith("is not used: ecs.gn5-c8g1.14xlarge comes with 3,520 GiB of local NVMe")


def test_zero_nodes_parks_a_fixed_cluster():
    assert parse(medical(nodes=0)).compute.nodes == 0


def test_login_node_needs_an_admin_cidr():
    data = medical()
    data["access"] = {"login_node": True}
    path, message = problem(data)
    assert path == "access.login_node"
    assert message.startswith("needs network.admin_cidr, which is empty")


def test_login_node_needs_a_key_pair():
    data = medical()
    data["network"]["admin_cidr"] = "203.0.113.0/24"
    data["access"] = {"login_node": True}
    assert problem(data) == (
        "access.key_pair_name",
        "is empty but access.login_node is true: name the ECS key pair "
        "whose key may log in (create one with `aliyun ecs ImportKeyPair`)",
    )


def test_bucket_name_follows_the_oss_rules():
    data = medical()
    data["bucket"] = {"name": "Team_Data"}
    path, message = problem(data)
    assert path == "bucket.name" and "Team_Data" in message


def test_login_node_must_be_a_cpu_type():
    data = medical()
    data["network"]["admin_cidr"] = "203.0.113.0/24"
    data["access"] = {"login_node": True, "login_instance_type": "ecs.gn7i-c8g1.2xlarge", "key_pair_name": "ops"}
    path, message = problem(data)
    assert path == "access.login_instance_type" and message.startswith(
        "is not a CPU instance type in the catalog; allowed: "
    )
    data["access"]["login_instance_type"] = "ecs.c7.large"
    assert parse(data).access.login_instance_type == "ecs.c7.large"


def test_bucket_name_defaults_to_profile_and_region():
    assert parse(medical()).bucket_name == "medical-imaging-cn-shanghai-data"
    data = medical()
    data["bucket"] = {"name": "my-team-ckpts", "noncurrent_days": 14}
    profile = parse(data)
    assert (profile.bucket_name, profile.bucket.noncurrent_days, profile.bucket.existing) == (
        "my-team-ckpts",
        14,
        False,
    )


def test_an_erdma_fixed_cluster_stops_at_aitrains_limit():
    data = medical(instance_type="ecs.ebmgn7ex.32xlarge", scratch_gib=3072, nodes=257)
    path, message = problem(data)
    assert path == "compute.nodes"
    assert message.startswith(
        "is more than 256, aitrain's limit for an eRDMA fixed cluster "
        "(ecs.ebmgn7ex.32xlarge gets one ecs.Instance per node"
    )
    assert parse(medical(instance_type="ecs.ebmgn7ex.32xlarge", scratch_gib=3072, nodes=256)).compute.nodes == 256
    assert parse(medical(nodes=2000)).compute.nodes == 2000  # instance sets have no such limit


@pytest.mark.parametrize("image_id", ["None\u202e", "m-abc def", "x" * 129, "-m"])
def test_image_id_is_an_image_id_and_nothing_else(image_id):
    path, message = problem(medical(image_id=image_id))
    assert path == "compute.image_id" and message.startswith("must be an ECS image ID")


@pytest.mark.parametrize("name", ["o", "1ops", "ops key", "https:x", "ops\u202e"])
def test_key_pair_name_follows_ecs_rules(name):
    data = medical()
    data["network"]["admin_cidr"] = "203.0.113.0/24"
    data["access"] = {"login_node": True, "key_pair_name": name}
    path, message = problem(data)
    assert path == "access.key_pair_name" and message.startswith("must be an ECS key pair name")
