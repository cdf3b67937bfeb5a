"""Rewrite files of a catalog folder only when the result still loads: the one write path of ``zones --write``,
``catalog refresh --write`` and tools/drop_price_columns.py."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from blueprints.core.files import replace_atomically


def replace_checked(directory: Path, texts: dict[str, str]) -> None:
    """Replace ``texts`` (file name → new content) in ``directory`` once a scratch copy with them loads.

    A failed check (a ``CatalogError`` naming file, line and column) leaves the user's files as they were; each file
    is then replaced whole, so an interruption never leaves one truncated.
    """
    from blueprints.catalog.loader import load_catalog  # the loader imports this package's modules

    with tempfile.TemporaryDirectory() as scratch:
        trial = Path(scratch) / "catalog"
        shutil.copytree(directory, trial)
        for name, text in texts.items():
            (trial / name).write_text(text, encoding="utf-8")
        load_catalog(trial)
    for name, text in texts.items():
        replace_atomically(directory / name, text)
