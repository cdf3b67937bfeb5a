"""Pricing a plan in CNY: lines from the resources' inputs, unknown never 0, pool scenarios, catalog checks."""

from __future__ import annotations

import shutil

import pytest

from blueprints.catalog import CATALOG_DIR, instance_price, load_catalog
from blueprints.catalog.loader import _load
from blueprints.review.costing import HOURS_PER_MONTH, CostContext, price_plan
from blueprints.review.plan import PlannedResource

CATALOG = load_catalog()
GN7E = instance_price(CATALOG, "ecs.gn7e-c16g1.32xlarge", "cn-shanghai").cny
RATE = CATALOG.price("usd_cny", None, "cn-shanghai")[0].amount  # type: ignore[index]


def res(type_: str, name: str, **inputs: object) -> PlannedResource:
    """A custom resource with these inputs."""
    return PlannedResource(type=type_, name=name, parent=None, custom=True, inputs=dict(inputs))


def cluster(amount: int) -> list[PlannedResource]:
    """A node batch with its launch template (system disk) and a scratch data disk."""
    return [
        res(
            "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate",
            "t",
            systemDisk={"category": "cloud_essd", "performanceLevel": "PL1", "size": 200},
        ),
        res(
            "alicloud:ecs/ecsInstanceSet:EcsInstanceSet",
            "nodes",
            amount=amount,
            instanceType="ecs.gn7e-c16g1.32xlarge",
            launchTemplateId="${t.id}",
            dataDisks=[{"diskCategory": "cloud_essd", "diskSize": 3000, "performanceLevel": "PL1"}],
        ),
    ]


def pool(min_size: int, max_size: int) -> list[PlannedResource]:
    """A scaling group and its configuration, linked as the offline plan records it."""
    return [
        res("alicloud:ess/scalingGroup:ScalingGroup", "group", minSize=min_size, maxSize=max_size),
        res(
            "alicloud:ess/scalingConfiguration:ScalingConfiguration",
            "config",
            scalingGroupId="${group.id}",
            instanceType="ecs.gn7e-c16g1.32xlarge",
        ),
    ]


NAT = res("alicloud:vpc/natGateway:NatGateway", "nat", natType="Enhanced")
EXTREME = res(
    "alicloud:nas/fileSystem:FileSystem", "fs", fileSystemType="extreme", storageType="standard", capacity=32768
)


def line(costs: dict, item_start: str) -> dict:
    """The one line whose item starts with ``item_start``."""
    found = [x for x in costs["lines"] if x["item"].startswith(item_start)]
    assert len(found) == 1, [x["item"] for x in costs["lines"]]
    return found[0]


def test_node_batch_is_amount_times_the_list_price_for_730_hours():
    costs = price_plan(cluster(12), CATALOG, "cn-shanghai")
    compute = line(costs, "12 × ecs.gn7e-c16g1.32xlarge")
    assert GN7E == pytest.approx(277.93)
    assert compute["cny_per_hour"] == pytest.approx(12 * 277.93, abs=0.01)
    assert compute["cny_per_month"] == pytest.approx(12 * 277.93 * 730, abs=0.1)
    assert (compute["status"], compute["billing"], compute["date"]) == ("list", "hourly", "2023-06")
    assert costs["hours_per_month"] == HOURS_PER_MONTH == 730
    assert costs["totals"]["cny_per_hour"] == pytest.approx(12 * 277.93, abs=0.01)


def test_disks_are_lines_per_node_and_an_unknown_disk_price_keeps_the_total_incomplete():
    costs = price_plan(cluster(12), CATALOG, "cn-shanghai")
    system, data = line(costs, "12 × system disk"), line(costs, "12 × data disk")
    assert (system["quantity"], data["quantity"]) == (12 * 200, 12 * 3000)
    # No ECS disk price was found: unknown, named, and not counted as zero.
    assert system["cny_per_month"] is None and system["status"] == "unknown"
    totals = costs["totals"]
    assert totals["complete"] is False
    assert "nodes: 12 × system disk ESSD PL1 200 GiB" in totals["unknown"]
    assert "nodes: 12 × data disk data disk ESSD PL1 3000 GiB" in totals["unknown"]
    assert totals["cny_per_month"] == pytest.approx(12 * 277.93 * 730, abs=0.1)


