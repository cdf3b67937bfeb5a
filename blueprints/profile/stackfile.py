"""Write aitrain's keys into a ``Pulumi.<stack>.yaml`` without clobbering anything else in it.

Policy (``recommend --write``):

- no file yet: write the new stack config;
- a file without ``aitrain:*`` keys, or with the same values: merge — the ``aitrain:*`` entries are added under
  ``config:`` and every other byte (``encryptionsalt``, ``secure:`` values, other namespaces, comments) is kept;
- a file whose ``aitrain:*`` keys hold other values: refused (exit 2, naming the keys) unless ``force`` — then
  those entries are replaced; everything else is still kept byte-for-byte;
- a file that cannot be edited safely line by line (invalid YAML, a flow-style ``config: {...}``): always refused.

The edit is line-based on the top-level ``config:`` mapping and is verified by parsing the result: every key
outside ``aitrain:*`` must read back equal, or nothing is written. Writes are atomic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from blueprints.core.errors import MISSING, Problem, UserInputError
from blueprints.core.files import write_atomic
from blueprints.core.yamlsafe import load

NAMESPACE_PREFIX = "aitrain:"
_CONFIG_LINE = re.compile(r"^config\s*:\s*(#.*)?$")
# An entry key at the start of a line: plain (``aitrain:profile:``) or quoted (``"aitrain:profile":``).
_KEY_LINE = re.compile(
    r"""^(?P<indent>[ ]*)(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<plain>[^\s#'"{}\[\],&*!|>%@`-][^#]*?))\s*:(?:\s|$)"""
)


def write_stack_file(path: Path, new_text: str, *, force: bool = False, option: str = "--write") -> str:
    """Write ``new_text`` (a stack config holding only ``aitrain:*`` keys) to ``path``, merging into an existing file.

    Returns what was done: ``"created"``, ``"merged"``, ``"unchanged"`` or ``"replaced"`` (aitrain keys replaced
    under ``force``). Raises ``UserInputError`` instead of losing anything.
    """
    if not path.exists():
        write_atomic(path, new_text, option=option)
        return "created"
    from blueprints.core.errors import read_text_file

    existing = read_text_file(path, "stack config")
    new_config = (load(new_text, "new stack config") or {}).get("config") or {}
    merged, action = merge_stack_text(existing, new_config, force=force, source=str(path))
    if merged != existing:
        write_atomic(path, merged, option=option)
    return action


def merge_stack_text(
    existing: str, new_config: dict[str, Any], *, force: bool = False, source: str = "stack config"
) -> tuple[str, str]:
    """``existing`` with its ``aitrain:*`` config entries replaced by ``new_config``'s; other bytes untouched."""
    document = load(existing, source) if existing.strip() else {}
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise _refuse(
            source, "the file is not a YAML mapping (a Pulumi stack config starts with keys such as 'config:')"
        )
    config = document.get("config")
    if config is not None and not isinstance(config, dict):
        raise _refuse(source, "'config' is not a mapping")
    old_ours = {k: v for k, v in (config or {}).items() if k.startswith(NAMESPACE_PREFIX)}
    if old_ours == new_config:
        return existing, "unchanged"
    changed = sorted(
        k for k in set(old_ours) | set(new_config) if old_ours.get(k, MISSING) != new_config.get(k, MISSING)
    )
    if old_ours and not force:
        raise UserInputError(
            f"not overwriting the aitrain settings in {source}",
            [
                Problem(
                    f"{source}: config.{k}",
                    old_ours.get(k, MISSING),
                    "already set to a different value"
                    if k in new_config
                    else "would be removed (the new configuration does not set it)",
                )
                for k in changed
            ]
            + [
                Problem(
                    "--force",
                    MISSING,
                    "pass --force to replace the aitrain:* keys (every other key, secure value and comment is kept "
                    "either way), or --write another file",
                )
            ],
        )
    lines = existing.splitlines(keepends=True)
    merged = _edit(lines, new_config, source)
    _verify(document, merged, new_config, source)
    return merged, "replaced" if old_ours else "merged"


def _edit(lines: list[str], new_config: dict[str, Any], source: str) -> str:
    """Drop the ``aitrain:*`` entries of the top-level ``config:`` block and put the new ones where the first was."""
    start = next((i for i, line in enumerate(lines) if _CONFIG_LINE.match(line.rstrip("\r\n"))), None)
    if start is None:
        if any(line.startswith("config") for line in lines):
            raise _refuse(
                source,
                "its 'config:' is not a block mapping on its own line (flow "
                "style such as 'config: {...}' cannot be edited safely)",
            )
        prefix = "".join(lines)
        if prefix and not prefix.endswith("\n"):
            prefix += "\n"
        return prefix + "config:\n" + _entries_text(new_config, "  ")
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t", "#"))):
        end += 1
    # Trailing blank and comment lines belong to whatever follows the block, not to its last entry.
    while (
        end > start + 1
        and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#"))
        and not lines[end - 1].startswith((" ", "\t"))
    ):
        end -= 1
    block = lines[start + 1 : end]
    indent = _entry_indent(block)
    if indent is None:
        indent = "  "
    kept: list[str] = []
    pending: list[str] = []  # blank lines met while dropping an entry: dropped only if the entry goes on after them
    insert_at: int | None = None
    skipping = False
    for line in block:
        match = _KEY_LINE.match(line)
        if match and match.group("indent") == indent:
            key = match.group("dq") or match.group("sq") or (match.group("plain") or "").strip()
            kept += pending
            pending = []
            skipping = key.startswith(NAMESPACE_PREFIX)
            if skipping:
                insert_at = len(kept) if insert_at is None else insert_at
                continue
        elif skipping and not line.strip():
            pending.append(line)
            continue
        elif skipping and line.startswith(indent + " "):
            pending = []  # continuation of a dropped entry (nested lines, blank lines inside a block scalar)
            continue
        else:
            skipping = False
        kept += pending + [line]
        pending = []
    kept += pending
    if insert_at is None:
        insert_at = len(kept)
        while insert_at > 0 and not kept[insert_at - 1].strip():
            insert_at -= 1  # keep blank lines between the config block and what follows
    new_lines = kept[:insert_at] + [_entries_text(new_config, indent)] + kept[insert_at:]
    return "".join(lines[: start + 1]) + "".join(new_lines) + "".join(lines[end:])


def _entry_indent(block: list[str]) -> str | None:
    for line in block:
        if line.strip() and not line.lstrip().startswith("#"):
            if "\t" in line[: len(line) - len(line.lstrip())]:
                return None
            return line[: len(line) - len(line.lstrip(" "))]
    return None


def _entries_text(config: dict[str, Any], indent: str) -> str:
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    return "".join(indent + line if line.strip() else line for line in text.splitlines(keepends=True))


def _verify(document: dict[str, Any], merged: str, new_config: dict[str, Any], source: str) -> None:
    """The merged text must read back as the old document with only the aitrain:* keys changed."""
    try:
        result = load(merged, source)
    except UserInputError:
        result = None
    expected = dict(document)
    others = {k: v for k, v in (document.get("config") or {}).items() if not k.startswith(NAMESPACE_PREFIX)}
    expected["config"] = {**others, **new_config}
    if not isinstance(result, dict) or result != expected:
        raise _refuse(source, "its layout could not be edited line by line without changing other keys")


def _refuse(source: str, reason: str) -> UserInputError:
    return UserInputError(
        f"not writing {source}",
        [
            Problem(
                source,
                MISSING,
                f"{reason}; nothing was written — add the aitrain:* keys by hand or --write another file",
            )
        ],
    )
