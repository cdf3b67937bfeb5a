"""Reserved capacity and all-or-nothing starts of a fixed cluster: what the plan builds (a Target private pool the
nodes draw from), what AIT041 says when a partial start is possible, and the partial case itself under mocks."""

from __future__ import annotations

import dataclasses
import gc
import logging
from typing import Any

import pulumi
import pytest

from blueprints.catalog import load_catalog
from blueprints.core.errors import UserInputError
from blueprints.engine.preview import OfflineMocks, catalog_images, catalog_zones, run_program
from blueprints.engine.program import run
from blueprints.profile.stackconfig import parse_overrides, with_cli_inputs
from blueprints.review import guardrails
from tests.preflight.conftest import plan_of

OWNED = ("AIT041",)  # the rule whose violating cases live here (tests/test_guardrails.py)
MED = "medical-imaging"
ERDMA = ("compute.instance_type=ecs.ebmgn7ex.32xlarge", "compute.scratch_gib=3072")
RESERVED = ("capacity.reservation.kind=capacity_reservation",)


def ait041(plan: Any) -> list[tuple[str, str]]:
    return [(f["resource"], f["message"]) for f in plan.findings if f["rule"] == "AIT041"]


def test_a_reservation_is_held_first_and_every_node_draws_from_it_in_target_mode() -> None:
    plan = plan_of(MED, *RESERVED)
    (pool,) = [r for r in plan.resources if r.short_type == "ecs.CapacityReservation"]
    assert pool.name == f"{MED}-cluster-reservation" and pool.parent == f"{MED}-cluster"
    assert {
        k: pool.inputs[k] for k in ("instanceType", "instanceAmount", "zoneIds", "matchCriteria", "endTimeType")
    } == {
        "instanceType": "ecs.gn7e-c16g1.32xlarge",
        "instanceAmount": 12,
        "zoneIds": ["cn-shanghai-a"],
        "matchCriteria": "Target",
        "endTimeType": "Unlimited",
    }
    nodes = [r for r in plan.resources if r.short_type == "ecs.Instance" and r.parent == f"{MED}-cluster"]
    assert len(nodes) == 12
    assert not [r for r in plan.resources if r.short_type == "ecs.EcsInstanceSet"]
    for node in nodes:
        assert node.inputs["privatePoolOptionsMatchCriteria"] == "Target"
        assert node.inputs["privatePoolOptionsId"] == f"${{{MED}-cluster-reservation.id}}"
        # Not eRDMA: no ERI and no jumbo-frame setting on these nodes.
        assert "networkInterfaceTrafficMode" not in node.inputs and "enableJumboFrame" not in node.inputs
    assert ait041(plan) == []
    assert plan.summary["all_or_nothing"].startswith("yes: every node starts from the capacity_reservation")
    assert plan.summary["reservation"].startswith("capacity_reservation: 12 × ecs.gn7e-c16g1.32xlarge held")


def test_an_elasticity_assurance_is_bought_by_the_month_or_the_year() -> None:
    def assurance(term: int) -> dict[str, Any]:
        plan = plan_of(
            MED, "capacity.reservation.kind=elasticity_assurance", f"capacity.reservation.term_months={term}"
        )
        (pool,) = [r for r in plan.resources if r.short_type == "ecs.ElasticityAssurance"]
        return pool.inputs

    six, two_years = assurance(6), assurance(24)
    assert (six["period"], six["periodUnit"]) == (6, "Month")
    assert (two_years["period"], two_years["periodUnit"]) == (2, "Year")
    assert six["privatePoolOptionsMatchCriteria"] == "Target" and six["instanceAmount"] == 12
    with pytest.raises(UserInputError, match="must be 1–12 months, or whole years"):
        assurance(18)


def test_a_parked_cluster_holds_no_capacity() -> None:
    plan = plan_of(MED, *RESERVED, "compute.nodes=0")
    assert not [r for r in plan.resources if r.short_type in ("ecs.CapacityReservation", "ecs.Instance")]


