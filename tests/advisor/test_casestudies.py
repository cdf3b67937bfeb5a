"""docs/case-studies.md is generated and must be current; its key claims are flagged."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from blueprints.advisor import casestudies
from blueprints.advisor.casestudies import DEFAULT_DOC
from blueprints.advisor.data import limits
from blueprints.architectures import budget_tiers
from blueprints.catalog import load_catalog
from blueprints.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def generate():
    return casestudies.generate(load_catalog(), budget_tiers(limits()))


def test_case_studies_doc_is_current():
    assert DEFAULT_DOC == ROOT / "docs" / "case-studies.md"
    assert DEFAULT_DOC.read_text(encoding="utf-8") == generate(), "stale: run `make regen`"


def test_check_flag_exit_codes(tmp_path):
    stale = tmp_path / "case-studies.md"
    stale.write_text("old\n", encoding="utf-8")
    assert CliRunner().invoke(app, ["case-studies", "--check", str(stale)]).exit_code == 1
    assert CliRunner().invoke(app, ["case-studies", "--write", str(stale)]).exit_code == 0
    assert CliRunner().invoke(app, ["case-studies", "--check", str(stale)]).exit_code == 0
    assert stale.read_text(encoding="utf-8") == generate()


def test_implausible_claims_are_flagged():
    text = generate()
    assert "IMPLAUSIBLE: “96 V100 = FP32 120 TFLOPS”" in text
    assert "IMPLAUSIBLE: “48 V100 per node, ResNet-50 at 120 images/s”" in text
    assert "IMPLAUSIBLE: “NVLink bandwidth 800 GB/s”" in text
    assert "UNSUPPORTED: “400 Gbps interconnect improves multi-GPU efficiency 28%”" in text


def test_every_example_is_a_case():
    import yaml

    from blueprints.advisor.casestudies import load_cases

    jobs = {c["job"] for c in load_cases()["cases"]}
    assert jobs == {
        f"examples/{p.name}"
        for p in (ROOT / "examples").glob("*.yaml")
        if yaml.safe_load(p.read_text()).get("model_kind")
    }
