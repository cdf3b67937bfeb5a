"""Which input changes replace a resource, and what a delete-first replacement takes down (data, with sources).

Loaded from ``blueprints/data/replacing_inputs.csv`` (the ForceNew marks of terraform-provider-alicloud's docs,
which pulumi-alicloud bridges) and ``blueprints/data/delete_first_downtime.csv``; see ``blueprints/data/README.md``.
Each row's type is a resource kind whose ``replacing_inputs`` names the source its rows come from
(``blueprints.kinds.model.ReplacingInputs``); a row the kinds do not vouch for is refused with the rest.
Pure: no Pulumi.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from blueprints.core.errors import Problem, UserInputError
from blueprints.kinds import ReplacingInputs, kind_of_short_type, module_for

DATA_DIR = Path(__file__).parents[2] / "data"
PROVIDER_TYPE = "pulumi:providers:alicloud"

_REPLACING_COLUMNS = ("type", "input", "terraform_argument", "source", "marks")
_DOWNTIME_COLUMNS = ("type", "takes_down", "unavailable_for", "source")
# A plan's short type (``ecs.EcsInstanceSet``), a Kubernetes token (``kubernetes:core/v1:PersistentVolume``, which
# the plan keeps whole) or a provider token; an engine (camelCase) input, dots for nesting.
_TYPE_RE = re.compile(
    r"^([a-z]+\.[A-Z][A-Za-z0-9]*|kubernetes:[a-z0-9.-]+/v[0-9a-z]+:[A-Z][A-Za-z0-9]*|pulumi:providers:[a-z]+)$"
)
_INPUT_RE = re.compile(r"^([a-z][A-Za-z0-9]*)(\.[a-z][A-Za-z0-9]*)*$")


@dataclass(frozen=True)
class Downtime:
    """What a delete-first replacement of one type takes down and for how long (``{amount}`` filled from inputs)."""

    takes_down: str
    unavailable_for: str
    source: str

    def describe(self, inputs: Mapping[str, object]) -> str:
        """One phrase: ``12 GPU nodes down ~10–20 min: …``."""
        amount = inputs.get("amount")
        what = self.takes_down.replace("{amount}", str(amount) if amount is not None else "all")
        return f"{what} down {self.unavailable_for}"


@dataclass(frozen=True)
class ReplacementTable:
    """Per resource type: the inputs whose change replaces it (empty: nothing does) and its delete-first downtime."""

    replacing: Mapping[str, frozenset[str]]
    sources: Mapping[tuple[str, str], str]
    downtime: Mapping[str, Downtime]

    def forcing(self, short_type: str) -> frozenset[str] | None:
        """The replacing inputs of a type, or None when the type is not in the table (unknown: may replace)."""
        return self.replacing.get(short_type)

    def forces(self, short_type: str, key: str, values: tuple[object, object] | None = None) -> bool:
        """Whether changing input ``key`` (or a nested part of it, ``systemDisk.category``) replaces the resource.

        With the ``(old, new)`` values of ``key``, a key whose replacing inputs are all nested under it (a Kubernetes
        ``spec`` whose ``spec.csi`` replaces) replaces only when one of those nested parts differs: a PV's capacity
        changes in place, its CSI source does not. Without them any change under ``key`` counts (the safe side).
        """
        known = self.replacing.get(short_type, frozenset())
        if key in known or any(key.startswith(k + ".") for k in known):
            return True
        nested = [k[len(key) + 1 :] for k in known if k.startswith(key + ".")]
        if not nested:
            return False
        if values is None:
            return True
        return any(_part(values[0], path) != _part(values[1], path) for path in nested)


def load_replacement_table(directory: Path = DATA_DIR) -> ReplacementTable:
    """Read and validate both CSVs; every bad row is reported at once (file, line, column, value, what is allowed)."""
    problems: list[Problem] = []
    replacing: dict[str, set[str]] = {}
    sources: dict[tuple[str, str], str] = {}
    for line, row in _rows(directory / "replacing_inputs.csv", _REPLACING_COLUMNS, problems):
        where = f"{directory / 'replacing_inputs.csv'}: line {line}"
        kind, key = row["type"], row["input"]
        if not _TYPE_RE.match(kind):
            problems.append(
                Problem(
                    f"{where}: type",
                    kind,
                    "must be a plan short type such as ecs.EcsInstanceSet or pulumi:providers:alicloud",
                )
            )
            continue
        if key and not _INPUT_RE.match(key):
            problems.append(
                Problem(f"{where}: input", key, "must be an engine (camelCase) input name, dots for nesting, or empty")
            )
            continue
        if not row["source"]:
            problems.append(Problem(f"{where}: source", "", "must cite where the ForceNew mark comes from"))
            continue
        if (kind, key) in sources:
            problems.append(Problem(f"{where}: input", key, f"duplicates an earlier row for {kind}"))
            continue
        problems += _kind_problems(where, kind, row["source"])
        replacing.setdefault(kind, set())
        if key:
            replacing[kind].add(key)
        sources[(kind, key)] = row["source"]
    downtime: dict[str, Downtime] = {}
    for line, row in _rows(directory / "delete_first_downtime.csv", _DOWNTIME_COLUMNS, problems):
        where = f"{directory / 'delete_first_downtime.csv'}: line {line}"
        if not _TYPE_RE.match(row["type"]):
            problems.append(
                Problem(f"{where}: type", row["type"], "must be a plan short type such as ecs.EcsInstanceSet")
            )
        elif kind_of_short_type(row["type"]) is None:
            problems.append(Problem(f"{where}: type", row["type"], _NOT_A_KIND))
        elif not (row["takes_down"] and row["unavailable_for"] and row["source"]):
            problems.append(Problem(where, row, "takes_down, unavailable_for and source are all required"))
        else:
            downtime[row["type"]] = Downtime(row["takes_down"], row["unavailable_for"], row["source"])
    if problems:
        raise UserInputError("invalid replacement data", problems)
    return ReplacementTable({k: frozenset(v) for k, v in replacing.items()}, sources, downtime)


_NOT_A_KIND = "is not a resource kind: add its record to blueprints/kinds/ first (the module of its service)"


def _kind_problems(where: str, short: str, source: str) -> list[Problem]:
    """A row whose type has no kind, whose kind says its replacing inputs are unknown, or whose source is not the one
    its kind names."""
    kind = kind_of_short_type(short)
    if kind is None:
        return [Problem(f"{where}: type", short, _NOT_A_KIND)]
    origin = kind.replacing_inputs
    if origin is ReplacingInputs.UNKNOWN:
        return [
            Problem(
                f"{where}: type",
                short,
                f"its kind ({module_for(kind.token)}) says its replacing inputs are unknown; set its replacing_inputs"
                " to the source these rows come from",
            )
        ]
    if not source.startswith(origin.value):
        return [
            Problem(
                f"{where}: source",
                source,
                f"must start with {origin.value} (ReplacingInputs.{origin.name}, "
                f"as its kind in {module_for(kind.token)} says)",
            )
        ]
    return []


_MISSING = object()


def _part(value: object, path: str) -> object:
    """The part of a nested input at a dotted path (a marker when absent; lists compared whole)."""
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


@lru_cache(maxsize=1)
def replacement_table() -> ReplacementTable:
    """The shipped table (loaded once)."""
    return load_replacement_table()


def _rows(path: Path, columns: tuple[str, ...], problems: list[Problem]) -> list[tuple[int, dict[str, str]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        problems.append(Problem(str(path), None, f"cannot be read ({exc.strerror})"))
        return []
    reader = csv.DictReader(text.splitlines())
    if tuple(reader.fieldnames or ()) != columns:
        problems.append(Problem(f"{path}: header", reader.fieldnames, f"must be {','.join(columns)}"))
        return []
    out = []
    for row in reader:
        if None in row or any(v is None for v in row.values()):
            problems.append(
                Problem(
                    f"{path}: line {reader.line_num}",
                    row.get(None) or "(short row)",
                    f"must have exactly {len(columns)} columns",
                )
            )
            continue
        out.append((reader.line_num, {k: v.strip() for k, v in row.items()}))
    return out
