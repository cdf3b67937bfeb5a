"""Tests of the catalog data (row invariants read straight from the CSVs) and of its loader."""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.catalog import (
    CATALOG_DIR,
    GPU_FAMILY_RE,
    PRECISIONS,
    Alias,
    Catalog,
    CatalogError,
    InstanceType,
    instance_price,
    load_catalog,
)
from blueprints.catalog.render import catalog_rows, render_catalog_table

INSTANCE_COLUMNS = (
    "instance_type,family,vcpus,memory_gib,gpu_model,gpu_model_confidence,gpu_count,gpu_memory_gib,network_gbps,rdma,rdma_gbps,rdma_nics,nvlink,"
    "spec_source,spec_date,regions,notes"
).split(",")
PRICE_CELLS = ["price_cny_per_hour", "price_region", "price_date", "price_status", "price_source", "priced_regions"]
DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def raw_rows(name: str) -> list[dict[str, str]]:
    """Rows of a shipped CSV as plain strings, read without the loader (so its checks are not trusted)."""
    with (CATALOG_DIR / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


INSTANCE_ROWS = raw_rows("instance_types.csv")
GPU_KEYS = {row["gpu_model"] for row in raw_rows("gpus.csv")}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


# ----------------------------------------------------------------------------------------------
# Row invariants, straight from the CSV files
# ----------------------------------------------------------------------------------------------


def test_instance_types_header_is_exact():
    with (CATALOG_DIR / "instance_types.csv").open(newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle)) == INSTANCE_COLUMNS


@pytest.mark.parametrize("row", INSTANCE_ROWS, ids=[r["instance_type"] for r in INSTANCE_ROWS])
def test_instance_row_invariants(row):
    name = row["instance_type"]
    assert name.startswith("ecs.")
    # The family is the first part of the type name: ecs.<family>.<size> or ecs.<family>-<variant>.<size>.
    assert re.match(rf"^ecs\.{re.escape(row['family'])}[.-]", name)
    assert int(row["vcpus"]) > 0
    assert float(row["memory_gib"]) > 0
    gpu_count = int(row["gpu_count"])
    assert gpu_count >= 0
    is_gpu_family = bool(GPU_FAMILY_RE.match(row["family"]))
    assert (gpu_count > 0) == bool(row["gpu_model"] or is_gpu_family)
    if row["gpu_model"]:
        assert row["gpu_model"] in GPU_KEYS
    if gpu_count > 0:
        assert float(row["gpu_memory_gib"]) > 0
    else:
        assert row["gpu_memory_gib"] == "" and row["nvlink"] == ""
    assert row["rdma"] in ("", "none", "erdma", "roce")
    assert row["nvlink"] in ("", "true", "false")
    assert row["spec_source"].strip()
    assert DATE_RE.match(row["spec_date"])
    if row["network_gbps"]:
        assert float(row["network_gbps"]) > 0
    for region in filter(None, row["regions"].split(";")):
        assert re.match(r"^[a-z]{2}-[a-z0-9-]+$", region)


def test_no_row_cites_notes_outside_the_repository():
    # The project's compiled notes live outside the repository; rows cite their in-repo copy
    # (docs/sources/...) or the original URL. tests/catalog/test_citations.py checks every citation.
    for name in ("instance_types.csv", "gpus.csv", "regions.csv", "storage.csv", "aliases.csv", "images.csv"):
        text = (CATALOG_DIR / name).read_text(encoding="utf-8")
        assert "shared/reference" not in text, name
        assert not re.search(r"(?<![/\w])(alibaba-cloud-facts|training-performance)\.md", text), name


def test_required_instance_types_are_present(catalog):
    for name in (
        "ecs.gn7e-c16g1.32xlarge",
        "ecs.ebmgn7ex.32xlarge",
        "ecs.sccgn7ex.32xlarge",
        "ecs.gn8v-8x.48xlarge",
        "ecs.gn6v-c8g1.16xlarge",
        "ecs.gn6e-c12g1.24xlarge",
        "ecs.gn7i-8x.16xlarge",
        "ecs.gn8is-8x.32xlarge",
        "ecs.gn7s-c32g1.32xlarge",
        "ecs.gn6i-c4g1.xlarge",
        "ecs.g7.8xlarge",
        "ecs.g8i.48xlarge",
        "ecs.c7.8xlarge",
        "ecs.r7.8xlarge",
        "ecs.g6.4xlarge",
        "ecs.g6.8xlarge",
    ):
        assert name in catalog.instance_types, name


