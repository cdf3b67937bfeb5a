"""The layout shows the architecture: packages by job, each written down in the README, none growing back flat."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "blueprints"


def layout_block() -> str:
    """The README's Layout section's code block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n### Layout\n", 1)[1]
    return section.split("```\n", 2)[1]


def test_the_package_has_no_flat_modules():
    flat = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert flat == [], f"modules at the top of blueprints/ (put each in the package of its job): {flat}"


def test_the_readme_layout_names_every_package():
    listed = set(re.findall(r"^  ([a-z_]+)/", layout_block(), re.M))
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert packages - listed == set(), "packages the README's Layout does not describe"
    assert listed - packages == set(), "the README's Layout describes packages that are gone"


def test_every_mutation_test_mapping_names_paths_that_exist():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import mutate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    for prefix, tests in mutate.TESTS:
        assert any(str(p.relative_to(ROOT)).startswith(prefix) for p in PACKAGE.rglob("*.py")), prefix
        assert all((ROOT / t).exists() for t in tests), (prefix, tests)
    for target in mutate.default_targets():
        assert (ROOT / target).is_file(), target
