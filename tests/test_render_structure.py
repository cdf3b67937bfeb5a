"""The Markdown plan renders as written: parsed with a CommonMark + GFM-tables parser (markdown-it-py), every heading,
table row, cell value and fence is what the plan says, with no stray backslash."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from blueprints.core import userdata
from blueprints.review.plan import Plan
from blueprints.review.render import format_value, key_properties, render_markdown, user_data_blocks
from blueprints.review.render.diagram import mermaid_flowchart
from tests.test_golden import ERDMA_LOGIN

PARSER = MarkdownIt("commonmark").enable("table")
HEADINGS = ["Cost", "Run time", "Diagram", "Resources", "Resource tree", "Guardrails", "Data safety"]


@pytest.fixture(scope="module")
def erdma_plan() -> Plan:
    from blueprints.testing import offline_plan

    return offline_plan("medical-imaging", overrides=ERDMA_LOGIN)


@pytest.fixture(params=["medical_plan", "autoscaling_plan", "erdma_plan"])
def plan(request) -> Plan:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def inline_text(token: Token) -> str:
    """What a reader sees of an inline token: text and code spans, entities decoded (``&nbsp;`` → U+00A0)."""
    return "".join(c.content for c in token.children or [] if c.type in ("text", "code_inline"))


def headings(tokens: list[Token]) -> list[str]:
    """The text of every heading, in order."""
    return [inline_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]


def tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Every table as body rows of cell texts (the header row left out)."""
    out: list[list[list[str]]] = []
    rows: list[list[str]] = []
    in_body = False
    for i, t in enumerate(tokens):
        if t.type == "tbody_open":
            in_body, rows = True, []
        elif t.type == "tbody_close":
            in_body = False
            out.append(rows)
        elif in_body and t.type == "tr_open":
            rows.append([])
        elif in_body and t.type == "td_open":
            rows[-1].append(inline_text(tokens[i + 1]))
    return out


def table_after(tokens: list[Token], heading: str) -> list[list[str]]:
    """The body rows of the first table after the heading whose text starts with ``heading``."""
    start = next(
        i for i, t in enumerate(tokens) if t.type == "heading_open" and inline_text(tokens[i + 1]).startswith(heading)
    )
    return tables(tokens[start:])[0]


def test_headings_and_sections_in_order(plan):
    tokens = PARSER.parse(render_markdown(plan))
    found = headings(tokens)
    assert found[0] == f"aitrain plan: {plan.profile_name} — {plan.blueprint} in {plan.region}"
    assert [h.split(" (")[0] for h in found[1:]] == HEADINGS  # also: no fence swallowed a later heading


def test_summary_cells_equal_the_plan_values(plan):
    rows = tables(PARSER.parse(render_markdown(plan)))[0]
    assert rows == [[key, format_value(value)] for key, value in plan.summary.items()]


def test_numbers_render_without_a_backslash(medical_plan):
    html = PARSER.render(render_markdown(medical_plan))
    assert "<td>80.0</td>" in html and "<td>1000.0</td>" in html and "<td>3335.16</td>" in html
    assert "\\80.0" not in html and "\\3335" not in html


def test_one_tree_row_per_resource_and_cells_match(plan):
    rows = table_after(PARSER.parse(render_markdown(plan)), "Resource tree")
    assert len(rows) == len(plan.resources)
    for row, r in zip(rows, plan.resources, strict=True):
        props = ", ".join(f"{k}={format_value(v)}" for k, v in key_properties(r).items())
        assert [row[0].lstrip("\xa0"), row[1], row[2]] == [r.name, r.short_type, props]


def test_type_counts_table_matches(plan):
    rows = table_after(PARSER.parse(render_markdown(plan)), "Resources")
    assert rows == [[t, str(n)] for t, n in plan.count_by_type().items()]


def test_fences_are_closed_and_hold_the_diagram_and_cloud_init(plan):
    markdown = render_markdown(plan)
    fences = [t for t in PARSER.parse(markdown) if t.type == "fence"]
    mermaid = [t for t in fences if t.info == "mermaid"]
    assert len(mermaid) == 1 and mermaid[0].content == mermaid_flowchart(plan.to_dict()["resources"], plan.region)
    yaml_blocks = [t.content for t in fences if t.info == "yaml"]
    assert yaml_blocks == [
        text + "\n" for text in dict.fromkeys(text for _, text in user_data_blocks(plan))
    ]  # each text once
    # A closed fence ends before the document does: the last line is not inside any fence.
    assert all(t.map is not None and t.map[1] < len(markdown.splitlines()) for t in fences)


