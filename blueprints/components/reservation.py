"""Capacity held for a compute unit's nodes in their zone: an ECS capacity reservation or elasticity assurance.

Both make a private pool; the nodes start from it in Target mode (``private_pool_options_match_criteria="Target"``
and its id), which "uses the specified private pool capacity to start the instance. If the specified private pool
capacity is unavailable, the instance fails to start" (ECS RunInstances, PrivatePoolOptions.MatchCriteria, as the
alibabacloud-ecs20140526 7.11.8 SDK documents it). The reservation exists before any node, so the nodes start from
held capacity or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child

# The private pool mode in which a node starts only from the named pool (RunInstances PrivatePoolOptions).
TARGET = "Target"


@dataclass(frozen=True)
class CapacityHold:
    """What to hold: ``capacity_reservation`` (immediate, released with the stack) or ``elasticity_assurance`` (a
    term bought up front, in whole months up to a year or whole years)."""

    kind: str
    nodes: int
    term_months: int | None = None

    @property
    def period(self) -> tuple[int, str]:
        """The assurance's (period, period_unit): 1–12 Month, else whole Years (the provider's validator)."""
        months = self.term_months or 1
        return (months, "Month") if months <= 12 else (months // 12, "Year")


def hold_for(reservation: Any, nodes: int) -> CapacityHold | None:
    """The hold a profile's ``capacity.reservation`` asks for (its ``nodes``, else ``nodes``); None without one."""
    if reservation is None:
        return None
    return CapacityHold(reservation.kind, reservation.nodes or nodes, reservation.term_months)


def hold_capacity(
    parent: pulumi.Resource, name: str, hold: CapacityHold, instance_type: str, zone_id: str, tags: dict[str, str]
) -> alicloud.ecs.CapacityReservation | alicloud.ecs.ElasticityAssurance:
    """``<name>-reservation``: the private pool the unit's nodes start from, in Target mode, in their one zone."""
    description = f"aitrain: capacity held for {name} ({hold.nodes} × {instance_type})"
    if hold.kind == "capacity_reservation":
        return alicloud.ecs.CapacityReservation(
            f"{name}-reservation",
            capacity_reservation_name=f"{name}-reservation",
            description=description,
            instance_type=instance_type,
            instance_amount=hold.nodes,
            zone_ids=[zone_id],
            match_criteria=TARGET,
            # Released when the stack releases it (parking the cluster, `pulumi destroy`): it bills at the type's
            # pay-as-you-go rate for every reserved node no instance uses.
            end_time_type="Unlimited",
            platform="linux",
            tags=tags,
            opts=child(parent),
        )
    period, unit = hold.period
    return alicloud.ecs.ElasticityAssurance(
        f"{name}-reservation",
        private_pool_options_name=f"{name}-reservation",
        description=description,
        instance_type=instance_type,
        instance_amount=hold.nodes,
        zone_ids=[zone_id],
        private_pool_options_match_criteria=TARGET,
        assurance_times="Unlimited",
        period=period,
        period_unit=unit,
        tags=tags,
        opts=child(parent),
    )