def test_known_gpu_models_of_families(catalog):
    expected = {
        "ecs.gn7e-c16g1.32xlarge": "A100-SXM4-80GB",
        "ecs.ebmgn7e.32xlarge": "A100-SXM4-80GB",
        "ecs.gn7-c13g1.26xlarge": "A100-SXM4-40GB",
        "ecs.gn6v-c8g1.16xlarge": "V100-SXM2-16GB",
        "ecs.gn6e-c12g1.24xlarge": "V100-SXM2-32GB",
        "ecs.gn7i-c32g1.8xlarge": "A10",
        "ecs.gn8is.2xlarge": "L20",
        "ecs.gn6i-c4g1.xlarge": "T4",
        "ecs.gn7s-c32g1.32xlarge": "A30",
        "ecs.ebmgn8is.32xlarge": "L20",
        "ecs.ebmgn8ia.64xlarge": "L20",
        "ecs.ebmgn7ix.32xlarge": "A10",
        # Identified by their documented figures (README "Inferred GPU models"):
        "ecs.sccgn7ex.32xlarge": "A100-SXM4-80GB",
        "ecs.gn8v-8x.48xlarge": "H20",
        "ecs.ebmgn8v.48xlarge": "H20",
        "ecs.ebmgn9g.64xlarge": "RTX-PRO-5000-Blackwell-48GB",
        "ecs.ebmgn9gc.64xlarge": "RTX-PRO-5000-Blackwell-72GB",
        # Neither named nor identified by the sources, so deliberately unknown:
        "ecs.gn5-c8g1.14xlarge": None,
    }
    for name, model in expected.items():
        assert catalog.instance_types[name].gpu_model == model, name


def test_hand_checked_rows(catalog):
    it = catalog.instance_type("ecs.gn7e-c16g1.32xlarge")
    assert (it.vcpus, it.memory_gib, it.gpu_count, it.gpu_memory_gib, it.network_gbps) == (128, 1000.0, 8, 80.0, 64.0)
    assert it.nvlink is True and it.rdma == "none"
    price = instance_price(catalog, it.instance_type, "cn-shanghai")
    assert (price.cny, price.region, price.date, price.status) == (277.93, "cn-shanghai", "2023-06", "list")
    scc = catalog.instance_type("ecs.sccgn7ex.32xlarge")
    assert scc.rdma == "roce" and instance_price(catalog, scc.instance_type, "cn-shanghai").cny is None
    cpu = catalog.instance_type("ecs.g7.8xlarge")
    assert (cpu.vcpus, cpu.memory_gib, cpu.gpu_count, cpu.is_gpu) == (32, 128.0, 0, False)
    # A low-confidence price is a third party's approximation, and says so.
    assert instance_price(catalog, cpu.instance_type, "cn-hangzhou").status == "third-party"


def test_gpus_table():
    rows = {r["gpu_model"]: r for r in raw_rows("gpus.csv")}
    for key in (
        "A100-SXM4-80GB",
        "A100-SXM4-40GB",
        "V100-SXM2-16GB",
        "V100-SXM2-32GB",
        "A10",
        "A30",
        "T4",
        "L20",
        "H20",
        "H100-SXM5-80GB",
        "H800-SXM5-80GB",
        "A800-SXM4-80GB",
        "P100-SXM2-16GB",
        "L40S",
    ):
        assert key in rows, key
    for key, row in rows.items():
        assert row["source"].strip() and DATE_RE.match(row["source_date"]), key
        assert float(row["fp32_tflops"]) > 0, key
        peaks = [float(row[f"{p}_tflops"]) for p in PRECISIONS if row[f"{p}_tflops"]]
        assert all(v > 0 for v in peaks), key
    # Volta has no TF32 or BF16 tensor cores: those cells must stay empty, not zero.
    for key in ("V100-SXM2-16GB", "V100-SXM2-32GB"):
        assert rows[key]["bf16_tflops"] == "" and rows[key]["tf32_tflops"] == ""


