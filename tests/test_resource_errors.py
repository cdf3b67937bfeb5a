"""Argument errors found while resources are built name the resource: each is a ResourceError carrying the component
(or provider) that refused, a RunError (so `pulumi up` prints one line, no traceback) whose text starts with the
resource's type and name; the offline plan turns it into the same exit-2 profile problem as before, word for word."""

from __future__ import annotations

import runpy
from pathlib import Path

import pulumi
import pytest
from typer.testing import CliRunner

from blueprints.catalog import load_catalog
from blueprints.cli.main import app
from blueprints.components.bucket import DataBucket, DataBucketArgs
from blueprints.components.compute import GpuCluster, GpuClusterArgs
from blueprints.components.errors import ResourceError, names_resource, resource_label
from blueprints.components.kubernetes_workloads import KubernetesWorkloads, KubernetesWorkloadsArgs
from blueprints.components.network import TrainingNetwork, TrainingNetworkArgs
from blueprints.components.node import NodeSpec
from blueprints.components.storage import SharedStorage, SharedStorageArgs
from blueprints.core.errors import UserInputError
from blueprints.core.layout import LayoutError
from blueprints.engine.preview import record
from blueprints.profile.stackconfig import PRESET_KEY, with_cli_inputs
from blueprints.testing import offline_mocks, offline_plan

ZONES = ["cn-shanghai-a", "cn-shanghai-b", "cn-shanghai-e"]
PROGRAM = Path(__file__).resolve().parents[1] / "infra" / "__main__.py"
# More nodes than the medical-imaging preset's vSwitches hold once its VPC is a /20 (tests/test_layout.py).
TOO_MANY_NODES = {"network.vpc_cidr": "192.168.0.0/20", "compute.nodes": 370}
ROOM = (
    "network.vpc_cidr 192.168.0.0/20 gives each zone a /24 vSwitch: 1 × 256 addresses less 4 reserved per vSwitch "
    "= 252 free, below 370 nodes + 37 headroom = 407"
)


def network_args(**extra) -> TrainingNetworkArgs:
    values = dict(
        region="cn-shanghai",
        vpc_cidr="10.0.0.0/16",
        region_zones=tuple(ZONES),
        storage_zone="cn-shanghai-a",
        instance_type="ecs.gn7e-c16g1.32xlarge",
        compute_zone_count=1,
    )
    return TrainingNetworkArgs(**{**values, **extra})


def bucket_args(**extra) -> DataBucketArgs:
    values = dict(name="med", region="cn-shanghai", bucket="med-train-data", noncurrent_days=30)
    return DataBucketArgs(**{**values, **extra})


def storage_args(**extra) -> SharedStorageArgs:
    values = dict(
        kind="nas",
        region="cn-shanghai",
        throughput_tier="Capacity",
        capacity_gib=500,
        zone_id="cn-shanghai-a",
        vpc_id="vpc-1",
        vswitch_id="vsw-1",
        client_cidrs={"cn-shanghai-a": "10.0.0.0/20"},
    )
    return SharedStorageArgs(**{**values, **extra})


def workloads_args(**extra) -> KubernetesWorkloadsArgs:
    values = dict(
        name="w",
        region="cn-shanghai",
        namespace="training",
        kubeconfig="k",
        storage_kind="nas",
        file_system_id="fs-1",
        mount_source="m.nas.aliyuncs.com:/",
        capacity_gib=100,
        operator_image="kubeflow/training-operator:v1-5170a36",
    )
    return KubernetesWorkloadsArgs(**{**values, **extra})


def node(**extra) -> NodeSpec:
    values = dict(
        instance_type="ecs.gn7e-c16g1.32xlarge",
        image_id="img-1",
        security_group_id="sg-1",
        user_data="#cloud-config\n",
        system_disk_gib=200,
        system_disk_performance_level="PL1",
        scratch_disk_gib=0,
        scratch_performance_level="PL1",
        eri=False,
    )
    return NodeSpec(**{**values, **extra})


