"""The policy pack's config (``aitrain policy config``) and the pack's files in policy/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.policy.config import (
    FACTS_KEY,
    REASON_KEY,
    SUMMARY_FACTS,
    facts_from_config,
    pack_config,
    pack_config_json,
    policy_name,
)
from blueprints.review import guardrails
from blueprints.review.guardrails import Skip

ROOT = Path(__file__).resolve().parents[1]
GUARDRAILS = ROOT / "blueprints" / "review" / "guardrails"


def test_summary_facts_are_every_summary_key_a_rule_reads():
    """A rule reading a new summary key must ship it to the pack too, or the pack silently judges without it."""
    read = set()
    for source in GUARDRAILS.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        read |= set(re.findall(r"summary(?:\.get\(|\[)\"([a-z_]+)\"", text))
    assert read == set(SUMMARY_FACTS)


def test_no_rule_reads_what_the_pack_cannot_rebuild():
    """The pack's Plan has no notes, outputs, costs or region, and no resource's registered outputs: a rule reading
    them would judge the engine's stack differently from the offline plan (ship them as facts instead)."""
    unseen = re.compile(
        r"plan\.(notes|outputs|costs|region|blueprint|profile_name|findings|skipped)\b|registered_outputs"
    )
    readers = [
        f"{source.name}:{n}"
        for source in sorted(GUARDRAILS.glob("*.py"))
        for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if unseen.search(line)
    ]
    assert readers == []


def test_a_plan_without_skips_gives_every_policy_its_facts(medical_plan):
    config = pack_config(medical_plan)
    assert list(config) == [policy_name(r) for r in guardrails.RULES]
    expected = {
        "blueprint": "fixed-cluster",
        "bucket": "medical-imaging-cn-shanghai-data",
        "memory_gib_per_node": medical_plan.summary["memory_gib_per_node"],
        "scratch_gib_per_node": medical_plan.summary["scratch_gib_per_node"],
    }
    assert all(entry == {FACTS_KEY: expected} for entry in config.values())
    assert "admin_cidr" not in expected  # the preset sets none: absent, never null


def test_a_skipped_rule_is_disabled_with_its_reason(medical_plan):
    plan = guardrails.with_findings(medical_plan, (Skip("AIT008", "eRDMA pool needs a scaling configuration"),))
    config = pack_config(plan)
    ait008 = config[policy_name(next(r for r in guardrails.RULES if r.id == "AIT008"))]
    assert ait008 == {
        "enforcementLevel": "disabled",
        REASON_KEY: "eRDMA pool needs a scaling configuration",
        FACTS_KEY: ait008[FACTS_KEY],
    }
    assert [name for name, entry in config.items() if "enforcementLevel" in entry] == [
        name for name in config if name.startswith("ait008-")
    ]


def test_facts_from_config_keeps_only_known_facts():
    assert facts_from_config(None) == {}
    assert facts_from_config({FACTS_KEY: "not an object"}) == {}
    assert facts_from_config({FACTS_KEY: {"bucket": "b", "nodes": 3}, REASON_KEY: "x"}) == {"bucket": "b"}


def test_the_cli_writes_the_config_of_a_preset(tmp_path, medical_plan):
    out = tmp_path / "policy-config.json"
    result = CliRunner().invoke(app, ["policy", "config", "medical-imaging", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(pack_config_json(medical_plan))
    assert f"pulumi preview --policy-pack policy --policy-pack-config {out}" in result.output
    assert "skipped rules: none" in result.output


def test_the_cli_reads_facts_from_a_stack_config(tmp_path):
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "aitrain:preset": "medical-imaging",
                    "aitrain:profile": {"network": {"admin_cidr": "203.0.113.0/24"}},
                }
            }
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["policy", "config", "--stack-config", str(stack)])
    assert result.exit_code == 0, result.output
    config = json.loads(result.stdout)
    assert {entry[FACTS_KEY]["admin_cidr"] for entry in config.values()} == {"203.0.113.0/24"}


def test_the_cli_reads_skips_from_a_stack_config(tmp_path):
    stack = tmp_path / "Pulumi.dev.yaml"
    profile = {"guardrails": {"skip": [{"rule": "AIT013", "reason": "scratch is a shared NVMe pool"}]}}
    stack.write_text(
        yaml.safe_dump({"config": {"aitrain:preset": "medical-imaging", "aitrain:profile": profile}}), encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["policy", "config", "--stack-config", str(stack)])
    assert result.exit_code == 0, result.output
    config = json.loads(result.stdout)
    disabled = {
        name: entry[REASON_KEY] for name, entry in config.items() if entry.get("enforcementLevel") == "disabled"
    }
    assert disabled == {
        policy_name(next(r for r in guardrails.RULES if r.id == "AIT013")): "scratch is a shared NVMe pool"
    }


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["policy", "config"],
            "preset = None: name a preset (autoscaling-training, "
            "kubernetes-training, lingjun-training, medical-imaging) or give --stack-config",
        ),
        (["policy", "config", "medical-imaging", "--today", "2026-13-01"], "--today"),
    ],
)
def test_bad_input_is_one_message_and_exit_2(args, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


# ---- policy/ ----


def test_the_pack_folder_is_a_python_pack_of_the_same_rules():
    manifest = yaml.safe_load((ROOT / "policy" / "PulumiPolicy.yaml").read_text(encoding="utf-8"))
    assert manifest["runtime"]["name"] == "python"
    requirements = [
        line.split("#")[0].strip()
        for line in (ROOT / "policy" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    ]
    assert "pulumi-policy==1.21.0" in requirements and ".." in requirements  # the pinned SDK and this package
    main = (ROOT / "policy" / "__main__.py").read_text(encoding="utf-8")
    assert "PolicyPack(name=PACK_NAME, policies=policies())" in main


def test_the_pinned_sdk_is_the_tested_one():
    """blueprints.policy.pack reads past a private proxy of this
    version: the pin, the test extra and the install agree."""
    from importlib.metadata import version

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"pulumi-policy==1.21.0"' in pyproject
    assert version("pulumi-policy") == "1.21.0"
