"""`make scan`'s comparison logic (scan/run.py) on recorded checkov output: listed failures pass, unlisted ones
fail, the canary must show its expected check ids, and the not-applicable list is validated and current."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "scan"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"aitrain_scan_{name}", ROOT / "scan" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run = _load("run")
canary = _load("canary")
WAIVERS = run.load_waivers(ROOT / "scan" / "not-applicable.csv")


def recorded(name: str) -> tuple[dict, dict]:
    data = json.loads((DATA / f"checkov_{name}.json").read_text(encoding="utf-8"))
    document = {"resource": {tf_type: {n: {} for n in names} for tf_type, names in data["resources"].items()}}
    return data["checkov"], document


def test_recorded_preset_scan_is_clean_with_the_committed_not_applicable_list():
    raw, document = recorded("medical_imaging")
    summary = run.summarize(raw, document, WAIVERS)
    assert (summary.ran, summary.passed, summary.failed) == (8, 4, 4)
    assert summary.unlisted == []
    assert [(c, w) for c, w, _ in summary.listed] == [
        ("CKV_ALI_10", "alicloud_oss_bucket.medical-imaging-data-bucket"),
        ("CKV_ALI_11", "alicloud_oss_bucket.medical-imaging-data-bucket"),
        ("CKV_ALI_12", "alicloud_oss_bucket.medical-imaging-data-bucket"),
        ("CKV_ALI_6", "alicloud_oss_bucket.medical-imaging-data-bucket"),
    ]
    assert "medical-imaging: checks ran 8 (8 distinct), passed 4, failed 4, not applicable (listed) 4, unlisted failures 0" == run.line("medical-imaging", summary)


def test_a_failure_without_its_row_is_unlisted():
    raw, document = recorded("medical_imaging")
    without = [w for w in WAIVERS if w.check_id != "CKV_ALI_10"]
    summary = run.summarize(raw, document, without)
    assert [(c, w) for c, w, _ in summary.unlisted] == [("CKV_ALI_10", "alicloud_oss_bucket.medical-imaging-data-bucket")]
    # A row only covers the resources its pattern matches.
    narrow = [run.Waiver("CKV_ALI_10", "alicloud_oss_bucket.other-*", "x")] + without
    assert len(run.summarize(raw, document, narrow).unlisted) == 1


def test_the_recorded_canary_is_caught_and_a_missing_failure_is_named():
    raw, document = recorded("canary")
    summary = run.summarize(raw, document, WAIVERS)
    assert {c for c, _, _ in summary.unlisted} >= canary.EXPECTED_FAILURES
    assert run.canary_verdict(summary, canary.EXPECTED_FAILURES) == []
    assert ("CKV_ALI_2", "alicloud_security_group_rule.canary-public-ssh") in {(c, w) for c, w, _ in summary.unlisted}
    raw["results"]["failed_checks"] = [c for c in raw["results"]["failed_checks"] if c["check_id"] != "CKV_ALI_7"]
    assert run.canary_verdict(run.summarize(raw, document, WAIVERS), canary.EXPECTED_FAILURES) == ["CKV_ALI_7"]


def test_canary_injects_the_three_violations_without_touching_the_export(medical_plan):
    from blueprints.export import to_terraform

    export = to_terraform(medical_plan)
    before = json.dumps(export, sort_keys=True)
    injected = canary.inject(export)
    assert json.dumps(export, sort_keys=True) == before
    rule = injected["resource"]["alicloud_security_group_rule"]["canary-public-ssh"]
    assert (rule["type"], rule["cidr_ip"], rule["port_range"]) == ("ingress", "0.0.0.0/0", "22/22")
    assert injected["resource"]["alicloud_disk"]["canary-unencrypted-disk"]["encrypted"] is False
    disks = [d for t in injected["resource"]["alicloud_ecs_launch_template"].values() for d in t.get("data_disks", [])]
    assert any(d["encrypted"] is False for d in disks)


def test_reports_accept_every_shape_checkov_prints():
    one = {"check_type": "terraform_json", "results": {"passed_checks": [], "failed_checks": []}}
    assert run.reports(one) == [one]
    assert run.reports([one, one]) == [one, one]
    # With nothing to scan checkov prints a bare summary: no report, so the run counts 0 checks (and fails).
    assert run.reports({"passed": 0, "failed": 0}) == []
    assert run.summarize({"passed": 0}, {}, WAIVERS).ran == 0


def test_address_finds_the_type_of_a_terraform_json_result():
    document = {"resource": {"alicloud_oss_bucket": {"b": {}}, "alicloud_vpc": {"v": {}}}}
    assert run.address({"resource": "resource.b"}, document) == "alicloud_oss_bucket.b"
    assert run.address({"resource": "alicloud_vpc.v"}, document) == "alicloud_vpc.v"
    assert run.address({"resource": "resource.unknown"}, document) == "resource.unknown"


def test_not_applicable_rows_need_an_id_a_pattern_and_a_reason(tmp_path):
    assert WAIVERS and all(w.reason and w.check_id.startswith("CKV_ALI_") for w in WAIVERS)
    bad = tmp_path / "na.csv"
    bad.write_text('check_id,resource,reason\nCKV_ALI_6,alicloud_oss_bucket.*,"  "\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"na.csv:2: needs check_id .* and a reason"):
        run.load_waivers(bad)
    bad.write_text("check_id,resource,reason\nALI_6,alicloud_oss_bucket.*,why\n", encoding="utf-8")
    with pytest.raises(ValueError, match="na.csv:2"):
        run.load_waivers(bad)
