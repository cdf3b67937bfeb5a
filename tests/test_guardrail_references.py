"""Every guardrail reference resolves inside the repository: the document exists, the section anchor is one of its
headings, and each rule number is a row of that section's table. So do the links of the rules document
(docs/guardrails.md) and the documents the rules' own texts cite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from blueprints.review.guardrails import RULES
from blueprints.review.guardrails.model import REFERENCE_DOC, REFERENCE_SECTION, REFERENCE_TABLE
from blueprints.review.render.findings import rules_document, rules_text

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def sections(path: Path) -> dict[str, list[str]]:
    """Each heading's anchor (a repeated one numbered as GitHub does) -> the lines under it, up to the next heading
    of the same or a higher level; fenced code is not read for headings."""
    lines = path.read_text(encoding="utf-8").splitlines()
    headings: list[tuple[int, int, str]] = []
    seen: dict[str, int] = {}
    fenced = False
    for index, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"(#{1,6}) (.+)", line)
        if match:
            anchor = github_anchor(match.group(2))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            headings.append((index, len(match.group(1)), f"{anchor}-{count}" if count else anchor))
    out = {}
    for k, (index, level, anchor) in enumerate(headings):
        end = next((i for i, lv, _ in headings[k + 1 :] if lv <= level), len(lines))
        out[anchor] = lines[index + 1 : end]
    return out


def table_rows(lines: list[str]) -> set[int]:
    """The numbers in the first column of the Markdown table rows among ``lines`` (``| 11 | P0 | ...``)."""
    return {int(m.group(1)) for line in lines if (m := re.match(r"\|\s*(\d+)\s*\|", line))}


def test_the_anchor_rule_matches_github_on_this_heading():
    assert github_anchor("7. Rules the generator must satisfy by default (prioritized)") == REFERENCE_SECTION
    assert github_anchor("1.4 aliyun/infraguard (Alibaba's own pre-check, Rego; snapshot @6d3cbefa, 2026-06)") == (
        "14-aliyuninfraguard-alibabas-own-pre-check-rego-snapshot-6d3cbefa-2026-06"
    )


def test_every_rule_reference_is_a_row_of_the_reference_table():
    doc = ROOT / REFERENCE_DOC
    assert doc.is_file(), f"{REFERENCE_DOC} is not in the repository"
    assert REFERENCE_TABLE == f"{REFERENCE_DOC}#{REFERENCE_SECTION}"
    found = sections(doc)
    assert REFERENCE_SECTION in found, f"no heading of {REFERENCE_DOC} has the anchor #{REFERENCE_SECTION}"
    rows = table_rows(found[REFERENCE_SECTION])
    assert rows == set(range(1, 28))  # the table as the rules were built from it: rules 1-27
    dangling = {rule.id: sorted(set(rule.references) - rows) for rule in RULES if set(rule.references) - rows}
    assert not dangling, f"references to rows the table at {REFERENCE_TABLE} does not have: {dangling}"


def test_every_link_of_the_rules_document_resolves():
    document = rules_document()
    links = LINK.findall(document)
    assert links and all(f"#{REFERENCE_SECTION}" in link for link in links if "security-and-data-safety" in link)
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        target, _, anchor = link.partition("#")
        path = (ROOT / "docs" / target).resolve()
        assert path.is_file(), f"docs/guardrails.md links to {target}, which does not exist"
        if anchor:
            assert anchor in sections(path), f"docs/guardrails.md links to #{anchor}, not a heading of {target}"


def test_rule_numbers_in_the_table_link_to_the_reference_table():
    rows = [line for line in rules_document().splitlines() if line.startswith("| AIT")]
    by_id = {rule.id: rule for rule in RULES}
    for row in rows:
        rule = by_id[row.split(" | ")[0].lstrip("| ")]
        cell = row.rstrip(" |").rsplit(" | ", 1)[1] if rule.references else ""
        assert [int(n) for n in re.findall(r"\[(\d+)\]", cell)] == list(rule.references), row[:60]
    assert f"({REFERENCE_DOC} §7 " in rules_text()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_documents_and_section_7_rules_cited_in_rule_texts_exist(rule):
    text = f"{rule.rationale} {rule.fix}"
    for cited in re.findall(r"\bdocs/[\w./-]+\.md\b", text):
        assert (ROOT / cited).is_file(), f"{rule.id} cites {cited}, which is not in the repository"
    rows = table_rows(sections(ROOT / REFERENCE_DOC)[REFERENCE_SECTION])
    for number in re.findall(r"§7 rules? (\d+)", text):
        assert int(number) in rows, f"{rule.id} cites §7 rule {number}, not a row of {REFERENCE_TABLE}"
