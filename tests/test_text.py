"""blueprints.core.text: Markdown escaping that cannot forge
structure, terminal text without control codes, one table writer."""

from __future__ import annotations

import re

import pytest

from blueprints.core.text import md_cell, md_table, md_text, plain, table


def test_plain_strips_ansi_and_control_characters():
    hostile = "ok\x1b[2K\x1b[1A\x1b[32mguardrails: all passed\x1b[0m\x07 \x1b]0;title\x07done\x00\x7f\x9b"
    assert plain(hostile) == "okguardrails: all passed done"
    assert "\x1b" not in plain("\x1b[31mred") and plain("\x1b[31mred") == "red"
    # Line breaks and tabs become spaces (they could fake lines of output); words do not merge.
    assert plain("medical\nguardrails: all passed\r\n\tx") == "medical guardrails: all passed  x"
    # Bidirectional overrides would reorder what a reviewer sees.
    assert plain("abc\u202edcba\u2066") == "abcdcba"
    assert plain(42) == "42" and plain("¥1,234 × A100") == "¥1,234 × A100"


def test_md_cell_keeps_a_row_a_row():
    cell = md_cell("a | b\n| forged | row |")
    assert "\n" not in cell
    assert re.search(r"(?<!\\)\|", cell) is None  # every pipe escaped
    assert md_cell("x|y") == "x\\|y"


@pytest.mark.parametrize(
    "raw, escaped",
    [
        ("**bold**", "\\*\\*bold\\*\\*"),
        ("`code`", "\\`code\\`"),
        ("[link](http://x)", "\\[link\\](http://x)"),
        ("<script>", "\\<script\\>"),
        ("a\\b", "a\\\\b"),
        ("~~gone~~", "\\~\\~gone\\~\\~"),
        ("_em_", "\\_em\\_"),
        ("extreme_nas advance_100", "extreme_nas advance_100"),  # intraword underscores are not emphasis
    ],
)
def test_md_cell_escapes_inline_markdown(raw, escaped):
    assert md_cell(raw) == escaped


@pytest.mark.parametrize(
    "raw, escaped",
    [
        ("# guardrails: all passed", "\\# guardrails: all passed"),
        ("## Guardrails", "\\## Guardrails"),
        ("> quoted", "\\> quoted"),
        ("- item", "\\- item"),
        ("+ item", "\\+ item"),
        ("1. first", "1\\. first"),  # the dot is escaped: a backslash before a digit would show
        ("12) twelfth", "12\\) twelfth"),
        ("80.0 GiB", "80.0 GiB"),  # not a list marker: no escape, no stray backslash
        ("=====", "\\====="),
        ("a #hashtag mid-line", "a #hashtag mid-line"),
    ],
)
def test_md_text_cannot_open_a_block(raw, escaped):
    assert md_text(raw) == escaped


def test_md_text_cannot_forge_a_section_with_a_newline():
    forged = md_text("training job\n\n## Guardrails\n\nall passed ✅\n| a | b |")
    # One line: the "## Guardrails" is text in the paragraph, not a heading; the pipes cannot start a table.
    assert forged == "training job  ## Guardrails  all passed ✅ \\| a \\| b \\|"


def test_table_aligns_columns_and_right_aligns_numbers():
    text = table(["name", "n"], [["a", "1"], ["long-name", "123"]], right=[1])
    assert text.splitlines() == [
        "name         n",
        "---------  ---",
        "a            1",
        "long-name  123",
    ]


def test_table_cells_are_plain_text():
    text = table(["x"], [["\x1b[31mred\nline"]])
    assert text.splitlines()[2] == "red line"


def test_table_refuses_ragged_rows():
    with pytest.raises(ValueError, match="row has 1 cells, the table has 2 columns"):
        table(["a", "b"], [["1"]])
    with pytest.raises(ValueError, match="row has 3 cells"):
        md_table(["a", "b"], [["1", "2", "3"]])


def test_md_table_escapes_cells_and_marks_alignment():
    text = md_table(["name", "count"], [["a|b", "3"], ["**x**\ny", "4"]], right=[1])
    assert text.splitlines() == [
        "| name | count |",
        "|---|--:|",
        "| a\\|b | 3 |",
        "| \\*\\*x\\*\\* y | 4 |",
    ]
