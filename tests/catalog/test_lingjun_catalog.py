"""The catalog's Lingjun machine types (lingjun_node_types.csv): the shipped rows, and every malformed row refused
with file, line and column (a CatalogError, exit 2 in the CLI)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from blueprints.catalog import CATALOG_DIR, CatalogError, load_catalog

FILE = "lingjun_node_types.csv"


def test_the_shipped_rows_publish_no_spec_and_no_price():
    lingjun = load_catalog().lingjun
    assert set(lingjun) == {"efg1.nvga8n", "efg1.nvga1n", "efg2.C48cA3sen"}
    for row in lingjun.values():
        # Alibaba publishes none of these for any Lingjun type (ListMachineTypes is the only source).
        assert (row.gpu_count, row.gpu_model, row.vcpus, row.memory_gib) == (None, None, None, None)
        assert row.price == "quote" and row.fabric == "roce"
        assert (row.fabric_gbps, row.fabric_scope) == (800, "cluster")
    assert lingjun["efg1.nvga8n"].zones == (("cn-wulanchabu-a", "A1"),)
    assert lingjun["efg1.nvga8n"].regions == ("cn-wulanchabu",)
    assert lingjun["efg1.nvga8n"].hpn_zones("cn-wulanchabu-a") == ("A1",)
    assert lingjun["efg1.nvga8n"].hpn_zones("cn-wulanchabu-b") == ()


def test_lingjun_types_are_not_instance_types():
    catalog = load_catalog()
    assert not set(catalog.lingjun) & set(catalog.instance_types)


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, target)
    return target


def edit(directory: Path, column: str, value: str, row: int = 0) -> int:
    path = directory / FILE
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    fields = list(rows[0])
    rows[row][column] = value
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return row + 2


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("machine_type", "ecs.gn7e-c16g1.32xlarge", "an ECS type belongs in instance_types.csv"),
        ("machine_type", "efg1.nvga1n", "duplicate 'efg1.nvga1n'"),  # row 0 now repeats row 1: refused there
        ("gpu_model", "H100-SXM5-80GB-X", "is not a gpu_model in gpus.csv"),
        ("gpu_count", "0", "must be > 0 or empty"),
        ("vcpus", "many", "must be a whole number or empty"),
        ("fabric", "infiniband", "must be one of roce"),
        ("fabric_scope", "rack", "must be one of node, cluster"),
        ("price", "12.5", "must be one of quote"),
        ("zones", "cn-wulanchabu-a", "must be zone:hpn_zone"),
        ("zones", "cn-mars-a:A1", "zone 'cn-mars-a' is not a zone of any region"),
        ("source_date", "", "must not be empty"),
    ],
)
def test_a_malformed_row_names_file_line_and_column(data_copy, column, value, message):
    line = edit(data_copy, column, value)
    if message.startswith("duplicate"):
        line += 1  # the second occurrence is the one refused
    with pytest.raises(CatalogError) as caught:
        load_catalog(data_copy)
    text = caught.value.render()
    assert f"{FILE} line {line}, column '{column}'" in text and message in text


def test_a_header_only_file_means_no_lingjun(data_copy):
    path = data_copy / FILE
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert load_catalog(data_copy).lingjun == {}


def test_a_missing_file_is_refused(data_copy):
    (data_copy / FILE).unlink()
    with pytest.raises(CatalogError, match="lingjun_node_types.csv: catalog file missing"):
        load_catalog(data_copy)


def test_a_stated_spec_is_read_with_its_numbers(data_copy):
    for column, value in (("gpu_count", "8"), ("vcpus", "192"), ("memory_gib", "1967"), ("gpu_memory_gib", "80")):
        edit(data_copy, column, value)
    row = load_catalog(data_copy).lingjun["efg1.nvga8n"]
    assert (row.gpu_count, row.vcpus, row.memory_gib, row.gpu_memory_gib) == (8, 192, 1967.0, 80.0)
