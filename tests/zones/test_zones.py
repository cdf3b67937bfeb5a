"""The survey (parse one DescribeAvailableResource answer) and
the write into a catalog copy: the region filter then works."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from blueprints.catalog import load_catalog
from blueprints.catalog.loader import CATALOG_DIR
from blueprints.core.errors import UserInputError
from blueprints.preflight.checks import CloudError
from blueprints.preflight.zones import RegionAnswer, ask, ask_region, render_text
from blueprints.preflight.zones_write import check_copy, write
from tests.zones.replay import ZonesReplay

GN7E = "ecs.gn7e-c16g1.32xlarge"
GN7I = "ecs.gn7i-c32g1.8xlarge"
DAY = "2026-11-30"


def gpu_types() -> list[str]:
    return sorted(t for t, it in load_catalog().instance_types.items() if it.is_gpu)


def survey(*regions: str, reader: ZonesReplay | None = None) -> list[RegionAnswer]:
    replay = reader or ZonesReplay()
    return ask(regions, gpu_types(), lambda _: replay)


def test_one_call_per_region_with_the_documented_parameters() -> None:
    reader = ZonesReplay()
    survey("cn-beijing", "cn-shanghai", reader=reader)
    assert reader.calls == [
        {"RegionId": "cn-beijing", "DestinationResource": "InstanceType", "InstanceChargeType": "PostPaid"},
        {"RegionId": "cn-shanghai", "DestinationResource": "InstanceType", "InstanceChargeType": "PostPaid"},
    ]


def test_answer_keeps_catalog_gpu_types_with_zones_and_stock() -> None:
    beijing = ask_region("cn-beijing", gpu_types(), ZonesReplay())
    assert beijing.zones == ("cn-beijing-b", "cn-beijing-h", "cn-beijing-i")
    # A CPU type (ecs.g7.large) and a type the catalog lacks (ecs.gn7i-c8g1.9xlarge) are not surveyed.
    assert beijing.offered() == (GN7E, GN7I)
    # Sold out is still "offered in the zone": stock is preflight's question, not the catalog's.
    assert beijing.zones_of(GN7E) == ("cn-beijing-b", "cn-beijing-h")
    assert {(o.zone, o.status, o.stock) for o in beijing.offers if o.instance_type == GN7E} == {
        ("cn-beijing-b", "SoldOut", "WithoutStock"),
        ("cn-beijing-h", "Available", "WithStock"),
    }


def test_a_failed_call_is_kept_as_the_regions_error() -> None:
    answer = ask_region(
        "cn-beijing",
        gpu_types(),
        ZonesReplay({"cn-beijing": CloudError("ecs.DescribeAvailableResource", "Forbidden.RAM", "no permission")}),
    )
    assert (
        not answer.answered
        and answer.offers == ()
        and answer.error is not None
        and answer.error.code == "Forbidden.RAM"
    )


def test_a_zone_of_another_region_is_an_error_not_data() -> None:
    class Wrong:
        def call(self, api: str, params: object) -> dict[str, object]:
            return {"AvailableZones": {"AvailableZone": [{"ZoneId": "cn-hangzhou-h"}]}}

    answer = ask_region("cn-beijing", gpu_types(), Wrong())
    assert answer.error is not None and answer.error.code == "UnexpectedZone"


def test_only_instance_type_resources_count() -> None:
    class OtherResource:
        def call(self, api: str, params: object) -> dict[str, object]:
            resource = {
                "Type": "DedicatedHost",
                "SupportedResources": {"SupportedResource": [{"Value": GN7E, "Status": "Available"}]},
            }
            return {
                "AvailableZones": {
                    "AvailableZone": [
                        {"ZoneId": "cn-beijing-h", "AvailableResources": {"AvailableResource": [resource]}}
                    ]
                }
            }

    answer = ask_region("cn-beijing", gpu_types(), OtherResource())
    assert answer.zones == ("cn-beijing-h",) and answer.offers == ()


def test_text_report_lists_zones_and_sold_out() -> None:
    text = render_text(survey("cn-beijing"), DAY, 58)
    assert (
        "cn-beijing (DescribeAvailableResource, cn-beijing, 2026-11-30, "
        "PostPaid): 3 zones answered, 2 of 58 catalog GPU types offered" in text
    )
    assert f"{GN7E}  cn-beijing-b, cn-beijing-h  (sold out now: cn-beijing-b)" in text


def test_write_makes_the_region_filter_exclude_a_type_offered_only_elsewhere(catalog_copy: Path) -> None:
    before = load_catalog(catalog_copy)
    assert GN7E in [it.instance_type for it in before.query(region="cn-shanghai")]  # unknown regions: kept
    result = write(catalog_copy, survey("cn-beijing", "cn-shanghai"), gpu_types(), DAY)
    after = load_catalog(catalog_copy)
    in_shanghai = [it.instance_type for it in after.query(region="cn-shanghai")]
    in_beijing = [it.instance_type for it in after.query(region="cn-beijing")]
    assert GN7E not in in_shanghai and GN7E in in_beijing
    assert GN7I in in_shanghai and GN7I in in_beijing
    # A GPU type neither region lists stays unknown (the catalog cannot say "nowhere"), so it is kept.
    assert "ecs.gn5-c8g1.14xlarge" in in_shanghai
    assert after.instance_types[GN7E].regions == ("cn-beijing",)
    assert after.instance_types[GN7I].regions == ("cn-beijing", "cn-shanghai")
    assert after.zones_offering(GN7E, "cn-beijing") == ("cn-beijing-b", "cn-beijing-h")
    assert after.zones_offering(GN7I, "cn-shanghai") == ("cn-shanghai-b", "cn-shanghai-e")
    assert after.zones_offering(GN7E, "cn-shanghai") is None
    row = next(z for z in after.instance_zones if z.instance_type == GN7E)
    assert (row.source, row.source_date) == ("DescribeAvailableResource, cn-beijing, 2026-11-30", DAY)
    # cn-beijing-b was not in the ECI-based zone list: the answer adds it (the loader requires it).
    assert "cn-beijing-b" in after.regions["cn-beijing"].zones and result.new_zones == {"cn-beijing": ("cn-beijing-b",)}
    assert after.regions["cn-beijing"].source.endswith(
        "; zones cn-beijing-b from DescribeAvailableResource, cn-beijing, 2026-11-30"
    )
    assert after.regions["cn-shanghai"].source == before.regions["cn-shanghai"].source  # no new zone: source unchanged
    assert after.version == f"{before.version}+zones.{DAY}" and result.rows == 3 and result.regions_cells == 2


def test_shipped_catalog_is_untouched(catalog_copy: Path) -> None:
    shipped = {p.name: p.read_bytes() for p in CATALOG_DIR.iterdir() if p.is_file()}
    write(catalog_copy, survey("cn-beijing", "cn-shanghai"), gpu_types(), DAY)
    assert {p.name: p.read_bytes() for p in CATALOG_DIR.iterdir() if p.is_file()} == shipped
    assert GN7E in [it.instance_type for it in load_catalog(CATALOG_DIR).query(region="cn-shanghai")]


def test_rewriting_the_same_answer_changes_nothing(catalog_copy: Path) -> None:
    write(catalog_copy, survey("cn-beijing", "cn-shanghai"), gpu_types(), DAY)
    first = {p.name: p.read_text() for p in catalog_copy.iterdir()}
    again = write(catalog_copy, survey("cn-beijing", "cn-shanghai"), gpu_types(), DAY)
    assert {p.name: p.read_text() for p in catalog_copy.iterdir()} == first
    assert again.regions_cells == 0 and again.new_zones == {}


def test_a_later_answer_replaces_the_regions_rows_and_cells(catalog_copy: Path) -> None:
    write(catalog_copy, survey("cn-beijing", "cn-shanghai"), gpu_types(), DAY)
    # cn-hangzhou answers with no zones: nothing changes for it. Then cn-shanghai is asked again and lists nothing.
    empty = ZonesReplay()
    empty.recorded = [
        {
            "request": {
                "RegionId": "cn-shanghai",
                "DestinationResource": "InstanceType",
                "InstanceChargeType": "PostPaid",
            },
            "body": {"AvailableZones": {"AvailableZone": []}},
        }
    ]
    write(catalog_copy, survey("cn-shanghai", reader=empty), gpu_types(), "2026-12-01")
    after = load_catalog(catalog_copy)
    assert after.instance_types[GN7I].regions == ("cn-beijing",)
    assert after.zones_offering(GN7I, "cn-shanghai") is None and after.zones_offering(GN7I, "cn-beijing") == (
        "cn-beijing-i",
    )
    assert after.version.endswith("+zones.2026-12-01") and after.version.count("+zones.") == 1


def test_failed_region_is_not_written(catalog_copy: Path) -> None:
    reader = ZonesReplay({"cn-shanghai": CloudError("ecs.DescribeAvailableResource", "Throttling", "slow down")})
    write(catalog_copy, survey("cn-beijing", "cn-shanghai", reader=reader), gpu_types(), DAY)
    after = load_catalog(catalog_copy)
    assert after.instance_types[GN7I].regions == ("cn-beijing",)
    assert {z.region for z in after.instance_zones if z.source.startswith("DescribeAvailableResource")} == {
        "cn-beijing"
    }
    # cn-shanghai did not answer: its rows stay as the catalog had them, zones unknown.
    assert {z for z in after.instance_zones if z.region == "cn-shanghai"} == {
        z for z in load_catalog().instance_zones if z.region == "cn-shanghai"
    }
    assert after.zone_row(GN7I, "cn-shanghai") is not None and after.zones_offering(GN7I, "cn-shanghai") is None


def test_writer_refuses_an_invalid_copy(catalog_copy: Path) -> None:
    (catalog_copy / "regions.csv").write_text("region_id,name\n")
    with pytest.raises(UserInputError, match="regions.csv line 1: header must be exactly"):
        check_copy(catalog_copy)


def test_types_not_surveyed_keep_their_regions(catalog_copy: Path) -> None:
    path = catalog_copy / "instance_types.csv"
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    column = rows[0].index("regions")
    row = next(r for r in rows if r[0] == "ecs.g7.large")
    row[column] = "cn-beijing;cn-shanghai"  # a CPU type's regions cell, set by hand; only GPU types are surveyed
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue())
    write(catalog_copy, survey("cn-beijing", "cn-shanghai"), gpu_types(), DAY)
    assert load_catalog(catalog_copy).instance_types["ecs.g7.large"].regions == ("cn-beijing", "cn-shanghai")


def test_writer_refuses_the_shipped_catalog_and_non_folders(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="refusing to write the shipped catalog"):
        check_copy(CATALOG_DIR)
    with pytest.raises(UserInputError, match="must be an existing folder"):
        check_copy(tmp_path / "nope")


def test_region_missing_from_the_copy_is_a_user_error(catalog_copy: Path) -> None:
    lines = (catalog_copy / "regions.csv").read_text().splitlines(keepends=True)
    (catalog_copy / "regions.csv").write_text("".join(line for line in lines if not line.startswith("cn-beijing,")))
    with pytest.raises(UserInputError, match="regions.csv first"):
        write(catalog_copy, survey("cn-beijing"), gpu_types(), DAY)


def test_the_sdk_request_carries_the_same_parameters() -> None:
    from blueprints.preflight.aliyun import build_request
    from blueprints.preflight.checks import AVAILABLE_RESOURCE
    from blueprints.preflight.zones import request

    product, method, sdk_request = build_request(AVAILABLE_RESOURCE, request("cn-beijing"))
    assert (product, method) == ("ecs", "describe_available_resource")
    assert sdk_request.to_map() == {
        "RegionId": "cn-beijing",
        "DestinationResource": "InstanceType",
        "InstanceChargeType": "PostPaid",
    }


def test_a_result_that_fails_the_catalog_checks_leaves_the_copy_as_it_was(
    catalog_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blueprints.catalog import loader

    before = {p.name: p.read_bytes() for p in catalog_copy.iterdir()}

    def reject(directory: Path) -> None:
        # Rejects only the new content, so the check must run on the merged files, not the old ones.
        if "+zones." in (directory / "VERSION").read_text():
            raise ValueError(f"instance_zones.csv line 2: rejected in {directory}")

    monkeypatch.setattr(loader, "load_catalog", reject)  # the check catalog.rewrite runs on the scratch copy
    with pytest.raises(ValueError, match="rejected"):
        write(catalog_copy, survey("cn-beijing"), gpu_types(), DAY)
    assert {p.name: p.read_bytes() for p in catalog_copy.iterdir()} == before


def test_a_failed_write_never_truncates_a_catalog_file(monkeypatch, tmp_path):
    """The catalog copy's files are replaced whole (blueprints.core.files): a crash mid-write keeps the old text."""
    from blueprints.catalog import loader, rewrite
    from blueprints.core import files

    target = tmp_path / "instance_zones.csv"
    target.write_text("old\n", encoding="utf-8")

    def broken_replace(_src, _dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    monkeypatch.setattr(loader, "load_catalog", lambda directory: None)  # the scratch check passes
    with pytest.raises(OSError, match="No space left"):
        rewrite.replace_checked(tmp_path, {"instance_zones.csv": "new\n"})
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["instance_zones.csv"]
