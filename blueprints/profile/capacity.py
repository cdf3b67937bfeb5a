"""The ``capacity:`` section every profile shares: ordered fallbacks and reserved capacity.

Nothing here falls back by itself: ``aitrain preflight --choose`` walks ``fallbacks`` against the cloud's quota and
stock and writes the first shape that fits into the stack config as an explicit choice, so the plan, the review and
`pulumi up` all see the same shape (``blueprints.preflight.choose``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from blueprints.core.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile.strict import Strict

if TYPE_CHECKING:
    from blueprints.catalog import Catalog
    from blueprints.catalog.records import InstanceType

# aitrain's limit: each alternative is one offline plan and one round of API calls in `preflight --choose`.
MAX_FALLBACKS = 10
# ecs.CapacityReservation / ecs.ElasticityAssurance instance_amount: 1 to 1000 (pulumi_alicloud 4.0.0 docstrings,
# elasticity_assurance.py: "Valid values: 1 to 1000").
RESERVATION_MAX_NODES = 1000
# Elasticity assurance terms run "from one month to five years" (ECI: "Use the private pool of an elasticity
# assurance", https://www.alibabacloud.com/help/en/eci/user-guide/use-the-private-pool-of-an-elasticity-assurance-to-create-a-pod).
ASSURANCE_MAX_MONTHS = 60


class Alternative(Strict):
    """One fallback shape: what it changes from the profile's own (the fields left empty stay as they are)."""

    zone: str | None = Field(
        default=None, description="Compute zone to use instead (network.zones becomes this one zone)."
    )
    instance_type: str | None = Field(
        default=None,
        description="Another real instance type with the same GPU model and GPUs per node (the job fits unchanged).",
    )
    region: str | None = Field(
        default=None,
        description=(
            "Another region of the catalog: a new network, file system and bucket there (data does not move); "
            "give zone too, or the region's zones are all candidates."
        ),
    )
    spot: bool | None = Field(
        default=None, description="false: pay-as-you-go instead of spot; true: spot instead of pay-as-you-go."
    )

    @model_validator(mode="after")
    def _changes_something(self) -> "Alternative":
        if self.zone is None and self.instance_type is None and self.region is None and self.spot is None:
            raise ValueError("changes nothing: give at least one of zone, instance_type, region, spot")
        return self

    def label(self) -> str:
        """``zone cn-shanghai-b, spot false`` — how plans and reports name this alternative."""
        parts = [
            f"{key} {value if not isinstance(value, bool) else str(value).lower()}" for key, value in self.fields()
        ]
        return ", ".join(parts)

    def fields(self) -> list[tuple[str, object]]:
        """The fields this alternative sets, in a fixed order."""
        return [
            (key, value)
            for key, value in (
                ("region", self.region),
                ("zone", self.zone),
                ("instance_type", self.instance_type),
                ("spot", self.spot),
            )
            if value is not None
        ]


class Reservation(Strict):
    """Capacity held for the nodes in their zone, which the nodes draw from (a private pool in Target mode)."""

    kind: Literal["capacity_reservation", "elasticity_assurance"] = Field(
        description=(
            "capacity_reservation: immediate, billed at the type's pay-as-you-go rate while it exists, whether nodes "
            "use it or not, released with the stack. elasticity_assurance: a term (term_months) with an upfront fee, "
            "which cannot be released before its term ends."
        )
    )
    nodes: int | None = Field(
        default=None,
        ge=1,
        le=RESERVATION_MAX_NODES,
        description=f"Nodes to reserve, 1–{RESERVATION_MAX_NODES}. Empty: the profile's node count.",
    )
    term_months: int | None = Field(
        default=None,
        ge=1,
        le=ASSURANCE_MAX_MONTHS,
        description=(
            f"elasticity_assurance only: its term, 1–{ASSURANCE_MAX_MONTHS} months (whole years are bought as years)."
        ),
    )

    @model_validator(mode="after")
    def _term_for_assurance(self) -> "Reservation":
        # period 1-12 with period_unit Month or Year (terraform-provider-alicloud's alicloud_ecs_elasticity_assurance
        # schema: IntInSlice 1..12): a term is whole months up to a year, else whole years.
        if self.term_months is not None and self.term_months > 12 and self.term_months % 12:
            raise FieldError(
                "term_months",
                self.term_months,
                "must be 1–12 months, or whole years (24, 36, 48 or 60): an assurance is bought by the month or "
                "by the year",
            )
        if self.kind == "elasticity_assurance" and self.term_months is None:
            raise FieldError(
                "term_months",
                None,
                f"is required for an elasticity_assurance: its term, 1–{ASSURANCE_MAX_MONTHS} months",
            )
        if self.kind == "capacity_reservation" and self.term_months is not None:
            raise FieldError(
                "term_months",
                self.term_months,
                "is for an elasticity_assurance; a capacity_reservation lasts until the stack releases it",
            )
        return self


class Capacity(Strict):
    """Fallback shapes and reserved capacity. Whether a fixed cluster starts whole or not at all is guardrail AIT041
    (a warning, or a reasoned skip that accepts a partial start)."""

    fallbacks: tuple[Alternative, ...] = Field(
        default=(),
        max_length=MAX_FALLBACKS,
        description=(
            "Alternatives in order of preference (zone, instance_type, region, spot), tried by `aitrain preflight "
            "--choose`, which writes the first that fits into the stack config. Never applied by `pulumi up` itself."
        ),
    )
    reservation: Reservation | None = Field(
        default=None, description="Reserve the nodes' capacity in their zone (fixed-cluster). Empty: none."
    )


