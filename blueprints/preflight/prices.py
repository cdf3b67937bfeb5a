"""Ask ECS what the catalog's instance types cost per hour, pay-as-you-go, in each region (``aitrain catalog refresh``).

One read-only ``DescribePrice`` call per (region, type): ``ResourceType`` instance, ``PriceUnit`` Hour (the API's
default billing is pay-as-you-go, PostPaid), through the same ``CloudReader`` protocol as the preflight checks, so
tests replay recorded answers and only ``blueprints.preflight.aliyun`` touches the SDK.

The answer's ``PriceInfo.Price`` totals the instance with its default system disk and bandwidth; the instance alone
is the ``DetailInfos.DetailInfo`` item whose ``Resource`` is ``instanceType``, and that is what is recorded: its
``OriginalPrice`` (the list price) with ``PriceInfo.Price.Currency`` (CNY on the China site, USD on the international
site); the account's ``TradePrice`` (after its discounts) goes to the row's notes.
API reference: https://help.aliyun.com/en/ecs/developer-reference/api-ecs-2014-05-26-describeprice (fields as in the
SDK model alibabacloud_ecs20140526 ``DescribePriceResponseBodyPriceInfoPrice`` and Alibaba's Go SDK
services/ecs/describe_price.go).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from blueprints.preflight.checks import CloudError, CloudReader

DESCRIBE_PRICE = "ecs.DescribePrice"
RESOURCE = "instanceType"
SOURCE_PREFIX = "DescribePrice"
# Codes Alibaba documents for "this type has no price here" (retired, not sold, no price): the type is then simply
# not priced in that region, not a failed call. From the ECS price APIs' error tables
# (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancemodificationprice).
NOT_PRICED = ("PriceNotFound", "InvalidInstanceType.ValueNotSupported", "InstanceType.Offline")


def request(region: str, instance_type: str) -> dict[str, str]:
    """The API parameters of the call for ``instance_type`` in ``region``."""
    return {"RegionId": region, "ResourceType": "instance", "InstanceType": instance_type, "PriceUnit": "Hour"}


def source_text(region: str, day: str) -> str:
    """The ``source`` cell of a row written from the answer for ``region`` on ``day`` (YYYY-MM-DD)."""
    return f"{SOURCE_PREFIX}, {region}, {day}"


@dataclass(frozen=True)
class Quote:
    """The hourly list and trade price of one instance (no disk, no bandwidth) in the answer's currency."""

    instance_type: str
    original: float
    trade: float | None
    currency: str


@dataclass(frozen=True)
class RegionPrices:
    """What one region answered: a quote per priced type, the types it has no price for, and the failed calls."""

    region: str
    quotes: tuple[Quote, ...] = ()
    not_priced: tuple[tuple[str, str], ...] = ()  # (type, the API's code)
    failures: tuple[tuple[str, CloudError], ...] = ()


def _number(value: Any) -> float | None:
    # The API writes some prices as strings ("0.4200"); anything else that is not a number is no price.
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN is no price


def parse(instance_type: str, body: Mapping[str, Any]) -> Quote:
    """The instance's own price in a DescribePrice body; CloudError when the answer carries none."""
    price = (body.get("PriceInfo") or {}).get("Price") or {}
    details = ((price.get("DetailInfos") or {}).get("DetailInfo")) or []
    item = next((d for d in details if isinstance(d, Mapping) and d.get("Resource") == RESOURCE), None)
    currency = str(price.get("Currency") or "")
    original = _number(item.get("OriginalPrice")) if item is not None else None
    if item is None or original is None or original <= 0 or currency not in ("CNY", "USD"):
        found = f"currency {currency or 'none'}, {'an' if item is not None else 'no'} {RESOURCE} item"
        raise CloudError(DESCRIBE_PRICE, "UnexpectedAnswer", f"no hourly {RESOURCE} price in CNY or USD ({found})")
    return Quote(instance_type, original, _number(item.get("TradePrice")), currency)


def ask_region(region: str, instance_types: Iterable[str], reader: CloudReader) -> RegionPrices:
    """One call per type in ``region``: quotes, types without a price there, and calls that failed."""
    quotes: list[Quote] = []
    not_priced: list[tuple[str, str]] = []
    failures: list[tuple[str, CloudError]] = []
    for instance_type in instance_types:
        try:
            quotes.append(parse(instance_type, reader.call(DESCRIBE_PRICE, request(region, instance_type))))
        except CloudError as exc:
            if exc.code in NOT_PRICED:
                not_priced.append((instance_type, exc.code))
            else:
                failures.append((instance_type, exc))
    return RegionPrices(region, tuple(quotes), tuple(not_priced), tuple(failures))


def ask(
    regions: Iterable[str], instance_types: Iterable[str], reader_for: Callable[[str], CloudReader]
) -> list[RegionPrices]:
    """One answer per region, in the order given; ``reader_for(region)`` builds the reader (clients are per region)."""
    types = tuple(instance_types)
    return [ask_region(region, types, reader_for(region)) for region in regions]


def render_text(answers: Iterable[RegionPrices], day: str) -> str:
    """The terminal report: per region, each quoted type's hourly list price, then what has none and what failed."""
    lines: list[str] = []
    for answer in answers:
        lines.append(
            f"{answer.region} ({source_text(answer.region, day)}, pay-as-you-go, per hour): {len(answer.quotes)} "
            f"priced, {len(answer.not_priced)} not priced there, {len(answer.failures)} failed"
        )
        width = max((len(q.instance_type) for q in answer.quotes), default=0)
        for quote in answer.quotes:
            trade = "" if quote.trade in (None, quote.original) else f"  (your trade price {quote.trade:g})"
            lines.append(f"  {quote.instance_type.ljust(width)}  {quote.original:g} {quote.currency}{trade}")
        if answer.not_priced:
            lines.append("  not priced there: " + ", ".join(f"{t} ({code})" for t, code in answer.not_priced))
        for instance_type, error in answer.failures:
            lines.append(f"  failed: {instance_type} ({error.code}: {error.message}); its rows are kept as they were")
    return "\n".join(lines) + "\n"