def test_regions_and_zones():
    rows = {r["region_id"]: r for r in raw_rows("regions.csv")}
    for region in ("cn-shanghai", "cn-hangzhou", "cn-beijing", "cn-wulanchabu"):
        assert region in rows
    for region, row in rows.items():
        zones = row["zones"].split(";")
        assert zones and all(z.startswith(region) and z != region for z in zones), region
        assert len(zones) == len(set(zones)), region
        assert row["source"].strip() and DATE_RE.match(row["source_date"])


def test_aliases_resolve_to_real_rows_with_matching_gpu_totals():
    types = {r["instance_type"]: r for r in INSTANCE_ROWS}
    rows = raw_rows("aliases.csv")
    assert {r["alias"] for r in rows} == {
        "m6i.96xlarge",
        "m6i.64xlarge",
        "m6i.48xlarge",
        "m6i.32xlarge",
        "m6i.8xlarge",
        "m6i.4xlarge",
        "c6i.8xlarge",
        "g6.4xlarge",
    }
    for row in rows:
        target = types[row["instance_type"]]
        assert not row["alias"].startswith("ecs.")
        assert int(row["gpu_total"]) == int(row["nodes"]) * int(target["gpu_count"]), row["alias"]
        assert row["gpu_model"] == target["gpu_model"], row["alias"]
        assert row["alias"] in row["sentence"] and row["instance_type"] in row["sentence"]
        assert row["source"].strip()


def test_alias_mappings_match_the_article(catalog):
    expected = {
        "m6i.96xlarge": ("ecs.gn6e-c12g1.24xlarge", 12, 96),
        "m6i.48xlarge": ("ecs.gn6e-c12g1.24xlarge", 6, 48),
        "m6i.32xlarge": ("ecs.gn7e-c16g1.32xlarge", 4, 32),
        "m6i.8xlarge": ("ecs.gn7i-c32g1.8xlarge", 1, 1),
        "c6i.8xlarge": ("ecs.gn7i-8x.16xlarge", 1, 8),
        "g6.4xlarge": ("ecs.gn6e-c12g1.3xlarge", 1, 1),
    }
    for name, (target, nodes, total) in expected.items():
        alias = catalog.aliases[name]
        assert (alias.instance_type, alias.nodes, alias.gpu_total) == (target, nodes, total), name
    # The two names the article never describes carry their assumption in the description.
    for name in ("m6i.64xlarge", "m6i.4xlarge"):
        assert "assumed" in catalog.aliases[name].article_description


def test_images_are_real_ids_matching_their_regex():
    rows = raw_rows("images.csv")
    assert rows
    for row in rows:
        assert re.match(row["name_regex"], row["image_id"])
        assert row["image_id"].endswith(".vhd")
        assert row["source"].strip() and DATE_RE.match(row["source_date"])


def test_version_file():
    version = (CATALOG_DIR / "VERSION").read_text(encoding="utf-8")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}\.\d+\n?", version)


# ----------------------------------------------------------------------------------------------
# Loader behaviour
# ----------------------------------------------------------------------------------------------