def next_step(capacity: Capacity) -> str:
    """What to do when the shape cannot start: switch to the profile's first fallback, or give it some."""
    if capacity.fallbacks:
        return (
            f"the profile's next shape is capacity.fallbacks[0] ({capacity.fallbacks[0].label()}): "
            "`aitrain preflight --choose --stack-config Pulumi.<stack>.yaml --write` checks the fallbacks in order and "
            "pins the first with quota and stock"
        )
    return (
        "list alternatives under capacity.fallbacks (zones, types of the same GPU, regions, spot or not) and run "
        "`aitrain preflight --choose --stack-config Pulumi.<stack>.yaml --write`, or see which zones offer the type "
        "with `aitrain zones --write`"
    )


@dataclass(frozen=True)
class Shape:
    """Where and on what a profile's nodes run: the part of a profile an alternative can change."""

    region: str
    zones: tuple[str, ...]
    instance_type: str
    spot: bool

    def with_alternative(self, alternative: Alternative) -> "Shape":
        """This shape changed as ``alternative`` says (a new region drops zones it does not name)."""
        region = alternative.region or self.region
        zones = (alternative.zone,) if alternative.zone else (self.zones if region == self.region else ())
        return Shape(
            region,
            zones,
            alternative.instance_type or self.instance_type,
            self.spot if alternative.spot is None else alternative.spot,
        )


def check_capacity(capacity: Capacity, primary: Shape, catalog: "Catalog", *, nodes: int | None) -> None:
    """Each alternative names a known region, a zone of its region and a type the job fits on unchanged, and no two
    alternatives are the same; a reservation is for pay-as-you-go nodes. Raises FieldError naming the field."""
    # An alternative equal to the profile's own shape is allowed: it is what `preflight --choose` pinned last time,
    # and the walk skips it. Two equal alternatives are a mistake.
    seen: dict[Shape, str] = {}
    primary_type = catalog.instance_types.get(primary.instance_type)
    for index, alternative in enumerate(capacity.fallbacks):
        where = f"capacity.fallbacks[{index}]"
        shape = primary.with_alternative(alternative)
        if alternative.region is not None and alternative.region not in catalog.regions:
            hint = did_you_mean(alternative.region, catalog.regions)
            raise FieldError(
                f"{where}.region",
                alternative.region,
                f"is not a region of the catalog; allowed: {join_allowed(catalog.regions)}"
                + (f"; {hint}" if hint else ""),
            )
        zones = catalog.zones(shape.region)
        if alternative.zone is not None and alternative.zone not in zones:
            raise FieldError(
                f"{where}.zone",
                alternative.zone,
                f"is not a zone of region {shape.region}; allowed: {join_allowed(zones)}",
            )
        if alternative.instance_type is not None and primary_type is not None:
            _check_same_job(f"{where}.instance_type", alternative.instance_type, primary_type, catalog)
        if shape in seen:
            raise FieldError(
                where,
                alternative.label(),
                f"gives the same shape as {seen[shape]} ({_shape_text(shape)}); give each alternative once",
            )
        seen[shape] = f"capacity.fallbacks[{index}]"
        if capacity.reservation is not None and shape.spot:
            raise FieldError(
                f"{where}.spot",
                True,
                "cannot go with capacity.reservation: reserved capacity serves pay-as-you-go instances only, not spot "
                "(ECS Immediate capacity reservations overview); drop the reservation or this alternative",
            )
    if capacity.reservation is not None:
        if primary.spot:
            raise FieldError(
                "capacity.reservation",
                capacity.reservation.kind,
                "serves pay-as-you-go instances only, not spot (ECS Immediate capacity reservations overview); set "
                "cost.spot: false, or remove capacity.reservation",
            )
        if capacity.reservation.nodes is not None and nodes is not None and capacity.reservation.nodes < nodes:
            raise FieldError(
                "capacity.reservation.nodes",
                capacity.reservation.nodes,
                f"is fewer than the {nodes} nodes that draw from it in Target mode: the rest could not start; "
                f"reserve at least {nodes}, or leave it empty for the node count",
            )


def _check_same_job(path: str, name: str, primary: "InstanceType", catalog: "Catalog") -> None:
    found = catalog.instance_types.get(name)
    if found is None:
        gpu_types = sorted(n for n, t in catalog.instance_types.items() if t.gpu_model == primary.gpu_model)
        hint = did_you_mean(name, list(catalog.instance_types))
        raise FieldError(
            path,
            name,
            f"is not a real instance type in the catalog (article aliases are not taken here); types with the same "
            f"GPU: {join_allowed(gpu_types)}" + (f"; {hint}" if hint else ""),
        )
    if found.gpu_model != primary.gpu_model or found.gpu_count != primary.gpu_count:
        same = sorted(
            n
            for n, t in catalog.instance_types.items()
            if t.gpu_model == primary.gpu_model and t.gpu_count == primary.gpu_count and n != primary.instance_type
        )
        raise FieldError(
            path,
            name,
            f"has {found.gpu_count} × {found.gpu_model or 'no GPU'} per node, not {primary.gpu_count} × "
            f"{primary.gpu_model} as {primary.instance_type}: the job's memory, time and node count would change; "
            f"allowed: {join_allowed(same) if same else 'none in the catalog'}",
        )


def _shape_text(shape: Shape) -> str:
    zones = ", ".join(shape.zones) or "any zone"
    return f"{shape.instance_type} in {shape.region} ({zones}), {'spot' if shape.spot else 'pay-as-you-go'}"
