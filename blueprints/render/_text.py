"""Private text helpers for the plan renderers: free text escaped for Markdown, cleaned for a terminal.

Temporary: ``blueprints/text.py`` (md_cell / md_text / plain) is being written on another branch; at merge these
helpers should be replaced by it, keeping the behaviour the render tests pin down.
"""

from __future__ import annotations

import html
import re
import unicodedata

# ANSI/VT escape sequences: CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and two-character escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
# Underscores between letters or digits never start emphasis (CommonMark), so ``gpu_model`` stays readable.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>#|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def plain(text: object) -> str:
    """One line for a terminal: escape sequences removed, line breaks and tabs folded to spaces, other control
    and format characters (C0, C1, bidi overrides, zero-width) dropped."""
    value = _ANSI.sub("", str(text))
    out = []
    for ch in value:
        if ch in "\n\r\t\v\f\x85\u2028\u2029":
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
            continue
        else:
            out.append(ch)
    return "".join(out)


def md_text(text: object) -> str:
    """Free text inline in Markdown (a table cell, a list item, a quote): one line, nothing it contains can start a
    heading, list, link, emphasis, HTML or a table column."""
    value = plain(text).replace("&", "&amp;")
    return _MD_SPECIAL.sub(r"\\\1", value)


def md_code(text: object) -> str:
    """A Markdown code span holding ``text`` on one line, safe in a table cell (pipes escaped, fence longer than any
    backtick run inside)."""
    value = plain(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def md_fence(text: str) -> str:
    """A code fence (three or more backticks) longer than any backtick run inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def html_text(text: object) -> str:
    """Text inside an HTML element (``<summary>``, ``<code>``)."""
    return html.escape(plain(text), quote=True)


def plain_block(text: object) -> str:
    """Multi-line text shown verbatim (cloud-init in a code fence): lines kept, escape sequences and other
    control characters removed."""
    return "\n".join(plain(line) for line in _ANSI.sub("", str(text)).split("\n"))
