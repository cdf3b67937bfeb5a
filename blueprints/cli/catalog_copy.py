"""The options and first steps that `aitrain zones` and `aitrain catalog refresh` share: ask the cloud about the
catalog's regions with the user's credentials, and with ``--write`` record the answer in a copy of the catalog."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from blueprints.cli.support import require_credentials

if TYPE_CHECKING:
    from blueprints.catalog import Catalog
    from blueprints.core.errors import Problem

RegionOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--region",
        help="A region_id of the catalog's regions.csv; repeatable. Default: every region of the catalog.",
    ),
]
CatalogDirOption = Annotated[
    Optional[Path],
    typer.Option(
        "--catalog-dir",
        help="A copy of the catalog (cp -r blueprints/catalog/data DIR) to read, and with --write to update.",
    ),
]
WriteOption = Annotated[bool, typer.Option("--write", help="Record the answer in --catalog-dir.")]
TodayOption = Annotated[
    Optional[str],
    typer.Option(
        "--today", help="The date recorded in the rows (YYYY-MM-DD); default: $AITRAIN_TODAY, else the system date."
    ),
]


@dataclass(frozen=True)
class CatalogSurvey:
    """What a survey of the cloud starts from: the credentials' source, the day it records, the catalog it reads
    (the copy when given) and the regions it asks."""

    credentials: str
    day: str
    catalog: "Catalog"
    regions: list[str]


def start_survey(region: list[str] | None, catalog_dir: Path | None, write_: bool, today: str | None) -> CatalogSurvey:
    """Credentials first (exit 3 without), then the date, the ``--write`` checks (a copy, never the shipped
    catalog), the catalog and the regions asked (default: all of the catalog's); bad input is exit 2."""
    from blueprints.catalog import load_catalog
    from blueprints.core import clock
    from blueprints.core.errors import Problem, UserInputError
    from blueprints.preflight import zones_write

    credentials = require_credentials()
    day = (clock.parse_today(today, "--today") if today else clock.today()).isoformat()
    if write_ and catalog_dir is None:
        raise UserInputError(
            "--write needs a catalog copy",
            [
                Problem(
                    "--catalog-dir",
                    None,
                    "give the folder to write (cp -r blueprints/catalog/data "
                    "DIR first); the shipped catalog is never written",
                )
            ],
        )
    if write_ and catalog_dir is not None:
        zones_write.check_copy(catalog_dir)
    catalog = load_catalog(catalog_dir)
    return CatalogSurvey(credentials, day, catalog, list(dict.fromkeys(region or catalog.regions)))


def unknown_region_problems(survey: CatalogSurvey, catalog_dir: Path | None) -> list["Problem"]:
    """One problem per asked region that the catalog's regions.csv does not have."""
    from blueprints.core.errors import Problem, join_allowed

    where = f"{catalog_dir}/regions.csv" if catalog_dir else "the catalog's regions.csv (copy the catalog to add one)"
    allowed = join_allowed(sorted(survey.catalog.regions))
    return [
        Problem("--region", r, f"must be a region_id in {where}: {allowed}")
        for r in survey.regions
        if r not in survey.catalog.regions
    ]
