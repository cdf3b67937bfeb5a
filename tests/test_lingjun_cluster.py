"""The lingjun-cluster blueprint: its resource graph (eflo cluster, group and nodes in the training VPC, an ACK Lingjun
node pool naming them), its plan lines, and bad input refused with exit 2 naming field, value and what is allowed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from blueprints.architectures.lingjun_cluster.spec import fee_tier
from blueprints.cli.main import app
from blueprints.kinds import kind_of
from blueprints.testing import offline_plan

runner = CliRunner()
PRESET = "lingjun-training"


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
    out = refused("cpfs.file_system_id=bmcpfs-290w65p03ok64ya", "cpfs.region=cn-hangzhou", "cpfs.hpn_zone=A1")
    assert "cpfs.region = 'cn-hangzhou': is not the profile's region cn-wulanchabu" in out


def test_a_bmcpfs_in_another_hpn_zone_is_refused():
    out = refused("cpfs.file_system_id=bmcpfs-290w65p03ok64ya", "cpfs.region=cn-wulanchabu", "cpfs.hpn_zone=B1")
    assert "cpfs.hpn_zone = 'B1': differs from compute.hpn_zone A1" in out


def test_a_malformed_bmcpfs_id_is_refused():
    out = refused("cpfs.file_system_id=cpfs-123456", "cpfs.region=cn-wulanchabu", "cpfs.hpn_zone=A1")
    assert "cpfs.file_system_id = 'cpfs-123456': is not a CPFS for Lingjun id" in out


def test_a_profile_without_the_node_spec_the_api_does_not_publish_is_refused():
    out = refused("compute.node=")
    assert "compute.node" in out


def test_a_profile_without_the_node_group_image_is_refused():
    out = refused("compute.node_image_id=")
    assert "compute.node_image_id" in out


def test_subscription_needs_its_term_and_gets_it_on_every_node():
    out = refused("compute.payment_type=Subscription")
    assert "period_months = None: is the term of a Subscription node" in out
    plan = offline_plan(PRESET, overrides={"compute": {"payment_type": "Subscription", "period_months": 12}})
    nodes = of_type(plan, "eflo.Node")
    assert {(n.inputs["paymentType"], n.inputs["period"]) for n in nodes} == {("Subscription", 12)}


def test_an_existing_cpfs_for_lingjun_is_exported(plan):
    with_cpfs = offline_plan(
        PRESET,
        overrides={"cpfs": {"file_system_id": "bmcpfs-290w65p03ok64ya", "region": "cn-wulanchabu", "hpn_zone": "A1"}},
    )
    assert with_cpfs.outputs["cpfs_for_lingjun_id"] == "bmcpfs-290w65p03ok64ya"
    assert "bmcpfs-290w65p03ok64ya" in with_cpfs.summary["cpfs_for_lingjun"]
    assert "cpfs_for_lingjun_id" not in plan.outputs


def test_ecs_blueprints_still_refuse_a_lingjun_machine_type():
    result = runner.invoke(app, ["plan", "kubernetes-training", "--set", "compute.instance_type=efg1.nvga8n"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "compute.instance_type" in result.output
