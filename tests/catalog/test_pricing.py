"""CNY unit prices: official CNY as is, USD through the catalog's
cited rate, unknown as unknown, storage tiers keyed."""

from __future__ import annotations

import copy

import pytest

from blueprints.catalog import PriceRow, load_catalog, price_cny, storage_price_key

CATALOG = load_catalog()


def _replaced(rows):
    """A copy of the shipped catalog whose prices.csv holds only ``rows`` (load_catalog's own object is shared)."""
    catalog = copy.copy(CATALOG)
    catalog.prices = tuple(rows)
    return catalog


def row(item, amount, currency="CNY", status="official", scope=("*",), unit="hour", tier=None):
    return PriceRow(
        item=item,
        tier=tier,
        region_scope=scope,
        amount=amount,
        currency=currency,
        unit=unit,
        status=status,
        source=f"src-{item}",
        date="2026-01-01",
        notes="",
    )


@pytest.mark.parametrize("currency", ["CNY", "USD"])
def test_unknown_amount_stays_unknown_with_its_source(currency):
    rows = [row("eip_config", None, currency=currency, status="unknown"), row("usd_cny", 7.0, unit="CNY per USD")]
    price = price_cny(_replaced(rows), "eip_config", None, "cn-shanghai")
    assert (price.cny, price.status, price.source, price.date, price.unit) == (
        None,
        "unknown",
        "src-eip_config",
        "2026-01-01",
        "hour",
    )


def test_usd_converts_only_through_the_rate_row():
    usd = row("nat_instance", 0.5, currency="USD")
    price = price_cny(_replaced([usd, row("usd_cny", 7.0, unit="CNY per USD")]), "nat_instance", None, "cn-shanghai")
    assert price.cny == pytest.approx(3.5) and price.status == "converted"
    assert price.source == "USD 0.5/hour (src-nat_instance) × 7 CNY/USD (src-usd_cny, 2026-01-01)"
    price = price_cny(_replaced([usd]), "nat_instance", None, "cn-shanghai")
    assert price.cny is None and price.status == "unknown" and "no USD→CNY rate" in price.source


def test_cny_official_is_a_list_price_and_out_of_scope_says_where():
    price = price_cny(_replaced([row("nat_instance", 0.2, scope=("cn-hangzhou",))]), "nat_instance", None, "cn-beijing")
    assert (price.cny, price.status) == (0.2, "list")
    assert price.source == "src-nat_instance (quoted for cn-hangzhou, applied to cn-beijing)"
    missing = price_cny(_replaced([]), "nat_instance", None, "cn-beijing")
    assert missing.cny is None and missing.source == "no row for nat_instance in the catalog's prices.csv"


def test_storage_tiers_map_to_their_price_rows():
    assert storage_price_key(CATALOG.storage_tier("oss", "standard")) == ("oss", "Standard")
    assert storage_price_key(CATALOG.storage_tier("extreme_nas", "standard")) == ("nas", "extreme/standard")
    assert storage_price_key(CATALOG.storage_tier("cpfs", "advance_100")) == ("nas", "cpfs/advance_100")
    assert storage_price_key(CATALOG.storage_tier("nas", "capacity")) == ("nas", "standard/Capacity")
    # Each key names a real prices.csv row, so no tier is silently unpriced by a typo.
    for tier in CATALOG.storage:
        assert CATALOG.price(*storage_price_key(tier), "cn-shanghai") is not None, tier
