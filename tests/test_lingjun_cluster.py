"""The lingjun-cluster blueprint: its resource graph (eflo cluster, group and nodes in the training VPC, an ACK Lingjun
node pool naming them), its plan lines, and bad input refused with exit 2 naming field, value and what is allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprints.architectures import job_engines
from blueprints.architectures.lingjun_cluster.spec import fee_tier
from blueprints.cli.main import app
from blueprints.kinds import kind_of
from blueprints.launch import kubernetes_outputs as lko
from blueprints.launch import trainjob as lt
from blueprints.testing import offline_plan
from tests.crdschema import crd_validator

runner = CliRunner()
PRESET = "lingjun-training"
BUNDLE = Path(lt.__file__).parents[1] / "data" / "kubeflow" / "trainer-v2.3.0" / "trainer.yaml"


def refused(*settings: str) -> str:
    args = ["plan", PRESET]
    for setting in settings:
        args += ["--set", setting]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.fixture(scope="module")
def plan():
    return offline_plan(PRESET)


def of_type(plan, short: str):
    return [r for r in plan.resources if r.short_type == short]


def test_every_lingjun_node_joins_the_group_of_the_lite_cluster_in_the_training_vpc(plan):
    (cluster,) = of_type(plan, "eflo.Cluster")
    (group,) = of_type(plan, "eflo.NodeGroup")
    nodes = of_type(plan, "eflo.Node")
    (vpc,) = of_type(plan, "vpc.Network")
    assert cluster.inputs["clusterType"] == "Lite"
    assert cluster.inputs["hpnZone"] == "A1"
    assert cluster.inputs["ignoreFailedNodeTasks"] is False
    assert cluster.inputs["networks"]["vpcId"] == f"${{{vpc.name}.id}}"
    assert group.inputs["clusterId"] == f"${{{cluster.name}.id}}"
    assert group.inputs["machineType"] == "efg1.nvga8n" and group.inputs["az"] == "cn-wulanchabu-a"
    assert group.inputs["imageId"] == "i198448731735114628708"
    assert len(nodes) == 16
    for node in nodes:
        assert node.inputs["machineType"] == "efg1.nvga8n"
        assert node.inputs["paymentType"] == "PayAsYouGo"
        assert (node.inputs["zone"], node.inputs["hpnZone"]) == ("cn-wulanchabu-a", "A1")
        assert node.inputs["clusterId"] == f"${{{cluster.name}.id}}"
        assert node.inputs["nodeGroupId"] == f"${{{group.name}.nodeGroupId}}"
        assert node.inputs["vpcId"] == f"${{{vpc.name}.id}}"
        assert "period" not in node.inputs


def test_the_gpu_pool_is_a_lingjun_node_pool_of_that_cluster_and_group_after_its_nodes(plan):
    (cluster,) = of_type(plan, "eflo.Cluster")
    (group,) = of_type(plan, "eflo.NodeGroup")
    pools = {r.inputs["nodePoolName"]: r for r in of_type(plan, "cs.NodePool")}
    gpu = pools["lingjun-training-lingjun-gpu"]
    assert gpu.inputs["type"] == "lingjun"
    assert gpu.inputs["efloNodeGroup"] == {
        "clusterId": f"${{{cluster.name}.id}}",
        "groupId": f"${{{group.name}.nodeGroupId}}",
    }
    assert "instanceTypes" not in gpu.inputs and "scalingConfig" not in gpu.inputs
    assert gpu.inputs["management"]["autoRepair"] is True
    assert gpu.inputs["instanceMetadataOptions"] == {"httpTokens": "required"}
    assert {n.name for n in of_type(plan, "eflo.Node")} <= set(gpu.depends_on)


def test_kueue_places_jobs_by_the_lingjun_topology_labels(plan):
    (topology,) = [r for r in plan.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta1:Topology"] or [
        r for r in plan.resources if r.type.endswith(":Topology")
    ]
    levels = [level["nodeLabel"] for level in topology.inputs["spec"]["levels"]]
    assert levels == ["alibabacloud.com/point-of-delivery", "alibabacloud.com/asw-id", "kubernetes.io/hostname"]


def test_the_plan_says_what_is_unknown_and_prices_the_management_fee(plan):
    summary = plan.summary
    assert "sold on quote" in summary["lingjun_price"]
    assert "128 GPUs at tier gpus-100-500" in summary["lingjun_management_fee"]
    # 128 GPUs × USD 1.25 per GPU-day × the catalog's 7.1918 CNY/USD.
    assert "1,150.69 CNY/day" in summary["lingjun_management_fee"]
    assert "cannot create CPFS for Lingjun" in summary["cpfs_for_lingjun"]
    node_lines = [line for line in plan.costs["lines"] if line["item"].startswith("Lingjun node efg1.nvga8n")]
    assert len(node_lines) == 16 and all(line["cny_per_month"] is None for line in node_lines)
    assert plan.costs["totals"]["complete"] is False
    assert any("Lingjun node efg1.nvga8n" in item for item in plan.costs["totals"]["unknown"])


def test_every_planned_type_has_a_kind(plan):
    assert all(kind_of(r.type) is not None for r in plan.resources if not r.type.startswith("aitrain:"))


@pytest.mark.parametrize(
    ("gpus", "tier"),
    [(1, "gpus-0-100"), (100, "gpus-0-100"), (101, "gpus-100-500"), (1000, "gpus-500-1000"), (1001, "gpus-1000-")],
)
def test_fee_tiers_follow_acks_table(gpus, tier):
    assert fee_tier(gpus) == tier


def test_a_machine_type_the_catalog_does_not_know_is_refused():
    out = refused("compute.instance_type=efg1.nvga9n")
    assert "compute.instance_type = 'efg1.nvga9n': is not a Lingjun machine type in the catalog" in out
    assert "'efg1.nvga8n'" in out


def test_a_region_that_does_not_sell_the_type_is_refused():
    out = refused("region=cn-hangzhou", "network.zones=[cn-hangzhou-b]", "storage.zone=cn-hangzhou-b")
    assert "region = 'cn-hangzhou': does not sell efg1.nvga8n" in out
    assert "'cn-wulanchabu'" in out


def test_an_hpn_zone_not_of_the_type_is_refused():
    out = refused("compute.hpn_zone=B9")
    assert "compute.hpn_zone = 'B9': is not an HPN zone of efg1.nvga8n in cn-wulanchabu-a" in out
    assert "'A1'" in out


def test_more_nodes_than_a_node_pool_holds_are_refused():
    out = refused("compute.nodes=1001")
    assert "compute.nodes = 1001" in out and "1000" in out


def test_a_bmcpfs_in_another_region_is_refused():
    out = refused(*cpfs_settings(region="cn-hangzhou"))
    assert "cpfs.region = 'cn-hangzhou': is not the profile's region cn-wulanchabu" in out


def test_a_bmcpfs_in_another_hpn_zone_is_refused():
    out = refused(*cpfs_settings(hpn_zone="B1"))
    assert "cpfs.hpn_zone = 'B1': differs from compute.hpn_zone A1" in out


def test_a_malformed_bmcpfs_id_is_refused():
    out = refused(*cpfs_settings(file_system_id="cpfs-123456"))
    assert "cpfs.file_system_id = 'cpfs-123456': is not a CPFS for Lingjun id" in out


def test_a_profile_without_the_node_spec_the_api_does_not_publish_is_refused():
    out = refused("compute.node_spec=")
    assert "compute.node_spec" in out


def test_a_profile_without_the_node_group_image_is_refused():
    out = refused("compute.node_image_id=")
    assert "compute.node_image_id" in out


def test_subscription_needs_its_term_and_gets_it_on_every_node():
    out = refused("compute.payment_type=Subscription")
    assert "period_months = None: is the term of a Subscription node" in out
    plan = offline_plan(PRESET, overrides={"compute": {"payment_type": "Subscription", "period_months": 12}})
    nodes = of_type(plan, "eflo.Node")
    assert {(n.inputs["paymentType"], n.inputs["period"]) for n in nodes} == {("Subscription", 12)}


CPFS = {
    "file_system_id": "bmcpfs-290w65p03ok64ya",
    "region": "cn-wulanchabu",
    "hpn_zone": "A1",
    "vpc_mount_target": "bmcpfs-290w65p03ok64ya-vpc.cn-wulanchabu.cpfs.nas.aliyuncs.com",
    "vsc_mount_target": "bmcpfs-290w65p03ok64ya-vsc.cn-wulanchabu.cpfs.nas.aliyuncs.com",
    "capacity_gib": 102400,
}


def cpfs_settings(**changes: object) -> list[str]:
    return [f"cpfs.{key}={value}" for key, value in {**CPFS, **changes}.items()]


@pytest.fixture(scope="module")
def cpfs_plan():
    return offline_plan(PRESET, overrides={"cpfs": CPFS})


def test_an_existing_cpfs_for_lingjun_is_a_static_volume_every_job_mounts(plan, cpfs_plan):
    assert cpfs_plan.outputs["cpfs_for_lingjun_id"] == CPFS["file_system_id"]
    assert cpfs_plan.outputs["cpfs_volume_claim"] == "lingjun-training-cpfs"
    (volume,) = [r for r in cpfs_plan.resources if r.type == "kubernetes:core/v1:PersistentVolume" and "cpfs" in r.name]
    assert volume.retain_on_delete
    assert volume.inputs["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert volume.inputs["spec"]["capacity"] == {"storage": "102400Gi"}
    assert volume.inputs["spec"]["csi"] == {
        "driver": "bmcpfsplugin.csi.alibabacloud.com",
        "volumeHandle": CPFS["file_system_id"],
        "volumeAttributes": {"vpcMountTarget": CPFS["vpc_mount_target"], "vscMountTarget": CPFS["vsc_mount_target"]},
    }
    (runtime,) = [r for r in cpfs_plan.resources if r.type.endswith(":TrainingRuntime")]
    pod = runtime.inputs["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert {"name": "cpfs", "persistentVolumeClaim": {"claimName": "lingjun-training-cpfs"}} in pod["volumes"]
    assert {"name": "cpfs", "mountPath": "/mnt/cpfs"} in pod["containers"][0]["volumeMounts"]
    addons = {a["name"] for a in of_type(cpfs_plan, "cs.ManagedKubernetes")[0].inputs["addons"]}
    assert "cnfs-nas-daemon" in addons
    assert "cpfs_volume_claim" not in plan.outputs and "cpfs_for_lingjun_id" not in plan.outputs
    assert "cnfs-nas-daemon" not in {a["name"] for a in of_type(plan, "cs.ManagedKubernetes")[0].inputs["addons"]}
    assert CPFS["file_system_id"] in cpfs_plan.summary["cpfs_for_lingjun"]


def test_a_mount_target_of_another_region_is_refused():
    target = CPFS["vpc_mount_target"].replace("cn-wulanchabu", "cn-hangzhou")
    out = refused(*cpfs_settings(vpc_mount_target=target))
    assert f"cpfs.vpc_mount_target = '{target}': is a mount target in cn-hangzhou" in out


def test_lingjun_pods_get_the_rdma_device_host_network_and_the_lingjun_toleration(plan):
    addons = {a["name"] for a in of_type(plan, "cs.ManagedKubernetes")[0].inputs["addons"]}
    assert "ack-rdma-device-plugin" in addons and "ack-erdma-controller" not in addons
    (runtime,) = [r for r in plan.resources if r.type.endswith(":TrainingRuntime")]
    crd_validator(BUNDLE, "TrainingRuntime", "v1alpha1").validate(runtime.inputs)
    pod = runtime.inputs["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["tolerations"] == [
        {"key": "node-role.alibabacloud.com/lingjun", "effect": "NoSchedule", "operator": "Exists"}
    ]
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/hca": 1}
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK", "SYS_RESOURCE"]}}
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["NCCL_IB_HCA"] == "mlx5" and env["NCCL_IB_GID_INDEX"] == "3"
    (pool,) = [r for r in of_type(plan, "cs.NodePool") if r.inputs.get("type") == "lingjun"]
    assert pool.inputs["taints"] == [{"key": "node-role.alibabacloud.com/lingjun", "effect": "NoSchedule"}]


def test_aitrain_launch_writes_a_lingjun_trainjob_from_the_stacks_outputs(cpfs_plan):
    outputs = json.loads(json.dumps(cpfs_plan.outputs))
    parsed = lko.parse_kubernetes_outputs(outputs, "outputs.json", job_engines())
    assert parsed.rdma_device == "rdma/hca" and parsed.cpfs_claim == "lingjun-training-cpfs"
    assert parsed.fabric == "roce" and parsed.gpus_per_node == 8 and parsed.nodes_per_job == 8
    job = lt.build_trainjob(parsed, name="pretrain", image="img:1", run_id="20261202T100000Z", command=["train.py"])
    crd_validator(BUNDLE, "TrainJob", "v1alpha1").validate(job)
    assert job["spec"]["trainer"]["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": 8, "rdma/hca": 1}}
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "pretrain"


def test_ecs_blueprints_still_refuse_a_lingjun_machine_type():
    result = runner.invoke(app, ["plan", "kubernetes-training", "--set", "compute.instance_type=efg1.nvga8n"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "compute.instance_type" in result.output
