"""Citations resolve inside the repository: every source cell and README citation is a URL or a file here.

Parses every ``source`` / ``*_source`` cell of every data file (catalog and advisor CSVs, the case-study
YAML) and the two data READMEs. A citation is an http(s) URL or a path to a file in the repository,
optionally with a ``#anchor`` that must name a heading of that file. A path that does not exist here
(``training-performance.md``, ``../shared/reference/...``) fails, as does a cell with no citation at all.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA_DIRS = [ROOT / "blueprints" / "catalog" / "data", ROOT / "blueprints" / "advisor" / "data"]
READMES = [ROOT / "blueprints" / "catalog" / "README.md", ROOT / "blueprints" / "advisor" / "data" / "README.md"]

URL_RE = re.compile(r"https?://[^\s;,)<>\"'`]+")
PATH_RE = re.compile(
    r"(?<![\w/.@-])((?:\.{1,2}/)*(?:[\w.-]+/)*[\w-][\w.-]*\.(?:md|csv|yaml|yml|py|tf|markdown|txt|json|go))(#[\w-]+)?(?![\w/])"
)


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    headings = re.findall(r"(?m)^#{1,6} (.+)$", path.read_text(encoding="utf-8"))
    return {slug(h) for h in headings}


def resolve(token: str, bases: list[Path]) -> Path | None:
    """The repository file ``token`` names, relative to one of ``bases``; None when there is none."""
    for base in bases:
        candidate = (base / token).resolve()
        if candidate.is_file() and ROOT in candidate.parents:
            return candidate
    return None


def problems_in(text: str, bases: list[Path], *, need_citation: bool) -> list[str]:
    """What is wrong with the citations in ``text``: unresolved paths, unknown anchors, none at all."""
    out = []
    urls = URL_RE.findall(text)
    rest = URL_RE.sub(" ", text)
    found = 0
    for token, anchor in PATH_RE.findall(rest):
        target = resolve(token, bases)
        if target is None:
            out.append(f"{token!r} is neither a URL nor a file in the repository")
            continue
        found += 1
        if anchor and anchor[1:] not in anchors(target):
            out.append(f"{token}{anchor}: no heading with that anchor in {target.relative_to(ROOT)}")
    if need_citation and not urls and not found:
        out.append("cites nothing: give a URL or a file in the repository (docs/sources/...)")
    return out


def source_cells() -> Iterator[tuple[str, str]]:
    """(where, text) for every source cell of every data file."""
    for directory in DATA_DIRS:
        for path in sorted(directory.glob("*.csv")):
            with path.open(newline="", encoding="utf-8") as handle:
                reader = csv.DictReader(handle)
                columns = [c for c in reader.fieldnames or [] if c == "source" or c.endswith("_source")]
                for line, row in enumerate(reader, start=2):
                    for column in columns:
                        if row[column]:
                            yield f"{path.relative_to(ROOT)} line {line}, column {column!r}", row[column]
        for path in sorted(directory.glob("*.yaml")):
            yield from _yaml_sources(yaml.safe_load(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT)))


def _yaml_sources(node: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and (key == "source" or str(key).endswith("_source")):
                yield f"{where}.{key}", value
            else:
                yield from _yaml_sources(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _yaml_sources(item, f"{where}[{i}]")


CELLS = list(source_cells())


def test_the_cell_walk_sees_every_kind_of_data_file():
    files = {where.split(" line ")[0].split(".yaml")[0] for where, _ in CELLS}
    for name in (
        "gpus.csv",
        "instance_types.csv",
        "regions.csv",
        "storage.csv",
        "aliases.csv",
        "images.csv",
        "mfu.csv",
        "scaling.csv",
        "memory.csv",
        "limits.csv",
        "case_studies",
    ):
        assert any(f.endswith(name) for f in files), name
    assert len(CELLS) > 150


@pytest.mark.parametrize("where, text", CELLS, ids=[w for w, _ in CELLS])
def test_source_cell_cites_a_url_or_a_repository_file(where, text):
    assert not problems_in(text, [ROOT], need_citation=True), f"{where}: {text}"


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_citations_resolve(readme):
    text = readme.read_text(encoding="utf-8")
    bases = [readme.parent, readme.parent / "data", readme.parent.parent, ROOT / "blueprints", ROOT]
    assert not problems_in(text, bases, need_citation=False)
    assert "shared/reference" not in text
    # Each source-key row (| S12 | ... |) says where the source is.
    for row in re.findall(r"(?m)^\| S\d+ \|.*$", text):
        assert not problems_in(row, bases, need_citation=True), row


def test_checker_refuses_paths_outside_the_repository():
    assert problems_in("training-performance.md §4 (DLE BERT README)", [ROOT], need_citation=True)
    assert problems_in("../shared/reference/alibaba-cloud-facts.md §1", [ROOT], need_citation=True)
    assert problems_in("NVIDIA L40S datasheet", [ROOT], need_citation=True)
    assert problems_in("docs/sources/training-performance.md#no-such-heading", [ROOT], need_citation=True)
    assert not problems_in("https://arxiv.org/abs/1910.02054 §3.1", [ROOT], need_citation=True)
    assert (
        slug("4a. ESS scaling group (`alicloud_ess_scaling_group`) (S5)")
        == "4a-ess-scaling-group-alicloud_ess_scaling_group-s5"
    )
