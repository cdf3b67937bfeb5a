"""Every check of the catalog loader, each with a fixture that breaks exactly one thing.

The shipped data is copied to a temporary directory, one cell is changed, and the loader's error must
name the file, the line, the column and the problem. Deleting any check in ``blueprints/catalog/loader.py``
makes one of these tests fail.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from blueprints.catalog import CATALOG_DIR, CatalogError, instance_price, load_catalog


@pytest.fixture
def data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, target)
    return target


def rows(directory: Path, file: str) -> list[dict[str, str]]:
    with (directory / file).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write(directory: Path, file: str, table: list[dict[str, str]], header: list[str] | None = None) -> None:
    header = header or list(table[0])
    with (directory / file).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)


def edit(directory: Path, file: str, index: int, **cells: str) -> int:
    """Change cells of row ``index``; returns its line in the file (the header is line 1)."""
    table = rows(directory, file)
    table[index].update(cells)
    write(directory, file, table)
    return index + 2


def index_of(directory: Path, file: str, column: str, value: str) -> int:
    return next(i for i, r in enumerate(rows(directory, file)) if r[column] == value)


def zone_rows(directory: Path, *table: dict[str, str]) -> int:
    """Write ``instance_zones.csv`` with these rows; returns the line of the last one."""
    header = ["instance_type", "region", "zones", "source", "source_date"]
    full = [{"source": "https://example.com/zones", "source_date": "2026-11-30", **r} for r in table]
    write(directory, "instance_zones.csv", full, header)
    return len(table) + 1


def message(directory: Path) -> str:
    with pytest.raises(CatalogError) as info:
        load_catalog(directory)
    return info.value.message


# ----------------------------------------------------------------------------------------------
# Files and VERSION
# ----------------------------------------------------------------------------------------------


def test_missing_version_file(data):
    (data / "VERSION").unlink()
    assert message(data) == f"VERSION: catalog version file missing at {data / 'VERSION'}"


def test_empty_version_file(data):
    (data / "VERSION").write_text("\n", encoding="utf-8")
    assert message(data) == "VERSION line 1: must hold the catalog version, e.g. 2026-11-30.1"


@pytest.mark.parametrize(
    "file",
    [
        "gpus.csv",
        "instance_types.csv",
        "regions.csv",
        "storage.csv",
        "aliases.csv",
        "images.csv",
        "instance_zones.csv",
        "gpu_software.csv",
        "disks.csv",
        "local_disks.csv",
    ],
)
def test_missing_file(data, file):
    (data / file).unlink()
    assert message(data) == f"{file}: catalog file missing at {data / file}"


# ----------------------------------------------------------------------------------------------
# Unique keys
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "file, column",
    [
        ("gpus.csv", "gpu_model"),
        ("instance_types.csv", "instance_type"),
        ("regions.csv", "region_id"),
        ("aliases.csv", "alias"),
        ("gpu_software.csv", "family"),
    ],
)
def test_duplicate_key(data, file, column):
    first = rows(data, file)[0][column]
    line = edit(data, file, 1, **{column: first})
    assert message(data) == f"{file} line {line}, column {column!r}: duplicate {first!r} (first on line 2)"


def test_duplicate_storage_tier(data):
    first = rows(data, "storage.csv")[0]
    line = edit(data, "storage.csv", 1, kind=first["kind"], tier=first["tier"])
    assert (
        message(data)
        == f"storage.csv line {line}, column 'tier': duplicate {first['kind']}/{first['tier']} (first on line 2)"
    )


# ----------------------------------------------------------------------------------------------
# instance_types.csv
# ----------------------------------------------------------------------------------------------


def test_instance_type_without_ecs_prefix(data):
    line = edit(data, "instance_types.csv", 0, instance_type="gn7e-c16g1.32xlarge")
    assert message(data) == f"instance_types.csv line {line}, column 'instance_type': real ECS types start with 'ecs.'"


def test_instance_gpu_model_not_in_gpus(data):
    line = edit(data, "instance_types.csv", 0, gpu_model="A100-SXM9")
    assert (
        message(data)
        == f"instance_types.csv line {line}, column 'gpu_model': 'A100-SXM9' is not a gpu_model in gpus.csv"
    )


def test_cpu_family_with_gpus(data):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.g7.large")
    line = edit(data, "instance_types.csv", i, gpu_count="1")
    assert message(data) == (
        f"instance_types.csv line {line}, column 'gpu_count': must be > "
        "0 exactly when gpu_model is set or the family is a GPU family"
    )


@pytest.mark.parametrize(
    "column, why",
    [
        ("date", "a price without the day it was read cannot be judged"),
        ("source", "a price needs the page, file or API answer it was read from"),
    ],
)
def test_instance_price_without_its_source_or_date(data, column, why):
    line = edit(data, "instance_prices.csv", 0, **{column: ""})
    assert message(data) == f"instance_prices.csv line {line}, column {column!r}: must not be empty: {why} (got '')"


@pytest.mark.parametrize(
    "cells, column, problem",
    [
        (
            {"price_per_hour": ""},
            "price_per_hour",
            "must be a number > 0 (an unknown price has no row: never 0 or empty)",
        ),
        ({"price_per_hour": "0"}, "price_per_hour", "must be > 0"),
        ({"billing": "spot"}, "billing", "must be one of payg"),
        ({"currency": "EUR"}, "currency", "must be one of CNY, USD"),
        ({"confidence": "sure"}, "confidence", "must be one of high, medium, low"),
        ({"date": "June 2023"}, "date", "must be a date YYYY-MM-DD (or YYYY-MM / YYYY when the source is no finer)"),
    ],
)
def test_instance_price_cells(data, cells, column, problem):
    line = edit(data, "instance_prices.csv", 0, **cells)
    got = next(iter(cells.values()))
    assert message(data) == f"instance_prices.csv line {line}, column {column!r}: {problem} (got {got!r})"


def test_instance_price_of_an_unknown_type_or_region(data):
    line = edit(data, "instance_prices.csv", 0, instance_type="ecs.gn99.8xlarge")
    assert message(data) == (
        f"instance_prices.csv line {line}, column 'instance_type': 'ecs.gn99.8xlarge' is not in instance_types.csv"
    )
    edit(data, "instance_prices.csv", 0, instance_type=rows(CATALOG_DIR, "instance_prices.csv")[0]["instance_type"])
    edit(data, "instance_prices.csv", 0, region="mars-north-1")
    assert message(data) == (
        f"instance_prices.csv line {line}, column 'region': 'mars-north-1' is not a region_id in regions.csv "
        "(add the region there first)"
    )


def test_instance_price_twice_for_one_region(data):
    table = rows(data, "instance_prices.csv")
    write(data, "instance_prices.csv", [*table, {**table[0], "price_per_hour": "1"}])
    key = f"{table[0]['instance_type']}/{table[0]['region']}/payg"
    assert message(data) == (
        f"instance_prices.csv line {len(table) + 2}, column 'region': duplicate {key} (first on line 2)"
    )


def _with_legacy_price(directory: Path, amount: str) -> tuple[int, str]:
    """instance_types.csv as it was before instance_prices.csv: the price columns back, one row priced."""
    table = rows(directory, "instance_types.csv")
    header = list(table[0])
    if "price_cny_per_hour" not in header:
        at = header.index("spec_source")
        header[at:at] = ["price_cny_per_hour", "price_region", "price_date", "price_source", "price_confidence"]
    for row in table:
        row.setdefault("price_cny_per_hour", "")
        for column in ("price_region", "price_date", "price_source", "price_confidence"):
            row.setdefault(column, "")
    i = index_of(directory, "instance_types.csv", "instance_type", "ecs.gn7e-c16g1.32xlarge")
    table[i].update(
        price_cny_per_hour=amount,
        price_region="cn-shanghai",
        price_date="2023-06",
        price_source="https://example.com/prices",
        price_confidence="medium",
    )
    write(directory, "instance_types.csv", table, header)
    return i + 2, table[i]["instance_type"]


def test_an_old_price_column_that_instance_prices_lacks_is_refused(data):
    line, name = _with_legacy_price(data, "300")
    assert message(data) == (
        f"instance_types.csv line {line}, column 'price_cny_per_hour': prices live in instance_prices.csv now and it "
        f"has no {name} / cn-shanghai row of 300 CNY; run tools/drop_price_columns.py on the catalog folder to move "
        "them into instance_prices.csv"
    )


def test_an_old_price_column_without_instance_prices_is_refused(data):
    _with_legacy_price(data, "277.93")
    (data / "instance_prices.csv").unlink()
    assert message(data) == (
        "instance_prices.csv: missing, and instance_types.csv still holds prices; run tools/drop_price_columns.py "
        "on the catalog folder to move them into instance_prices.csv"
    )


def test_an_old_price_column_that_matches_instance_prices_is_read_past(data):
    _with_legacy_price(data, "277.93")
    assert instance_price(load_catalog(data), "ecs.gn7e-c16g1.32xlarge", "cn-shanghai").cny == 277.93


@pytest.mark.parametrize(
    "instance_type, confidence",
    [
        ("ecs.gn7e-c16g1.32xlarge", ""),
        ("ecs.gn5-c8g1.14xlarge", "inferred"),
    ],  # a model without confidence; confidence without a model
)
def test_confidence_is_set_exactly_with_a_gpu_model(data, instance_type, confidence):
    i = index_of(data, "instance_types.csv", "instance_type", instance_type)
    line = edit(data, "instance_types.csv", i, gpu_model_confidence=confidence)
    assert message(data) == (
        f"instance_types.csv line {line}, column 'gpu_model_confidence': "
        "must be set (stated or inferred) exactly when gpu_model is set"
    )


def test_confidence_outside_its_two_values(data):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.gn7e-c16g1.32xlarge")
    line = edit(data, "instance_types.csv", i, gpu_model_confidence="guessed")
    text = message(data)
    assert text.startswith(f"instance_types.csv line {line}, column 'gpu_model_confidence': ")
    assert "'guessed'" in text and "stated" in text and "inferred" in text


def test_inferred_model_without_its_working_in_notes(data):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.sccgn7ex.32xlarge")
    line = edit(data, "instance_types.csv", i, notes="RoCE 800 Gbit/s")
    assert message(data) == (
        f"instance_types.csv line {line}, column 'notes': an inferred gpu_model "
        "needs notes that say 'inferred' and give the figures it rests on"
    )


def test_inferred_model_with_its_working_loads(data):
    # A stated model may carry the same notes; only "inferred" rows must explain themselves.
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.gn7e-c16g1.32xlarge")
    edit(
        data,
        "instance_types.csv",
        i,
        gpu_model_confidence="inferred",
        notes="GPU model inferred from 80 GB and 312 TFLOPS TF32",
    )
    assert load_catalog(data).instance_type("ecs.gn7e-c16g1.32xlarge").gpu_inferred


@pytest.mark.parametrize("rdma", ["none", ""])
def test_rdma_bandwidth_without_rdma(data, rdma):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.ebmgn7ex.32xlarge")
    line = edit(data, "instance_types.csv", i, rdma=rdma)
    assert (
        message(data)
        == f"instance_types.csv line {line}, column 'rdma_gbps': an RDMA bandwidth needs rdma erdma or roce"
    )


def test_rdma_bandwidth_that_is_not_a_number(data):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.ebmgn7ex.32xlarge")
    line = edit(data, "instance_types.csv", i, rdma_gbps="fast")
    text = message(data)
    assert text.startswith(f"instance_types.csv line {line}, column 'rdma_gbps': ") and "'fast'" in text


def test_rdma_nic_count_needs_an_rdma_kind(data):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.gn7e-c16g1.32xlarge")
    line = edit(data, "instance_types.csv", i, rdma_nics="2")
    assert message(data) == (
        f"instance_types.csv line {line}, column 'rdma_nics': a count of RDMA NICs needs rdma erdma or roce"
    )


@pytest.mark.parametrize("value", ["0", "two", "1.5"])
def test_rdma_nic_count_is_a_positive_whole_number(data, value):
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.ebmgn8is.32xlarge")
    line = edit(data, "instance_types.csv", i, rdma_nics=value)
    assert message(data).startswith(f"instance_types.csv line {line}, column 'rdma_nics': must be ")


def test_region_list_read_from_the_file_filters_queries(data):
    # Real rows, one of them given a region list: the type is kept where it is sold, dropped elsewhere,
    # and types whose regions are unknown stay in every region's answer.
    i = index_of(data, "instance_types.csv", "instance_type", "ecs.ebmgn7ex.32xlarge")
    edit(data, "instance_types.csv", i, regions="cn-wulanchabu;cn-beijing")
    catalog = load_catalog(data)
    assert catalog.instance_type("ecs.ebmgn7ex.32xlarge").regions == ("cn-wulanchabu", "cn-beijing")
    in_shanghai = {it.instance_type for it in catalog.query(region="cn-shanghai")}
    in_wulanchabu = {it.instance_type for it in catalog.query(region="cn-wulanchabu")}
    assert "ecs.ebmgn7ex.32xlarge" not in in_shanghai and "ecs.ebmgn7ex.32xlarge" in in_wulanchabu
    assert "ecs.sccgn7ex.32xlarge" in in_shanghai and "ecs.sccgn7ex.32xlarge" in in_wulanchabu
    assert len(in_shanghai) == len(catalog.instance_types) - 1


# ----------------------------------------------------------------------------------------------
# regions.csv, storage.csv, images.csv
# ----------------------------------------------------------------------------------------------


def test_zone_outside_its_region(data):
    line = edit(data, "regions.csv", 0, zones="cn-shanghai-a")
    region = rows(data, "regions.csv")[0]["region_id"]
    assert message(data) == f"regions.csv line {line}, column 'zones': zone 'cn-shanghai-a' is not in region {region!r}"


def test_image_regex_that_does_not_compile(data):
    line = edit(data, "images.csv", 0, name_regex="^ubuntu_(22")
    assert message(data).startswith(
        f"images.csv line {line}, column 'name_regex': not a valid regex: missing ), unterminated subpattern"
    )


def test_image_id_that_its_regex_does_not_match(data):
    line = edit(data, "images.csv", 0, image_id="centos_7_9_x64_20G_alibase_20230815.vhd")
    regex = rows(data, "images.csv")[0]["name_regex"]
    assert message(data) == (
        f"images.csv line {line}, column 'image_id': "
        f"'centos_7_9_x64_20G_alibase_20230815.vhd' does not match name_regex {regex!r}"
    )


# ----------------------------------------------------------------------------------------------
# aliases.csv
# ----------------------------------------------------------------------------------------------


def test_alias_target_not_a_real_type(data):
    line = edit(data, "aliases.csv", 0, instance_type="ecs.gn99.large")
    assert (
        message(data)
        == f"aliases.csv line {line}, column 'instance_type': 'ecs.gn99.large' is not in instance_types.csv"
    )


def test_alias_shadowing_a_real_type(data):
    line = edit(data, "aliases.csv", 0, alias="ecs.g7.large")
    assert message(data) == f"aliases.csv line {line}, column 'alias': an alias must not shadow a real instance type"


def test_alias_gpu_model_not_in_gpus(data):
    line = edit(data, "aliases.csv", 0, gpu_model="V100-SXM9")
    assert message(data) == f"aliases.csv line {line}, column 'gpu_model': 'V100-SXM9' is not a gpu_model in gpus.csv"


def test_alias_gpu_total_not_nodes_times_gpus(data):
    row = rows(data, "aliases.csv")[0]
    line = edit(data, "aliases.csv", 0, gpu_total="95")
    assert message(data) == (
        f"aliases.csv line {line}, column 'gpu_total': 95 != nodes {row['nodes']} × 8 GPUs of {row['instance_type']}"
    )


# ----------------------------------------------------------------------------------------------
# instance_zones.csv
# ----------------------------------------------------------------------------------------------


def test_zone_row_for_an_unknown_type_or_family(data):
    line = zone_rows(data, {"instance_type": "gn99", "region": "cn-shanghai", "zones": "cn-shanghai-a"})
    assert message(data) == (
        f"instance_zones.csv line {line}, column 'instance_type': 'gn99' "
        "is neither an instance type nor a family in instance_types.csv"
    )


def test_zone_row_for_an_unknown_region(data):
    line = zone_rows(data, {"instance_type": "gn7e", "region": "mars-north-1", "zones": "mars-north-1a"})
    assert (
        message(data)
        == f"instance_zones.csv line {line}, column 'region': 'mars-north-1' is not a region_id in regions.csv"
    )


def test_zone_row_naming_a_zone_of_another_region(data):
    line = zone_rows(
        data,
        {"instance_type": "ecs.gn7e-c16g1.32xlarge", "region": "cn-shanghai", "zones": "cn-shanghai-e;cn-beijing-c"},
    )
    assert message(data) == (
        f"instance_zones.csv line {line}, column 'zones': cn-beijing-c "
        "not among the zones of cn-shanghai in regions.csv"
    )


def test_zone_row_listed_twice(data):
    row = {"instance_type": "gn7e", "region": "cn-shanghai", "zones": "cn-shanghai-e"}
    line = zone_rows(data, row, {**row, "zones": "cn-shanghai-f"})
    assert message(data) == (
        f"instance_zones.csv line {line}, column 'zones': duplicate row for ('gn7e', 'cn-shanghai') (first on line 2)"
    )


def test_zone_list_repeated(data):
    line = zone_rows(data, {"instance_type": "gn7e", "region": "cn-shanghai", "zones": "cn-shanghai-e;cn-shanghai-e"})
    assert message(data) == (
        f"instance_zones.csv line {line}, column 'zones': "
        "must not list a zone twice (got 'cn-shanghai-e;cn-shanghai-e')"
    )


def test_zone_row_without_zones_knows_the_region_not_the_zones(data):
    zone_rows(
        data,
        {"instance_type": "ecs.gn7e-c16g1.32xlarge", "region": "cn-shanghai", "zones": ""},
        {"instance_type": "gn7e", "region": "cn-beijing", "zones": "cn-beijing-c"},
    )
    catalog = load_catalog(data)
    # The row is found (the region is known) but the zones are not: callers assume every zone of the region.
    row = catalog.zone_row("ecs.gn7e-c16g1.32xlarge", "cn-shanghai")
    assert row is not None and row.zones == () and row.source == "https://example.com/zones"
    assert catalog.zones_offering("ecs.gn7e-c16g1.32xlarge", "cn-shanghai") is None
    assert catalog.known_regions(catalog.instance_types["ecs.gn7e-c16g1.32xlarge"]) == ("cn-shanghai", "cn-beijing")


def test_zone_rows_answer_zones_offering_and_never_rule_a_region_out(data):
    zone_rows(
        data,
        {"instance_type": "gn7e", "region": "cn-shanghai", "zones": "cn-shanghai-e;cn-shanghai-f"},
        {"instance_type": "ecs.gn7e-c16g1.32xlarge", "region": "cn-shanghai", "zones": "cn-shanghai-l"},
    )
    catalog = load_catalog(data)
    # A row for the exact type wins over its family's row; other types of the family take the family's.
    assert catalog.zones_offering("ecs.gn7e-c16g1.32xlarge", "cn-shanghai") == ("cn-shanghai-l",)
    assert catalog.zones_offering("ecs.gn7e-c16g1.16xlarge", "cn-shanghai") == ("cn-shanghai-e", "cn-shanghai-f")
    # Unknown stays unknown: another region, another family, an unknown name.
    assert catalog.zones_offering("ecs.gn7e-c16g1.16xlarge", "cn-beijing") is None
    assert catalog.zones_offering("ecs.gn7i-c32g1.8xlarge", "cn-beijing") is None
    assert catalog.zones_offering("ecs.nothing", "cn-shanghai") is None
    # A zone row says where gn7e is sold, not where it is not: the region filter keeps gn7e in Beijing.
    beijing = {it.instance_type for it in catalog.query(min_gpus=1, region="cn-beijing")}
    gn7e = {name for name, it in catalog.instance_types.items() if it.family == "gn7e"}
    assert gn7e and gn7e <= beijing
    assert all(catalog.sold_only_in(catalog.instance_types[name]) == () for name in gn7e)


def test_shipped_zone_rows_are_sourced_and_name_regions_only(data):
    # The shipped rows come from documents that name a region (each with its source and date); none lists zones
    # (no public page lists zones per GPU type), so every plan still assumes every zone of its region.
    catalog = load_catalog()
    assert catalog.instance_zones
    assert all(z.source and z.source_date and z.zones == () for z in catalog.instance_zones)
    assert catalog.zones_offering("ecs.gn7e-c16g1.32xlarge", "cn-shanghai") is None
    row = catalog.zone_row("ecs.gn7e-c16g1.32xlarge", "cn-shanghai")
    assert row is not None and "2023-06-17-gpu-prices.md" in row.source and row.source_date == "2023-06"
    # No shipped type is known to be limited to some regions, so no region filter drops one.
    assert all(catalog.sold_only_in(it) == () for it in catalog.instance_types.values())


# ----------------------------------------------------------------------------------------------
# gpu_software.csv, disks.csv, local_disks.csv
# ----------------------------------------------------------------------------------------------


def test_every_gpu_family_needs_a_driver_path(data):
    table = [r for r in rows(data, "gpu_software.csv") if r["family"] != "gn7e"]
    write(data, "gpu_software.csv", table)
    assert message(data) == "gpu_software.csv: no row for GPU families ['gn7e']; every GPU family needs its driver path"


def test_driver_image_needs_its_image_pattern(data):
    line = edit(data, "gpu_software.csv", 0, method="driver_image")
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'image_name_regex': is required for method driver_image and only for it"
    )


def test_install_script_takes_no_image_pattern(data):
    line = edit(data, "gpu_software.csv", 0, image_name_regex="^ubuntu_22_04_x64_100G_with_gpu_driver")
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'image_name_regex': is required for method driver_image and only for it"
    )


def test_pytorch_version_and_index_go_together(data):
    line = edit(data, "gpu_software.csv", 0, pytorch_index_url="")
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'pytorch_index_url': pytorch_version and pytorch_index_url go "
        "together (both empty: nodes get no PyTorch)"
    )


def test_wheel_digests_without_a_pytorch_version(data):
    line = edit(data, "gpu_software.csv", 0, pytorch_version="", pytorch_index_url="")
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'pytorch_wheel_sha256': needs pytorch_version (the wheels these "
        "digests check)"
    )


def test_fabric_manager_without_the_cuda_key_fingerprint(data):
    line = edit(data, "gpu_software.csv", 0, cuda_repo_key_fingerprint="")
    assert rows(data, "gpu_software.csv")[0]["fabric_manager_min_gpus"], "row 0 must install the fabric manager"
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'cuda_repo_key_fingerprint': is required with fabric_manager_min_gpus"
        " (nodes check NVIDIA's CUDA keyring against it)"
    )


def test_unknown_driver_method(data):
    line = edit(data, "gpu_software.csv", 0, method="magic")
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'method': must be "
        "one of driver_image, install_script or empty (got 'magic')"
    )


def test_disk_range_must_be_ordered(data):
    line = edit(data, "disks.csv", 0, min_gib="50000")
    assert message(data) == f"disks.csv line {line}, column 'max_gib': 32768 is below min_gib 50000"


def test_duplicate_disk_level(data):
    first = rows(data, "disks.csv")[0]
    line = edit(data, "disks.csv", 1, performance_level=first["performance_level"])
    assert (
        message(data)
        == f"disks.csv line {line}, column 'level': duplicate row for ('cloud_essd', 'PL0') (first on line 2)"
    )


def test_duplicate_local_disk(data):
    table = rows(data, "local_disks.csv")
    write(data, "local_disks.csv", table + table[:1])
    assert message(data) == (
        f"local_disks.csv line {len(table) + 2}, column 'instance_type': "
        f"duplicate {table[0]['instance_type']!r} (first on line 2)"
    )


def test_local_disk_of_an_unknown_type(data):
    line = edit(data, "local_disks.csv", 0, instance_type="ecs.gn5-nope")
    assert (
        message(data)
        == f"local_disks.csv line {line}, column 'instance_type': 'ecs.gn5-nope' is not in instance_types.csv"
    )


def test_fabric_manager_only_on_the_nvswitch_types():
    catalog = load_catalog()
    eight = catalog.instance_type("ecs.gn7e-c16g1.32xlarge")
    one = catalog.instance_type("ecs.gn7e-c16g1.4xlarge")
    software = catalog.software_for(eight)
    assert software is not None and software.method == "install_script"
    assert software.needs_fabric_manager(eight) and not software.needs_fabric_manager(one)
    a10 = catalog.instance_type("ecs.gn7i-c32g1.8xlarge")
    assert not catalog.software_for(a10).needs_fabric_manager(a10)  # type: ignore[union-attr]
    assert catalog.software_for(catalog.instance_type("ecs.g7.large")) is None


def test_fabric_link_comes_from_the_rdma_column():
    catalog = load_catalog()
    assert catalog.instance_type("ecs.ebmgn7ex.32xlarge").fabric_link == "erdma"
    assert catalog.instance_type("ecs.sccgn7ex.32xlarge").fabric_link == "roce"
    assert catalog.instance_type("ecs.gn7e-c16g1.32xlarge").fabric_link == "tcp"  # rdma "none"
    assert catalog.instance_type("ecs.gn7i-c32g1.8xlarge").fabric_link == "tcp"  # rdma unknown: no RDMA is assumed


def test_local_nvme_and_disk_limits():
    catalog = load_catalog()
    assert catalog.local_nvme_gib(catalog.instance_type("ecs.gn5-c8g1.14xlarge")) == 3520
    assert catalog.local_nvme_gib(catalog.instance_type("ecs.gn7e-c16g1.32xlarge")) == 0
    limits = catalog.disk_limits("cloud_essd", "PL1")
    assert limits is not None and (limits.min_gib, limits.max_gib) == (20, 32768)
    assert catalog.disk_limits("cloud_essd", "PL9") is None
