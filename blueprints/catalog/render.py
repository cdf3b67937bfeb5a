"""Pure helpers behind ``aitrain catalog``: catalog rows as plain dicts, as an aligned text table and as Markdown."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from blueprints.catalog.pricing import instance_price
from blueprints.catalog.queries import Catalog
from blueprints.core.text import md_table, table

UNKNOWN = "?"
"""Shown for a value the catalog does not know."""

NO_MATCH = "(no instance types match)"
"""Printed instead of an empty table."""

NOT_APPLICABLE = "-"
"""Shown for the GPU model of a CPU-only type (known to have none, so not unknown)."""

INFERRED = " (inferred)"
"""Appended to a GPU model the sources do not name but whose documented figures identify it (README "Inferred GPU
models")."""

# (header, key in the row dict, right-aligned?)
_TABLE_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("instance_type", "instance_type", False),
    ("gpu", "gpu_model", False),
    ("#gpu", "gpu_count", True),
    ("vcpus", "vcpus", True),
    ("memory_gib", "memory_gib", True),
    ("network_gbps", "network_gbps", True),
    ("rdma", "rdma", False),
    ("price_cny_per_hour", "price_cny_per_hour", True),
)


def catalog_rows(
    catalog: Catalog, gpu: str | None = None, min_gpus: int | None = None, region: str | None = None
) -> list[dict[str, Any]]:
    """Instance types as dicts keyed by the instance_types.csv columns (typed; None = unknown; regions a list).

    ``gpu`` matches a GPU model or a model prefix (``A100`` covers both A100 sizes), and ``region`` keeps the types
    known to be sold there plus those whose regions are unknown, as in ``Catalog.query``; sorted by instance type.
    """
    rows = []
    for it in catalog.query(gpu_model=gpu, min_gpus=min_gpus, region=region):
        row = dataclasses.asdict(it)
        row["regions"] = list(it.regions)
        row.update(_price_cells(catalog, it.instance_type, region))
        rows.append(row)
    return rows


def _price_cells(catalog: Catalog, instance_type: str, region: str | None) -> dict[str, Any]:
    """The price columns of a row: the price a plan in ``region`` would use; without a region, the newest quote."""
    quotes = catalog.prices_of(instance_type)
    where = region or (max(quotes, key=lambda q: q.date).region if quotes else None)
    price = instance_price(catalog, instance_type, where or "")
    return {
        "price_cny_per_hour": None if price.cny is None else round(price.cny, 4),
        "price_region": price.region,
        "price_date": price.date,
        "price_status": price.status,
        "price_source": price.source,
        "priced_regions": sorted({q.region for q in quotes}),
    }


def render_catalog_table(rows: Sequence[dict[str, Any]]) -> str:
    """A plain-text table of ``rows`` (from ``catalog_rows``) with aligned columns; unknowns shown as ``?``."""
    if not rows:
        return NO_MATCH
    return table(*_table_parts(rows))


def render_catalog_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The same table as ``render_catalog_table`` in Markdown (every cell escaped), for a pull request or a doc."""
    if not rows:
        return NO_MATCH
    return md_table(*_table_parts(rows))


def _table_parts(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[int]]:
    headers = [header for header, _, _ in _TABLE_COLUMNS]
    body = [[_cell(row, key) for _, key, _ in _TABLE_COLUMNS] for row in rows]
    right = [i for i, (_, _, is_right) in enumerate(_TABLE_COLUMNS) if is_right]
    return headers, body, right


def _cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if key == "gpu_model" and value is None:
        # A CPU type has no GPU (known); a GPU type whose model the sources do not name is unknown.
        return NOT_APPLICABLE if not row.get("gpu_count") else UNKNOWN
    if value is None:
        return UNKNOWN
    if key == "gpu_model" and row.get("gpu_model_confidence") == "inferred":
        return f"{value}{INFERRED}"
    if key == "price_cny_per_hour":
        return f"{value:.2f}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
