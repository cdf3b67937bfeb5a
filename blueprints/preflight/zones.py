"""Ask ECS which of the catalog's GPU types each region offers, and in which zones (``aitrain zones``).

One ``DescribeAvailableResource`` call per region (DestinationResource ``InstanceType``, pay-as-you-go, no zone:
the answer lists every zone of the region with the types it sells), through the same ``CloudReader`` protocol as
the preflight checks, so tests replay recorded answers and only ``blueprints.preflight.aliyun`` touches the SDK.
API reference: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from blueprints.preflight.checks import AVAILABLE_RESOURCE, CloudError, CloudReader, instance_types_by_zone

# The request: every zone of the region, instance types, pay-as-you-go (the price basis of the catalog).
DESTINATION = "InstanceType"
CHARGE_TYPE = "PostPaid"
SOURCE_PREFIX = "DescribeAvailableResource"


def request(region: str) -> dict[str, str]:
    """The API parameters of the one call made for ``region``."""
    return {"RegionId": region, "DestinationResource": DESTINATION, "InstanceChargeType": CHARGE_TYPE}


def source_text(region: str, day: str) -> str:
    """The ``source`` cell of a row written from the answer for ``region`` on ``day`` (YYYY-MM-DD)."""
    return f"{SOURCE_PREFIX}, {region}, {day}"


@dataclass(frozen=True)
class Offer:
    """One catalog type listed in one zone: ``status`` Available | SoldOut, ``stock`` the StatusCategory."""

    instance_type: str
    zone: str
    status: str
    stock: str


@dataclass(frozen=True)
class RegionAnswer:
    """What one region answered: every zone it named, the catalog types it lists, or the error that stopped it."""

    region: str
    zones: tuple[str, ...] = ()
    offers: tuple[Offer, ...] = ()
    error: CloudError | None = None

    @property
    def answered(self) -> bool:
        """True when the call succeeded (an answer with no offers is still an answer)."""
        return self.error is None

    def zones_of(self, instance_type: str) -> tuple[str, ...]:
        """Zones that list ``instance_type`` (in stock or sold out), sorted; () when the region does not offer it."""
        return tuple(sorted({o.zone for o in self.offers if o.instance_type == instance_type}))

    def offered(self) -> tuple[str, ...]:
        """Catalog types the region lists in at least one zone, sorted."""
        return tuple(sorted({o.instance_type for o in self.offers}))


def ask_region(region: str, wanted: Iterable[str], reader: CloudReader) -> RegionAnswer:
    """Call DescribeAvailableResource for ``region`` and keep the
    types in ``wanted``; a failed call is kept as the error."""
    try:
        body = reader.call(AVAILABLE_RESOURCE, request(region))
        zones, offers = parse(region, body, frozenset(wanted))
    except CloudError as exc:
        return RegionAnswer(region, error=exc)
    return RegionAnswer(region, zones, offers)


def ask(regions: Iterable[str], wanted: Iterable[str], reader_for: Callable[[str], CloudReader]) -> list[RegionAnswer]:
    """One answer per region, in the order given; ``reader_for(region)``
    builds the reader (SDK clients are per region)."""
    types = tuple(wanted)
    return [ask_region(region, types, reader_for(region)) for region in regions]


def parse(region: str, body: Mapping[str, Any], wanted: frozenset[str]) -> tuple[tuple[str, ...], tuple[Offer, ...]]:
    """Zones and offers of a DescribeAvailableResource body (AvailableZones/AvailableZone/AvailableResources/...)."""
    zones: list[str] = []
    offers: list[Offer] = []
    for zone_id, items in instance_types_by_zone(body):
        # Zone IDs extend their region ID; anything else means the answer is not about this region.
        if not zone_id.startswith(region) or zone_id == region:
            raise CloudError(AVAILABLE_RESOURCE, "UnexpectedZone", f"zone {zone_id!r} in the answer for {region}")
        if zone_id not in zones:
            zones.append(zone_id)
        for item in items:
            name = str(item.get("Value") or "")
            if name in wanted:
                offers.append(
                    Offer(name, zone_id, str(item.get("Status") or ""), str(item.get("StatusCategory") or ""))
                )
    return tuple(sorted(zones)), tuple(offers)


def render_text(answers: Iterable[RegionAnswer], day: str, total: int) -> str:
    """The terminal report: per region, each offered type with
    its zones (sold-out zones marked), then what is missing."""
    lines: list[str] = []
    for answer in answers:
        if answer.error is not None:
            lines.append(
                f"{answer.region}: not answered ({answer.error.code}: "
                f"{answer.error.message}); nothing recorded for this region"
            )
            continue
        offered = answer.offered()
        lines.append(
            f"{answer.region} ({source_text(answer.region, day)}, {CHARGE_TYPE}): {len(answer.zones)} zones answered, "
            f"{len(offered)} of {total} catalog GPU types offered"
        )
        width = max((len(t) for t in offered), default=0)
        for instance_type in offered:
            sold_out = sorted(
                {o.zone for o in answer.offers if o.instance_type == instance_type and o.status != "Available"}
            )
            note = f"  (sold out now: {', '.join(sold_out)})" if sold_out else ""
            lines.append(f"  {instance_type.ljust(width)}  {', '.join(answer.zones_of(instance_type))}{note}")
    return "\n".join(lines) + "\n"


def unlisted_named(answer: RegionAnswer, named: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """Types a catalog source names in the answer's region (``named``: (type, region) pairs) that the answer omits.

    A document's region (a dated price listing, say) may be out of date or not apply to this account; the
    account's answer wins, and ``--write`` drops those rows for the region.
    """
    if not answer.answered:
        return ()
    offered = set(answer.offered())
    return tuple(sorted({t for t, r in named if r == answer.region and t not in offered}))
