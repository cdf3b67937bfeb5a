"""instance_prices.csv: the shipped rows, the price a region gets, and moving the old price columns out."""

from __future__ import annotations

import copy
import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.catalog import CATALOG_DIR, InstancePrice, instance_price, load_catalog
from blueprints.catalog.price_columns import MOVED_NOTE, move_price_columns
from blueprints.catalog.pricing import is_mainland
from tests.catalog.test_loader_checks import _with_legacy_price, rows

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
GN7E = "ecs.gn7e-c16g1.32xlarge"
DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def with_prices(*rows_: InstancePrice):
    """The shipped catalog with ``instance_prices.csv`` replaced by these rows."""
    cat = copy.copy(CATALOG)
    cat.instance_prices = tuple(rows_)
    return cat


def row(region: str, amount: float, currency: str = "CNY", date: str = "2026-11-30", confidence: str = "high"):
    return InstancePrice(GN7E, region, "payg", amount, currency, date, f"source for {region}", confidence, "")


# --- the shipped file, read without the loader ----------------------------------------------------


def test_shipped_rows_carry_price_source_date_and_confidence():
    types = {r["instance_type"] for r in rows(CATALOG_DIR, "instance_types.csv")}
    regions = {r["region_id"] for r in rows(CATALOG_DIR, "regions.csv")}
    table = rows(CATALOG_DIR, "instance_prices.csv")
    assert table
    for r in table:
        assert r["instance_type"] in types and r["region"] in regions and r["billing"] == "payg"
        assert float(r["price_per_hour"]) > 0 and r["currency"] in ("CNY", "USD")
        assert DATE_RE.match(r["date"]) and r["source"].strip() and r["confidence"] in ("high", "medium", "low")
    keys = [(r["instance_type"], r["region"], r["billing"]) for r in table]
    assert len(keys) == len(set(keys))


def test_the_kubernetes_presets_type_has_no_price_and_the_plan_says_why():
    price = instance_price(CATALOG, "ecs.ebmgn7ex.32xlarge", "cn-wulanchabu")
    assert (price.cny, price.status) == (None, "unknown")
    assert price.source == (
        "no price for ecs.ebmgn7ex.32xlarge in the catalog's instance_prices.csv "
        "(`aitrain catalog refresh --type ecs.ebmgn7ex.32xlarge` asks Alibaba for your account's)"
    )


# --- which row a region gets ----------------------------------------------------------------------


def test_the_plans_own_region_wins():
    cat = with_prices(row("cn-shanghai", 200), row("cn-beijing", 210))
    price = instance_price(cat, GN7E, "cn-beijing")
    assert (price.cny, price.region, price.source) == (210, "cn-beijing", "source for cn-beijing, high confidence")


def test_another_mainland_region_lends_its_newest_price_and_says_so():
    cat = with_prices(row("cn-shanghai", 200, date="2023-06"), row("cn-hangzhou", 190, date="2026-11-30"))
    price = instance_price(cat, GN7E, "cn-beijing")
    assert (price.cny, price.region, price.status) == (190, "cn-hangzhou", "list")
    assert "cn-hangzhou price applied to cn-beijing, which has no row in instance_prices.csv" in price.source


def test_a_price_never_crosses_between_the_mainland_and_abroad():
    mainland_only = with_prices(row("cn-shanghai", 200))
    abroad = instance_price(mainland_only, GN7E, "ap-southeast-1")
    assert abroad.cny is None and "prices it only in cn-shanghai (the Chinese mainland)" in abroad.source
    abroad_only = with_prices(row("ap-southeast-1", 30, "USD"))
    home = instance_price(abroad_only, GN7E, "cn-shanghai")
    assert home.cny is None and "prices it only in ap-southeast-1 (outside the Chinese mainland)" in home.source
    assert "`aitrain catalog refresh --region cn-shanghai` asks Alibaba" in home.source


def test_a_usd_price_is_converted_with_the_catalogs_rate_and_says_so():
    rate = CATALOG.price("usd_cny", None, "ap-southeast-1")[0]  # type: ignore[index]
    price = instance_price(with_prices(row("ap-southeast-1", 30, "USD")), GN7E, "ap-southeast-1")
    assert price.cny == pytest.approx(30 * rate.amount) and price.status == "converted"
    assert price.region == "ap-southeast-1"
    assert price.source.startswith(
        f"USD 30/hour (source for ap-southeast-1, high confidence) × {rate.amount:g} CNY/USD"
    )


