"""Per-family GPU software pins: the shipped pins, the minimum driver per GPU architecture, and the images that ship
the stack. Each broken copy of the catalog (AITRAIN_CATALOG_DIR) must stop with file, line and column."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.catalog import Catalog, load_catalog
from blueprints.catalog.software import driver_key
from tests.catalog.test_loader_checks import data, edit, index_of, message, rows  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


BLACKWELL = ("gn9t", "ebmgn9t", "ebmgn9g", "ebmgn9ge", "ebmgn9gc")
ISSUE_FAMILIES = (
    "ebmgn8is gn8ia ebmgn8ia ebmgn9g ebmgn9ge ebmgn9gc gn9t ebmgn9t gn8t ebmgn8t ebmgn8te ebmgn7v ebmgn8i ebmgn7ix"
).split()


def test_every_family_of_the_issue_has_a_pin_with_nccl_and_a_source(catalog):
    for family in ISSUE_FAMILIES:
        pin = catalog.gpu_software[family]
        assert pin.driver_version and pin.cuda_version and pin.nccl_version and pin.source


def test_blackwell_generation_families_are_pinned_to_the_570_series_acks_list_names(catalog):
    for family in BLACKWELL:
        pin = catalog.gpu_software[family]
        assert pin.driver_version.split(".")[0] == "570", family
        assert driver_key(pin.cuda_version) >= (12, 8)
    assert "570.169" in catalog.gpu_software["gn9t"].source and "ecs.gn9t" in catalog.gpu_software["gn9t"].source


def test_fabric_manager_is_pinned_to_the_driver_exactly_where_it_runs(catalog):
    for family, pin in catalog.gpu_software.items():
        if pin.fabric_manager_min_gpus:
            assert pin.fabric_manager_version == pin.driver_version, family
        else:
            assert pin.fabric_manager_version is None, family


def test_every_shipped_gpu_family_has_a_driver_minimum_and_meets_it(catalog):
    from blueprints.catalog.software import minimum_for

    minimums = tuple(enumerate(catalog.driver_minimums, start=2))
    for family, pin in catalog.gpu_software.items():
        models = {it.gpu_model for it in catalog.instance_types.values() if it.family == family and it.gpu_model}
        found = minimum_for(family, models, minimums)
        assert found is not None, f"{family} has no row in gpu_driver_minimums.csv"
        assert driver_key(pin.driver_version) >= driver_key(found[1].min_driver_version)


def test_a_family_pinned_below_its_gpus_minimum_is_refused(data):  # noqa: F811
    line = edit(
        data, "gpu_software.csv", index_of(data, "gpu_software.csv", "family", "gn9t"), driver_version="550.127.08"
    )
    blackwell = index_of(data, "gpu_driver_minimums.csv", "architecture", "Blackwell") + 2
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'driver_version': 550.127.08 is older than 570.26, the oldest driver "
        f"Blackwell GPUs run on (gpu_driver_minimums.csv line {blackwell}: CUDA 12.8 is the first to support them); "
        "pin 570.26 or newer"
    )


def test_the_minimum_applies_by_gpu_model_too(data):  # noqa: F811
    # gn7e is covered by its family name; drop it so only its A100 GPU model (instance_types.csv) links it.
    table = rows(data, "gpu_driver_minimums.csv")
    ampere = next(r for r in table if r["architecture"] == "Ampere GA100")
    ampere["families"] = ";".join(f for f in ampere["families"].split(";") if f != "gn7e")
    from tests.catalog.test_loader_checks import write

    write(data, "gpu_driver_minimums.csv", table)
    line = edit(data, "gpu_software.csv", index_of(data, "gpu_software.csv", "family", "gn7e"), driver_version="440.1")
    assert "440.1 is older than 450.36.06, the oldest driver Ampere GA100 GPUs run on" in message(data)
    assert message(data).startswith(f"gpu_software.csv line {line}, column 'driver_version'")


def test_a_fabric_manager_pin_other_than_the_driver_is_refused(data):  # noqa: F811
    line = edit(
        data, "gpu_software.csv", index_of(data, "gpu_software.csv", "family", "gn7e"), fabric_manager_version="550.1"
    )
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'fabric_manager_version': 550.1 must equal driver_version 550.127.08 "
        "(Fabric Manager runs only at the driver's exact version)"
    )


@pytest.mark.parametrize(
    ("family", "cells"),
    [
        ("gn7e", {"fabric_manager_version": ""}),  # an NVSwitch family whose Fabric Manager pin went missing
        ("gn7i", {"fabric_manager_version": "550.127.08"}),  # a stray pin on a family that never runs it
    ],
)
def test_a_fabric_manager_pin_goes_with_fabric_manager_min_gpus_and_only_with_it(data, family, cells):  # noqa: F811
    line = edit(data, "gpu_software.csv", index_of(data, "gpu_software.csv", "family", family), **cells)
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'fabric_manager_version': is set exactly when fabric_manager_min_gpus is"
    )


def test_a_gpu_image_shipping_a_driver_older_than_its_families_need_is_refused(data):  # noqa: F811
    index = next(i for i, r in enumerate(rows(data, "images.csv")) if r["families"])
    line = edit(data, "images.csv", index, families="gn9t", driver_version="560.35.03")
    assert message(data).startswith(
        f"images.csv line {line}, column 'driver_version': 560.35.03 is older than 570.26, the oldest driver gn9t's "
        "Blackwell GPUs run on"
    )


def test_a_gpu_image_for_an_unknown_family_is_refused(data):  # noqa: F811
    index = next(i for i, r in enumerate(rows(data, "images.csv")) if r["families"])
    line = edit(data, "images.csv", index, families="gn99")
    assert message(data) == f"images.csv line {line}, column 'families': 'gn99' is not a family in gpu_software.csv"


def test_cli_exits_2_naming_file_row_and_column_for_a_catalog_copy_pinned_too_old(data):  # noqa: F811
    line = edit(
        data, "gpu_software.csv", index_of(data, "gpu_software.csv", "family", "ebmgn9t"), driver_version="535.1"
    )
    done = subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", "catalog", "--min-gpus", "8"],
        capture_output=True,
        text=True,
        env=dict(os.environ, AITRAIN_CATALOG_DIR=str(data)),
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert f"gpu_software.csv line {line}, column 'driver_version': 535.1 is older than 570.26" in done.stderr