def test_default_catalog_is_cached_and_read_only(catalog):
    assert load_catalog() is catalog
    assert load_catalog(CATALOG_DIR) is not catalog
    with pytest.raises(TypeError):
        catalog.instance_types["ecs.fake"] = catalog.instance_types["ecs.g7.large"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.instance_types["ecs.g7.large"].vcpus = 3  # type: ignore[misc]


def test_loaded_counts_match_files(catalog):
    assert len(catalog.instance_types) == len(INSTANCE_ROWS)
    assert len(catalog.gpus) == len(GPU_KEYS)
    assert len(catalog.aliases) == len(raw_rows("aliases.csv"))
    assert len(catalog.storage) == len(raw_rows("storage.csv"))
    assert catalog.version == (CATALOG_DIR / "VERSION").read_text().strip()


def test_resolve_real_type_and_alias(catalog):
    it, alias = catalog.resolve("ecs.gn7e-c16g1.32xlarge")
    assert it.instance_type == "ecs.gn7e-c16g1.32xlarge" and alias is None
    it, alias = catalog.resolve("m6i.32xlarge")
    assert isinstance(alias, Alias) and it.instance_type == "ecs.gn7e-c16g1.32xlarge"
    assert alias.nodes * it.gpu_count == 32


def test_g6_4xlarge_alias_versus_real_cpu_type(catalog):
    it, alias = catalog.resolve("g6.4xlarge")
    assert alias is not None and it.gpu_model == "V100-SXM2-32GB"
    real, none = catalog.resolve("ecs.g6.4xlarge")
    assert none is None and not real.is_gpu and (real.vcpus, real.memory_gib) == (16, 64.0)


def test_instance_type_refuses_aliases_and_unknown_names(catalog):
    with pytest.raises(KeyError, match="alias"):
        catalog.instance_type("m6i.32xlarge")
    with pytest.raises(KeyError, match="did you mean 'ecs.gn7e-c16g1.32xlarge'"):
        catalog.instance_type("ecs.gn7e-c16g1.32xlage")
    with pytest.raises(KeyError):
        catalog.resolve("p4d.24xlarge")


def test_suggest_finds_misspellings_of_types_and_aliases(catalog):
    assert catalog.suggest("ecs.gn7e-c16g1.32xlage")[0] == "ecs.gn7e-c16g1.32xlarge"
    assert "m6i.32xlarge" in catalog.suggest("m6i.32xlage")
    assert len(catalog.suggest("ecs.g7.xlarge", n=2)) <= 2
    assert catalog.suggest("zzzzzz") == []


def test_gpu_peak_lookup_by_precision(catalog):
    a100 = catalog.gpu(catalog.instance_type("ecs.gn7e-c16g1.32xlarge"))
    assert a100 is not None and a100.peak_tflops("bf16") == 312
    v100 = catalog.gpus["V100-SXM2-32GB"]
    assert v100.peak_tflops("bf16") is None
    assert v100.peak_tflops("fp16") == 125
    assert catalog.gpus["H100-SXM5-80GB"].peak_tflops("fp8") == 1979
    with pytest.raises(ValueError, match="precision"):
        v100.peak_tflops("int8")
    assert catalog.gpu(catalog.instance_type("ecs.g7.large")) is None
    assert catalog.gpu(catalog.instance_type("ecs.gn5-c8g1.14xlarge")) is None  # GPU not named nor identified


def test_storage_throughput_formulas(catalog):
    cpfs200 = catalog.storage_tier("cpfs", "advance_200")
    assert cpfs200.throughput_mb_s(10_240) == pytest.approx(2_000)  # 10 TiB × 200 MB/s per TiB
    assert cpfs200.throughput_mb_s(10_000_000) == 45_000  # capped
    cpfs100 = catalog.storage_tier("cpfs", "advance_100")
    assert cpfs100.throughput_mb_s(3_072) == pytest.approx(300)
    assert cpfs100.throughput_mb_s(10_000_000) == 30_000
    extreme = catalog.storage_tier("extreme_nas", "standard")
    assert extreme.throughput_mb_s(3_000) == 600  # 2 TiB ≤ 3,000 GiB < 4 TiB
    assert extreme.throughput_mb_s(100) == 150
    assert extreme.throughput_mb_s(500) == 300  # lower bounds are inclusive
    assert extreme.throughput_mb_s(99) is None  # below the smallest size sold
    assert extreme.throughput_mb_s(200_000) == 1_200
    assert catalog.storage_tier("extreme_nas", "advance").throughput_mb_s(5_000) is None
    assert catalog.storage_tier("nas", "capacity").throughput_mb_s(1_000) is None
    with pytest.raises(ValueError):
        extreme.throughput_mb_s(-1)


def test_storage_lookups(catalog):
    assert {(s.kind, s.tier) for s in catalog.storage} >= {
        ("nas", "capacity"),
        ("nas", "performance"),
        ("extreme_nas", "standard"),
        ("extreme_nas", "advance"),
        ("cpfs", "advance_100"),
        ("cpfs", "advance_200"),
        ("oss", "standard"),
    }
    assert [s.tier for s in catalog.storage_tiers("cpfs")] == ["advance_100", "advance_200"]
    assert catalog.storage_tiers("tape") == ()
    assert catalog.storage_tier("CPFS", "Advance_200").storage_type == "advance_200"
    with pytest.raises(KeyError, match="cpfs/advance_300"):
        catalog.storage_tier("cpfs", "advance_300")


def test_zones_and_images(catalog):
    assert "cn-shanghai-e" in catalog.zones("cn-shanghai")
    assert catalog.zones("mars-north-1") == ()
    image = catalog.image_for("cn-wulanchabu")
    assert image is not None and re.match(image.name_regex, image.image_id)
    alinux = catalog.image_for("cn-beijing", os="alinux-3")
    assert alinux is not None and alinux.image_id.startswith("aliyun_3_x64")
    assert catalog.image_for("cn-beijing", os="windows-2022") is None


def test_query_filters(catalog):
    eight = catalog.query(min_gpus=8)
    assert eight and all(it.gpu_count >= 8 for it in eight)
    assert [it.instance_type for it in eight] == sorted(it.instance_type for it in eight)
    a10 = catalog.query(gpu_model="A10")
    assert a10 and all(it.gpu_model == "A10" for it in a10)
    a100 = catalog.query(gpu_model="a100")
    assert {it.gpu_model for it in a100} == {"A100-SXM4-80GB", "A100-SXM4-40GB"}
    cpu = catalog.query(max_gpus=0)
    assert cpu and all(not it.is_gpu for it in cpu)
    priced = catalog.query(priced_only=True)
    assert priced and all(catalog.prices_of(it.instance_type) for it in priced)
    assert len(priced) < len(catalog.instance_types)
    # Regions are unknown on every row today, so a region filter must keep them all.
    assert len(catalog.query(region="cn-wulanchabu")) == len(catalog.instance_types)


def test_query_region_filter_uses_known_regions(catalog):
    only_sh = dataclasses.replace(catalog.instance_types["ecs.g7.large"], regions=("cn-shanghai",))
    view = Catalog(
        version="t",
        instance_types={only_sh.instance_type: only_sh},
        gpus={},
        regions={},
        storage=(),
        aliases={},
        images=(),
    )
    assert view.query(region="cn-shanghai") == [only_sh]
    assert view.query(region="cn-beijing") == []


# ----------------------------------------------------------------------------------------------
# Malformed data is refused with file, line and column
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, target)
    return target


