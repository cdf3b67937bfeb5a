"""Reading ``instance_types.csv`` (with or without the price columns it had before) and ``instance_prices.csv``.

Prices moved out of ``instance_types.csv`` into ``instance_prices.csv`` (one row per instance type, region and
billing), so a type can carry a price for every region a source quotes. An older catalog copy may still carry the
``price_*`` columns: they are read only to check that each price they hold has its row in ``instance_prices.csv``
(``tools/drop_price_columns.py`` moves them and drops the columns), never used.
"""

from __future__ import annotations

import csv
import pathlib
from typing import Any, Mapping

from blueprints.catalog.records import InstancePrice, InstanceType, Region
from blueprints.catalog.schema import INSTANCE_PRICE_SCHEMA, INSTANCE_SCHEMA, LEGACY_PRICE_SCHEMA, Schema, read_rows

PRICES_FILE = "instance_prices.csv"
MOVE_HINT = "run tools/drop_price_columns.py on the catalog folder to move them into instance_prices.csv"


def _fail(file: str, line: int, column: str, message: str) -> ValueError:
    return ValueError(f"{file} line {line}, column {column!r}: {message}")


def _header(path: pathlib.Path) -> list[str]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return next(csv.reader(handle), [])
    except FileNotFoundError:
        return []  # read_rows reports the missing file


def read_instance_rows(directory: pathlib.Path) -> tuple[list[tuple[int, dict[str, Any]]], dict[int, dict[str, Any]]]:
    """``instance_types.csv`` rows parsed by ``INSTANCE_SCHEMA``, and the legacy price cells by line (usually none).

    A header with the legacy price columns is accepted only when, without them, it is exactly ``INSTANCE_SCHEMA``.
    """
    path = directory / "instance_types.csv"
    header = _header(path)
    legacy = [c for c in header if c in LEGACY_PRICE_SCHEMA]
    if not legacy or [c for c in header if c not in LEGACY_PRICE_SCHEMA] != list(INSTANCE_SCHEMA):
        return read_rows(path, INSTANCE_SCHEMA), {}
    schema: Schema = {c: INSTANCE_SCHEMA.get(c) or LEGACY_PRICE_SCHEMA[c] for c in header}
    rows = read_rows(path, schema)
    kept = [(line, {k: v for k, v in values.items() if k not in LEGACY_PRICE_SCHEMA}) for line, values in rows]
    old = {line: {k: values[k] for k in ["instance_type", *legacy]} for line, values in rows}
    return kept, old


def load_instance_prices(
    directory: pathlib.Path,
    instance_types: Mapping[str, InstanceType],
    regions: Mapping[str, Region],
    legacy: Mapping[int, Mapping[str, Any]],
) -> list[InstancePrice]:
    """``instance_prices.csv``: known types and regions, one row per (type, region, billing); then the legacy check."""
    path = directory / PRICES_FILE
    if not path.exists() and any(cells.get("price_cny_per_hour") is not None for cells in legacy.values()):
        raise ValueError(f"{PRICES_FILE}: missing, and instance_types.csv still holds prices; {MOVE_HINT}")
    rows = read_rows(path, INSTANCE_PRICE_SCHEMA)
    seen: dict[tuple[str, str, str], int] = {}
    for line, v in rows:
        if v["instance_type"] not in instance_types:
            raise _fail(PRICES_FILE, line, "instance_type", f"{v['instance_type']!r} is not in instance_types.csv")
        if v["region"] not in regions:
            raise _fail(
                PRICES_FILE,
                line,
                "region",
                f"{v['region']!r} is not a region_id in regions.csv (add the region there first)",
            )
        key = (v["instance_type"], v["region"], v["billing"])
        if key in seen:
            raise _fail(PRICES_FILE, line, "region", f"duplicate {'/'.join(key)} (first on line {seen[key]})")
        seen[key] = line
    prices = [InstancePrice(**v) for _, v in rows]
    _check_legacy(legacy, prices)
    return prices


def _check_legacy(legacy: Mapping[int, Mapping[str, Any]], prices: list[InstancePrice]) -> None:
    # An old price cell that instance_prices.csv does not hold would be silently ignored: refuse it instead.
    for line, cells in legacy.items():
        amount = cells.get("price_cny_per_hour")
        if amount is None:
            continue
        name, region = cells["instance_type"], cells.get("price_region")
        if not any(
            p.instance_type == name and p.region == region and p.currency == "CNY" and p.price_per_hour == amount
            for p in prices
        ):
            raise _fail(
                "instance_types.csv",
                line,
                "price_cny_per_hour",
                f"prices live in {PRICES_FILE} now and it has no {name} / {region} row of {amount:g} CNY; {MOVE_HINT}",
            )
