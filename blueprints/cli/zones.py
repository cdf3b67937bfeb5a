"""CLI: ``aitrain zones`` asks ECS which catalog GPU types each
region offers, and in which zones; ``--write`` records it."""

from __future__ import annotations

import typer

from blueprints.cli.catalog_copy import (
    CatalogDirOption,
    RegionOption,
    TodayOption,
    WriteOption,
    start_survey,
    unknown_region_problems,
)
from blueprints.cli.support import reports_user_errors, sdk_classes

HELP = (
    "Ask ECS DescribeAvailableResource (DestinationResource "
    "InstanceType, pay-as-you-go; one read-only call per region) "
    "which of the catalog's GPU instance types each region offers, and in which zones, for your account today. "
    "Prints the answer; with --write it records it in a COPY of the catalog (--catalog-dir, never the shipped one): "
    'instance_zones.csv rows (source "DescribeAvailableResource, <region>, <date>"), the types\' `regions` cells, '
    "zones the region's row in regions.csv lacked, and VERSION (suffix +zones.<date>). Point AITRAIN_CATALOG_DIR at "
    "that folder and the region filter of `aitrain recommend` / `catalog` and the plan's zone choice use it.\n\n"
    "The answer wins over the catalog's documents (rows naming a region without zones, e.g. a dated price listing): "
    "it prints the types a document names in an answered region that the answer does not list, and --write replaces "
    "every row of the surveyed types in each region that answered.\n\n"
    "A type a surveyed region does not list leaves that region's `regions` cell; survey every region you plan in "
    "(the default: all regions of the catalog), or the types found "
    "elsewhere are filtered out of the regions not asked.\n\n"
    "Exit codes: 0 every region answered; 1 a region's call failed (listed; nothing recorded for it); 2 invalid input "
    "(unknown region, --write without --catalog-dir, the shipped catalog, an invalid catalog folder) or the SDKs are "
    "not installed; 3 no credentials found (checked before anything else)."
)


def zones(
    region: RegionOption = None,
    catalog_dir: CatalogDirOption = None,
    write_: WriteOption = False,
    today: TodayOption = None,
) -> None:
    """Ask which zones offer the catalog's GPU types and optionally record it in a catalog copy (see HELP)."""
    from blueprints.catalog import load_catalog
    from blueprints.core.errors import UserInputError
    from blueprints.preflight import zones_write

    survey = start_survey(region, catalog_dir, write_, today)
    source, day, catalog, regions = survey.credentials, survey.day, survey.catalog, survey.regions
    unknown = unknown_region_problems(survey, catalog_dir)
    if unknown:
        raise UserInputError("unknown region", unknown)

    from blueprints.preflight.aliyun import SdkReader
    from blueprints.preflight.zones import SOURCE_PREFIX, ask, render_text, unlisted_named

    classes = sdk_classes("aitrain zones")
    surveyed = sorted(it.instance_type for it in catalog.instance_types.values() if it.is_gpu)
    answers = ask(regions, surveyed, lambda r: SdkReader(r, client_classes=classes))
    typer.echo(f"credentials: {source}")
    typer.echo(render_text(answers, day, len(surveyed)), nl=False)
    named = [
        (z.instance_type, z.region)
        for z in catalog.instance_zones
        if z.instance_type in surveyed and not z.source.startswith(SOURCE_PREFIX)
    ]
    for answer in answers:
        stale = unlisted_named(answer, named)
        if stale:
            typer.echo(
                f"{answer.region}: the catalog's documents name {len(stale)} type(s) here that the answer does not "
                f"list (the answer wins; --write drops those rows): {', '.join(stale)}"
            )
    nowhere = sorted(set(surveyed) - {t for a in answers for t in a.offered()})
    if nowhere and any(a.answered for a in answers):
        # The catalog has no way to say "nowhere": an empty `regions` cell means unknown, and unknown types stay in.
        typer.echo(
            f"not offered in any region asked ({len(nowhere)}; the catalog keeps them as unknown): {', '.join(nowhere)}"
        )
    if write_ and catalog_dir is not None:
        result = zones_write.write(catalog_dir, answers, surveyed, day)
        typer.echo(
            f"wrote {catalog_dir}: {result.rows} instance_zones.csv rows, {result.regions_cells} regions cells "
            f"changed, VERSION {result.version}"
        )
        for name, added in result.new_zones.items():
            typer.echo(f"  regions.csv {name}: added zones {', '.join(added)}")
        recorded = {z.region for z in load_catalog(catalog_dir).instance_zones if z.source.startswith(SOURCE_PREFIX)}
        missing = sorted(set(catalog.regions) - set(regions) - recorded)
        if missing:
            typer.echo(
                f"never asked: {', '.join(missing)}; the region filter now drops "
                "the types found above from these regions until you ask them too"
            )
    if any(not a.answered for a in answers):
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add the ``zones`` command to the main app."""
    app.command("zones", help=HELP)(reports_user_errors(zones))