def test_usd_prices_are_converted_only_with_the_catalogs_rate_and_say_so():
    costs = price_plan([NAT, EXTREME], CATALOG, "cn-shanghai")
    nat = line(costs, "NAT gateway instance fee")
    assert nat["status"] == "converted"
    assert nat["cny_per_hour"] == pytest.approx(0.034 * RATE, abs=0.01)
    assert "CNY/USD" in nat["source"] and "billing-of-internet-nat-gateways" in nat["source"]
    fs = line(costs, "extreme standard 32768 GiB")
    assert fs["cny_per_month"] == pytest.approx(32768 * 0.3 * RATE, abs=0.1)
    # The Extreme NAS price is a Hangzhou example: applied to Shanghai, and the line says so.
    assert "applied to cn-shanghai" in fs["source"]
    assert line(costs, "NAT gateway CU fee")["cny_per_month"] is None


def test_without_an_exchange_rate_a_usd_price_is_unknown(tmp_path):
    directory = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, directory)
    prices = directory / "prices.csv"
    prices.write_text(
        "\n".join(x for x in prices.read_text(encoding="utf-8").splitlines() if not x.startswith("usd_cny")) + "\n",
        encoding="utf-8",
    )
    costs = price_plan([NAT], _load(directory), "cn-shanghai")
    nat = line(costs, "NAT gateway instance fee")
    assert (nat["cny_per_hour"], nat["status"]) == (None, "unknown")
    assert costs["totals"]["cny_per_month"] == 0 and costs["totals"]["complete"] is False


def test_every_priced_line_has_source_and_date():
    costs = price_plan(
        [*cluster(2), NAT, EXTREME, res("alicloud:oss/bucket:Bucket", "b", storageClass="Standard")],
        CATALOG,
        "cn-shanghai",
    )
    priced = [x for x in costs["lines"] if x["unit_price_cny"] is not None]
    assert len(priced) >= 4
    for x in priced:
        assert x["source"] and x["date"], x


def test_a_parked_cluster_has_no_compute_line():
    costs = price_plan([*cluster(0), NAT], CATALOG, "cn-shanghai")
    assert [x["type"] for x in costs["lines"]] == ["vpc.NatGateway", "vpc.NatGateway"]


def test_bucket_is_usage_billed_unless_the_dataset_size_is_known():
    bucket = res("alicloud:oss/bucket:Bucket", "b", storageClass="Standard")
    usage = line(price_plan([bucket], CATALOG, "cn-shanghai"), "OSS Standard")
    per_gib = 0.12 * 2**30 / 1e9  # the official 0.12 CNY per GB-month, recorded per GiB
    assert (usage["billing"], usage["cny_per_month"]) == ("usage", None) and usage["unit_price_cny"] == pytest.approx(
        per_gib, rel=1e-5
    )
    sized = line(
        price_plan([bucket], CATALOG, "cn-shanghai", scenarios_context=CostContext(dataset_gib=1000)), "OSS Standard"
    )
    assert sized["cny_per_month"] == pytest.approx(1000 * per_gib, rel=1e-5)


def test_pool_scenarios_min_below_schedule_below_max():
    ctx = CostContext(working_hours_per_month=217.3)
    costs = price_plan([*pool(1, 8), NAT], CATALOG, "cn-shanghai", scenarios_context=ctx)
    at_min, at_max, schedule = costs["scenarios"]
    nat_month = line(costs, "NAT gateway instance fee")["cny_per_month"]
    assert at_min["cny_per_month"] == pytest.approx(nat_month + 1 * 277.93 * 730, abs=0.1)
    assert at_max["cny_per_month"] == pytest.approx(nat_month + 8 * 277.93 * 730, abs=0.1)
    assert schedule["cny_per_month"] == pytest.approx(nat_month + 8 * 277.93 * 217.3, abs=0.1)
    assert at_min["cny_per_month"] < schedule["cny_per_month"] < at_max["cny_per_month"]
    assert "none outside" in schedule["name"]
    # The pool's own line is quoted at its minimum size, with its range.
    assert line(costs, "1 × ecs.gn7e")["resource"] == "group"
    assert line(costs, "1 × ecs.gn7e")["item"] == "1 × ecs.gn7e-c16g1.32xlarge (scales 1–8; at min)"


def test_pool_at_min_zero_is_a_zero_line_and_still_prices_its_max():
    costs = price_plan(pool(0, 4), CATALOG, "cn-shanghai")
    node = line(costs, "0 × ecs.gn7e-c16g1.32xlarge")
    assert (node["resource"], node["item"], node["cny_per_month"]) == (
        "group",
        "0 × ecs.gn7e-c16g1.32xlarge (scales 0–4; at min)",
        0.0,
    )
    assert [s["cny_per_month"] for s in costs["scenarios"]] == [0, pytest.approx(4 * 277.93 * 730, abs=0.1)]
    assert [s["complete"] for s in costs["scenarios"]] == [True, True]


