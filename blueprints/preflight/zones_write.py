"""Record the regions' answers in a COPY of the catalog: instance_zones.csv rows, ``regions`` cells, new zones, VERSION.

Never the shipped catalog (``blueprints/catalog/data``): the answer is about one account on one day. The new files
are checked with ``load_catalog`` in a scratch copy before any file of the user's directory is replaced.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from blueprints.catalog import load_catalog
from blueprints.catalog.loader import CATALOG_DIR
from blueprints.catalog.rewrite import replace_checked
from blueprints.core.errors import Problem, UserInputError
from blueprints.preflight.zones import RegionAnswer, source_text

VERSION_TAG = "+zones."


@dataclass(frozen=True)
class WriteResult:
    """What the write changed: zone rows written, types whose ``regions`` cell changed, zones added per region."""

    rows: int
    regions_cells: int
    new_zones: dict[str, tuple[str, ...]]
    version: str


def check_copy(directory: Path) -> None:
    """Refuse the shipped catalog and anything that is not a valid catalog directory (exit 2 through UserInputError)."""
    if not directory.is_dir():
        raise UserInputError(
            "invalid catalog directory",
            [
                Problem(
                    "--catalog-dir",
                    str(directory),
                    "must be an existing folder holding a copy of the catalog (cp -r blueprints/catalog/data DIR)",
                )
            ],
        )
    if directory.resolve() == CATALOG_DIR.resolve():
        raise UserInputError(
            "refusing to write the shipped catalog",
            [
                Problem(
                    "--catalog-dir",
                    str(directory),
                    "must be a copy (cp -r blueprints/catalog/data DIR), then point AITRAIN_CATALOG_DIR at it",
                )
            ],
        )
    load_catalog(directory)  # a CatalogError (exit 2) names the file, line and column


def write(directory: Path, answers: Iterable[RegionAnswer], surveyed: Iterable[str], day: str) -> WriteResult:
    """Merge the answered regions into the catalog copy at
    ``directory``; ``surveyed`` = the types that were asked about.

    For each answered region: that region's rows for the surveyed types are replaced by the answer (a type it does
    not list loses its row and the region leaves its ``regions`` cell), zones the answer names are added to the
    region's row in regions.csv. Other regions' rows, family rows and other types are kept as they were.
    """
    answered = [a for a in answers if a.answered]
    types = set(surveyed)
    texts = {
        name: (directory / name).read_text(encoding="utf-8")
        for name in ("regions.csv", "instance_zones.csv", "instance_types.csv", "VERSION")
    }

    region_rows = _rows(texts["regions.csv"])
    new_zones: dict[str, tuple[str, ...]] = {}
    by_region = {row[0]: row for row in region_rows[1:]}
    missing = [a.region for a in answered if a.region not in by_region]
    if missing:
        raise UserInputError(
            "region not in the catalog",
            [
                Problem("--region", r, f"add a row for it to {directory / 'regions.csv'} first (zones may be empty)")
                for r in missing
            ],
        )
    for answer in answered:
        row = by_region[answer.region]
        known = [z for z in row[2].split(";") if z]
        added = tuple(z for z in answer.zones if z not in known)
        if added:
            new_zones[answer.region] = added
            row[2] = ";".join(known + list(added))
            row[3] = f"{row[3]}; zones {', '.join(added)} from {source_text(answer.region, day)}"
    texts["regions.csv"] = _text(region_rows)

    zone_rows = _rows(texts["instance_zones.csv"])
    done = {a.region for a in answered}
    kept = [r for r in zone_rows[1:] if not (r[0] in types and r[1] in done)]
    fresh = [
        [t, a.region, ";".join(a.zones_of(t)), source_text(a.region, day), day] for a in answered for t in a.offered()
    ]
    texts["instance_zones.csv"] = _text([zone_rows[0]] + sorted(kept + fresh, key=lambda r: (r[0], r[1])))

    it_rows = _rows(texts["instance_types.csv"])
    column = it_rows[0].index("regions")
    offered = {(t, a.region) for a in answered for t in a.offered()}
    changed = 0
    for row in it_rows[1:]:
        if row[0] not in types:
            continue
        old = [r for r in row[column].split(";") if r]
        new = sorted({r for r in old if r not in done} | {r for r in done if (row[0], r) in offered})
        if new != old:
            row[column] = ";".join(new)
            changed += 1
    texts["instance_types.csv"] = _text(it_rows)

    version = texts["VERSION"].strip().split(VERSION_TAG)[0] + VERSION_TAG + day
    texts["VERSION"] = version + "\n"
    replace_checked(directory, texts)
    return WriteResult(len(fresh), changed, new_zones, version)


def _rows(text: str) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(text, newline="")) if any(row)]


def _text(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()
