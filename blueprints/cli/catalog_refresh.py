"""CLI: ``aitrain catalog refresh`` asks ECS DescribePrice what the catalog's instance types cost per hour in each
region today; ``--write`` records it in a catalog copy."""

from __future__ import annotations

from typing import Annotated, Optional

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
    "Ask ECS DescribePrice (ResourceType instance, PriceUnit Hour: pay-as-you-go; one read-only call per region and "
    "type) what the catalog's instance types cost per hour in each region, for your account today. Prints the answer "
    "(the list price of the instance alone, without disk or bandwidth, in the account's currency: CNY on the China "
    "site, USD on the international site; your trade price beside it when discounts apply); with --write it records "
    "it in a COPY of the catalog (--catalog-dir, never the shipped one): one instance_prices.csv row per type and "
    'region (source "DescribePrice, <region>, <date>", confidence high; a USD price is converted with prices.csv '
    "usd_cny when used) and VERSION (suffix +prices.<date>). Point AITRAIN_CATALOG_DIR at that folder and plans, "
    "`aitrain recommend` and `aitrain catalog` price with it.\n\n"
    "A type the region has no price for (PriceNotFound, a retired or unsold type) keeps its rows as they were.\n\n"
    "Exit codes: 0 every call answered; 1 a call failed (listed; that type's rows are kept as they were); 2 invalid "
    "input (unknown region or type, --write without --catalog-dir, the shipped catalog, an invalid catalog folder) or "
    "the SDKs are not installed; 3 no credentials found (checked before anything else)."
)


def refresh(
    region: RegionOption = None,
    instance_type: Annotated[
        Optional[list[str]],
        typer.Option(
            "--type",
            help="An instance type of the catalog; repeatable. "
            "Default: every GPU type of the catalog, and every other type it already prices.",
        ),
    ] = None,
    catalog_dir: CatalogDirOption = None,
    write_: WriteOption = False,
    today: TodayOption = None,
) -> None:
    """Ask what the catalog's types cost per hour and optionally record it in a catalog copy (see HELP)."""
    from blueprints.core.errors import Problem, UserInputError, did_you_mean
    from blueprints.preflight import prices_write

    survey = start_survey(region, catalog_dir, write_, today)
    source, day, catalog, regions = survey.credentials, survey.day, survey.catalog, survey.regions
    # Default: every GPU type, and every other type the catalog already prices (login and controller nodes).
    default = sorted(t for t, it in catalog.instance_types.items() if it.is_gpu or catalog.prices_of(t))
    types = list(dict.fromkeys(instance_type or default))
    problems = unknown_region_problems(survey, catalog_dir) + [
        Problem(
            "--type",
            t,
            "must be an instance type of the catalog's instance_types.csv",
            did_you_mean(t, catalog.instance_types),
        )
        for t in types
        if t not in catalog.instance_types
    ]
    if problems:
        raise UserInputError("unknown region or instance type", problems)

    from blueprints.preflight.aliyun import SdkReader
    from blueprints.preflight.prices import ask, render_text

    classes = sdk_classes("aitrain catalog refresh")
    answers = ask(regions, types, lambda r: SdkReader(r, client_classes=classes))
    typer.echo(f"credentials: {source}")
    typer.echo(render_text(answers, day), nl=False)
    if write_ and catalog_dir is not None:
        result = prices_write.write(catalog_dir, answers, day)
        typer.echo(
            f"wrote {catalog_dir}: {result.replaced} instance_prices.csv rows replaced, {result.added} added, "
            f"VERSION {result.version}"
        )
    if any(a.failures for a in answers):
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add the ``refresh`` command to the ``catalog`` group."""
    app.command("refresh", help=HELP)(reports_user_errors(refresh))
