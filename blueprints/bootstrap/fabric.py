"""What NCCL is told per inter-node link, and the MTU an eRDMA node runs at, from data files with a source per fact.

``data/nccl_env.csv`` holds the NCCL environment per link (one source per variable): the node boot writes it to
``/etc/aitrain/nccl.env`` and ``aitrain launch --kubernetes`` puts it in every pod. ``data/fabric_links.csv`` holds
what a link needs (the NCCL floor, the eRDMA MTU with and without jumbo frames). ``data/jumbo_frames.csv`` says per
instance family whether Alibaba documents jumbo-frame support. Pure: the csv module only.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

DATA_DIR = Path(__file__).parent / "data"
NCCL_ENV_CSV = DATA_DIR / "nccl_env.csv"
FABRIC_LINKS_CSV = DATA_DIR / "fabric_links.csv"
JUMBO_FRAMES_CSV = DATA_DIR / "jumbo_frames.csv"
LINKS = ("erdma", "roce", "tcp")
# The jumbo_frames column's values as the record's Literal: a value outside it is refused, never cast.
_JUMBO: dict[str, Literal["yes", "no", "unknown"]] = {"yes": "yes", "no": "no", "unknown": "unknown"}
JUMBO_VALUES = tuple(_JUMBO)
# Where the nodes' jumbo-frame state is set: pulumi-alicloud 4.0.0 ecs.Instance enable_jumbo_frame ("Specifies whether
# to enable the Jumbo Frames feature for the instance"; RunInstances NetworkOptions.EnableJumboFrame: "The MTU of all
# NICs ... is set to 8500"). ecs.EcsLaunchTemplate, ess.ScalingConfiguration, cs.NodePool and vpc.Network have no such
# argument in that release, and no VPC or vSwitch attribute for jumbo frames was found: it is an instance attribute.
JUMBO_ARGUMENT = "ecs.Instance enable_jumbo_frame"
_NAME_RE = re.compile(r"^NCCL_[A-Z0-9_]+$")
_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)+$")


class FabricDataError(ValueError):
    """A row of one of the fabric data files is malformed (the message names file, row and column)."""


@dataclass(frozen=True)
class NcclVariable:
    """One NCCL environment variable for one link, with where its value comes from."""

    link: str
    name: str
    value: str
    source: str
    note: str


@dataclass(frozen=True)
class LinkFacts:
    """What one link needs: the oldest NCCL that supports it, and the MTU (eRDMA: without and with jumbo frames)."""

    link: str
    min_nccl_version: str | None
    mtu_without_jumbo: int | None
    mtu_with_jumbo: int | None
    source: str


@dataclass(frozen=True)
class JumboSupport:
    """Whether Alibaba documents jumbo frames for one instance family, and where."""

    family: str
    jumbo_frames: Literal["yes", "no", "unknown"]
    source: str
    retrieved: str
    note: str


@dataclass(frozen=True)
class MtuChoice:
    """The eRDMA MTU of a blueprint's nodes: jumbo frames on (8500) or off (1400), and why."""

    jumbo_frames: bool
    mtu: int
    reason: str


def _rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != columns:
            raise FabricDataError(f"{path.name}: the header is {reader.fieldnames}; it must be {', '.join(columns)}")
        return [(line, {k: (v or "").strip() for k, v in row.items()}) for line, row in enumerate(reader, start=2)]


def _bad(path: Path, line: int, column: str, value: str, allowed: str) -> FabricDataError:
    return FabricDataError(f"{path.name} row {line}, column {column}: {value!r} is not allowed; {allowed}")


def _int_or_none(path: Path, line: int, column: str, value: str) -> int | None:
    if not value:
        return None
    if not value.isdigit():
        raise _bad(path, line, column, value, "use a whole number of bytes or leave it empty")
    return int(value)


@cache
def nccl_table() -> dict[str, tuple[NcclVariable, ...]]:
    """``nccl_env.csv`` by link, in file order; ``FabricDataError`` for a row without a source or a known link."""
    out: dict[str, list[NcclVariable]] = {link: [] for link in LINKS}
    for line, row in _rows(NCCL_ENV_CSV, ("link", "name", "value", "source", "note")):
        if row["link"] not in LINKS:
            raise _bad(NCCL_ENV_CSV, line, "link", row["link"], f"use {', '.join(LINKS)}")
        if not _NAME_RE.match(row["name"]):
            raise _bad(NCCL_ENV_CSV, line, "name", row["name"], "use an NCCL_* variable name")
        if any(v.name == row["name"] for v in out[row["link"]]):
            raise _bad(NCCL_ENV_CSV, line, "name", row["name"], f"it is already set for {row['link']}")
        if not row["value"]:
            raise _bad(NCCL_ENV_CSV, line, "value", row["value"], "give the value NCCL gets")
        if not row["source"]:
            raise _bad(NCCL_ENV_CSV, line, "source", row["source"], "every variable needs the page it comes from")
        out[row["link"]].append(NcclVariable(row["link"], row["name"], row["value"], row["source"], row["note"]))
    return {link: tuple(variables) for link, variables in out.items()}


