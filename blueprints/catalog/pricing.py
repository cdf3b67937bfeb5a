"""Unit prices in CNY from ``prices.csv``: an official or third-party CNY amount, or a USD one through the catalog's
own cited exchange-rate row. The one place a currency is converted, for the plan's costs and the advisor alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from blueprints.catalog.queries import Catalog
    from blueprints.catalog.records import StorageTier


@dataclass(frozen=True)
class CnyPrice:
    """A unit price in CNY (None = unknown) per ``unit``, its status
    (list, third-party, converted, unknown), source and date."""

    cny: float | None
    status: str
    source: str
    date: str | None
    unit: str | None = None


def price_cny(catalog: Catalog, item: str, tier: str | None, region: str) -> CnyPrice:
    """The ``prices.csv`` price of ``item``/``tier`` in ``region`` in CNY; USD only through the ``usd_cny`` row."""
    found = catalog.price(item, tier, region)
    label = f"{item}/{tier}" if tier else item
    if found is None:
        return CnyPrice(None, "unknown", f"no row for {label} in the catalog's prices.csv", None)
    row, in_scope = found
    where = "" if in_scope else f" (quoted for {';'.join(row.region_scope)}, applied to {region})"
    if row.amount is None:
        return CnyPrice(None, "unknown", row.source + where, row.date, row.unit)
    if row.currency == "CNY":
        return CnyPrice(
            row.amount, "list" if row.status == "official" else row.status, row.source + where, row.date, row.unit
        )
    rate = catalog.price("usd_cny", None, region)
    if rate is None or rate[0].amount is None:
        return CnyPrice(
            None,
            "unknown",
            f"USD {row.amount:g}/{row.unit} ({row.source}) and no USD→CNY rate in prices.csv",
            row.date,
            row.unit,
        )
    fx = rate[0]
    assert fx.amount is not None
    basis = f"USD {row.amount:g}/{row.unit} ({row.source}){where} × {fx.amount:g} CNY/USD ({fx.source}, {fx.date})"
    return CnyPrice(row.amount * fx.amount, "converted", basis, row.date, row.unit)


def storage_price_key(tier: StorageTier) -> tuple[str, str]:
    """The ``prices.csv`` item and tier of a storage tier: ``nas``
    + ``<file_system_type>/<storage_type>``, or ``oss``."""
    if tier.kind == "oss":
        return "oss", tier.tier.capitalize()
    return "nas", f"{tier.file_system_type}/{tier.storage_type}"
