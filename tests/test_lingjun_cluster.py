"""The lingjun-cluster blueprint: its resource graph (eflo cluster, group and nodes in the training VPC, an ACK Lingjun
node pool naming them), its plan lines, and bad input refused with exit 2 naming field, value and what is allowed."""

from __future__ import annotations

import datetime as dt
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
from blueprints.testing import assert_guardrails, offline_plan
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
    assert gpu.inputs["systemDiskEncrypted"] is True
    # Every guardrail holds on the preset: no error finding (AIT003 encryption, AIT008 IMDSv2, AIT039 unknown kinds…).
    assert [f["rule"] for f in plan.findings if f["level"] == "error"] == []
    assert_guardrails(plan.resources, fail_level="error")
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


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (["compute.nodes_per_job=17"], "compute.nodes_per_job = 17: is greater than nodes (16); allowed: 1–16"),
        (["compute.image_id=m-abc123"], "compute.image_id = 'm-abc123': does not apply to lingjun-cluster"),
        (["compute.install_pytorch=false"], "compute.install_pytorch = False: does not apply to lingjun-cluster"),
        (["compute.scratch_gib=100"], "compute.scratch_gib = 100: does not apply to lingjun-cluster"),
        (
            ["compute.zone=cn-wulanchabu-b", "network.zones=[cn-wulanchabu-b]"],
            "compute.zone = 'cn-wulanchabu-b': has no efg1.nvga8n in the catalog; allowed: 'cn-wulanchabu-a'",
        ),
        (["network.zones=[cn-wulanchabu-b]"], "network.zones = ['cn-wulanchabu-b']: must be exactly [cn-wulanchabu-a]"),
        (["network.zones=[]"], "network.zones = []: must be exactly [cn-wulanchabu-a]"),
        (
            ["compute.node_spec.gpu_model=Z100"],
            "compute.node_spec.gpu_model = 'Z100': is not in the catalog's gpus.csv; allowed: ",
        ),
        (["kubernetes.version=1.30.1-aliyun.1"], "kubernetes.version = '1.30.1-aliyun.1': is not a version ACK offers"),
        (
            ["kubernetes.cluster_spec=ack.standard"],
            "kubernetes.cluster_spec = 'ack.standard': must be an ACK managed Pro",
        ),
        (["kubernetes.system_instance_type=ecs.gn7e-c16g1.32xlarge"], "is not a CPU instance type in the catalog"),
        (
            ["storage.kind=cpfs", "storage.throughput_tier=advance_100", "storage.allow_unencrypted_cpfs=true"],
            "storage.kind = 'cpfs': has no verified static-volume recipe for ACK",
        ),
        (["cost.spot=true"], "does not apply to lingjun-cluster: Lingjun nodes are bought whole (no spot"),
        (["kubernetes.public_api_endpoint=true"], "kubernetes.public_api_endpoint = True: needs network.admin_cidr"),
        (
            ["kubernetes.service_cidr=10.50.0.0/20"],
            "kubernetes.service_cidr = '10.50.0.0/20': overlaps network.vpc_cidr",
        ),
        (["queues.teams=[{name: pretrain, gpus: 200}]"], "queues.teams"),
    ],
)
def test_every_profile_rule_refuses_naming_field_value_and_what_is_allowed(settings, expected):
    assert expected in refused(*settings)


