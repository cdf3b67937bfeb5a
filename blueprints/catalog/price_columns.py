"""Move the ``price_*`` columns of ``instance_types.csv`` into ``instance_prices.csv`` (tools/drop_price_columns.py).

Each priced row becomes one pay-as-you-go row of ``instance_prices.csv`` (CNY, its region, date, source and
confidence as recorded); a row already there with the same price is kept, a different one is refused. Then the
columns are dropped. The result is checked with ``load_catalog`` in a scratch copy before any file is replaced, so
a failure leaves the folder as it was. Safe to run again: a catalog without the columns is left alone.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from blueprints.catalog.instance_prices import PRICES_FILE
from blueprints.catalog.rewrite import replace_checked
from blueprints.catalog.schema import INSTANCE_PRICE_SCHEMA, LEGACY_PRICE_SCHEMA

MOVED_NOTE = "moved from the price_* columns of instance_types.csv"


@dataclass(frozen=True)
class MoveResult:
    """What the move did: price rows added, rows that were already in ``instance_prices.csv``, columns dropped."""

    added: int
    already_there: int
    dropped: tuple[str, ...]


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.reader(handle) if any(row)]


def _text(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def move_price_columns(directory: Path) -> MoveResult:
    """Move every price of ``directory/instance_types.csv`` into ``instance_prices.csv`` and drop the columns."""
    types_path, prices_path = directory / "instance_types.csv", directory / PRICES_FILE
    types = _rows(types_path)
    header = types[0]
    dropped = tuple(c for c in header if c in LEGACY_PRICE_SCHEMA)
    if not dropped:
        return MoveResult(0, 0, ())
    at = {c: header.index(c) for c in header}
    prices = _rows(prices_path) if prices_path.exists() else [list(INSTANCE_PRICE_SCHEMA)]
    if prices[0] != list(INSTANCE_PRICE_SCHEMA):
        raise ValueError(f"{PRICES_FILE} line 1: header must be exactly {','.join(INSTANCE_PRICE_SCHEMA)}")
    have = {(r[0], r[1], r[2]): r for r in prices[1:]}
    added = kept = 0
    for line, row in enumerate(types[1:], start=2):
        cell = {c: row[at[c]].strip() for c in dropped}
        if not cell.get("price_cny_per_hour"):
            continue
        for column in LEGACY_PRICE_SCHEMA:
            if not cell.get(column):
                # The move keeps what the price rests on; without it the price cannot be judged, so nothing moves.
                raise ValueError(
                    f"instance_types.csv line {line}, column {column!r}: required because price_cny_per_hour is set"
                )
        key = (row[at["instance_type"]], cell["price_region"], "payg")
        new = [*key, cell["price_cny_per_hour"], "CNY", cell["price_date"], cell["price_source"]]
        new += [cell["price_confidence"], MOVED_NOTE]
        old = have.get(key)
        if old is None:
            prices.append(new)
            have[key] = new
            added += 1
        elif (float(old[3]), old[4]) == (float(new[3]), "CNY"):
            kept += 1
        else:
            raise ValueError(
                f"instance_types.csv line {line}, column 'price_cny_per_hour': {new[3]} CNY for {'/'.join(key)}, "
                f"but {PRICES_FILE} already has {old[3]} {old[4]}; settle which is right by hand first"
            )
    keep = [i for i, c in enumerate(header) if c not in LEGACY_PRICE_SCHEMA]
    texts = {
        "instance_types.csv": _text([[row[i] for i in keep] for row in types]),
        PRICES_FILE: _text(prices),
    }
    replace_checked(directory, texts)
    return MoveResult(added, kept, dropped)