def test_not_priced_plan_says_so(medical_plan):
    markdown = render_markdown(dataclasses.replace(medical_plan, costs={}))
    assert "### Cost\n\nNot priced: this plan carries no cost lines.\n" in markdown


COSTS: dict[str, Any] = {
    "currency": "CNY",
    "hours_per_month": 730,
    "lines": [
        {
            "resource": "medical-imaging-cluster-nodes-0",
            "type": "ecs.EcsInstanceSet",
            "item": "12 × ecs.gn7e-c16g1.32xlarge",
            "quantity": 12,
            "unit": "node-hour",
            "unit_price_cny": 277.93,
            "cny_per_hour": 3335.16,
            "cny_per_month": 2434666.8,
            "billing": "hourly",
            "status": "list",
            "source": "https://example.com/gpu_prices|x",
            "date": "2023-06",
        },
        {
            "resource": "medical-imaging-network-nat",
            "type": "vpc.NatGateway",
            "item": "NAT gateway (CU)",
            "quantity": 1,
            "unit": "month",
            "unit_price_cny": None,
            "cny_per_hour": None,
            "cny_per_month": None,
            "billing": "usage",
            "status": "unknown",
            "source": "",
            "date": "",
        },
    ],
    "totals": {
        "cny_per_hour": 3335.16,
        "cny_per_month": 2434666.8,
        "run_hours": 40,
        "cny_per_run": 133406.4,
        "complete": False,
        "unknown": ["medical-imaging-network-nat: NAT gateway (CU)"],
    },
    "scenarios": [
        {"name": "at min", "nodes": 0, "cny_per_month": 1200.5, "complete": True, "unpriced_nodes": []},
        {
            "name": "at max",
            "nodes": 8,
            "cny_per_month": 1200.5,
            "complete": False,
            "unpriced_nodes": ["pool: 8 × ecs.ebmgn7ex.32xlarge"],
        },
        {"name": "old plan", "nodes": 8, "cny_per_month": None},
    ],
}


def test_cost_section_one_row_per_line_totals_and_unknowns(medical_plan):
    markdown = render_markdown(dataclasses.replace(medical_plan, costs=COSTS))
    tokens = PARSER.parse(markdown)
    rows = table_after(tokens, "Cost")
    assert rows == [
        [
            "medical-imaging-cluster-nodes-0",
            "12 × ecs.gn7e-c16g1.32xlarge",
            "¥3,335.16",
            "¥2,434,666.80",
            "list, hourly",
            "https://example.com/gpu_prices|x (2023-06)",
        ],
        ["medical-imaging-network-nat", "NAT gateway (CU)", "unknown", "unknown", "unknown, usage", "none"],
    ]
    section = markdown.split("### Cost", 1)[1].split("### Diagram", 1)[0]
    assert (
        "**Total of the priced lines:** ¥3,335.16 per hour, ¥2,434,666.80 per month, ¥133,406.40 per run of 40 hours."
        in section
    )
    assert (
        "**Incomplete:** unknown prices are not counted (never as 0): medical-imaging-network-nat: NAT gateway (CU)."
        in section
    )
    assert tables(tokens[[i for i, t in enumerate(tokens) if t.type == "heading_open"][1] :])[1] == [
        ["at min", "0", "¥1,200.50", "nothing"],
        [
            "at max",
            "8",
            "¥1,200.50 (incomplete)",
            "the lines not priced above; no catalog price for pool: 8 × ecs.ebmgn7ex.32xlarge",
        ],
        ["old plan", "8", "unknown", "the lines not priced above"],
    ]
    assert "¥0.00" not in section


def test_complete_costs_have_no_incomplete_line(medical_plan):
    costs = {
        **COSTS,
        "lines": COSTS["lines"][:1],
        "totals": {**COSTS["totals"], "complete": True, "unknown": []},
        "scenarios": [],
    }
    section = render_markdown(dataclasses.replace(medical_plan, costs=costs)).split("### Diagram", 1)[0]
    assert "Incomplete" not in section and "| scenario |" not in section
    assert "**Total:** ¥3,335.16 per hour" in section


def test_cloud_init_renders_decoded(medical_plan):
    encoded = [r for r in medical_plan.resources if isinstance(r.inputs.get("userData"), str)]
    markdown = render_markdown(medical_plan)
    for r in encoded:
        assert (userdata.decode(r.inputs["userData"]) or "").splitlines()[0] in markdown
