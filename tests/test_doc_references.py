"""The README and the docs cite only what a reader can follow: files that exist, the article by its link, no
internal issue numbers, no section of a document that is not in the repository, no path of someone's machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted(
    [
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "blueprints").rglob("README.md"),
        ROOT / "scan" / "README.md",
    ]
)
# Where a cited path may start: the repository's own top-level folders and files.
TOP = tuple(
    sorted({p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name in (".github", ".ci")} - {"build"})
)
# A path the README gives inside the package ("components/storage.py", "architectures/") starts with one of its folders.
PACKAGE_DIRS = tuple(
    sorted(p.name for p in (ROOT / "blueprints").iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
)
NESTED = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(t) for t in PACKAGE_DIRS) + r")(?:/[\w.@+-]+)*/?)")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(t) for t in TOP) + r")(?:/[\w.@+-]+)*/?)")
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
ISSUE = re.compile(r"\bissues? \d+\b|(?<![\w.])#\d+(?![\w-])|\b(?<!\.)(?!md#)[A-Za-z][\w-]*#\d+(?![\w-])")
SECTION = re.compile(r"§\s?\d+")
# /home/aitrain and /root are the nodes' own paths, not a reader's machine.
MACHINE = re.compile(r"(?<![\w.])(?:/work/|/home/(?!aitrain\b)\w+|/Users/\w+|[A-Z]:\\\\)")
# A path whose name is a placeholder or made by a command, not a file of the repository.
GENERATED = ("build/", "Pulumi.dev.yaml", "Pulumi.<stack>.yaml")


def rel(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


def cited_paths_of(text: str, here: Path | None = None) -> list[str]:
    """Repository paths in a text's code spans; one inside the package ("components/x.py") from the document's own
    folder ``here`` when it is there, else as blueprints/…."""
    out = []
    for span in CODE.findall(text):
        for token in span.split():
            token = token.strip(",;:()")
            if any(ch in token for ch in "<>*{}$"):
                continue
            if match := PATH.fullmatch(token):
                out.append(match.group(1))
            elif (nested := NESTED.fullmatch(token)) and "/" in token:
                local = here / nested.group(1) if here else None
                out.append(
                    str(local.relative_to(ROOT)) if local and local.exists() else f"blueprints/{nested.group(1)}"
                )
    return out


def cited_paths(doc: Path) -> list[str]:
    """Repository paths a document cites: in code spans and as relative links (resolved from the document)."""
    text = doc.read_text(encoding="utf-8")
    out = cited_paths_of(text, doc.parent)
    for target in LINK.findall(text):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        out.append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else target)
    return out


def test_the_documents_checked_are_the_repositorys():
    assert "components" in PACKAGE_DIRS and cited_paths_of("`components/storage.py` and `review/render/`") == [
        "blueprints/components/storage.py",
        "blueprints/review/render/",
    ]
    assert ROOT / "README.md" in DOCS and ROOT / "docs" / "case-studies.md" in DOCS and len(DOCS) >= 8


# The copied notes also cite files of the upstream projects they quote (kubeflow's examples/, pulumi's tests/):
# there, only paths into this repository's own code and docs are checked.
OURS_ONLY = ("blueprints/", "docs/")


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_cited_path_exists(doc):
    paths = [p for p in cited_paths(doc) if "sources" not in doc.parts or p.startswith(OURS_ONLY)]
    missing = sorted({p for p in paths if not p.startswith(GENERATED) and not (ROOT / p).exists()})
    assert not missing, f"{rel(doc)} cites paths the repository does not have: {missing}"


# docs/sources/ are copies of the notes the facts came from, quoted as they were (their own § numbers and the
# upstream issues they cite stay); every path they cite must still exist.
OWN_TEXT = [doc for doc in DOCS if "sources" not in doc.parts]


@pytest.mark.parametrize("doc", OWN_TEXT, ids=rel)
def test_no_internal_issue_numbers_no_unfollowable_sections_no_machine_paths(doc):
    problems = []
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        bare = re.sub(r"\]\([^)]*\)|https?://\S+", "", line)
        for pattern, what in ((ISSUE, "an issue number"), (MACHINE, "a path of someone's machine")):
            problems += [f"line {number}: {what}: {m.group(0)!r}" for m in pattern.finditer(bare)]
        for m in SECTION.finditer(bare):
            # "training-performance.md §5" or "(Rajbhandari et al. 2020) §3.1" names the document; "§7 of the
            # reference" does not.
            if not re.search(r"(?:[\w-]+\.md|\d{4})\)?,?\s*$", bare[: m.start()]):
                problems.append(f"line {number}: a section of no named document: {m.group(0)!r}")
    assert not problems, f"{rel(doc)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_the_article_is_linked_where_it_is_named(doc):
    text = doc.read_text(encoding="utf-8")
    if doc.name == "article.md" or not re.search(r"\bthe article\b", text, re.I):
        return
    assert re.search(r"\]\([./]*(?:docs/)?sources/article\.md\)|\]\(article\.md\)", text), (
        f"{rel(doc)} speaks of the article without linking docs/sources/article.md"
    )


def test_the_checks_catch_what_they_claim(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text("See `blueprints/nope.py` and [x](docs/nope.md).\n", encoding="utf-8")
    assert PATH.fullmatch("blueprints/nope.py") and not PATH.fullmatch("nope/x.py")
    assert "blueprints/nope.py" in cited_paths_of(bad.read_text(encoding="utf-8"))
    assert MACHINE.search("/work/main/x") and MACHINE.search("/home/me/x") and not MACHINE.search("/home/aitrain")
    assert ISSUE.search("issue 11") and ISSUE.search("see #12") and ISSUE.search("pulumi#16179")
    assert (
        not ISSUE.search("x.md#7-marketing")
        and not ISSUE.search("README.md#0")
        and not ISSUE.search("ready-to-train.md#4")
    )
    assert MACHINE.search("/work/main/x") and SECTION.search("§7")


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation but hyphens dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_to_a_readme_section_reaches_a_heading():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    anchors = {github_anchor(h) for h in re.findall(r"(?m)^#{1,4} (.+)$", text)}
    targets = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert targets and not targets - anchors, sorted(targets - anchors)


def test_the_readme_opens_with_contents_and_the_quick_start():
    headings = re.findall(r"(?m)^## (.+)$", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert headings[:3] == ["Contents", "Quick start", "Deploying for real"]
    assert "Tearing down" in headings and headings[-1] == "Development"
