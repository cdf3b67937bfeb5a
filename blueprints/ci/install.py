"""How the CI workflow installs aitrain: a source the user pins, never the unclaimed name ``aitrain`` on an index.

No package named ``aitrain`` is published, so ``pip install aitrain`` fails today and would install whatever someone
later publishes under the name — in a job that may write to pull requests. ``check_install`` refuses that (and a git
URL without a commit or version tag, and an archive URL without a hash); ``derived_install`` pins the aitrain that is
running when pip recorded where it came from (PEP 610 ``direct_url.json``: a git commit or a hashed archive).
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Mapping
from urllib.parse import urlsplit

from blueprints.core.errors import Problem

OPTION = "--install"
NAME = "aitrain"
EXAMPLES = (
    "--install 'python -m pip install \"aitrain @ git+https://github.com/OWNER/aitrain@<40-hex commit>\"' "
    "(a repository you control, at a commit), or --install 'python "
    "-m pip install ./vendor/aitrain' (a copy in your repository)"
)
# pip options that take the next word as their value (the rest are flags); -e's value is a requirement and checked.
_VALUED = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--src",
    "--upgrade-strategy",
    "--python-version",
    "--platform",
    "--implementation",
    "--abi",
    "--only-binary",
    "--no-binary",
    "--progress-bar",
    "--log",
    "--cache-dir",
    "--trusted-host",
    "--proxy",
    "--timeout",
    "--retries",
}
_SHA = re.compile(r"[0-9a-f]{40}")
# A release tag: v1.2.3, 1.0.0rc1, v0.4.0-beta.1 — at least major.minor, so a moving "v1" or a branch name is refused.
_TAG = re.compile(r"v?\d+(\.\d+)+([.+-]?[A-Za-z0-9]+)*")
_REQUIREMENT = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?P<spec>.*)", re.S)


def check_install(command: str) -> list[Problem]:
    """Problems with the install command: an unpinned ``aitrain``,
    a git URL without a commit or tag, an unhashed archive."""
    if not command.strip():
        return [
            Problem(
                OPTION, command, f"must be a shell command that installs aitrain from a source you pin, e.g. {EXAMPLES}"
            )
        ]
    try:
        words = shlex.split(command.replace("\\\n", " "), comments=True)
    except ValueError as exc:
        return [Problem(OPTION, command, f"is not a shell command ({exc})")]
    problems = []
    for requirement, index in _pip_requirements(words):
        reason = _unpinned(requirement, index)
        if reason:
            problems.append(Problem(OPTION, requirement, f"{reason}; give {EXAMPLES}"))
    return problems


def _pip_requirements(words: list[str]) -> list[tuple[str, bool]]:
    """(requirement, an --index-url given) for each requirement word of each ``pip install`` in the command."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(words):
        if not (words[i].rsplit("/", 1)[-1] in ("pip", "pip3") and i + 1 < len(words) and words[i + 1] == "install"):
            i += 1
            continue
        found, index, i = [], False, i + 2
        while i < len(words) and words[i] not in ("&&", "||", ";", "|", "&"):
            word = words[i]
            if word in ("-i", "--index-url") or word.startswith("--index-url="):
                index = True
            if word in ("-e", "--editable") and i + 1 < len(words):
                found.append(words[i + 1])
                i += 2
                continue
            if word in _VALUED:
                i += 2
                continue
            if not word.startswith("-"):
                found.append(word)
            i += 1
        out.extend((r, index) for r in found)
    return out


def _unpinned(requirement: str, index: bool) -> str | None:
    """Why ``requirement`` is not a pinned source, or None when it is (a path, a pinned URL, another package)."""
    name_part, at, url = requirement.partition("@")
    if "://" in requirement or requirement.startswith("git+"):
        target = url.strip() if at and "://" not in name_part else requirement
        return _unpinned_url(target)
    if requirement.startswith((".", "/", "~")) or "/" in requirement:
        return None  # a path in the checkout: the repository under review
    match = _REQUIREMENT.fullmatch(requirement.strip())
    if match is None or re.sub(r"[-_.]+", "-", match["name"]).lower() != NAME:
        return None  # another package: the workflow's business is aitrain's source
    spec = match["spec"].strip()
    if index and re.fullmatch(r"===?\s*[A-Za-z0-9.+!-]+", spec):
        return None  # an exact version from the one index the command names (-i / --index-url)
    return (
        f"installs aitrain by name{' ' + spec if spec else ''} from "
        "a package index, but no package of that name is published: "
        "the job fails, or installs whatever someone later publishes under the name (an exact version is accepted only "
        "with --index-url naming your own index)"
    )


def _unpinned_url(url: str) -> str | None:
    if url.startswith("file:"):
        return None
    if url.startswith("git+"):
        path = urlsplit(url[len("git+") :]).path
        ref = path.rsplit("@", 1)[1] if "@" in path else ""
        if _SHA.fullmatch(ref) or _TAG.fullmatch(ref):
            return None
        if not ref:
            return "is a git URL without @<commit>: it installs whatever the default branch holds when the job runs"
        if re.fullmatch(r"[0-9a-f]{7,39}", ref):
            return f"pins the short commit {ref}: give all 40 hex digits"
        return f"pins @{ref}, a branch or moving tag: give @<40-hex commit> or a release tag such as @v1.2.3"
    if "#sha256=" in url:
        return None
    return "is an archive URL without #sha256=<hash>: its content can change under the same URL"


def derived_install(direct_url: Mapping[str, Any] | None) -> str | None:
    """The pinned install of the running aitrain from its PEP
    610 record (a git commit or a hashed archive), else None."""
    if not direct_url:
        return None
    url = str(direct_url.get("url") or "")
    vcs, archive = direct_url.get("vcs_info"), direct_url.get("archive_info")
    if isinstance(vcs, Mapping) and vcs.get("vcs") == "git" and _SHA.fullmatch(str(vcs.get("commit_id") or "")):
        return f'python -m pip install "{NAME} @ git+{url}@{vcs["commit_id"]}"'
    hashes = archive.get("hashes") if isinstance(archive, Mapping) else None
    if url.startswith("https://") and isinstance(hashes, Mapping) and hashes.get("sha256"):
        return f'python -m pip install "{NAME} @ {url.split("#", 1)[0]}#sha256={hashes["sha256"]}"'
    return None  # a local folder (e.g. an editable install): nothing a CI runner can fetch


def running_direct_url() -> dict[str, Any] | None:
    """The running aitrain's ``direct_url.json`` (PEP 610), or None when pip recorded none."""
    from importlib import metadata

    try:
        text = metadata.distribution(NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
