"""docs/case-studies.md is generated and must be current; its key claims are flagged."""

from __future__ import annotations

from pathlib import Path

from blueprints.advisor.casestudies import DEFAULT_DOC, generate, main
from blueprints.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]


def test_case_studies_doc_is_current():
    assert DEFAULT_DOC == ROOT / "docs" / "case-studies.md"
    assert DEFAULT_DOC.read_text(encoding="utf-8") == generate(load_catalog()), "stale: run `python -m blueprints.advisor.casestudies --write docs/case-studies.md`"


def test_check_flag_exit_codes(tmp_path):
    stale = tmp_path / "case-studies.md"
    stale.write_text("old\n", encoding="utf-8")
    assert main(["--check", str(stale)]) == 1
    assert main(["--write", str(stale)]) == 0
    assert main(["--check", str(stale)]) == 0


def test_implausible_claims_are_flagged():
    text = generate(load_catalog())
    assert "IMPLAUSIBLE: “96 V100 = FP32 120 TFLOPS”" in text
    assert "IMPLAUSIBLE: “48 V100 per node, ResNet-50 at 120 images/s”" in text
    assert "IMPLAUSIBLE: “NVLink bandwidth 800 GB/s”" in text
    assert "UNSUPPORTED: “400 Gbps interconnect improves multi-GPU efficiency 28%”" in text


def test_every_example_is_a_case():
    import yaml

    from blueprints.advisor.casestudies import load_cases

    jobs = {c["job"] for c in load_cases()["cases"]}
    assert jobs == {f"examples/{p.name}" for p in (ROOT / "examples").glob("*.yaml") if yaml.safe_load(p.read_text()).get("model_kind")}
