"""ACK facts of the catalog: Kubernetes versions, the GPU families ACK node pools run, and the add-ons a cluster pins.

Three CSVs in the catalog directory (``kubernetes_versions.csv``, ``kubernetes_gpu_families.csv``,
``kubernetes_addons.csv``), each row with its source. Pure Python like the rest of the catalog.
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass
from typing import Any, Callable

from blueprints.catalog.cells import _CellError, _choice, _date, _opt_text, _text
from blueprints.catalog.schema import read_rows

# When a default add-on is installed: on every cluster, or only when the GPU type has eRDMA.
ADDON_WHEN = ("always", "erdma")


@dataclass(frozen=True)
class KubernetesVersion:
    """One Kubernetes version ACK offers for new managed clusters."""

    version: str
    minor: str
    released: str
    end_of_support: str
    is_default: bool
    source: str
    source_date: str


@dataclass(frozen=True)
class AckGpuFamily:
    """A GPU instance family ACK documents as able to join a node pool."""

    family: str
    listed_as: str
    source: str
    source_date: str
    notes: str


@dataclass(frozen=True)
class AckAddon:
    """An add-on the cluster installs at creation: name, pinned version ("" = ACK's default) and JSON config."""

    name: str
    version: str
    config: str
    when: str
    source: str
    source_date: str
    notes: str


@dataclass(frozen=True)
class KubernetesFacts:
    """The ACK tables, read-only."""

    versions: tuple[KubernetesVersion, ...] = ()
    gpu_families: tuple[AckGpuFamily, ...] = ()
    addons: tuple[AckAddon, ...] = ()

    @property
    def version_names(self) -> tuple[str, ...]:
        """Every version a profile may name, newest first as listed."""
        return tuple(v.version for v in self.versions)

    @property
    def default_version(self) -> str | None:
        """The version used when a profile names none."""
        return next((v.version for v in self.versions if v.is_default), None)

    def supports_family(self, family: str) -> bool:
        """Whether ACK documents ``family`` as a GPU node-pool family (not listed: not supported)."""
        return any(f.family == family for f in self.gpu_families)

    def default_addons(self, *, erdma: bool) -> tuple[AckAddon, ...]:
        """The add-ons a new cluster pins, for a GPU type with or without eRDMA."""
        return tuple(a for a in self.addons if a.when == "always" or (erdma and a.when == "erdma"))


def _bool(raw: str) -> bool:
    if raw not in ("true", "false"):
        raise _CellError("must be true or false")
    return raw == "true"


def _json_object(raw: str) -> str:
    if not raw:
        return ""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise _CellError(f"must be a JSON object or empty: {exc}") from None
    if not isinstance(value, dict):
        raise _CellError("must be a JSON object or empty")
    return raw


def _opt(raw: str) -> str:
    return _opt_text(raw) or ""


VERSION_SCHEMA: dict[str, Callable[[str], Any]] = {
    "version": _text,
    "minor": _text,
    "released": _date,
    "end_of_support": _date,
    "is_default": _bool,
    "source": _text,
    "source_date": _date,
}
GPU_FAMILY_SCHEMA: dict[str, Callable[[str], Any]] = {
    "family": _text,
    "listed_as": _text,
    "source": _text,
    "source_date": _date,
    "notes": str,
}
ADDON_SCHEMA: dict[str, Callable[[str], Any]] = {
    "name": _text,
    "version": _opt,
    "config": _json_object,
    "when": _choice(ADDON_WHEN),
    "source": _text,
    "source_date": _date,
    "notes": str,
}


def _unique(file: str, column: str, rows: list[tuple[int, dict[str, Any]]]) -> None:
    seen: dict[str, int] = {}
    for line, values in rows:
        key = values[column]
        if key in seen:
            raise ValueError(f"{file} line {line}, column {column!r}: duplicate {key!r} (first on line {seen[key]})")
        seen[key] = line


def load_kubernetes(directory: pathlib.Path) -> KubernetesFacts:
    """Read and check the three ACK tables; ValueError names file, line and column."""
    version_rows = read_rows(directory / "kubernetes_versions.csv", VERSION_SCHEMA)
    _unique("kubernetes_versions.csv", "version", version_rows)
    for line, v in version_rows:
        if not v["version"].startswith(v["minor"] + "."):
            raise ValueError(
                f"kubernetes_versions.csv line {line}, column 'minor': "
                f"{v['minor']!r} is not the minor of {v['version']!r}"
            )
    defaults = [line for line, v in version_rows if v["is_default"]]
    if len(defaults) != 1:
        raise ValueError(f"kubernetes_versions.csv: exactly one row must have is_default true (found {len(defaults)})")
    family_rows = read_rows(directory / "kubernetes_gpu_families.csv", GPU_FAMILY_SCHEMA)
    _unique("kubernetes_gpu_families.csv", "family", family_rows)
    addon_rows = read_rows(directory / "kubernetes_addons.csv", ADDON_SCHEMA)
    _unique("kubernetes_addons.csv", "name", addon_rows)
    return KubernetesFacts(
        versions=tuple(KubernetesVersion(**v) for _, v in version_rows),
        gpu_families=tuple(AckGpuFamily(**v) for _, v in family_rows),
        addons=tuple(AckAddon(**v) for _, v in addon_rows),
    )