@cache
def link_facts() -> dict[str, LinkFacts]:
    """``fabric_links.csv`` by link; ``FabricDataError`` naming the row and column of a malformed cell."""
    out: dict[str, LinkFacts] = {}
    path = FABRIC_LINKS_CSV
    for line, row in _rows(path, ("link", "min_nccl_version", "mtu_without_jumbo", "mtu_with_jumbo", "source")):
        if row["link"] not in LINKS or row["link"] in out:
            raise _bad(path, line, "link", row["link"], f"use each of {', '.join(LINKS)} once")
        version = row["min_nccl_version"]
        if version and not _VERSION_RE.match(version):
            raise _bad(path, line, "min_nccl_version", version, "use a dotted version such as 2.19 or leave it empty")
        if not row["source"]:
            raise _bad(path, line, "source", "", "every row needs the page it comes from")
        out[row["link"]] = LinkFacts(
            row["link"],
            version or None,
            _int_or_none(path, line, "mtu_without_jumbo", row["mtu_without_jumbo"]),
            _int_or_none(path, line, "mtu_with_jumbo", row["mtu_with_jumbo"]),
            row["source"],
        )
    erdma = out.get("erdma")
    if erdma is None or erdma.mtu_without_jumbo is None or erdma.mtu_with_jumbo is None:
        raise FabricDataError(f"{path.name}: the erdma row needs both MTUs (without and with jumbo frames)")
    return out


@cache
def jumbo_families() -> dict[str, JumboSupport]:
    """``jumbo_frames.csv`` by family; ``FabricDataError`` naming the row and column of a malformed cell."""
    out: dict[str, JumboSupport] = {}
    path = JUMBO_FRAMES_CSV
    for line, row in _rows(path, ("family", "jumbo_frames", "source", "retrieved", "note")):
        if not row["family"] or row["family"] in out:
            raise _bad(path, line, "family", row["family"], "name each instance family once")
        support = row["jumbo_frames"]
        if support not in JUMBO_VALUES:
            raise _bad(path, line, "jumbo_frames", support, f"use {', '.join(JUMBO_VALUES)}")
        if not row["source"] or not row["retrieved"]:
            column = "source" if not row["source"] else "retrieved"
            raise _bad(path, line, column, "", "every row needs its source and the day it was read")
        out[row["family"]] = JumboSupport(row["family"], _JUMBO[support], row["source"], row["retrieved"], row["note"])
    return out


def nccl_env(link: str) -> dict[str, str]:
    """The NCCL environment variables for one inter-node link (``erdma``, ``roce`` or ``tcp``)."""
    return {v.name: v.value for v in nccl_table()[link]}


def version_below(version: str, floor: str) -> bool:
    """True when dotted ``version`` (e.g. NCCL's ``2.21.5``) is older than ``floor`` (``2.19``)."""

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"[0-9]+", text))

    return parts(version) < parts(floor)


def erdma_mtu(family: str, blocker: str | None) -> MtuChoice:
    """The MTU of eRDMA nodes of ``family``: 8500 with jumbo frames only where the family documents them and the
    blueprint's nodes can turn them on (``blocker`` None: they are ``ecs.Instance``), else 1400 and why."""
    without, jumbo = erdma_mtus()
    off = f"MTU {without}, jumbo frames off"
    row = jumbo_families().get(family)
    if row is None or row.jumbo_frames != "yes":
        said = "has no row" if row is None else f"says {row.jumbo_frames}"
        why = f"{JUMBO_FRAMES_CSV.name} {said} for {family} (no Alibaba page found lists it as jumbo-frame capable)"
        return MtuChoice(False, without, f"{off}: {why}")
    if blocker is not None:
        return MtuChoice(False, without, f"{off}: {family} supports jumbo frames but {blocker}")
    return MtuChoice(
        True,
        jumbo,
        f"MTU {jumbo}, jumbo frames on ({JUMBO_ARGUMENT}; no VPC setting exists): {family} supports them "
        f"({JUMBO_FRAMES_CSV.name}, retrieved {row.retrieved})",
    )


def erdma_mtus() -> tuple[int, int]:
    """The eRDMA MTU without and with jumbo frames (``fabric_links.csv``: 1400 and 8500)."""
    facts = link_facts()["erdma"]
    if facts.mtu_without_jumbo is None or facts.mtu_with_jumbo is None:  # link_facts() refuses such a file
        raise FabricDataError(f"{FABRIC_LINKS_CSV.name}: the erdma row needs both MTUs")
    return facts.mtu_without_jumbo, facts.mtu_with_jumbo