def test_kubernetes_older_than_lingjun_node_pools_need_is_refused(tmp_path, monkeypatch):
    """A catalog copy offering 1.30: in the catalog, but below ACK's 1.31 for Lingjun node pools."""
    import shutil

    from blueprints.catalog import CATALOG_DIR, CATALOG_DIR_ENV

    copy = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, copy)
    versions = copy / "kubernetes_versions.csv"
    rows = versions.read_text(encoding="utf-8").splitlines()
    rows.append(rows[-1].replace(rows[-1].split(",")[0], "1.30.7-aliyun.1", 1).replace(",1.35,", ",1.30,", 1))
    versions.write_text("\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.setenv(CATALOG_DIR_ENV, str(copy))
    out = refused("kubernetes.version=1.30.7-aliyun.1")
    assert "kubernetes.version = '1.30.7-aliyun.1': is older than ACK's Lingjun node pools need; allowed: 1.31" in out


def test_the_node_spec_the_profile_states_is_the_plans_node(plan):
    summary = plan.summary
    assert (summary["min_nodes"], summary["max_nodes"], summary["nodes_per_job"]) == (16, 16, 8)
    assert (summary["gpus_per_node"], summary["vcpus_per_node"], summary["memory_gib_per_node"]) == (8, 192, 1967)
    with_nics = offline_plan(
        PRESET,
        overrides={"compute": {"node_spec": {"rdma_nics": 4, "rdma_gbps_per_nic": 400, "gpu_model": "A100-SXM4-80GB"}}},
    )
    allreduce = with_nics.outputs["health_gate"]["allreduce"]
    # 4 NICs × 400 Gbit/s from the profile: the health gate's all-reduce expects that node bandwidth, 0.8 of it to pass.
    assert (allreduce["fabric"], allreduce["expected_busbw_gbps"], allreduce["threshold_gbps"]) == ("roce", 1600, 1280)
    assert "profile compute.node_spec" in allreduce["source"]
    assert plan.outputs["health_gate"]["allreduce"]["expected_busbw_gbps"] is None  # the preset states no NICs
    assert with_nics.summary["gpu_model"] == "A100-SXM4-80GB"
    assert "8 × A100-SXM4-80GB, 192 vCPUs, 1967 GiB per node" in with_nics.summary["lingjun_node_spec"]


def stack_file(tmp_path: Path, *, subscription: bool = False) -> Path:
    path = tmp_path / "Pulumi.lingjun.yaml"
    extra = (
        "  aitrain:set:\n    compute.payment_type: Subscription\n    compute.period_months: 12\n"
        if subscription
        else ""
    )
    path.write_text("config:\n  aitrain:preset: lingjun-training\n" + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["park"], "'lingjun-cluster' cannot be parked: Lingjun nodes are bought whole: remove them (compute.nodes)"),
        (["replace-node", "node-000"], "lingjun-cluster: ACK's node auto repair repairs the Lingjun nodes"),
        (
            ["image", "pin", "--newest"],
            "its Lingjun nodes boot compute.node_image_id (a Lingjun image) with their own drivers",
        ),
    ],
)
def test_the_node_commands_say_what_a_lingjun_stack_does_instead(tmp_path, command, message):
    path = stack_file(tmp_path)
    before = path.read_bytes()
    result = runner.invoke(app, [*command, "--stack-config", str(path), "--write"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in result.output
    assert path.read_bytes() == before


def test_the_plan_summarises_the_lingjun_pool_its_software_and_its_price_basis(plan):
    summary = plan.summary
    assert summary["node_pools"] == (
        "system: 2 × ecs.g7.xlarge; gpu: a Lingjun node pool of 16 × efg1.nvga8n (bought, not autoscaled)"
    )
    assert summary["lingjun"] == (
        "16 × efg1.nvga8n (PayAsYouGo) in cn-wulanchabu-a, HPN zone A1, a Lite Lingjun cluster in the training VPC"
    )
    assert summary["gpu_software"].startswith("Lingjun nodes ship built-in drivers (node_image_id)")
    assert summary["fabric"].startswith("Lingjun RDMA (HPN): RoCE through the node's mlx5 devices")
    assert summary["boot_to_ready"].startswith("unknown (UNVERIFIED)")
    assert summary["compute_price"].startswith("unknown: no price for efg1.nvga8n")
    assert summary["storage_kind"] == "extreme_nas" and summary["bucket_managed"] is True


def test_the_spec_serves_no_budget_tier_and_prices_every_node():
    from blueprints.advisor.data import limits
    from blueprints.architectures import parse, spec_for
    from blueprints.architectures.lingjun_cluster.spec import LingjunClusterSpec
    from blueprints.catalog import load_catalog
    from blueprints.profile.stackconfig import load_preset

    catalog = load_catalog()
    today = dt.date(2026, 12, 2)
    spec = spec_for(parse(load_preset(PRESET), catalog=catalog, today=today), catalog, today)
    assert spec.price_basis() == (16, "every Lingjun node (bought, not autoscaled)")
    assert spec.expected_nodes() == 8 and spec.network_instance_type == "ecs.g7.xlarge"
    assert LingjunClusterSpec.budget_tiers(limits()) == ()
    assert LingjunClusterSpec.compute_from_choice("efg1.nvga8n", 4, 2) == {
        "instance_type": "efg1.nvga8n",
        "nodes": 8,
        "nodes_per_job": 4,
    }
    notes = spec.security_notes()
    assert any(n.startswith("Lingjun: ACK's Lingjun node pools are allow-listed") for n in notes)
    assert not any("Subscription Lingjun nodes" in n for n in notes)
    subscribed = load_preset(PRESET)
    subscribed["compute"] = {**subscribed["compute"], "payment_type": "Subscription", "period_months": 12}
    notes = spec_for(parse(subscribed, catalog=catalog, today=today), catalog, today).security_notes()
    assert any(n.startswith("Subscription Lingjun nodes (12 months): replacing a node") for n in notes)


def test_the_stack_outputs_and_the_component_name_the_lingjun_cluster(plan):
    (cluster,) = of_type(plan, "eflo.Cluster")
    (group,) = of_type(plan, "eflo.NodeGroup")
    outputs = plan.outputs
    assert outputs["lingjun_cluster_id"] == f"${{{cluster.name}.id}}"
    assert outputs["lingjun_node_group_id"] == f"${{{group.name}.nodeGroupId}}"
    assert (outputs["lingjun_nodes"], outputs["hpn_zone"], outputs["rdma_device"]) == (16, "A1", "rdma/hca")
    (component,) = [r for r in plan.resources if r.type == "aitrain:lingjun:LingjunNodes"]
    assert component.registered_outputs == ("lingjun_cluster_id", "node_group_id", "nodes")
    assert cluster.parent == component.name and group.parent == component.name