def unpriced_pool(min_size: int, max_size: int) -> list[PlannedResource]:
    """A scaling group of a type the catalog has no price for (ebmgn7ex)."""
    assert not CATALOG.prices_of("ecs.ebmgn7ex.32xlarge")
    return [
        res("alicloud:ess/scalingGroup:ScalingGroup", "group", minSize=min_size, maxSize=max_size),
        res(
            "alicloud:ess/scalingConfiguration:ScalingConfiguration",
            "config",
            scalingGroupId="${group.id}",
            instanceType="ecs.ebmgn7ex.32xlarge",
        ),
    ]


def test_a_pool_of_an_unpriced_type_is_a_line_and_its_max_is_incomplete_naming_it():
    costs = price_plan([*unpriced_pool(0, 8), NAT], CATALOG, "cn-shanghai")
    node = line(costs, "0 × ecs.ebmgn7ex.32xlarge")
    # 0 nodes cost ¥0 whatever a node costs; the status still says the price is unknown.
    assert (node["resource"], node["cny_per_month"], node["status"]) == ("group", 0.0, "unknown")
    at_min, at_max = costs["scenarios"]
    assert (at_min["complete"], at_min["unpriced_nodes"]) == (False, [])  # the NAT's CU fee is unknown
    assert at_max["complete"] is False
    assert at_max["unpriced_nodes"] == ["group: 8 × ecs.ebmgn7ex.32xlarge"]
    # The unpriced nodes add nothing: at max is the rest of the plan, and says it is incomplete.
    assert at_max["cny_per_month"] == at_min["cny_per_month"]


def test_a_pool_above_zero_of_an_unpriced_type_keeps_the_totals_incomplete():
    costs = price_plan(unpriced_pool(1, 8), CATALOG, "cn-shanghai")
    assert costs["totals"]["complete"] is False
    assert "group: 1 × ecs.ebmgn7ex.32xlarge (scales 1–8; at min)" in costs["totals"]["unknown"]
    assert [s["unpriced_nodes"] for s in costs["scenarios"]] == [
        ["group: 1 × ecs.ebmgn7ex.32xlarge"],
        ["group: 8 × ecs.ebmgn7ex.32xlarge"],
    ]


def test_fixed_cluster_has_no_scenarios_and_run_cost_uses_run_hours():
    costs = price_plan(cluster(12), CATALOG, "cn-shanghai", run_hours=40)
    assert costs["scenarios"] == []
    assert costs["totals"]["cny_per_run"] == pytest.approx(12 * 277.93 * 40, abs=0.1)
    assert price_plan(cluster(12), CATALOG, "cn-shanghai")["totals"]["cny_per_run"] is None


def _with_price_row(tmp_path, row: str):
    directory = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, directory)
    with (directory / "prices.csv").open("a", encoding="utf-8") as handle:
        handle.write(row + "\n")
    line_no = len((directory / "prices.csv").read_text(encoding="utf-8").splitlines())
    return directory, line_no


@pytest.mark.parametrize(
    ("row", "column", "message"),
    [
        (
            "essd,PL9,*,0,CNY,GiB-month,unknown,https://example.com,2026-11-30,",
            "amount",
            "must be empty exactly when status is unknown (an unknown price is never 0)",
        ),
        (
            "essd,PL9,*,,CNY,GiB-month,official,https://example.com,2026-11-30,",
            "amount",
            "must be empty exactly when status is unknown (an unknown price is never 0)",
        ),
        (
            "essd,PL9,*,1,EUR,GiB-month,official,https://example.com,2026-11-30,",
            "currency",
            "must be one of CNY, USD (got 'EUR')",
        ),
        (
            "essd,PL9,*,1,CNY,GiB-month,guessed,https://example.com,2026-11-30,",
            "status",
            "must be one of official, third-party, converted, unknown (got 'guessed')",
        ),
        (
            "essd,PL1,*,1,CNY,GiB-month,official,https://example.com,2026-11-30,",
            "region_scope",
            "duplicate essd/PL1 for *",
        ),
    ],
)
def test_loader_rejects_a_bad_price_row(tmp_path, row, column, message):
    directory, line_no = _with_price_row(tmp_path, row)
    with pytest.raises(ValueError) as excinfo:
        _load(directory)
    text = str(excinfo.value)
    assert text.startswith(f"prices.csv line {line_no}, column {column!r}: "), text
    assert message.split(" (first")[0] in text


