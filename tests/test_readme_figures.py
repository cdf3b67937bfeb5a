"""Every figure the README quotes is what the tool prints today.

A quoted figure sits between ``<!-- fig:NAME -->`` and ``<!-- /fig -->`` (invisible on GitHub); ``FIGURES[NAME]``
computes it from the same functions the commands run. The test compares only; ``make regen`` runs this file as a
script, which rewrites the figures in place. A marker without a figure, or a figure without a marker, fails.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path
from typing import Callable

import pytest

from blueprints.core import userdata

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"<!-- fig:([a-z0-9-]+) -->(.*?)<!-- /fig -->", re.DOTALL)
TODAY = "2026-11-30"


@cache
def plan(name: str, **overrides: object):
    """The offline plan of a golden plan's preset and overrides, or of a preset with these overrides."""
    from blueprints.testing import offline_plan
    from tests.test_golden import GOLDEN_PLANS

    preset, base = GOLDEN_PLANS.get(name, (name, {}))
    return offline_plan(preset, overrides={**base, **overrides})


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"{value:,.2f}"


def _items(named: list[str]) -> str:
    """ "res: 12 × system disk …" entries as the distinct items they name ("system disk …")."""
    items = [re.sub(r"^\d+ × | \(scales .*\)$", "", entry.split(": ", 1)[-1]) for entry in named]
    return ", ".join(dict.fromkeys(items)) or "nothing"


def _unpriced(name: str) -> str:
    return _items(plan(name).costs["totals"]["unknown"])


def _run(name: str) -> str:
    totals = plan(name).costs["totals"]
    return "—" if totals["run_hours"] is None else f"{_money(totals['cny_per_run'])} ({totals['run_hours']:g} h)"


def preset_costs() -> str:
    """The README's table of what each golden plan costs and what it cannot price."""
    rows = ["| plan | ¥/hour | ¥/month | per run | not priced (never counted as 0) |", "|---|--:|--:|--:|---|"]
    for name, label in (
        ("medical-imaging", "medical-imaging (12 × gn7e)"),
        ("medical-imaging-erdma-login", "medical-imaging on 2 × ebmgn7ex (eRDMA) with a login node"),
        ("kubernetes-training", "kubernetes-training (the GPU pool at min)"),
        ("autoscaling-training", "autoscaling-training (the pool at min)"),
    ):
        totals = plan(name).costs["totals"]
        rows.append(
            f"| {label} | {_money(totals['cny_per_hour'])} | "
            f"{_money(totals['cny_per_month'])} | {_run(name)} | {_unpriced(name)} |"
        )
    for name in ("autoscaling-training", "kubernetes-training"):
        for scenario in plan(name).costs["scenarios"]:
            label = scenario["name"].split(":")[0].removeprefix("with the ")
            state = "" if scenario["complete"] else " (incomplete)"
            missing = _items(scenario["unpriced_nodes"])
            rows.append(
                f"| {name} {label} ({scenario['nodes']} GPU nodes) | | {_money(scenario['cny_per_month'])}{state} | | "
                f"as above, and of the nodes: {missing} |"
            )
    return "\n" + "\n".join(rows) + "\n"


def user_data_bytes(name: str) -> str:
    """Bytes of the first node's decoded cloud-init in a golden plan."""
    for resource in plan(name).resources:
        data = resource.inputs.get("userData")
        if isinstance(data, str) and not data.startswith("${"):
            return f"{len(userdata.compressed(userdata.decode(data) or '')):,}"
    raise AssertionError(f"{name}: no user data")


def markdown_sizes() -> str:
    """The presets' Markdown plans, in thousands of characters (min–max), and a 256-node eRDMA cluster's."""
    from blueprints.profile.stackconfig import preset_names
    from blueprints.review.render import render_markdown

    sizes = [len(render_markdown(plan(name))) for name in preset_names()]
    big = len(render_markdown(plan("medical-imaging-erdma-login", **{"compute.nodes": 256})))
    return f"{min(sizes) // 1000}–{max(sizes) // 1000} K characters; an eRDMA cluster of 256 nodes {big // 1000} K"