@pytest.mark.parametrize(
    ("assignments", "needle"),
    [
        ((*RESERVED, "cost.spot=true"), "serves pay-as-you-go instances only, not spot"),
        ((*RESERVED, "capacity.reservation.nodes=8"), "is fewer than the 12 nodes that draw from it"),
        ((*RESERVED, "compute.nodes=300"), "above aitrain's 256 for such a cluster"),
        (
            ("capacity.reservation.kind=capacity_reservation", "capacity.reservation.term_months=3"),
            "is for an elasticity",
        ),
    ],
)
def test_bad_reservations_are_refused_naming_the_field(assignments: tuple[str, ...], needle: str) -> None:
    with pytest.raises(UserInputError) as caught:
        plan_of(MED, *assignments)
    assert needle in caught.value.render() and "capacity.reservation" in caught.value.render()


def test_a_pool_blueprint_takes_no_reservation() -> None:
    with pytest.raises(UserInputError, match="its nodes do not draw from a reservation in this release"):
        plan_of("autoscaling-training", *RESERVED)


# ---- AIT041: which shapes can start partly ----


def test_one_instance_set_of_at_most_100_nodes_is_all_or_nothing() -> None:
    plan = plan_of(MED)
    assert ait041(plan) == []
    assert plan.summary["all_or_nothing"] == (
        "yes: one RunInstances call for all 12 nodes (ecs.EcsInstanceSet without MinAmount: short stock starts none)"
    )


def test_an_erdma_cluster_without_held_capacity_warns_and_a_reservation_clears_it() -> None:
    plan = plan_of(MED, *ERDMA, "compute.nodes=4")
    assert ait041(plan) == [
        (
            f"{MED}-cluster",
            "4 of its 4 nodes are separate ecs.Instance calls without held capacity: a `pulumi up` that runs out of "
            "stock part-way leaves the nodes it started running and billing",
        )
    ]
    assert plan.summary["all_or_nothing"].startswith("no: 4 nodes are 4 ecs.Instance calls (eRDMA)")
    assert {f["level"] for f in plan.findings if f["rule"] == "AIT041"} == {"warning"}
    held = plan_of(MED, *ERDMA, "compute.nodes=4", *RESERVED)
    assert ait041(held) == []
    # eRDMA nodes that draw from the pool keep their ERI.
    node = next(r for r in held.resources if r.short_type == "ecs.Instance" and r.parent == f"{MED}-cluster")
    assert node.inputs["networkInterfaceTrafficMode"] == "HighPerformance"
    assert node.inputs["privatePoolOptionsMatchCriteria"] == "Target"


def test_more_than_100_nodes_in_instance_sets_warn() -> None:
    plan = plan_of(MED, "compute.nodes=120", "network.vpc_cidr=10.20.0.0/16")
    ((resource, message),) = ait041(plan)
    assert resource == f"{MED}-cluster"
    assert message.startswith("its 120 nodes start in 2 instance sets (RunInstances calls of at most 100)")


def test_a_skip_with_a_reason_accepts_a_partial_start() -> None:
    plan = plan_of(
        MED,
        *ERDMA,
        "compute.nodes=4",
        "guardrails.skip=[{rule: AIT041, reason: a partial start is re-run by hand}]",
    )
    assert ait041(plan) == []
    assert [s["rule"] for s in plan.skipped] == ["AIT041"]


def test_the_rule_ignores_held_capacity_that_is_not_in_the_plan() -> None:
    """A node that names a pool id the plan does not create (a typo, another stack's pool) is not held here."""
    base = plan_of(MED, *ERDMA, "compute.nodes=2", *RESERVED)
    resources = tuple(r for r in base.resources if r.short_type != "ecs.CapacityReservation")
    plan = dataclasses.replace(base, resources=resources)
    assert [f.rule for f in guardrails.check(plan) if f.rule == "AIT041"] == ["AIT041"]


# ---- the partial case itself, under mocks that run out of stock ----


class OutOfStock(OfflineMocks):
    """The cloud's answer when stock runs out: every registration whose name is in ``sold_out`` fails."""

    def __init__(self, sold_out: set[str], **kwargs: Any):
        super().__init__(**kwargs)
        self.sold_out = sold_out

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.name in self.sold_out:
            raise Exception("OperationDenied.NoStock: The requested resource is sold out in the specified zone")
        return super().new_resource(args)