def _edit_cell(directory: Path, file: str, row_index: int, column: str, value: str) -> int:
    """Set one cell of a copied CSV; returns the file line of that row (header is line 1)."""
    path = directory / file
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    fields = list(rows[0].keys())
    rows[row_index][column] = value
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return row_index + 2


def test_malformed_number_names_file_line_and_column(data_copy):
    line = _edit_cell(data_copy, "instance_types.csv", 4, "vcpus", "many")
    with pytest.raises(CatalogError, match=rf"instance_types\.csv line {line}, column 'vcpus'"):
        load_catalog(data_copy)


def test_bad_enum_is_refused(data_copy):
    line = _edit_cell(data_copy, "instance_types.csv", 0, "rdma", "infiniband")
    with pytest.raises(CatalogError, match=rf"line {line}, column 'rdma'"):
        load_catalog(data_copy)


def test_price_without_date_is_refused(data_copy):
    line = _edit_cell(data_copy, "instance_prices.csv", 0, "date", "")
    with pytest.raises(CatalogError, match=rf"instance_prices\.csv line {line}, column 'date'"):
        load_catalog(data_copy)


def test_unknown_gpu_model_is_refused(data_copy):
    line = _edit_cell(data_copy, "instance_types.csv", 0, "gpu_model", "A100-SXM9")
    with pytest.raises(CatalogError, match=rf"line {line}, column 'gpu_model'"):
        load_catalog(data_copy)


def test_alias_gpu_total_mismatch_is_refused(data_copy):
    line = _edit_cell(data_copy, "aliases.csv", 0, "gpu_total", "95")
    with pytest.raises(CatalogError, match=rf"aliases\.csv line {line}, column 'gpu_total'"):
        load_catalog(data_copy)


def test_zone_outside_region_is_refused(data_copy):
    line = _edit_cell(data_copy, "regions.csv", 0, "zones", "cn-shanghai-a")
    with pytest.raises(CatalogError, match=rf"regions\.csv line {line}, column 'zones'"):
        load_catalog(data_copy)


def test_bad_header_is_refused(data_copy):
    path = data_copy / "gpus.csv"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("tdp_w", "tdp_watts", 1), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"gpus\.csv line 1: header .*missing \['tdp_w'\]"):
        load_catalog(data_copy)