def kubernetes_counts() -> str:
    """How many resources the kubernetes-training plan holds, by kind."""
    resources = plan("kubernetes-training").resources
    custom = [r for r in resources if r.custom]
    providers = [r for r in custom if r.type.startswith("pulumi:providers:")]
    kubernetes = [r for r in custom if r.type.startswith("kubernetes:")]
    alicloud = [r for r in custom if r.type.startswith("alicloud:")]
    assert len(custom) == len(providers) + len(kubernetes) + len(alicloud)
    return (
        f"{len(custom)} resources ({len(alicloud)} Alibaba Cloud, {len(kubernetes)} Kubernetes objects, "
        f"{len(providers)} providers; {len(resources)} with the components)"
    )


def rule_count() -> str:
    from blueprints.review.guardrails import RULES

    return f"{len(RULES)} rules"


def kms_instance_month() -> str:
    """What the default plans say a customer key's KMS instance would cost a month (costs.not_in_plan)."""
    return _money(plan("medical-imaging").costs["not_in_plan"][0]["cny_per_month"])


def run_hours() -> str:
    return f"{plan('medical-imaging').costs['totals']['run_hours']:g} h"


# The README's deploy walk-through: the preset with these two settings.
DEPLOY_EXAMPLE = {"compute.nodes": 4, "network.admin_cidr": "203.0.113.0/24"}


def deploy_cost() -> str:
    """What the README's ten-command deploy creates costs, running and parked, and what stays unpriced."""
    running = plan("medical-imaging", **DEPLOY_EXAMPLE).costs["totals"]
    parked = plan("medical-imaging", **{**DEPLOY_EXAMPLE, "compute.nodes": 0}).costs["totals"]
    return (
        f"¥{_money(running['cny_per_hour'])} an hour "
        f"(¥{_money(running['cny_per_month'])} for a month left running); parked"
        f" (`compute.nodes: 0`: no nodes, the storage, bucket and NAT kept) ¥{_money(parked['cny_per_month'])} a month."
        f" Not priced, so add them: {_items(running['unknown'])}."
    )


FIGURES: dict[str, Callable[[], str]] = {
    "deploy-cost": deploy_cost,
    "preset-costs": preset_costs,
    "medical-run-hours": run_hours,
    "user-data-medical": lambda: user_data_bytes("medical-imaging"),
    "user-data-autoscaling": lambda: user_data_bytes("autoscaling-training"),
    "user-data-erdma": lambda: user_data_bytes("medical-imaging-erdma-login"),
    "markdown-sizes": markdown_sizes,
    "kubernetes-counts": kubernetes_counts,
    "rule-count": rule_count,
    "kms-instance-month": kms_instance_month,
}


def quoted(text: str) -> dict[str, list[str]]:
    """Each marker's name → the texts quoted under it."""
    out: dict[str, list[str]] = {}
    for match in MARKER.finditer(text):
        out.setdefault(match.group(1), []).append(match.group(2))
    return out


def rewritten(text: str) -> str:
    """The README with every figure recomputed."""
    return MARKER.sub(lambda m: f"<!-- fig:{m.group(1)} -->{FIGURES[m.group(1)]()}<!-- /fig -->", text)


def test_every_figure_is_quoted_and_every_quote_has_a_figure():
    names = quoted(README.read_text(encoding="utf-8"))
    assert sorted(names) == sorted(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_the_readme_quotes_what_the_tool_prints(name):
    for text in quoted(README.read_text(encoding="utf-8")).get(name, []):
        assert text == FIGURES[name](), f"README figure {name} is stale: run `make regen`"


def test_the_medical_imaging_preset_prices_a_run_as_long_as_aitrain_estimate_says():
    """The preset's cost.run_hours is one run of its job on its nodes, by the command its comment names."""
    import json

    from typer.testing import CliRunner

    from blueprints.cli.main import app

    preset = (ROOT / "blueprints" / "presets" / "medical-imaging.yaml").read_text(encoding="utf-8")
    command = re.search(r"`aitrain (estimate [^`]+)`", preset)
    assert command, "the preset's comment names the estimate command"
    result = CliRunner().invoke(app, [*command.group(1).split(), "--format", "json"])
    assert result.exit_code == 0, result.output
    hours = json.loads(result.output)["estimated_hours"]
    assert plan("medical-imaging").costs["totals"]["run_hours"] == round(hours, 1)


if __name__ == "__main__":
    import os

    os.environ.setdefault("AITRAIN_TODAY", TODAY)
    sys.path.insert(0, str(ROOT))
    README.write_text(rewritten(README.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"rewrote {len(quoted(README.read_text(encoding='utf-8')))} README figures")
