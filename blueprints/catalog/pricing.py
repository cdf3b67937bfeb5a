"""Unit prices in CNY from ``prices.csv`` and ``instance_prices.csv``: an official or third-party CNY amount, or a
USD one through the catalog's own cited exchange-rate row. The one place a currency is converted, and the one place
an instance price is chosen for a region, for the plan's costs and the advisor alike."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from blueprints.catalog.queries import Catalog
    from blueprints.catalog.records import InstancePrice, StorageTier

# Alibaba: "同一实例规格在不同地域的价格可能不同" (one instance type's price may differ between regions),
# https://help.aliyun.com/document_detail/163808.html. So a price is applied to another region only within its own
# market (the Chinese mainland, or outside it), saying so; never across, where the price lists are different ones.
REGION_PRICE_SOURCE = "https://help.aliyun.com/document_detail/163808.html"


@dataclass(frozen=True)
class CnyPrice:
    """A unit price in CNY (None = unknown) per ``unit``, its status
    (list, third-party, converted, unknown), source and date."""

    cny: float | None
    status: str
    source: str
    date: str | None
    unit: str | None = None
    region: str | None = None  # where an instance price was quoted (None for prices.csv items)


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
    return _from_usd(catalog, row.amount, row.unit, f"{row.source}){where}", row.date, region)


def _from_usd(catalog: Catalog, amount: float, unit: str, quoted: str, date: str, region: str) -> CnyPrice:
    """``amount`` USD per ``unit`` in CNY through the ``usd_cny`` row; ``quoted`` closes the source's parenthesis."""
    rate = catalog.price("usd_cny", None, region)
    if rate is None or rate[0].amount is None:
        return CnyPrice(
            None, "unknown", f"USD {amount:g}/{unit} ({quoted} and no USD→CNY rate in prices.csv", date, unit
        )
    fx = rate[0]
    assert fx.amount is not None
    basis = f"USD {amount:g}/{unit} ({quoted} × {fx.amount:g} CNY/USD ({fx.source}, {fx.date})"
    return CnyPrice(amount * fx.amount, "converted", basis, date, unit)


def is_mainland(region: str) -> bool:
    """Whether ``region`` is in the Chinese mainland (``cn-*`` but Hong Kong), as ``prices.csv`` scopes read it."""
    return region.startswith("cn-") and region != "cn-hongkong"


def _market(region: str) -> str:
    return "the Chinese mainland" if is_mainland(region) else "outside the Chinese mainland"


def instance_price(catalog: Catalog, instance_type: str, region: str, billing: str = "payg") -> CnyPrice:
    """What one ``instance_type`` node costs per hour in ``region`` in CNY, from ``instance_prices.csv``.

    The row for ``region`` when there is one. Else the newest row of another region in the same market (the Chinese
    mainland, or outside it), its source saying which region it was quoted for. Else unknown, saying where it is
    priced: a mainland price is never applied outside the mainland, nor the reverse. USD goes through ``usd_cny``.
    """
    rows = catalog.prices_of(instance_type, billing)
    if not rows:
        return CnyPrice(
            None,
            "unknown",
            f"no price for {instance_type} in the catalog's instance_prices.csv "
            f"(`aitrain catalog refresh --type {instance_type}` asks Alibaba for your account's)",
            None,
        )
    row = next((r for r in rows if r.region == region), None)
    where = ""
    if row is None:
        market = [r for r in rows if is_mainland(r.region) == is_mainland(region)]
        if not market:
            quoted = ", ".join(sorted({r.region for r in rows}))
            return CnyPrice(
                None,
                "unknown",
                f"no price for {instance_type} in {region}: instance_prices.csv prices it only in {quoted} "
                f"({_market(rows[0].region)}), and a mainland price is never applied outside the mainland, nor the "
                f"reverse (prices differ by region, {REGION_PRICE_SOURCE}); "
                f"`aitrain catalog refresh --region {region}` asks Alibaba",
                None,
            )
        row = max(market, key=lambda r: r.date)  # the newest quote; file order breaks a tie
        where = (
            f"; {row.region} price applied to {region}, which has no row in instance_prices.csv "
            f"(prices may differ by region, {REGION_PRICE_SOURCE})"
        )
    return _row_price(catalog, row, region, where)


def _row_price(catalog: Catalog, row: InstancePrice, region: str, where: str) -> CnyPrice:
    # medium/high: a dated list price (Alibaba's answer, or a copy of its buy page); low: an approximation.
    source = f"{row.source}, {row.confidence} confidence{where}"
    if row.currency == "USD":
        found = _from_usd(catalog, row.price_per_hour, "hour", f"{source})", row.date, region)
        return dataclasses.replace(found, region=row.region)
    status = "third-party" if row.confidence == "low" else "list"
    return CnyPrice(row.price_per_hour, status, source, row.date, "hour", row.region)


def storage_price_key(tier: StorageTier) -> tuple[str, str]:
    """The ``prices.csv`` item and tier of a storage tier: ``nas``
    + ``<file_system_type>/<storage_type>``, or ``oss``."""
    if tier.kind == "oss":
        return "oss", tier.tier.capitalize()
    return "nas", f"{tier.file_system_type}/{tier.storage_type}"