@pytest.fixture(autouse=True)
def quiet_failed_registrations() -> Any:
    """The failed registrations leave futures whose exception nobody retrieves; asyncio logs each at collection."""
    logger = logging.getLogger("asyncio")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    gc.collect()
    logger.setLevel(level)


def run_out_of_stock(sold_out: set[str], *assignments: str) -> list[str]:
    """Run the real program with ``sold_out`` failing; the names of the ecs.Instance nodes it did create."""
    from blueprints.architectures import profile_models

    catalog = load_catalog()
    config = with_cli_inputs({}, MED, parse_overrides(list(assignments), profile_models()))
    zones, images = catalog_zones(catalog, "cn-shanghai"), catalog_images(catalog, "cn-shanghai")
    mocks = OutOfStock(sold_out, zones=zones, image_id=images)
    with pytest.raises(Exception, match="OperationDenied.NoStock"):
        run_program(run, config, zones=zones, image_id=images, mocks=mocks)
    return sorted(r.name for r in mocks.registered if r.typ == "alicloud:ecs/instance:Instance")


def test_without_held_capacity_a_sold_out_node_leaves_the_others_started() -> None:
    """What AIT041 warns about: node-002 runs out of stock, nodes 000, 001 and 003 were started and bill."""
    started = run_out_of_stock({f"{MED}-cluster-node-002"}, *ERDMA, "compute.nodes=4")
    assert started == [f"{MED}-cluster-node-000", f"{MED}-cluster-node-001", f"{MED}-cluster-node-003"]


def test_with_held_capacity_a_reservation_that_cannot_be_held_starts_no_node() -> None:
    started = run_out_of_stock({f"{MED}-cluster-reservation"}, *ERDMA, "compute.nodes=4", *RESERVED)
    assert started == []


# ---- `pulumi up` itself: a zone that no longer offers the type names the next fallback ----


@pytest.mark.parametrize(
    ("fallbacks", "needle"),
    [
        (
            "capacity.fallbacks=[{zone: cn-shanghai-b}]",
            "the profile's next shape is capacity.fallbacks[0] (zone cn-shanghai-b): `aitrain preflight --choose",
        ),
        (None, "list alternatives under capacity.fallbacks"),
    ],
)
def test_the_program_names_the_next_fallback_when_the_cloud_offers_no_zone(fallbacks: str | None, needle: str) -> None:
    """Under `pulumi up` the zones come from the cloud (get_zones): here it offers the type in cn-shanghai-c only."""
    from blueprints.architectures import profile_models

    catalog = load_catalog()
    assignments = ["network.zones=[cn-shanghai-a]", *([fallbacks] if fallbacks else [])]
    config = with_cli_inputs({}, MED, parse_overrides(assignments, profile_models()))
    with pytest.raises(pulumi.RunError) as caught:
        run_program(
            run,
            config,
            zones=lambda instance_type: ["cn-shanghai-c"],
            image_id=catalog_images(catalog, "cn-shanghai"),
        )
    text = str(caught.value)
    assert text.startswith(f"aitrain:network:TrainingNetwork ({MED}-network): no zone among network.zones")
    assert "offers ecs.gn7e-c16g1.32xlarge (zones that do: cn-shanghai-c)" in text and needle in text


# ---- what held capacity costs a year ----


def test_a_spare_reserved_node_costs_a_running_node_a_year_and_the_summary_shows_both_totals() -> None:
    from blueprints.catalog import instance_price
    from blueprints.review.costing import HOURS_PER_MONTH

    plan = plan_of(MED, *RESERVED, "capacity.reservation.nodes=13")
    (line,) = [line for line in plan.costs["lines"] if line["type"] == "ecs.CapacityReservation"]
    assert line["item"] == "capacity reservation ecs.gn7e-c16g1.32xlarge: 13 reserved, 12 drawn by nodes, 1 idle"
    node_hour = instance_price(load_catalog(), "ecs.gn7e-c16g1.32xlarge", "cn-shanghai").cny
    assert node_hour is not None
    assert plan.summary["reservation_cny_per_year"] == pytest.approx(node_hour * HOURS_PER_MONTH * 12, abs=0.01)
    with_it, without = plan.summary["yearly_cny_with_reservation"], plan.summary["yearly_cny_without_reservation"]
    assert with_it == pytest.approx(plan.costs["totals"]["cny_per_month"] * 12, abs=0.01)
    assert with_it - without == pytest.approx(plan.summary["reservation_cny_per_year"], abs=0.01)
    # No reservation: no reservation figures in the summary at all (not a ¥0 reservation).
    assert not {k for k in plan_of(MED).summary if "reservation" in k}
    # Every node drawing from it: the reservation adds nothing to the year.
    exact = plan_of(MED, *RESERVED)
    assert exact.summary["reservation_cny_per_year"] == 0
    assert exact.summary["yearly_cny_with_reservation"] == exact.summary["yearly_cny_without_reservation"]


