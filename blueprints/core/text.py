"""Text output helpers shared by every renderer: Markdown escaping, terminal-safe text and one table writer.

Values printed by aitrain can come from users (profile descriptions, job names, a catalog of their
own), so nothing reaches Markdown or a terminal without passing through here: in Markdown a newline,
``|``, ``#`` or ``>`` could forge a table row or a whole section (say, "guardrails: all passed"); in
a terminal an ANSI escape could rewrite what was printed before it. Pure Python, no dependencies.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Sequence

__all__ = ["html_text", "md_cell", "md_code", "md_fence", "md_table", "md_text", "plain", "plain_block", "table"]

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), and any other two-byte ESC sequence.
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
# C0 and C1 control characters, DEL, and the Unicode bidirectional overrides that reorder what is shown.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAK_RE = re.compile(r"\r\n|[\r\n\t\v\f\u2028\u2029\x85]")
# Characters with a meaning in inline Markdown (emphasis, code, links, HTML, tables); an underscore
# only when it can open or close emphasis, i.e. not inside a word (GFM ignores intraword ``_``).
_MD_ACTIVE_RE = re.compile(r"([\\`*\[\]<>|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
# Line-start markers that open a block (heading, quote, list, rule) when the text starts a line. An ordered list
# marker is a digit run then ``.`` or ``)`` and a space (``80.0`` is not one): only that punctuation can be escaped
# (CommonMark escapes ASCII punctuation only; ``\1.`` would show its backslash).
_MD_BLOCK_START_RE = re.compile(r"^(\s*)(?:([-+=#])|(\d+)([.)])(?=\s|$))")


def plain(text: object) -> str:
    """``text`` for a terminal: ANSI escapes and control characters removed, line breaks and tabs as spaces.

    Format and surrogate characters (zero-width, bidi marks, lone surrogates) are dropped too: they can hide or
    reorder what a reviewer reads.
    """
    value = _ANSI_RE.sub("", str(text))
    value = _LINE_BREAK_RE.sub(" ", value)
    value = _CONTROL_RE.sub("", value)
    return "".join(ch for ch in value if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))


def plain_block(text: object) -> str:
    """Multi-line text shown verbatim (cloud-init in a code fence): lines kept, everything else as ``plain``."""
    return "\n".join(plain(line) for line in _ANSI_RE.sub("", str(text)).split("\n"))


def md_cell(text: object) -> str:
    """``text`` safe inside a Markdown table cell: one line, with
    ``|``, ``&`` and every inline-active character escaped."""
    return _MD_ACTIVE_RE.sub(r"\\\1", plain(text).replace("&", "&amp;"))


def md_code(text: object) -> str:
    """A Markdown code span holding ``text`` on one line, safe in a table cell (pipes escaped, fence longer than
    any backtick run inside)."""
    value = plain(text).replace("|", "\\|")
    fence = "`" * (_longest_backtick_run(value) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def md_fence(text: str) -> str:
    """A code-block fence (three or more backticks) longer than any backtick run inside ``text``."""
    return "`" * max(3, _longest_backtick_run(text) + 1)


def html_text(text: object) -> str:
    """Text inside an HTML element (``<summary>``, ``<code>``)."""
    return html.escape(plain(text), quote=True)


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def md_text(text: object) -> str:
    """``text`` safe as free text in Markdown (a paragraph or a
    list item): it cannot start a heading, quote, list or table.

    Like ``md_cell`` (``>`` is escaped everywhere), and a leading ``#``, ``-``, ``+`` or ``=`` is escaped, and so is
    the ``.`` of a leading ``1.`` (``1\\.``), so the text cannot open a heading, list or rule. Table cells need none
    of this (a cell holds inline text only): use ``md_cell`` there, or ``80.0`` would need an escape it does not.
    """
    return _MD_BLOCK_START_RE.sub(_escape_block_start, md_cell(text))


def _escape_block_start(match: re.Match[str]) -> str:
    if match.group(2):
        return match.group(1) + "\\" + match.group(2)
    return match.group(1) + match.group(3) + "\\" + match.group(4)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A fixed-width text table: headers, a dashed rule, then rows; columns two spaces apart.

    ``right`` lists the column indexes to right-align (numbers). Cells are passed through ``plain``.
    Trailing spaces are trimmed from every line.
    """
    head = [plain(h) for h in headers]
    body = [[plain(c) for c in row] for row in rows]
    for row in body:
        if len(row) != len(head):
            raise ValueError(f"row has {len(row)} cells, the table has {len(head)} columns: {row!r}")
    widths = [max([len(head[i])] + [len(r[i]) for r in body]) for i in range(len(head))]
    aligned = set(right)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(widths[i]) if i in aligned else c.ljust(widths[i]) for i, c in enumerate(cells)
        ).rstrip()

    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in body])


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A Markdown table; every header and cell goes through ``md_cell``; ``right`` columns are right-aligned."""
    aligned = set(right)
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, the table has {len(headers)} columns: {row!r}")
    out = ["| " + " | ".join(md_cell(h) for h in headers) + " |"]
    out.append("|" + "|".join("--:" if i in aligned else "---" for i in range(len(headers))) + "|")
    out += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)