def test_a_row_for_the_region_wins_over_a_row_for_every_region(tmp_path):
    directory, _ = _with_price_row(
        tmp_path, "essd,PL1,cn-shanghai,1.5,CNY,GiB-month,official,https://example.com/price,2026-11-30,"
    )
    costs = price_plan(cluster(2), _load(directory), "cn-shanghai")
    system = line(costs, "2 × system disk")
    assert (system["cny_per_month"], system["status"], system["source"]) == (
        2 * 200 * 1.5,
        "list",
        "https://example.com/price",
    )
    other = line(price_plan(cluster(2), _load(directory), "cn-beijing"), "2 × system disk")
    assert other["cny_per_month"] is None


def test_plan_costs_and_summary_agree(medical_plan, autoscaling_plan):
    costs = medical_plan.costs
    assert costs["currency"] == "CNY" and costs["totals"]["complete"] is False
    compute = line(costs, "12 × ecs.gn7e-c16g1.32xlarge")
    assert medical_plan.summary["compute_cny_per_hour"] == compute["cny_per_hour"]
    fs = [x for x in costs["lines"] if x["type"] == "nas.FileSystem"][0]
    assert medical_plan.summary["storage_cny_per_month"] == fs["cny_per_month"] is not None
    assert "storage_price" not in medical_plan.summary
    # The pool's schedule comes from its blueprint: 10 working hours × 5/7 of 365/12 days.
    names = [s["name"] for s in autoscaling_plan.costs["scenarios"]]
    assert names[:2] == ["at min", "at max"] and "217.3 working hours" in names[2]


def test_run_hours_must_be_positive():
    from tests.test_profile import medical, problems

    data = medical()
    data["cost"] = {**data.get("cost", {}), "run_hours": -3}
    (found,) = [p for p in problems(data) if p.path == "cost.run_hours"]
    assert found.value == -3 and "greater than 0" in found.message


def test_an_unpriced_item_on_many_resources_is_named_once_with_the_count():
    """Per-node instances (eRDMA): 5 nodes' unpriced disks are one entry each, 3 or fewer are listed one by one."""

    def nodes(count: int) -> list[PlannedResource]:
        return [
            res(
                "alicloud:ecs/instance:Instance",
                f"node-{i}",
                instanceType="ecs.gn7e-c16g1.32xlarge",
                systemDiskCategory="cloud_essd",
                systemDiskSize=200,
            )
            for i in range(count)
        ]

    many = price_plan(nodes(5), CATALOG, "cn-shanghai")["totals"]
    assert [u for u in many["unknown"] if "system disk" in u] == ["node-0 and 4 more: 1 × system disk ESSD PL1 200 GiB"]
    few = price_plan(nodes(3), CATALOG, "cn-shanghai")["totals"]
    assert [u for u in few["unknown"] if "system disk" in u] == [
        f"node-{i}: 1 × system disk ESSD PL1 200 GiB" for i in range(3)
    ]
    assert many["complete"] is False and few["complete"] is False


def test_a_per_node_instance_is_priced_like_one_node_of_a_batch():
    """eRDMA clusters and the login node are single ecs.Instance resources: compute per hour, disks per month."""
    node = res(
        "alicloud:ecs/instance:Instance",
        "node-0",
        instanceType="ecs.gn7e-c16g1.32xlarge",
        systemDiskCategory="cloud_essd",
        systemDiskSize=200,
        systemDiskPerformanceLevel="PL1",
    )
    costs = price_plan([node], CATALOG, "cn-shanghai")
    compute = line(costs, "1 × ecs.gn7e-c16g1.32xlarge")
    assert compute["cny_per_month"] == pytest.approx(277.93 * 730, abs=0.1) and compute["resource"] == "node-0"
    assert line(costs, "1 × system disk ESSD PL1 200 GiB")["cny_per_month"] is None


def test_a_type_without_a_catalog_price_is_unknown_and_says_why():
    node = res("alicloud:ecs/instance:Instance", "node-0", instanceType="ecs.ebmgn7ex.32xlarge")
    compute = line(price_plan([node], CATALOG, "cn-shanghai"), "1 × ecs.ebmgn7ex.32xlarge")
    assert (compute["cny_per_hour"], compute["status"], compute["source"]) == (
        None,
        "unknown",
        "no price for ecs.ebmgn7ex.32xlarge in the catalog's instance_prices.csv "
        "(`aitrain catalog refresh --type ecs.ebmgn7ex.32xlarge` asks Alibaba for your account's)",
    )


