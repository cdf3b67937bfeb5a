"""A fresh copy of the shipped catalog per test: the zones writer only ever writes copies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from blueprints.catalog.loader import CATALOG_DIR


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    target = tmp_path / "my-catalog"
    shutil.copytree(CATALOG_DIR, target)
    return target