def test_short_row_is_refused(data_copy):
    path = data_copy / "images.csv"
    path.write_text(path.read_text(encoding="utf-8") + "*,debian\n", encoding="utf-8")
    with pytest.raises(
        CatalogError, match=r"images\.csv line 6, column 'name_regex': missing; expected 9 fields, got 2"
    ):
        load_catalog(data_copy)


# ----------------------------------------------------------------------------------------------
# Rendering for `aitrain catalog`
# ----------------------------------------------------------------------------------------------


def test_catalog_rows_are_typed_dicts_with_csv_columns(catalog):
    rows = catalog_rows(catalog)
    assert len(rows) == len(catalog.instance_types)
    for row in rows:
        assert list(row) == INSTANCE_COLUMNS + PRICE_CELLS
        assert isinstance(row["vcpus"], int) and isinstance(row["gpu_count"], int)
        assert isinstance(row["memory_gib"], float) and isinstance(row["regions"], list)
        assert row["price_cny_per_hour"] is None or isinstance(row["price_cny_per_hour"], float)
        assert row["nvlink"] in (None, True, False)
    filtered = catalog_rows(catalog, gpu="V100", min_gpus=8)
    assert filtered and all(r["gpu_model"].startswith("V100") and r["gpu_count"] >= 8 for r in filtered)


def test_catalog_rows_price_the_region_asked(catalog):
    """With --region a row shows the price a plan there would use; without it, the newest quote and its region."""
    by_name = {r["instance_type"]: r for r in catalog_rows(catalog)}
    assert (
        by_name["ecs.gn7e-c16g1.32xlarge"]["price_cny_per_hour"],
        by_name["ecs.gn7e-c16g1.32xlarge"]["price_region"],
    ) == (
        277.93,
        "cn-shanghai",
    )
    assert by_name["ecs.gn7e-c16g1.32xlarge"]["priced_regions"] == ["cn-shanghai"]
    abroad = {r["instance_type"]: r for r in catalog_rows(catalog, region="ap-southeast-1")}
    gn7e = abroad["ecs.gn7e-c16g1.32xlarge"]
    assert gn7e["price_cny_per_hour"] is None and gn7e["price_status"] == "unknown"
    assert "prices it only in cn-shanghai" in gn7e["price_source"]


def test_render_catalog_table(catalog):
    rows = catalog_rows(catalog, min_gpus=8)
    text = render_catalog_table(rows)
    lines = text.splitlines()
    assert lines[0].split() == [
        "instance_type",
        "gpu",
        "#gpu",
        "vcpus",
        "memory_gib",
        "network_gbps",
        "rdma",
        "price_cny_per_hour",
    ]
    assert len(lines) == len(rows) + 2
    gn7e = next(line for line in lines if line.startswith("ecs.gn7e-c16g1.32xlarge "))
    assert gn7e.split() == ["ecs.gn7e-c16g1.32xlarge", "A100-SXM4-80GB", "8", "128", "1000", "64", "none", "277.93"]
    gn5 = next(line for line in lines if line.startswith("ecs.gn5-c8g1.14xlarge "))
    assert gn5.split()[1] == "?"  # a GPU type whose model no source names or identifies
    gn8v = next(line for line in lines if line.startswith("ecs.gn8v-8x.48xlarge "))
    assert gn8v.split() == ["ecs.gn8v-8x.48xlarge", "H20", "(inferred)", "8", "192", "1024", "100", "erdma", "?"]
    scc = next(line for line in lines if line.startswith("ecs.sccgn7ex.32xlarge "))
    assert scc.split() == [
        "ecs.sccgn7ex.32xlarge",
        "A100-SXM4-80GB",
        "(inferred)",
        "8",
        "128",
        "1024",
        "64",
        "roce",
        "?",
    ]
    c7 = next(r for r in catalog_rows(catalog) if r["instance_type"] == "ecs.c7.8xlarge")
    cpu = render_catalog_table([c7])
    assert cpu.splitlines()[2].split() == ["ecs.c7.8xlarge", "-", "0", "32", "64", "?", "?", "?"]
    assert render_catalog_table([]) == "(no instance types match)"


