"""Loading the catalog: read every file, check references across files, build the ``Catalog``."""

from __future__ import annotations

import functools
import os
import pathlib
import re
from typing import Any, Mapping

from blueprints.catalog.instance_prices import load_instance_prices, read_instance_rows
from blueprints.catalog.kubernetes import load_kubernetes
from blueprints.catalog.lingjun import load_lingjun
from blueprints.catalog.queries import Catalog
from blueprints.catalog.records import (
    Alias,
    DiskLimits,
    GpuModel,
    InstanceType,
    InstanceZones,
    LocalDisk,
    PriceRow,
    Region,
    StorageTier,
)
from blueprints.catalog.schema import (
    ALIAS_SCHEMA,
    DISK_SCHEMA,
    GPU_SCHEMA,
    LOCAL_DISK_SCHEMA,
    PRICE_SCHEMA,
    REGION_SCHEMA,
    STORAGE_SCHEMA,
    ZONES_SCHEMA,
    read_rows,
)
from blueprints.catalog.software import load_driver_minimums, load_gpu_software, load_images
from blueprints.core.errors import UserInputError

__all__ = ["CATALOG_DIR", "CATALOG_DIR_ENV", "GPU_FAMILY_RE", "CatalogError", "catalog_directory", "load_catalog"]

CATALOG_DIR: pathlib.Path = pathlib.Path(__file__).resolve().parent / "data"
"""Directory holding the shipped catalog files."""

CATALOG_DIR_ENV = "AITRAIN_CATALOG_DIR"
"""Environment variable naming a directory of catalog files to use instead of the shipped ones."""

# A family name marks a GPU family when it is an NVIDIA GPU family (gn*), optionally as bare metal
# (ebm*) or a super computing cluster (scc*); see the EGS naming conventions
# (https://help.aliyun.com/en/egs/instance-naming-conventions).
GPU_FAMILY_RE = re.compile(r"^(ebm|scc)?gn\d")


def _fail(file: str, line: int, column: str, message: str) -> ValueError:
    return ValueError(f"{file} line {line}, column {column!r}: {message}")


def _unique(file: str, column: str, rows: list[tuple[int, dict[str, Any]]], what: str = "") -> None:
    seen: dict[Any, int] = {}
    for line, values in rows:
        key = values[column]
        if key in seen:
            label = f"{what} {key!r}" if what else repr(key)
            raise _fail(file, line, column, f"duplicate {label} (first on line {seen[key]})")
        seen[key] = line


def _load(directory: pathlib.Path) -> Catalog:
    version_path = directory / "VERSION"
    try:
        version = version_path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ValueError(f"VERSION: catalog version file missing at {version_path}") from None
    if not version:
        raise ValueError("VERSION line 1: must hold the catalog version, e.g. 2026-11-30.1")

    gpu_rows = read_rows(directory / "gpus.csv", GPU_SCHEMA)
    _unique("gpus.csv", "gpu_model", gpu_rows)
    gpus = {v["gpu_model"]: GpuModel(**v) for _, v in gpu_rows}

    it_rows, legacy_prices = read_instance_rows(directory)
    _unique("instance_types.csv", "instance_type", it_rows)
    for line, v in it_rows:
        _check_instance("instance_types.csv", line, v, gpus)
    instance_types = {v["instance_type"]: InstanceType(**v) for _, v in it_rows}

    region_rows = read_rows(directory / "regions.csv", REGION_SCHEMA)
    _unique("regions.csv", "region_id", region_rows)
    for line, v in region_rows:
        for zone in v["zones"]:
            # Zone IDs extend their region ID (cn-shanghai-e, ap-southeast-1a); anything else is a typo.
            if not zone.startswith(v["region_id"]) or zone == v["region_id"]:
                raise _fail("regions.csv", line, "zones", f"zone {zone!r} is not in region {v['region_id']!r}")
    regions = {v["region_id"]: Region(**v) for _, v in region_rows}

    storage_rows = read_rows(directory / "storage.csv", STORAGE_SCHEMA)
    seen_tiers: dict[tuple[str, str], int] = {}
    for line, v in storage_rows:
        key = (v["kind"], v["tier"])
        if key in seen_tiers:
            raise _fail("storage.csv", line, "tier", f"duplicate {key[0]}/{key[1]} (first on line {seen_tiers[key]})")
        seen_tiers[key] = line
    storage = [StorageTier(**v) for _, v in storage_rows]

    alias_rows = read_rows(directory / "aliases.csv", ALIAS_SCHEMA)
    _unique("aliases.csv", "alias", alias_rows)
    for line, v in alias_rows:
        _check_alias("aliases.csv", line, v, instance_types, gpus)
    aliases = {v["alias"]: Alias(**v) for _, v in alias_rows}

    zone_rows = read_rows(directory / "instance_zones.csv", ZONES_SCHEMA)
    for line, v in zone_rows:
        _check_zones("instance_zones.csv", line, v, instance_types, regions)
    _unique(
        "instance_zones.csv",
        "zones",
        [(line, {"zones": (v["instance_type"], v["region"])}) for line, v in zone_rows],
        what="row for",
    )
    instance_zones = [InstanceZones(**v) for _, v in zone_rows]

    driver_minimums = load_driver_minimums(directory)
    gpu_software = load_gpu_software(directory, instance_types, driver_minimums)
    images = load_images(directory, gpu_software, instance_types, driver_minimums)

    disk_rows = read_rows(directory / "disks.csv", DISK_SCHEMA)
    _unique(
        "disks.csv",
        "level",
        [(line, {"level": (v["category"], v["performance_level"])}) for line, v in disk_rows],
        what="row for",
    )
    for line, v in disk_rows:
        if v["min_gib"] > v["max_gib"]:
            raise _fail("disks.csv", line, "max_gib", f"{v['max_gib']} is below min_gib {v['min_gib']}")
    disks = [DiskLimits(**v) for _, v in disk_rows]

    local_rows = read_rows(directory / "local_disks.csv", LOCAL_DISK_SCHEMA)
    _unique("local_disks.csv", "instance_type", local_rows)
    for line, v in local_rows:
        if v["instance_type"] not in instance_types:
            raise _fail(
                "local_disks.csv", line, "instance_type", f"{v['instance_type']!r} is not in instance_types.csv"
            )
    local_disks = {v["instance_type"]: LocalDisk(**v) for _, v in local_rows}

    prices = _load_prices(directory)
    instance_prices = load_instance_prices(directory, instance_types, regions, legacy_prices)
    kubernetes = load_kubernetes(directory)
    lingjun = load_lingjun(directory, regions, gpus)

    return Catalog(
        version=version,
        prices=prices,
        instance_prices=instance_prices,
        gpu_software=gpu_software,
        driver_minimums=tuple(row for _, row in driver_minimums),
        disks=disks,
        local_disks=local_disks,
        instance_types=instance_types,
        gpus=gpus,
        regions=regions,
        storage=storage,
        aliases=aliases,
        images=images,
        instance_zones=instance_zones,
        kubernetes=kubernetes,
        lingjun=lingjun,
    )