def test_an_assurance_fee_is_unknown_not_zero() -> None:
    plan = plan_of(MED, "capacity.reservation.kind=elasticity_assurance", "capacity.reservation.term_months=12")
    assert str(plan.summary["reservation_cny_per_year"]).startswith("unknown: elasticity assurance")
    assert "yearly_cny_with_reservation" not in plan.summary
    assert plan.costs["totals"]["complete"] is False


# ---- parking and replacing nodes keep working ----


def test_a_reserved_cluster_replaces_one_node_and_repairs_by_replace_node() -> None:
    """Nodes drawing from a reservation are one ecs.Instance each, so replace-node can name one (the new node starts
    from the capacity its predecessor gave back to the pool)."""
    plan = plan_of(MED, *RESERVED, "compute.replace_nodes={node-003: 1}")
    node = next(r for r in plan.resources if r.name == f"{MED}-cluster-node-003")
    assert node.replace_on_changes == ('tags["aitrain-generation"]',)
    assert node.inputs["privatePoolOptionsId"] == f"${{{MED}-cluster-reservation.id}}"
    others = [r for r in plan.resources if r.short_type == "ecs.Instance" and r.name != node.name]
    assert all(not r.replace_on_changes for r in others)
    assert plan.outputs["repair"]["replace_node"] is True
    # Without the reservation the same cluster is instance sets: replace_nodes is refused, naming both ways out.
    with pytest.raises(UserInputError, match="eRDMA types and reserved clusters"):
        plan_of(MED, "compute.replace_nodes={node-003: 1}")


# ---- the ACK GPU pool draws from held capacity too ----


def test_an_ack_gpu_pool_draws_from_a_reservation_of_its_max_nodes() -> None:
    from blueprints.preflight.needs import needs_from_plan

    plan = plan_of("kubernetes-training", *RESERVED)
    (pool,) = [r for r in plan.resources if r.short_type == "ecs.CapacityReservation"]
    assert pool.name == "kubernetes-training-k8s-gpu-reservation"
    assert (pool.inputs["instanceAmount"], pool.inputs["matchCriteria"]) == (8, "Target")
    (gpu,) = [r for r in plan.resources if r.name == "kubernetes-training-k8s-gpu-pool"]
    assert gpu.inputs["privatePoolOptions"] == {
        "privatePoolOptionsMatchCriteria": "Target",
        "privatePoolOptionsId": "${kubernetes-training-k8s-gpu-reservation.id}",
    }
    (system,) = [r for r in plan.resources if r.name == "kubernetes-training-k8s-system-pool"]
    assert "privatePoolOptions" not in system.inputs  # the CPU system pool holds nothing
    assert pool.inputs["zoneIds"] == [r.inputs["zoneId"] for r in plan.resources if r.short_type == "vpc.Switch"][:1]
    assert plan.summary["reservation"].startswith("capacity_reservation: 8 × ecs.ebmgn7ex.32xlarge held")
    # Preflight counts the pool at its max, which the reservation covers: nothing asked twice.
    found = needs_from_plan(plan, load_catalog())
    assert [g.resource for g in found.compute if g.instance_type == "ecs.ebmgn7ex.32xlarge"] == [gpu.name]
    with pytest.raises(UserInputError, match="is fewer than the 8 nodes that draw from it"):
        plan_of("kubernetes-training", *RESERVED, "capacity.reservation.nodes=4")