def test_catalog_package_does_not_import_pulumi():
    code = "import sys, blueprints.catalog, blueprints.catalog.render; sys.exit('pulumi' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_instance_type_dataclass_fields_match_csv_columns():
    assert [f.name for f in dataclasses.fields(InstanceType)] == INSTANCE_COLUMNS


# ----------------------------------------------------------------------------------------------
# AITRAIN_CATALOG_DIR: a user's own catalog directory
# ----------------------------------------------------------------------------------------------


def test_catalog_dir_variable_selects_the_users_catalog(data_copy, monkeypatch):
    (data_copy / "VERSION").write_text("2030-01-01.7\n", encoding="utf-8")
    _edit_cell(data_copy, "instance_prices.csv", 0, "price_per_hour", "1.5")
    first = raw_rows("instance_prices.csv")[0]
    monkeypatch.setenv("AITRAIN_CATALOG_DIR", str(data_copy))
    mine = load_catalog()
    assert mine.version == "2030-01-01.7"
    assert instance_price(mine, first["instance_type"], first["region"]).cny == 1.5
    assert load_catalog() is mine  # cached per resolved directory
    monkeypatch.delenv("AITRAIN_CATALOG_DIR")
    shipped = load_catalog()
    assert shipped is not mine and shipped.version == (CATALOG_DIR / "VERSION").read_text().strip()


def test_catalog_dir_variable_naming_no_directory_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("AITRAIN_CATALOG_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(CatalogError) as info:
        load_catalog()
    text = info.value.render()
    assert f"AITRAIN_CATALOG_DIR={tmp_path / 'nowhere'}" in text and "not a directory" in text


def test_catalog_dir_variable_with_a_broken_file_names_variable_file_line_and_column(data_copy, monkeypatch):
    line = _edit_cell(data_copy, "instance_types.csv", 2, "vcpus", "many")
    monkeypatch.setenv("AITRAIN_CATALOG_DIR", str(data_copy))
    with pytest.raises(CatalogError) as info:
        load_catalog()
    assert info.value.render() == (
        f"error: invalid catalog (AITRAIN_CATALOG_DIR={data_copy}): "
        f"instance_types.csv line {line}, column 'vcpus': must be a whole number (got 'many')"
    )


def test_cli_reports_a_bad_catalog_dir_in_one_line_with_exit_2(tmp_path):
    import os

    env = dict(os.environ, AITRAIN_CATALOG_DIR=str(tmp_path / "missing"))
    done = subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", "catalog", "--min-gpus", "8"],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "AITRAIN_CATALOG_DIR=" in done.stderr and "not a directory" in done.stderr
    assert "Traceback" not in done.stderr


def _run_cli(env_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, AITRAIN_CATALOG_DIR=str(env_dir)),
        cwd=Path(__file__).resolve().parents[2],
    )


def _row_index(name: str) -> int:
    return next(i for i, r in enumerate(raw_rows("instance_types.csv")) if r["instance_type"] == name)


@pytest.mark.parametrize("column", ["vcpus", "memory_gib", "spec_source", "spec_date"])
def test_cli_refuses_a_catalog_copy_whose_type_lacks_a_required_cell(data_copy, column):
    # A user's copy (AITRAIN_CATALOG_DIR) with one required cell of a new family's row left empty.
    line = _edit_cell(data_copy, "instance_types.csv", _row_index("ecs.ebmgn8is.32xlarge"), column, "")
    done = _run_cli(data_copy, "catalog", "--min-gpus", "8")
    assert done.returncode == 2 and done.stdout == ""
    assert f"instance_types.csv line {line}, column {column!r}: " in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_plan_refuses_the_same_catalog_copy_with_exit_2(data_copy):
    line = _edit_cell(data_copy, "instance_types.csv", _row_index("ecs.ebmgn9gc.64xlarge"), "memory_gib", "")
    done = _run_cli(data_copy, "plan", "medical-imaging")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"instance_types.csv line {line}, column 'memory_gib': " in done.stderr


