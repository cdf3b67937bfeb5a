"""What the catalog's sources say about where a GPU type is sold, in the words the plan and the advisor use.

``instance_zones.csv`` rows come from documents that name a region (a dated price listing, a product page) or
from ``aitrain zones --write`` (the account's answer, with zones). A row may know the region and not its zones.
"""

from __future__ import annotations

from blueprints.catalog.queries import Catalog
from blueprints.catalog.records import InstanceType

ASSUMPTION = (
    "the offline plan assumes every zone of the region, while pulumi up asks the cloud; "
    "`aitrain zones --write` records your account's zones in a catalog copy."
)


def zone_source_note(catalog: Catalog, instance_type: str, region: str) -> str | None:
    """What the catalog's sources say about where ``instance_type`` is sold, when they do not list its zones.

    None when the zones in ``region`` are known. Otherwise one of: a source names the region but not its zones;
    sources name only other regions; no source names a region at all. Each ends with the plan's assumption.
    """
    if catalog.zones_offering(instance_type, region):
        return None
    row = catalog.zone_row(instance_type, region)
    if row is not None:
        return f"{row.source} ({row.source_date}) names {region} for {instance_type} but not its zones: {ASSUMPTION}"
    instance = catalog.instance_types.get(instance_type)
    elsewhere = sorted(catalog.known_regions(instance)) if instance is not None else []
    if elsewhere:
        return (
            f"No source in the catalog names {region} for {instance_type} (they name {', '.join(elsewhere)}, "
            f"which does not rule {region} out): {ASSUMPTION}"
        )
    return f"No source in the catalog names a region or zone for {instance_type}: {ASSUMPTION}"


def region_availability(catalog: Catalog, instance: InstanceType, region: str) -> str | None:
    """The advisor's line on whether ``instance`` is sold in ``region``; None when the catalog lists its zones there."""
    name = instance.instance_type
    if catalog.zones_offering(name, region):
        return None
    row = catalog.zone_row(name, region)
    if row is not None:
        return (
            f"{name}: sold in {region} per {row.source} ({row.source_date}); its zones are not recorded, "
            "so check stock with `aitrain preflight` before applying"
        )
    elsewhere = sorted(catalog.known_regions(instance))
    if elsewhere:
        return (
            f"{name}: the catalog's sources name {', '.join(elsewhere)}, not {region}; "
            "check the console (or `aitrain zones`) before applying"
        )
    return f"{name}: availability in {region} is not recorded in the catalog; check the console before applying"
