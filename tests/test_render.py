"""The rendered plan tells the truth about itself: claims only what holds, shows unencrypted storage, and free text
cannot forge sections (Markdown) or reach the terminal as escape sequences."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from conftest import beyond_opt_in
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.core.text import md_code, md_text, plain
from blueprints.review import guardrails
from blueprints.review.plan import Plan, PlannedResource
from blueprints.review.render import guardrails_holding, render_markdown, render_table

CPFS = [
    "--set",
    "storage.kind=cpfs",
    "--set",
    "storage.throughput_tier=advance_100",
    "--set",
    "storage.allow_unencrypted_cpfs=true",
]
FORGED = (
    "ok\n\n### Guardrails\n\n- all passed\n\x1b[31mRED\x1b[0m "
    "\x1b]8;;http://evil\x07link\x1b]8;;\x07 | `x` <b>bold</b> \u202egnp.exe"
)


def _plan(*args: str) -> str:
    result = CliRunner().invoke(app, ["plan", "medical-imaging", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def cpfs_markdown() -> str:
    return _plan(*CPFS, "--format", "markdown")


def test_unencrypted_cpfs_is_a_visible_warning_in_every_format(cpfs_markdown):
    table = _plan(*CPFS)
    assert "warning: [AIT009] medical-imaging-storage-fs: cpfs file system is not encrypted at rest" in table
    assert "guardrails: all passed" not in table and "guardrails holding:" in table
    assert "AIT009 all stored data is encrypted at rest" not in table
    assert (
        "- **warning** `AIT009` `medical-imaging-storage-fs`: cpfs file system is not encrypted at rest"
        in cpfs_markdown
    )
    import json

    findings = json.loads(_plan(*CPFS, "--format", "json"))["findings"]
    # CPFS: not encrypted (AIT009), no snapshot or recycle bin
    # (AIT016), no access group (AIT025); the rest are opt-in infos.
    assert [(f["rule"], f["level"], f["resource"]) for f in beyond_opt_in(findings)] == [
        ("AIT009", "warning", "medical-imaging-storage-fs"),
        ("AIT016", "warning", "medical-imaging-storage-fs"),
        ("AIT025", "warning", "medical-imaging-storage-fs"),
        ("AIT027", "warning", "medical-imaging-network-sg-egress-allow-0"),
    ]
    assert "allow_unencrypted_cpfs" in findings[0]["message"]


def test_markdown_claims_only_what_holds(cpfs_markdown):
    section = cpfs_markdown.split("### Guardrails", 1)[1].split("### Data safety", 1)[0]
    assert "encrypted disks and storage" not in cpfs_markdown and "All passed" not in section
    fired = {f["rule"] for f in json.loads(_plan(*CPFS, "--format", "json"))["findings"]}
    assert {"AIT009", "AIT016", "AIT025"} <= fired
    assert f"Holding ({len(guardrails.RULES) - len(fired)} of {len(guardrails.RULES)} rules)" in section
    assert "all stored data is encrypted at rest" not in section
    assert "node system and data disks are encrypted (AIT003)" in section


def test_clean_plan_claims_every_rule_by_name(medical_plan):
    clean = dataclasses.replace(medical_plan, findings=())
    markdown, table = render_markdown(clean), render_table(clean)
    assert "All passed" in markdown and "guardrails: all passed" in table
    for rule in guardrails.RULES:
        assert f"{md_text(rule.title)} ({rule.id})" in markdown
        assert f"  {rule.id} {rule.title}" in table


def test_a_finding_removes_exactly_its_claim(medical_plan):
    finding = {"rule": "AIT003", "level": "error", "resource": "x", "message": "not encrypted"}
    plan = dataclasses.replace(medical_plan, findings=(finding,))
    assert [rule_id for rule_id, _ in guardrails_holding(plan)] == [r.id for r in guardrails.RULES if r.id != "AIT003"]
    assert "node system disks are encrypted" not in render_markdown(plan).split("### Guardrails", 1)[1]
    assert "node system disks are encrypted" not in render_table(plan).split("guardrails holding:", 1)[1]


def test_description_cannot_forge_a_markdown_section(medical_plan):
    plan = dataclasses.replace(medical_plan, notes=(FORGED,))
    markdown = render_markdown(plan)
    assert len(re.findall(r"^#+ Guardrails", markdown, re.M)) == 1  # the forged heading never starts a line
    assert not re.search(r"^- all passed", markdown, re.M)
    quoted = [line for line in markdown.splitlines() if line.startswith("> ")]
    assert len(quoted) == 1 and "### Guardrails" in quoted[0]  # inside the one quoted line: text, not a heading
    assert "<b>" not in markdown and "\\<b\\>bold\\</b\\>" in quoted[0]
    assert "\x1b" not in markdown and "\u202e" not in markdown


def test_terminal_table_strips_escape_sequences(medical_plan):
    plan = dataclasses.replace(medical_plan, notes=(FORGED,), findings=())
    table = render_table(plan)
    assert "\x1b" not in table and "\x07" not in table and "\u202e" not in table
    note_lines = [line for line in table.splitlines() if line.startswith("note:")]
    assert len(note_lines) == 1 and "RED" in note_lines[0] and "link" in note_lines[0]
    assert table.count("guardrails: all passed") == 1


def test_a_multi_line_description_is_refused_at_input():
    """The first defence: a description is one line (the renderers escape whatever reaches them anyway)."""
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    text = 'description="ok\\n\\n### Guardrails\\n\\n- all passed \\e[31mRED\\e[0m"'
    result = CliRunner().invoke(app, ["plan", "medical-imaging", "--set", text, "--format", "markdown"])
    assert result.exit_code == 2 and "description = " in result.output and "must be one line of text" in result.output
    assert "### Guardrails" not in result.stdout


def test_hostile_names_and_tags_stay_inside_their_cells():
    resource = PlannedResource(
        "alicloud:nas/accessRule:AccessRule",
        "r|`x`\n| forged | row |",
        None,
        True,
        {"sourceCidrIp": "10.0.0.0/8 | x", "rwAccessType": "RDWR\n### h"},
    )
    plan = Plan("fixed-cluster", "cn-shanghai", "p", {"k": "a|b\n## h"}, (), (resource,))
    markdown = render_markdown(plan)
    rows = [
        line for line in markdown.splitlines() if "forged" in line and line.startswith("|")
    ]  # the diagram holds it in a label
    assert len(rows) == 1 and len(re.findall(r"(?<!\\)\|", rows[0])) == 5  # still four columns: five unescaped pipes
    assert not any(line.startswith(("## h", "### h")) for line in markdown.splitlines())


def test_helpers():
    assert plain("a\x1b[1mB\x1b[0m\nc\td\x00e\u200bf") == "aB c def"
    assert md_text("# x | *y* <z> & _w_ snake_case") == "\\# x \\| \\*y\\* \\<z\\> &amp; \\_w\\_ snake_case"
    assert md_code("a`b|c") == "``a`b\\|c``"
    assert md_code("`") == "`` ` ``"


def test_terminal_plan_shows_the_cost_and_what_is_not_priced(medical_plan):
    text = render_table(medical_plan)
    # 12 × 277.93 CNY/h × 730 h, from the catalog; the per-node disks have no price and are named, not zeroed.
    assert re.search(
        r"medical-imaging-cluster-nodes-0\s+12 × ecs\.gn7e-c16g1\.32xlarge\s+¥3,335\.16\s+¥2,434,666\.80\s+list", text
    )
    assert (
        "total of the priced lines: ¥3,432.25 per hour, ¥2,505,543.57 per month, ¥111,891.35 per run of 32.6 h" in text
    )
    assert (
        "not priced (never counted as 0): medical-imaging-cluster-nodes-0: 12 × system disk ESSD PL1 200 GiB"
        in text.replace("\n", " ")
    )


def test_an_incomplete_total_says_it_sums_the_priced_lines_only(medical_plan):
    assert "**Total of the priced lines:** ¥3,432.25 per hour" in render_markdown(medical_plan)
    complete = dataclasses.replace(
        medical_plan,
        costs={**medical_plan.costs, "totals": {**medical_plan.costs["totals"], "complete": True, "unknown": []}},
    )
    assert "**Total:** ¥3,432.25 per hour" in render_markdown(complete) and "total: ¥3,432.25 per hour" in render_table(
        complete
    )


def test_terminal_cost_of_a_pool_lists_its_scenarios_and_an_unpriced_plan_says_so(autoscaling_plan, medical_plan):
    text = render_table(autoscaling_plan)
    assert (
        "  at min: ¥9,887.50 (incomplete) per month" in text and "  at max: ¥77,850.50 (incomplete) per month" in text
    )
    assert "no catalog price for autoscaling-training-pool-group: 8 × system disk ESSD PL1 200 GiB" in text
    assert "cost: not priced (this plan carries no cost lines)" in render_table(
        dataclasses.replace(medical_plan, costs={})
    )


def test_folded_cost_lines_sum_what_they_fold_and_stay_unknown_if_one_is():
    from blueprints.review.render.costs import collapse_lines

    lines = [
        {"resource": f"n{i}", "type": "ecs.Instance", "cny_per_hour": 1.5, "cny_per_month": 1095.0, "status": "list"}
        for i in range(5)
    ]
    folded, count = collapse_lines(lines, keep=3)
    assert (
        count == 2
        and folded[3]["resource"] == "… and 2 more ecs.Instance"
        and (folded[3]["cny_per_hour"], folded[3]["cny_per_month"]) == (3.0, 2190.0)
    )
    lines[4] = {**lines[4], "cny_per_month": None}
    assert collapse_lines(lines, keep=3)[0][3]["cny_per_month"] is None  # a partial sum would read as the whole