# (what is built, its type, its logical name, how the message it
# refuses with starts): every argument error a component raises.
REFUSALS = [
    pytest.param(
        lambda: TrainingNetwork("net", network_args(preferred_zones=("cn-shanghai-z",))),
        TrainingNetwork,
        "net",
        "no zone among network.zones",
        id="network-zones",
    ),
    pytest.param(
        lambda: TrainingNetwork("net", network_args()).login_vswitch_id,
        TrainingNetwork,
        "net",
        "TrainingNetwork: login_vswitch_id needs TrainingNetworkArgs(login_vswitch=True)",
        id="network-login-vswitch",
    ),
    pytest.param(
        lambda: SharedStorage("st", storage_args(client_cidrs={})),
        SharedStorage,
        "st",
        "SharedStorageArgs.client_cidrs is empty: the share would admit nobody",
        id="storage-clients",
    ),
    pytest.param(
        lambda: DataBucket("med-data", bucket_args(bucket="Med_Data")),
        DataBucket,
        "med-data",
        "bucket name 'Med_Data' contains 'D', 'M', '_'; OSS allows only lowercase letters, digits and hyphens",
        id="bucket-name",
    ),
    pytest.param(
        lambda: DataBucket("med-data", bucket_args(access_log_bucket="med-train-data")),
        DataBucket,
        "med-data",
        "access-log bucket 'med-train-data' is the data bucket itself",
        id="bucket-log-loop",
    ),
    pytest.param(
        lambda: GpuCluster("c", GpuClusterArgs(node=node(), nodes=0, zone_id="cn-shanghai-a", vswitch_id="vsw-1")),
        GpuCluster,
        "c",
        "nodes must be at least 1",
        id="cluster-nodes",
    ),
    pytest.param(
        lambda: KubernetesWorkloads("w", workloads_args(storage_kind="cpfs")),
        KubernetesWorkloads,
        "w",
        "storage.kind 'cpfs' has no static-volume recipe for ACK here; allowed: nas, extreme_nas",
        id="workloads-storage",
    ),
    pytest.param(
        lambda: KubernetesWorkloads("w", workloads_args(bucket="b", bucket_endpoint="oss-cn-shanghai.aliyuncs.com")),
        KubernetesWorkloads,
        "w",
        "bucket, bucket_endpoint and node_role_name come together",
        id="workloads-bucket",
    ),
]


@pytest.mark.parametrize("build, component, name, message", REFUSALS)
def test_a_component_argument_error_is_a_resource_error_carrying_the_component(build, component, name, message):
    with offline_mocks(zones=ZONES) as stack:
        with pytest.raises(ResourceError) as raised:
            build()
    error = raised.value
    # The very component that refused, registered before it did: the engine knows its URN.
    assert isinstance(error.resource, component) and error.resource.pulumi_resource_name == name
    assert any(not r.custom and r.name == name for r in stack.resources)
    assert error.message.startswith(message)
    assert str(error) == f"{error.resource.pulumi_resource_type} ({name}): {error.message}"
    # A RunError: Pulumi's Python host prints its text as one error line, without a traceback.
    assert isinstance(error, pulumi.RunError)


def test_names_resource_turns_a_pure_check_into_the_resource_s_error():
    with offline_mocks(zones=ZONES):
        network = TrainingNetwork("net", network_args())
        with pytest.raises(ResourceError) as raised, names_resource(network):
            raise LayoutError("no room")
    assert raised.value.resource is network and raised.value.message == "no room"
    assert resource_label(network) == "aitrain:network:TrainingNetwork (net)"
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_pulumi_up_names_the_network_a_blueprint_s_nodes_do_not_fit():
    image = load_catalog().image_for("cn-shanghai")
    config = with_cli_inputs({}, "medical-imaging", list(TOO_MANY_NODES.items()))
    with pytest.raises(ResourceError) as raised:
        record(lambda: runpy.run_path(str(PROGRAM), run_name="__main__"), config, zones=ZONES, image_id=image.image_id)
    assert isinstance(raised.value.resource, TrainingNetwork)
    assert str(raised.value).startswith(f"aitrain:network:TrainingNetwork (medical-imaging-network): {ROOM}")


def test_the_offline_plan_shows_a_resource_error_as_the_same_profile_problem():
    result = CliRunner().invoke(
        app, ["plan", "medical-imaging", *[f"--set={k}={v}" for k, v in TOO_MANY_NODES.items()]]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith(f"error: cannot plan this profile (1 problem):\n  - profile: {ROOM};")
    assert "TrainingNetwork" not in result.stderr


def test_an_image_the_region_lacks_names_the_region_s_provider(monkeypatch):
    from blueprints.catalog import Catalog

    monkeypatch.setattr(Catalog, "image_for", lambda self, region: None)
    message = "the catalog has no image pattern for cn-shanghai; set compute.image_id"
    # `pulumi up`: the lookup runs through the stack's provider for the region, so the error names that provider.
    with pytest.raises(ResourceError) as raised:
        record(lambda: runpy.run_path(str(PROGRAM), run_name="__main__"), {PRESET_KEY: "medical-imaging"}, zones=ZONES)
    assert isinstance(raised.value.resource, pulumi.ProviderResource) and raised.value.message == message
    assert str(raised.value) == f"pulumi:providers:alicloud (medical-imaging-cn-shanghai): {message}"
    # The offline plan: the profile problem it always was.
    with pytest.raises(UserInputError) as refused:
        offline_plan("medical-imaging")
    assert refused.value.render() == f"error: cannot plan this profile (1 problem):\n  - profile: {message}"