def test_a_plan_in_another_mainland_region_uses_the_mainland_price_and_says_so():
    node = res("alicloud:ecs/instance:Instance", "node-0", instanceType="ecs.gn7e-c16g1.32xlarge")
    compute = line(price_plan([node], CATALOG, "cn-beijing"), "1 × ecs.gn7e-c16g1.32xlarge")
    assert compute["cny_per_hour"] == GN7E
    assert compute["source"].endswith(
        "; cn-shanghai price applied to cn-beijing, which has no row in instance_prices.csv "
        "(prices may differ by region, https://help.aliyun.com/document_detail/163808.html)"
    )


def test_a_plan_outside_the_mainland_never_gets_a_mainland_price():
    node = res("alicloud:ecs/instance:Instance", "node-0", instanceType="ecs.gn7e-c16g1.32xlarge")
    compute = line(price_plan([node], CATALOG, "ap-southeast-1"), "1 × ecs.gn7e-c16g1.32xlarge")
    assert (compute["cny_per_hour"], compute["status"]) == (None, "unknown")
    assert compute["source"].startswith(
        "no price for ecs.gn7e-c16g1.32xlarge in ap-southeast-1: instance_prices.csv prices it only in cn-shanghai "
        "(the Chinese mainland), and a mainland price is never applied outside the mainland, nor the reverse"
    )


def test_an_eip_pays_the_association_fee_only_when_bound_to_the_nat():
    eip = res("alicloud:ecs/eipAddress:EipAddress", "eip")
    to_nat = res(
        "alicloud:ecs/eipAssociation:EipAssociation",
        "assoc",
        allocationId="${eip.id}",
        instanceType="Nat",
        instanceId="${nat.id}",
    )
    to_host = res(
        "alicloud:ecs/eipAssociation:EipAssociation",
        "assoc",
        allocationId="${eip.id}",
        instanceType="EcsInstance",
        instanceId="${login.id}",
    )
    bound = [x["item"] for x in price_plan([eip, to_nat], CATALOG, "cn-shanghai")["lines"]]
    assert bound == ["EIP configuration fee", "EIP association fee (bound to a NAT gateway)"]
    assert [x["item"] for x in price_plan([eip, to_host], CATALOG, "cn-shanghai")["lines"]] == ["EIP configuration fee"]
    assert all(
        x["cny_per_hour"] is None for x in price_plan([eip, to_nat], CATALOG, "cn-shanghai")["lines"]
    )  # no EIP price was found


def test_provisioned_storage_is_monthly_and_general_purpose_nas_bills_usage():
    fs = line(price_plan([EXTREME], CATALOG, "cn-shanghai"), "extreme standard 32768 GiB")
    assert fs["billing"] == "monthly" and fs["cny_per_hour"] == pytest.approx(32768 * 0.3 * RATE / 730, abs=0.01)
    nas = res("alicloud:nas/fileSystem:FileSystem", "nas", fileSystemType="standard", storageType="Capacity")
    usage = line(price_plan([nas], CATALOG, "cn-shanghai"), "standard Capacity per GiB used")
    assert (usage["billing"], usage["quantity"], usage["cny_per_month"]) == ("usage", 0, None)
    assert usage["unit_price_cny"] == pytest.approx(0.06 * RATE, abs=0.001)


def test_an_item_missing_from_the_catalog_is_unknown_and_named(tmp_path):
    directory = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, directory)
    prices = directory / "prices.csv"
    prices.write_text(
        "\n".join(x for x in prices.read_text(encoding="utf-8").splitlines() if not x.startswith("nat_instance"))
        + "\n",
        encoding="utf-8",
    )
    nat = line(price_plan([NAT], _load(directory), "cn-shanghai"), "NAT gateway instance fee")
    assert (nat["cny_per_hour"], nat["source"]) == (None, "no row for nat_instance in the catalog's prices.csv")


def test_run_hours_come_from_the_blueprints_context_when_not_given():
    costs = price_plan(cluster(1), CATALOG, "cn-shanghai", scenarios_context=CostContext(run_hours=10))
    assert costs["totals"]["run_hours"] == 10 and costs["totals"]["cny_per_run"] == pytest.approx(277.93 * 10, abs=0.01)


def test_the_summary_has_no_storage_cost_without_a_file_system():
    from blueprints.review.costing import storage_summary

    assert storage_summary(price_plan(cluster(1), CATALOG, "cn-shanghai")) == {}