def _load_prices(directory: pathlib.Path) -> list[PriceRow]:
    """``prices.csv``: an amount exactly when the status is not unknown, one row per item, tier and region."""
    rows = read_rows(directory / "prices.csv", PRICE_SCHEMA)
    seen: dict[tuple[str, str | None, str], int] = {}
    for line, v in rows:
        if (v["amount"] is None) != (v["status"] == "unknown"):
            # Unknown is an empty amount, never 0; a number always says how trustworthy it is.
            raise _fail(
                "prices.csv",
                line,
                "amount",
                "must be empty exactly when status is unknown (an unknown price is never 0)",
            )
        if v["status"] == "converted" and v["currency"] != "CNY":
            raise _fail(
                "prices.csv", line, "currency", "a converted price is in CNY (notes say from what and at which rate)"
            )
        if v["item"] == "usd_cny" and v["amount"] is not None and v["amount"] <= 0:
            raise _fail("prices.csv", line, "amount", "an exchange rate must be > 0")
        for region in v["region_scope"]:
            key = (v["item"], v["tier"], region)
            if key in seen:
                raise _fail(
                    "prices.csv",
                    line,
                    "region_scope",
                    f"duplicate {v['item']}/{v['tier'] or '-'} for {region} (first on line {seen[key]})",
                )
            seen[key] = line
    return [PriceRow(**v) for _, v in rows]


def _check_instance(file: str, line: int, v: dict[str, Any], gpus: Mapping[str, GpuModel]) -> None:
    if not v["instance_type"].startswith("ecs."):
        raise _fail(file, line, "instance_type", "real ECS types start with 'ecs.'")
    if v["gpu_model"] is not None and v["gpu_model"] not in gpus:
        raise _fail(file, line, "gpu_model", f"{v['gpu_model']!r} is not a gpu_model in gpus.csv")
    is_gpu_family = bool(GPU_FAMILY_RE.match(v["family"]))
    if (v["gpu_count"] > 0) != (v["gpu_model"] is not None or is_gpu_family):
        raise _fail(file, line, "gpu_count", "must be > 0 exactly when gpu_model is set or the family is a GPU family")
    if (v["gpu_model_confidence"] is None) != (v["gpu_model"] is None):
        raise _fail(
            file, line, "gpu_model_confidence", "must be set (stated or inferred) exactly when gpu_model is set"
        )
    # An inferred model is a judgement, so the row must show its working (README "Inferred GPU models").
    if v["gpu_model_confidence"] == "inferred" and "inferred" not in v["notes"].lower():
        raise _fail(
            file,
            line,
            "notes",
            "an inferred gpu_model needs notes that say 'inferred' and give the figures it rests on",
        )
    if v["rdma_gbps"] is not None and v["rdma"] not in ("erdma", "roce"):
        raise _fail(file, line, "rdma_gbps", "an RDMA bandwidth needs rdma erdma or roce")
    if v["rdma_nics"] is not None and v["rdma"] not in ("erdma", "roce"):
        raise _fail(file, line, "rdma_nics", "a count of RDMA NICs needs rdma erdma or roce")


