"""Record DescribePrice's answers in a COPY of the catalog: ``instance_prices.csv`` rows and VERSION.

Never the shipped catalog (``blueprints/catalog/data``): the answer is what one account is quoted on one day. Each
quote replaces the row of its (type, region, payg) or is added; every other row is kept. The new files are checked
with ``load_catalog`` in a scratch copy before any file of the user's directory is replaced.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from blueprints.catalog.instance_prices import PRICES_FILE
from blueprints.catalog.rewrite import replace_checked
from blueprints.catalog.schema import INSTANCE_PRICE_SCHEMA
from blueprints.preflight.prices import RESOURCE, Quote, RegionPrices, source_text

VERSION_TAG = "+prices."


@dataclass(frozen=True)
class WriteResult:
    """What the write changed: rows replaced, rows added, and the new VERSION."""

    replaced: int
    added: int
    version: str


def _amount(value: float) -> str:
    """A price as the API gave it, without float noise: 277.93, 4368 (at most 6 decimals)."""
    return f"{value:.6f}".rstrip("0").rstrip(".")


def row_for(quote: Quote, region: str, day: str) -> list[str]:
    """The ``instance_prices.csv`` row of one quote (list price, high confidence: Alibaba's own answer)."""
    trade = (
        f"; this account's TradePrice {_amount(quote.trade)} {quote.currency}"
        if quote.trade is not None and quote.trade != quote.original
        else ""
    )
    notes = f"OriginalPrice of the answer's {RESOURCE} item (the list price, without disk or bandwidth){trade}"
    cells = [quote.instance_type, region, "payg", _amount(quote.original), quote.currency, day]
    return [*cells, source_text(region, day), "high", notes]


def write(directory: Path, answers: Iterable[RegionPrices], day: str) -> WriteResult:
    """Merge every quote of ``answers`` into ``directory/instance_prices.csv`` and tag VERSION ``+prices.<day>``."""
    with (directory / PRICES_FILE).open(newline="", encoding="utf-8") as handle:
        table = [row for row in csv.reader(handle) if any(row)]
    if not table or table[0] != list(INSTANCE_PRICE_SCHEMA):
        raise ValueError(f"{PRICES_FILE} line 1: header must be exactly {','.join(INSTANCE_PRICE_SCHEMA)}")
    fresh = {(q.instance_type, a.region, "payg"): row_for(q, a.region, day) for a in answers for q in a.quotes}
    replaced = 0
    for i, row in enumerate(table[1:], start=1):
        new = fresh.pop((row[0], row[1], row[2]), None)
        if new is not None:
            table[i] = new
            replaced += 1
    table.extend(fresh.values())
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(table)
    version_text = (directory / "VERSION").read_text(encoding="utf-8")
    version = version_text.strip().split(VERSION_TAG)[0] + VERSION_TAG + day
    replace_checked(directory, {PRICES_FILE: out.getvalue(), "VERSION": version + "\n"})
    return WriteResult(replaced, len(fresh), version)