def test_a_low_confidence_price_is_a_third_party_figure():
    assert instance_price(with_prices(row("cn-shanghai", 200, confidence="low")), GN7E, "cn-shanghai").status == (
        "third-party"
    )


def test_hong_kong_is_outside_the_mainland():
    assert is_mainland("cn-wulanchabu") and not is_mainland("cn-hongkong") and not is_mainland("ap-southeast-1")


# --- moving the old columns out (tools/drop_price_columns.py) --------------------------------------


@pytest.fixture
def old_copy(tmp_path: Path) -> Path:
    """A catalog copy as it was before instance_prices.csv: the price columns in instance_types.csv, no prices file."""
    target = tmp_path / "old"
    shutil.copytree(CATALOG_DIR, target)
    _with_legacy_price(target, "277.93")
    (target / "instance_prices.csv").unlink()
    return target


def test_the_move_keeps_every_price_with_its_source_and_drops_the_columns(old_copy: Path):
    result = move_price_columns(old_copy)
    assert (result.added, result.already_there) == (1, 0)
    assert "price_cny_per_hour" not in rows(old_copy, "instance_types.csv")[0]
    moved = rows(old_copy, "instance_prices.csv")
    assert moved == [
        {
            "instance_type": GN7E,
            "region": "cn-shanghai",
            "billing": "payg",
            "price_per_hour": "277.93",
            "currency": "CNY",
            "date": "2023-06",
            "source": "https://example.com/prices",
            "confidence": "medium",
            "notes": MOVED_NOTE,
        }
    ]
    assert instance_price(load_catalog(old_copy), GN7E, "cn-shanghai").cny == 277.93
    assert move_price_columns(old_copy).dropped == ()  # a second run has nothing to do


def test_the_move_keeps_rows_already_there_and_refuses_a_conflict(tmp_path: Path):
    same = tmp_path / "same"
    shutil.copytree(CATALOG_DIR, same)
    _with_legacy_price(same, "277.93")
    before = (same / "instance_prices.csv").read_text(encoding="utf-8")
    assert move_price_columns(same).already_there == 1
    assert (same / "instance_prices.csv").read_text(encoding="utf-8") == before
    other = tmp_path / "other"
    shutil.copytree(CATALOG_DIR, other)
    line, name = _with_legacy_price(other, "300")
    types_before = (other / "instance_types.csv").read_text(encoding="utf-8")
    with pytest.raises(ValueError) as info:
        move_price_columns(other)
    assert str(info.value) == (
        f"instance_types.csv line {line}, column 'price_cny_per_hour': 300 CNY for {name}/cn-shanghai/payg, but "
        "instance_prices.csv already has 277.93 CNY; settle which is right by hand first"
    )
    assert (other / "instance_types.csv").read_text(encoding="utf-8") == types_before  # nothing written


def test_the_move_refuses_a_price_without_its_date(old_copy: Path):
    table = rows(old_copy, "instance_types.csv")
    i = next(i for i, r in enumerate(table) if r["price_cny_per_hour"])
    table[i]["price_date"] = ""
    with (old_copy / "instance_types.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)
    with pytest.raises(ValueError, match=rf"instance_types.csv line {i + 2}, column 'price_date': required because"):
        move_price_columns(old_copy)
    assert not (old_copy / "instance_prices.csv").exists()


def test_the_tool_exits_0_when_done_and_2_naming_the_line(old_copy: Path):
    tool = [sys.executable, str(ROOT / "tools" / "drop_price_columns.py"), str(old_copy)]
    done = subprocess.run(tool, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "1 prices moved to instance_prices.csv, 0 already there; dropped price_cny_per_hour" in done.stdout
    again = subprocess.run(tool, capture_output=True, text=True, check=False)
    assert again.returncode == 0 and "nothing to do" in again.stdout
    line, _ = _with_legacy_price(old_copy, "1")
    broken = subprocess.run(tool, capture_output=True, text=True, check=False)
    assert broken.returncode == 2
    assert broken.stderr.startswith(f"error: instance_types.csv line {line}, column 'price_cny_per_hour': 1 CNY for")
