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
    assert (summary.ran, summary.passed, summary.failed) == (13, 5, 8)
    assert summary.unlisted == []
    assert [(c, w) for c, w, _ in summary.listed] == [
        (check, f"alicloud_oss_bucket.medical-imaging-data-{kind}bucket")
        for check in ("CKV_ALI_10", "CKV_ALI_11", "CKV_ALI_12", "CKV_ALI_6")
        for kind in ("", "log-")
    ]
    assert (
        "medical-imaging: checks ran 13 (8 distinct), passed 5, "
        "failed 8, not applicable (listed) 8, unlisted failures 0" == run.line("medical-imaging", summary)
    )


def test_recorded_kubernetes_scan_passes_auto_repair_and_every_failure_is_listed():
    raw, document = recorded("kubernetes_training")
    summary = run.summarize(raw, document, WAIVERS)
    assert (
        "kubernetes-training: checks ran 14 (8 distinct), passed 6, "
        "failed 8, not applicable (listed) 8, unlisted failures 0" == run.line("kubernetes-training", summary)
    )
    passed = {(c["check_id"], run.address(c, document)) for c in raw["results"]["passed_checks"]}
    assert {
        ("CKV_ALI_31", "alicloud_cs_kubernetes_node_pool.kubernetes-training-k8s-gpu-pool"),
        ("CKV_ALI_31", "alicloud_cs_kubernetes_node_pool.kubernetes-training-k8s-system-pool"),
    } <= passed
    assert "alicloud_cs_managed_kubernetes" in document["resource"] and not [
        t for t in document["resource"] if t.startswith("kubernetes")
    ]


def test_each_bucket_kind_gets_its_own_reason():
    """The data bucket's access logs go to the log bucket (a separate alicloud_oss_bucket_logging); the log bucket is
    the target and logs nothing itself. One row per kind, so neither reason is claimed for the other bucket."""
    raw, document = recorded("kubernetes_training")
    reasons = {(c, w): r for c, w, r in run.summarize(raw, document, WAIVERS).listed}
    data, log = (
        "alicloud_oss_bucket.kubernetes-training-data-bucket",
        "alicloud_oss_bucket.kubernetes-training-data-log-bucket",
    )
    assert (
        "alicloud_oss_bucket_logging" in reasons[("CKV_ALI_12", data)]
        and "on by default" in reasons[("CKV_ALI_12", data)]
    )
    assert "is the logging target" in reasons[("CKV_ALI_12", log)]
    assert "security.kms_key_id" in reasons[("CKV_ALI_6", data)] and "OSS-managed AES256" in reasons[("CKV_ALI_6", log)]
    assert not any("opt-in" in w.reason for w in WAIVERS if w.check_id == "CKV_ALI_12")


def test_every_not_applicable_row_matches_a_recorded_failure():
    """A row nothing fails any more is stale: `make scan` prints it as a note, and this test keeps the list current."""
    listed = set()
    for name in ("medical_imaging", "kubernetes_training"):
        raw, document = recorded(name)
        listed |= {(c, w) for c, w, _ in run.summarize(raw, document, WAIVERS).listed}
    stale = [(w.check_id, w.resource) for w in WAIVERS if not any(w.covers(c, where) for c, where in listed)]
    assert stale == []


def test_left_out_of_reads_the_exports_own_words():
    said = (
        "wrote build/scan/k/main.tf.json (36 resources of k); cloud side "
        "only, 16 Kubernetes objects left out: kubernetes:apps/v1:Deployment\n"
    )
    assert run.left_out_of(said) == "16 Kubernetes objects left out: kubernetes:apps/v1:Deployment"
    assert run.left_out_of("wrote build/scan/m/main.tf.json (40 resources of m)\n") == ""


def test_a_failure_without_its_row_is_unlisted():
    raw, document = recorded("medical_imaging")
    without = [w for w in WAIVERS if w.check_id != "CKV_ALI_10"]
    summary = run.summarize(raw, document, without)
    assert [(c, w) for c, w, _ in summary.unlisted] == [
        ("CKV_ALI_10", "alicloud_oss_bucket.medical-imaging-data-bucket"),
        ("CKV_ALI_10", "alicloud_oss_bucket.medical-imaging-data-log-bucket"),
    ]
    # A row only covers the resources its pattern matches.
    narrow = [run.Waiver("CKV_ALI_10", "alicloud_oss_bucket.*-log-bucket", "x")] + without
    assert [(c, w) for c, w, _ in run.summarize(raw, document, narrow).unlisted] == [
        ("CKV_ALI_10", "alicloud_oss_bucket.medical-imaging-data-bucket")
    ]


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