def _check_alias(
    file: str,
    line: int,
    v: dict[str, Any],
    instance_types: Mapping[str, InstanceType],
    gpus: Mapping[str, GpuModel],
) -> None:
    target = instance_types.get(v["instance_type"])
    if target is None:
        raise _fail(file, line, "instance_type", f"{v['instance_type']!r} is not in instance_types.csv")
    if v["alias"] in instance_types:
        raise _fail(file, line, "alias", "an alias must not shadow a real instance type")
    if v["gpu_model"] is not None and v["gpu_model"] not in gpus:
        raise _fail(file, line, "gpu_model", f"{v['gpu_model']!r} is not a gpu_model in gpus.csv")
    if v["gpu_total"] != v["nodes"] * target.gpu_count:
        raise _fail(
            file,
            line,
            "gpu_total",
            f"{v['gpu_total']} != nodes {v['nodes']} × {target.gpu_count} GPUs of {target.instance_type}",
        )


def _check_zones(
    file: str,
    line: int,
    v: dict[str, Any],
    instance_types: Mapping[str, InstanceType],
    regions: Mapping[str, Region],
) -> None:
    # A row names one real type or a whole family; a zone list for anything else would never be read.
    key = v["instance_type"]
    if key not in instance_types and not any(it.family == key for it in instance_types.values()):
        raise _fail(
            file, line, "instance_type", f"{key!r} is neither an instance type nor a family in instance_types.csv"
        )
    region = regions.get(v["region"])
    if region is None:
        raise _fail(file, line, "region", f"{v['region']!r} is not a region_id in regions.csv")
    stray = [z for z in v["zones"] if z not in region.zones]
    if stray:
        raise _fail(file, line, "zones", f"{', '.join(stray)} not among the zones of {region.region_id} in regions.csv")


class CatalogError(UserInputError):
    """A catalog directory or file that cannot be used; the message names the file, line, column and problem.

    A ``UserInputError`` so the CLI reports it in one message with exit 2 (the directory may be the
    user's own, through ``AITRAIN_CATALOG_DIR``). Deliberately not a ``ValueError``: raised inside a
    pydantic validator it must stop validation, not become a complaint about the user's field.
    """

    def __init__(self, message: str, origin: str):
        self.message = message
        self.origin = origin
        super().__init__(f"invalid catalog ({origin})", [])

    def render(self) -> str:
        """One line: where the catalog came from, then the problem."""
        return f"error: invalid catalog ({self.origin}): {self.message}"


def catalog_directory() -> tuple[pathlib.Path, str]:
    """The directory ``load_catalog()`` reads when given none, and where that choice came from.

    ``AITRAIN_CATALOG_DIR`` when set (non-empty), else the shipped ``data/``. A variable that does not
    name a directory is a ``CatalogError`` naming the variable.
    """
    configured = os.environ.get(CATALOG_DIR_ENV, "")
    if not configured:
        return CATALOG_DIR, "the shipped catalog"
    directory = pathlib.Path(configured).expanduser()
    origin = f"{CATALOG_DIR_ENV}={configured}"
    if not directory.is_dir():
        raise CatalogError(
            "not a directory; set the variable to a folder holding VERSION and the catalog CSVs "
            "(copy blueprints/catalog/data and edit it), or unset it to use the shipped catalog",
            origin,
        )
    return directory.resolve(), origin


@functools.lru_cache(maxsize=8)
def _load_cached(directory: pathlib.Path, origin: str) -> Catalog:
    return _load_checked(directory, origin)


def _load_checked(directory: pathlib.Path, origin: str) -> Catalog:
    try:
        return _load(directory)
    except CatalogError:
        raise
    except ValueError as exc:
        raise CatalogError(str(exc), origin) from None


def load_catalog(directory: pathlib.Path | str | None = None) -> Catalog:
    """Load and check the catalog from ``directory``.

    Without a directory: the one named by ``AITRAIN_CATALOG_DIR`` if set, else the shipped data;
    either is read once per process (cached per resolved directory). An explicit directory is read
    afresh on every call. A malformed file raises ``CatalogError`` naming the
    file, line and column of the first malformed cell or broken cross-reference.
    """
    if directory is None:
        return _load_cached(*catalog_directory())
    return _load_checked(pathlib.Path(directory), f"directory {directory}")
