"""The resource graph in the plan: every ``depends_on`` edge and every component's ``register_outputs``.

Mocks never see either, so the offline recorder captures them; these tests fail when one is deleted.
"""

from __future__ import annotations

import json

import pytest

COMPONENT_OUTPUTS = {
    "aitrain:network:TrainingNetwork": ("compute_zone_ids", "security_group_id", "vpc_id", "vswitch_ids", "zone_ids"),
    "aitrain:storage:SharedStorage": ("file_system_id", "mount_source"),
    "aitrain:storage:DataBucket": ("access_log_bucket", "bucket", "internal_endpoint", "policy_name"),
    "aitrain:compute:GpuCluster": ("deployment_set_id", "instance_ids", "private_ips", "role_name"),
    "aitrain:compute:AutoscalingGpuPool": ("role_name", "scaling_group_id"),
}


def edges(plan) -> set[tuple[str, str]]:
    return {(r.name, target) for r in plan.resources for target in r.depends_on}


@pytest.mark.parametrize(
    "fixture, components",
    [
        (
            "medical_plan",
            {"medical-imaging-network", "medical-imaging-storage", "medical-imaging-data", "medical-imaging-cluster"},
        ),
        (
            "autoscaling_plan",
            {
                "autoscaling-training-network",
                "autoscaling-training-storage",
                "autoscaling-training-data",
                "autoscaling-training-pool",
            },
        ),
    ],
)
def test_every_component_registers_its_outputs(fixture, components, request):
    plan = request.getfixturevalue(fixture)
    found = {r.name: r for r in plan.resources if not r.custom}
    assert set(found) == components
    for r in found.values():
        assert r.registered_outputs == COMPONENT_OUTPUTS[r.type], r.name
    # Custom resources never register outputs; the field is for components only.
    assert all(r.registered_outputs == () for r in plan.resources if r.custom)


def test_fixed_cluster_depends_on_edges(medical_plan):
    assert edges(medical_plan) == {
        ("medical-imaging-network-snat-cn-shanghai-a", "medical-imaging-network-nat-eip-association")
    }


def test_autoscaling_pool_depends_on_edges(autoscaling_plan):
    pool, net = "autoscaling-training-pool", "autoscaling-training-network"
    config = f"{pool}-template"
    assert edges(autoscaling_plan) == {
        # SNAT entries need the EIP bound to the NAT gateway first.
        *((f"{net}-snat-cn-shanghai-{z}", f"{net}-nat-eip-association") for z in "abc"),
        # ESS refuses rules and scheduled tasks on a group with nothing to launch from (here its launch template).
        (f"{pool}-scale-in", config),
        (f"{pool}-scale-out", config),
        (f"{pool}-sleep", config),
        (f"{pool}-wake", config),
        # The SCALE_IN lifecycle hook too: it is added once the group can launch (aitrain's ordering, not an ESS rule).
        (f"{pool}-leave", config),
    }


def test_every_edge_points_at_a_resource_of_the_plan(medical_plan, autoscaling_plan):
    for plan in (medical_plan, autoscaling_plan):
        names = {r.name for r in plan.resources}
        assert {target for _, target in edges(plan)} <= names


def test_graph_fields_are_in_the_json(autoscaling_plan):
    data = json.loads(autoscaling_plan.to_json())
    by_name = {r["name"]: r for r in data["resources"]}
    assert by_name["autoscaling-training-pool-wake"]["depends_on"] == ["autoscaling-training-pool-template"]
    assert by_name["autoscaling-training-pool"]["registered_outputs"] == ["role_name", "scaling_group_id"]
    assert all(
        isinstance(r["depends_on"], list) and isinstance(r["registered_outputs"], list) for r in data["resources"]
    )


def test_register_outputs_is_restored_even_when_the_program_fails():
    """The recorder patches ComponentResource.register_outputs for one run only."""
    import pulumi

    from blueprints.testing import record_program

    original = pulumi.ComponentResource.register_outputs

    def failing_program():
        raise RuntimeError("boom")

    with pytest.raises(Exception, match="boom"):
        record_program(failing_program, zones=["cn-shanghai-a"])
    assert pulumi.ComponentResource.register_outputs is original


def test_a_component_tested_alone_records_its_outputs():
    from blueprints.components.network import TrainingNetwork, TrainingNetworkArgs
    from blueprints.testing import record_program

    args = TrainingNetworkArgs(
        region="cn-shanghai",
        vpc_cidr="10.0.0.0/16",
        region_zones=("cn-shanghai-a",),
        storage_zone="cn-shanghai-a",
        instance_type="ecs.gn7e-c16g1.32xlarge",
        compute_zone_count=1,
    )
    resources = record_program(lambda: TrainingNetwork("net", args), zones=["cn-shanghai-a"])
    (component,) = [r for r in resources if not r.custom]
    assert component.registered_outputs == COMPONENT_OUTPUTS["aitrain:network:TrainingNetwork"]
    assert [r.depends_on for r in resources if r.short_type == "vpc.SnatEntry"] == [("net-nat-eip-association",)]


@pytest.mark.parametrize(
    "kind, tier, domain, source, options",
    [
        (
            "nas",
            "Performance",
            "${s-mount-target.mountTargetDomain}",
            "${s-mount-target.mountTargetDomain}:/",
            "vers=3",
        ),
        (
            "extreme_nas",
            "standard",
            "${s-mount-target.mountTargetDomain}",
            "${s-mount-target.mountTargetDomain}:/share",
            "vers=3",
        ),
        (
            "cpfs",
            "advance_100",
            "${s-fs.id}.cn-shanghai.cpfs.nas.aliyuncs.com",
            "${s-fs.id}.cn-shanghai.cpfs.nas.aliyuncs.com",
            "",
        ),
    ],
)
def test_shared_storage_exposes_how_nodes_mount_it(kind, tier, domain, source, options):
    """The attributes the program reads from SharedStorage (mount source, options, domain, kind) per kind."""
    from pulumi.runtime.sync_await import _sync_await

    from blueprints.components.storage import SharedStorage, SharedStorageArgs
    from blueprints.testing import record_program

    made = []
    args = SharedStorageArgs(
        kind=kind,
        region="cn-shanghai",
        throughput_tier=tier,
        capacity_gib=2048,
        zone_id="cn-shanghai-a",
        vpc_id="vpc-1",
        vswitch_id="vsw-1",
        client_cidrs={"cn-shanghai-a": "10.0.0.0/20"},
    )
    record_program(lambda: made.append(SharedStorage("s", args)), zones=["cn-shanghai-a"])
    (storage,) = made
    resolve = lambda value: _sync_await(__import__("pulumi").Output.from_input(value).future())  # noqa: E731
    assert storage.kind == kind
    assert resolve(storage.mount_domain) == domain
    assert resolve(storage.mount_source) == source
    assert storage.mount_options.startswith(options)
    assert resolve(storage.file_system_id) == "${s-fs.id}"
