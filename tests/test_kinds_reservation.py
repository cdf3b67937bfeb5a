"""Reserved capacity (ecs.CapacityReservation, ecs.ElasticityAssurance): a capacity reservation's line is its idle part
at the type's pay-as-you-go price (the nodes that name it are priced on their own lines), an elasticity assurance's fee
is an unknown line with its reason, both export to Terraform under the provider's names, and a ForceNew input of the
provider's docs is reported as replacing by the diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blueprints.catalog import instance_price, load_catalog
from blueprints.export import load_terraform_names, to_terraform
from blueprints.export.names import tf_identifier
from blueprints.kinds import Role, kind_of
from blueprints.kinds.ecs import EA_FEE_NOT_IN_CATALOG
from blueprints.review.costing import HOURS_PER_MONTH, price_plan
from blueprints.review.diff.compare import diff_plans
from blueprints.review.diff.replacement import replacement_table
from blueprints.review.plan import Plan, PlannedResource
from blueprints.review.render import key_properties

CATALOG = load_catalog()
REGION = "cn-shanghai"
GPU = "ecs.gn7e-c16g1.32xlarge"
PRICE = instance_price(CATALOG, GPU, REGION).cny  # the catalog's pay-as-you-go CNY per node-hour
UNPRICED = "ecs.ebmgn7ex.32xlarge"  # no row in instance_prices.csv (tests/test_costing.py checks it stays so)
CR = "alicloud:ecs/capacityReservation:CapacityReservation"
EA = "alicloud:ecs/elasticityAssurance:ElasticityAssurance"
INSTANCE = "alicloud:ecs/instance:Instance"
POOL = "alicloud:cs/nodePool:NodePool"


def res(type_: str, name: str, **inputs: object) -> PlannedResource:
    return PlannedResource(type=type_, name=name, parent=None, custom=True, inputs=dict(inputs))


def reservation(amount: int = 12, instance_type: str = GPU, name: str = "reservation") -> PlannedResource:
    return res(
        CR,
        name,
        instanceType=instance_type,
        instanceAmount=amount,
        zoneIds=["cn-shanghai-b"],
        matchCriteria="Target",
        endTimeType="Unlimited",
    )


def nodes(count: int, pool: str | None = "reservation", instance_type: str = GPU) -> list[PlannedResource]:
    """``count`` ecs.Instance nodes drawing from ``pool`` in Target mode (none: no private pool)."""
    drawing = {"privatePoolOptionsMatchCriteria": "Target", "privatePoolOptionsId": f"${{{pool}.id}}"} if pool else {}
    return [res(INSTANCE, f"node-{pool}-{i}", instanceType=instance_type, **drawing) for i in range(count)]


def assurance(**inputs: object) -> PlannedResource:
    return res(
        EA,
        "assurance",
        **{
            "instanceType": GPU,
            "instanceAmount": 4,
            "zoneIds": ["cn-shanghai-b"],
            "privatePoolOptionsMatchCriteria": "Target",
            "period": 1,
            "periodUnit": "Month",
            **inputs,
        },
    )


def lines_of(costs: dict, name: str) -> list[dict]:
    return [line for line in costs["lines"] if line["resource"] == name]


def reserved_line(resources: list[PlannedResource], name: str = "reservation") -> tuple[dict, dict]:
    costs = price_plan(resources, CATALOG, REGION)
    (line,) = lines_of(costs, name)
    return line, costs


# ---- a capacity reservation: the idle part at the pay-as-you-go price ----


def test_a_reservation_fully_drawn_has_an_idle_line_of_zero():
    assert PRICE is not None and PRICE > 0
    line, costs = reserved_line([reservation(12), *nodes(12)])
    assert line["item"] == f"capacity reservation {GPU}: 12 reserved, 12 drawn by nodes, 0 idle"
    assert (line["quantity"], line["unit"], line["billing"]) == (0, "node-hour", "hourly")
    assert line["unit_price_cny"] == pytest.approx(PRICE)
    assert (line["cny_per_hour"], line["cny_per_month"]) == (0, 0)
    # The nodes carry the price: together the plan bills the 12 reserved nodes once, not twice.
    assert costs["totals"]["cny_per_hour"] == pytest.approx(12 * PRICE, abs=0.01)
    assert costs["totals"]["complete"] is True


def test_a_reservation_with_nine_drawn_bills_three_idle_nodes():
    line, costs = reserved_line([reservation(12), *nodes(9)])
    assert line["item"] == f"capacity reservation {GPU}: 12 reserved, 9 drawn by nodes, 3 idle"
    assert line["quantity"] == 3
    assert line["cny_per_hour"] == pytest.approx(3 * PRICE, abs=0.01)
    assert line["cny_per_month"] == pytest.approx(3 * PRICE * HOURS_PER_MONTH, abs=0.05)
    assert (line["status"], line["source"]) == (
        instance_price(CATALOG, GPU, REGION).status,
        instance_price(CATALOG, GPU, REGION).source,
    )
    # "billed at the pay-as-you-go rate ... regardless of whether you create pay-as-you-go instances in it".
    assert costs["totals"]["cny_per_hour"] == pytest.approx(12 * PRICE, abs=0.01)


def test_a_reservation_no_node_draws_from_is_idle_whole_and_says_so():
    line, _ = reserved_line([reservation(12), *nodes(2, pool=None), *nodes(3, pool="another")])
    assert line["item"] == (
        f"capacity reservation {GPU}: 12 reserved, 0 drawn by nodes, 12 idle"
        " (the whole reservation is idle: no node in the plan draws from it)"
    )
    assert line["cny_per_hour"] == pytest.approx(12 * PRICE, abs=0.01)


def test_only_the_nodes_naming_this_reservation_are_drawn_from_it():
    resources = [reservation(12), reservation(4, name="another"), *nodes(5), *nodes(4, pool="another")]
    costs = price_plan(resources, CATALOG, REGION)
    (mine,), (other,) = lines_of(costs, "reservation"), lines_of(costs, "another")
    assert "12 reserved, 5 drawn by nodes, 7 idle" in mine["item"]
    assert "4 reserved, 4 drawn by nodes, 0 idle" in other["item"]


def test_more_nodes_than_reserved_is_no_negative_idle():
    line, _ = reserved_line([reservation(2), *nodes(3)])
    assert line["item"].endswith("2 reserved, 3 drawn by nodes, 0 idle (1 more nodes name it than it reserves)")
    assert line["cny_per_hour"] == 0


def pool(name: str, **inputs: object) -> PlannedResource:
    return res(
        POOL,
        name,
        instanceTypes=[GPU],
        privatePoolOptions={"privatePoolOptionsMatchCriteria": "Target", "privatePoolOptionsId": "${reservation.id}"},
        **inputs,
    )


@pytest.mark.parametrize(
    "node_pool, drawn, note",
    [
        (pool("fixed", desiredSize=8), 8, ""),
        (
            pool("scaling", scalingConfig={"enable": True, "minSize": 2, "maxSize": 10}),
            2,
            "; a scaling pool counts at its minimum, as its own lines do",
        ),
    ],
    ids=["desired size", "scaling at min"],
)
def test_a_node_pool_draws_the_nodes_its_own_lines_are_priced_at(node_pool, drawn, note):
    line, costs = reserved_line([reservation(12), node_pool])
    assert line["item"] == f"capacity reservation {GPU}: 12 reserved, {drawn} drawn by nodes, {12 - drawn} idle{note}"
    # The node pool's kind (blueprints/kinds/cs.py) prices the same number of nodes: the two lines add up.
    (compute,) = [x for x in lines_of(costs, node_pool.name) if x["unit"] == "node-hour"]
    assert compute["quantity"] == drawn
    assert costs["totals"]["cny_per_hour"] == pytest.approx(12 * PRICE, abs=0.01)


def test_an_unpriced_type_is_an_unknown_line_with_the_reason_never_zero():
    assert instance_price(CATALOG, UNPRICED, REGION).cny is None
    line, costs = reserved_line([reservation(12, UNPRICED), *nodes(9, instance_type=UNPRICED)])
    assert line["item"] == f"capacity reservation {UNPRICED}: 12 reserved, 9 drawn by nodes, 3 idle"
    assert (line["cny_per_hour"], line["cny_per_month"], line["status"]) == (None, None, "unknown")
    assert line["source"] == instance_price(CATALOG, UNPRICED, REGION).source
    assert f"no price for {UNPRICED}" in line["source"]
    assert costs["totals"]["complete"] is False
    assert f"reservation: {line['item']}" in costs["totals"]["unknown"]


def test_a_reservation_without_a_type_or_an_amount_is_unknown():
    line, _ = reserved_line([res(CR, "reservation", instanceAmount=2)])
    assert (line["cny_per_hour"], line["source"]) == (None, "the reservation names no instanceType")
    line, _ = reserved_line([res(CR, "reservation", instanceType=GPU, instanceAmount="${count.result}")])
    assert line["cny_per_hour"] is None and "instanceAmount not in the plan" in line["item"]


# ---- an elasticity assurance: the fee is not in the catalog ----


def test_an_elasticity_assurance_fee_is_unknown_with_the_reason():
    costs = price_plan([assurance(), *nodes(4, pool="assurance")], CATALOG, REGION)
    (line,) = lines_of(costs, "assurance")
    assert line["item"] == (
        f"elasticity assurance {GPU} × 4 for 1 Month: assurance fee, paid once for the term, not refunded"
    )
    assert (line["cny_per_hour"], line["cny_per_month"], line["unit_price_cny"]) == (None, None, None)
    assert (line["status"], line["source"], line["billing"]) == ("unknown", EA_FEE_NOT_IN_CATALOG, "upfront")
    assert EA_FEE_NOT_IN_CATALOG == (
        "the elasticity assurance fee is not in the catalog: Alibaba quotes it per order (ECS console / "
        "DescribePrice); instances drawing from it are billed as pay-as-you-go instances"
    )
    assert costs["totals"]["complete"] is False and f"assurance: {line['item']}" in costs["totals"]["unknown"]
    # Its nodes are priced as pay-as-you-go nodes, as any other.
    assert costs["totals"]["cny_per_hour"] == pytest.approx(4 * PRICE, abs=0.01)


def test_an_assurance_without_a_term_reads_the_apis_default_term():
    (line,) = lines_of(price_plan([assurance(period=None, periodUnit=None)], CATALOG, REGION), "assurance")
    assert "for 1 Year:" in line["item"]


# ---- the record itself ----


@pytest.mark.parametrize("token", [CR, EA])
def test_reserved_capacity_runs_no_node_holds_no_data_and_holds_capacity(token):
    kind = kind_of(token)
    assert kind is not None
    assert not kind.has(Role.COMPUTE_GROUP) and not kind.has(Role.STATEFUL)
    assert kind.roles == frozenset({Role.CAPACITY_HOLD})  # what AIT041 and the yearly cost read


def test_the_plan_table_shows_the_key_properties():
    assert key_properties(reservation(12)) == {
        "instanceType": GPU,
        "instanceAmount": 12,
        "zoneIds": ["cn-shanghai-b"],
        "matchCriteria": "Target",
        "endTimeType": "Unlimited",
    }
    assert list(key_properties(assurance())) == [
        "instanceType",
        "instanceAmount",
        "zoneIds",
        "privatePoolOptionsMatchCriteria",
        "period",
        "periodUnit",
    ]


# ---- Terraform export ----


def tiny_plan(*resources: PlannedResource) -> Plan:
    return Plan("t", REGION, "t", {}, (), tuple(resources))


DOCUMENTED = json.loads((Path(__file__).parent / "data" / "terraform_arguments.json").read_text(encoding="utf-8"))[
    "arguments"
]


def test_both_export_under_the_providers_resource_names_and_arguments():
    cr, ea = reservation(12), assurance()
    (node,) = nodes(1)
    document = to_terraform(tiny_plan(cr, ea, node))
    names = load_terraform_names()
    assert (names.of(CR).tf_type, names.of(EA).tf_type) == (
        "alicloud_ecs_capacity_reservation",
        "alicloud_ecs_elasticity_assurance",
    )
    cr_body = document["resource"]["alicloud_ecs_capacity_reservation"][tf_identifier("reservation")]
    assert cr_body == {
        "instance_type": GPU,
        "instance_amount": 12,
        "zone_ids": ["cn-shanghai-b"],
        "match_criteria": "Target",
        "end_time_type": "Unlimited",
    }
    ea_body = document["resource"]["alicloud_ecs_elasticity_assurance"][tf_identifier("assurance")]
    # instance_type is a list in the provider's schema (MaxItems 1, flattened to a string by the bridge).
    assert ea_body == {
        "instance_type": [GPU],
        "instance_amount": 4,
        "zone_ids": ["cn-shanghai-b"],
        "private_pool_options_match_criteria": "Target",
        "period": 1,
        "period_unit": "Month",
    }
    for tf_type, body in (
        ("alicloud_ecs_capacity_reservation", cr_body),
        ("alicloud_ecs_elasticity_assurance", ea_body),
    ):
        assert set(body) <= set(DOCUMENTED[tf_type]), tf_type
    # The node's private pool is the reservation's Terraform id.
    node_body = document["resource"]["alicloud_instance"][tf_identifier(node.name)]
    assert node_body["private_pool_options_id"] == (
        "${alicloud_ecs_capacity_reservation." + tf_identifier("reservation") + ".id}"
    )


# ---- replacing inputs: the provider docs' ForceNew marks ----


def as_dict(*resources: PlannedResource) -> dict:
    return json.loads(tiny_plan(*resources).to_json())


def test_a_changed_instance_type_replaces_the_reservation_its_amount_does_not():
    before = as_dict(reservation(12))
    (change,) = diff_plans(before, as_dict(reservation(12, "ecs.gn7i-c8g1.2xlarge"))).changes
    assert (change.action, change.replacing, change.certain) == ("replace", ("instanceType",), True)
    (change,) = diff_plans(before, as_dict(reservation(16))).changes
    assert (change.action, change.replacing) == ("update", ())


def test_the_assurance_replaces_on_its_type_and_zone_and_resizes_in_place():
    before = as_dict(assurance())
    (change,) = diff_plans(before, as_dict(assurance(zoneIds=["cn-shanghai-c"]))).changes
    assert (change.action, change.replacing) == ("replace", ("zoneIds",))
    # "From version 1.261.0, instance_amount can be modified" (docs at the cited commit): no ForceNew mark.
    (change,) = diff_plans(before, as_dict(assurance(instanceAmount=8))).changes
    assert (change.action, change.replacing) == ("update", ())


def test_the_rows_cite_the_provider_docs_lines():
    table = replacement_table()
    assert table.forcing("ecs.CapacityReservation") == {
        "instanceType",
        "matchCriteria",
        "platform",
        "resourceGroupId",
        "zoneIds",
    }
    assert table.forcing("ecs.ElasticityAssurance") == {
        "assuranceTimes",
        "instanceType",
        "privatePoolOptionsMatchCriteria",
        "resourceGroupId",
        "startTime",
        "zoneIds",
    }
    commit = "aliyun/terraform-provider-alicloud@81c43b6727a09e9da37b3d88818c3ba5fa17fa14:"
    assert table.sources[("ecs.CapacityReservation", "instanceType")] == (
        commit + "website/docs/r/ecs_capacity_reservation.html.markdown#L68"
    )
    assert table.sources[("ecs.ElasticityAssurance", "zoneIds")] == (
        commit + "website/docs/r/ecs_elasticity_assurance.html.markdown#L93"
    )
    # platform: ForceNew in the resource's schema though its docs line omits the mark.
    assert table.sources[("ecs.CapacityReservation", "platform")] == (
        commit + "alicloud/resource_alicloud_ecs_capacity_reservation.go#L78"
    )


# ---- the real program path: the nodes' reference is the reservation's id under the offline mocks ----


def test_nodes_built_with_pulumi_draw_from_the_reservation_they_name():
    import pulumi_alicloud as alicloud

    from blueprints.testing import offline_mocks

    with offline_mocks() as stack:
        held = alicloud.ecs.CapacityReservation(
            "reservation", instance_type=GPU, instance_amount=3, zone_ids=["cn-shanghai-b"], match_criteria="Target"
        )
        for i in range(2):
            alicloud.ecs.Instance(
                f"node-{i}",
                instance_type=GPU,
                private_pool_options_match_criteria="Target",
                private_pool_options_id=held.id,
            )
    line, _ = reserved_line(stack.resources)
    assert line["item"] == f"capacity reservation {GPU}: 3 reserved, 2 drawn by nodes, 1 idle"
    assert line["cny_per_hour"] == pytest.approx(PRICE, abs=0.01)