def test_cli_refuses_a_catalog_copy_whose_row_lost_its_last_column(data_copy):
    path = data_copy / "instance_types.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    index = _row_index("ecs.ebmgn9g.64xlarge")
    cells = next(csv.reader([lines[index + 1]]))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells[:-1])  # the notes cell and its comma dropped
    lines[index + 1] = buffer.getvalue()
    path.write_text("".join(lines), encoding="utf-8")
    done = _run_cli(data_copy, "catalog")
    assert done.returncode == 2
    assert (
        f"instance_types.csv line {index + 2}, column 'notes': missing; expected {len(INSTANCE_COLUMNS)} fields, "
        f"got {len(INSTANCE_COLUMNS) - 1}"
    ) in done.stderr


def test_cli_refuses_a_catalog_copy_written_before_the_rdma_nics_column(data_copy):
    path = data_copy / "instance_types.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    header = [c for c in rows[0] if c != "rdma_nics"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    done = _run_cli(data_copy, "catalog")
    assert done.returncode == 2
    assert "instance_types.csv line 1: header must be exactly" in done.stderr and "missing ['rdma_nics']" in done.stderr


def test_render_catalog_markdown(catalog):
    from blueprints.catalog.render import render_catalog_markdown

    rows = catalog_rows(catalog, min_gpus=8)
    lines = render_catalog_markdown(rows).splitlines()
    assert lines[0] == "| instance_type | gpu | #gpu | vcpus | memory_gib | network_gbps | rdma | price_cny_per_hour |"
    assert lines[1] == "|---|---|--:|--:|--:|--:|---|--:|"
    assert len(lines) == len(rows) + 2
    assert "| ecs.gn7e-c16g1.32xlarge | A100-SXM4-80GB | 8 | 128 | 1000 | 64 | none | 277.93 |" in lines
    assert render_catalog_markdown([]) == "(no instance types match)"


def test_render_catalog_escapes_values_from_a_users_catalog(catalog):
    from blueprints.catalog.render import render_catalog_markdown

    row = dict(catalog_rows(catalog, min_gpus=8)[0], gpu_model="X|Y\n## forged", rdma="\x1b[31mred")
    md = render_catalog_markdown([row]).splitlines()
    assert len(md) == 3 and "X\\|Y ## forged" in md[2]
    text = render_catalog_table([row])
    assert "\x1b" not in text and len(text.splitlines()) == 3


def test_cli_catalog_markdown_and_typed_help():
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    runner = CliRunner()
    done = runner.invoke(app, ["catalog", "--min-gpus", "8", "--gpu", "A100", "--format", "markdown"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0].startswith("| instance_type | gpu | #gpu |")
    assert "| ecs.gn7e-c16g1.32xlarge | A100-SXM4-80GB | 8 |" in done.output
    bad = runner.invoke(app, ["catalog", "--min-gpus", "many"])
    flat = " ".join(bad.output.replace("│", " ").split())
    assert bad.exit_code == 2 and "Invalid value for '--min-gpus'" in flat and "valid integer" in flat
    shown = " ".join(runner.invoke(app, ["catalog", "--help"]).output.replace("│", " ").split())
    assert "--min-gpus <int range> [x>=0]" in shown


def test_catalog_region_option_filters_on_known_regions(data_copy, monkeypatch):
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    index = next(
        i for i, r in enumerate(raw_rows("instance_types.csv")) if r["instance_type"] == "ecs.gn7e-c16g1.32xlarge"
    )
    _edit_cell(data_copy, "instance_types.csv", index, "regions", "cn-beijing")
    monkeypatch.setenv("AITRAIN_CATALOG_DIR", str(data_copy))
    runner = CliRunner()
    shanghai = runner.invoke(app, ["catalog", "--region", "cn-shanghai", "--min-gpus", "8", "--format", "json"])
    beijing = runner.invoke(app, ["catalog", "--region", "cn-beijing", "--min-gpus", "8", "--format", "json"])
    assert shanghai.exit_code == 0 and beijing.exit_code == 0
    assert "ecs.gn7e-c16g1.32xlarge" not in shanghai.stdout and "ecs.gn7e-c16g1.32xlarge" in beijing.stdout
    assert "ecs.ebmgn7e.32xlarge" in shanghai.stdout  # regions unknown: kept
    bad = runner.invoke(app, ["catalog", "--region", "cn-shangai"])
    assert bad.exit_code == 2 and "--region = 'cn-shangai'" in bad.output and "did you mean 'cn-shanghai'" in bad.output
