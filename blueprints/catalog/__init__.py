"""The instance / GPU / storage catalog: versioned CSV data with sources, and its loader.

The data lives in ``data/*.csv`` (documented column by column in ``README.md``); this module only
parses and checks it. Pure Python on purpose: the planner, the cost model and the offline Pulumi
mocks all read it, and none of them may need ``pulumi`` to be importable.
"""

from __future__ import annotations

import csv
import difflib
import functools
import pathlib
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

__all__ = [
    "CATALOG_DIR",
    "GPU_FAMILY_RE",
    "PRECISIONS",
    "PRICE_CONFIDENCES",
    "RDMA_KINDS",
    "Alias",
    "Catalog",
    "GpuModel",
    "Image",
    "InstanceType",
    "Region",
    "StorageTier",
    "load_catalog",
]

CATALOG_DIR: pathlib.Path = pathlib.Path(__file__).resolve().parent / "data"
"""Directory holding the shipped catalog files."""

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
"""Precisions that ``GpuModel.peak_tflops`` understands (dense peaks)."""

RDMA_KINDS = ("none", "erdma", "roce")
"""Allowed non-empty values of ``instance_types.csv:rdma``."""

PRICE_CONFIDENCES = ("high", "medium", "low")
"""Allowed non-empty values of ``instance_types.csv:price_confidence``."""

# A family name marks a GPU family when it is an NVIDIA GPU family (gn*), optionally as bare metal
# (ebm*) or a super computing cluster (scc*); see the EGS naming conventions
# (https://help.aliyun.com/en/egs/instance-naming-conventions).
GPU_FAMILY_RE = re.compile(r"^(ebm|scc)?gn\d")

# Sources state dates to different precision (a year for a 2020 example, a month for "as of
# 2023.06"); we keep what the source says rather than inventing a day.
_DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuModel:
    """One GPU model with dense peak throughput (TFLOPS), memory and NVLink; None = unknown or unsupported."""

    gpu_model: str
    memory_gib: float | None
    memory_type: str | None
    memory_bandwidth_gb_s: float | None
    fp32_tflops: float | None
    tf32_tflops: float | None
    fp16_tflops: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    nvlink_gb_s: float | None
    tdp_w: float | None
    source: str
    source_date: str

    def peak_tflops(self, precision: str) -> float | None:
        """Dense peak TFLOPS at ``precision`` (one of PRECISIONS); None when unsupported or unknown."""
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; expected one of {', '.join(PRECISIONS)}")
        return getattr(self, f"{precision}_tflops")


@dataclass(frozen=True)
class InstanceType:
    """One real ECS instance type with its specs, optional list price and sources."""

    instance_type: str
    family: str
    vcpus: int
    memory_gib: float
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gib: float | None
    network_gbps: float | None
    rdma: str | None
    nvlink: bool | None
    price_cny_per_hour: float | None
    price_region: str | None
    price_date: str | None
    price_source: str | None
    price_confidence: str | None
    spec_source: str
    spec_date: str
    regions: tuple[str, ...]
    notes: str

    @property
    def is_gpu(self) -> bool:
        """True when the type has at least one GPU."""
        return self.gpu_count > 0


@dataclass(frozen=True)
class Region:
    """A region and the zone IDs known for it."""

    region_id: str
    name: str
    zones: tuple[str, ...]
    source: str
    source_date: str


@dataclass(frozen=True)
class StorageTier:
    """One storage option (NAS, Extreme NAS, CPFS, OSS tier) with throughput rules and price."""

    kind: str
    tier: str
    file_system_type: str | None
    storage_type: str | None
    protocol_type: str | None
    min_capacity_gib: float | None
    max_capacity_gib: float | None
    throughput_mb_s_per_tib: float | None
    throughput_mb_s_max: float | None
    throughput_steps: tuple[tuple[float, float], ...]
    price_per_gib_month: float | None
    price_currency: str | None
    price_region: str | None
    price_date: str | None
    price_source: str | None
    source: str
    source_date: str
    notes: str

    def throughput_mb_s(self, capacity_gib: float) -> float | None:
        """Baseline throughput in MB/s at ``capacity_gib`` of capacity; None when unknown.

        A step table wins over a per-TiB rate; either is capped by ``throughput_mb_s_max``.
        Below the first step (a size the product does not sell) the answer is None.
        """
        if capacity_gib < 0:
            raise ValueError(f"capacity_gib must be >= 0, got {capacity_gib}")
        value: float | None = None
        if self.throughput_steps:
            for lower_gib, mb_s in self.throughput_steps:
                if capacity_gib >= lower_gib:
                    value = mb_s
        elif self.throughput_mb_s_per_tib is not None:
            # Per TiB of capacity, with TiB = 1024 GiB (the tier names are "MB/s per TiB").
            value = self.throughput_mb_s_per_tib * capacity_gib / 1024.0
        if value is not None and self.throughput_mb_s_max is not None:
            value = min(value, self.throughput_mb_s_max)
        return value


@dataclass(frozen=True)
class Alias:
    """A fictional instance name from the marketing article and the real types that provide it."""

    alias: str
    article_description: str
    gpu_model: str | None
    gpu_total: int
    instance_type: str
    nodes: int
    sentence: str
    source: str


@dataclass(frozen=True)
class Image:
    """Offline answer for ``alicloud.ecs.get_images(name_regex=..., owners="system", most_recent=True)``."""

    region: str
    os: str
    name_regex: str
    image_id: str
    source: str
    source_date: str


# --------------------------------------------------------------------------------------------
# The catalog
# --------------------------------------------------------------------------------------------


class Catalog:
    """All catalog tables, read-only, with lookups used by the planner, cost model and mocks."""

    version: str
    instance_types: Mapping[str, InstanceType]
    gpus: Mapping[str, GpuModel]
    regions: Mapping[str, Region]
    storage: tuple[StorageTier, ...]
    aliases: Mapping[str, Alias]
    images: tuple[Image, ...]

    def __init__(
        self,
        *,
        version: str,
        instance_types: Mapping[str, InstanceType],
        gpus: Mapping[str, GpuModel],
        regions: Mapping[str, Region],
        storage: Iterable[StorageTier],
        aliases: Mapping[str, Alias],
        images: Iterable[Image],
    ) -> None:
        self.version = version
        # Read-only views: the default catalog is cached and shared, so nobody may mutate it.
        self.instance_types = MappingProxyType(dict(instance_types))
        self.gpus = MappingProxyType(dict(gpus))
        self.regions = MappingProxyType(dict(regions))
        self.storage = tuple(storage)
        self.aliases = MappingProxyType(dict(aliases))
        self.images = tuple(images)

    def __repr__(self) -> str:
        return (
            f"Catalog(version={self.version!r}, instance_types={len(self.instance_types)}, "
            f"gpus={len(self.gpus)}, regions={len(self.regions)}, storage={len(self.storage)}, "
            f"aliases={len(self.aliases)}, images={len(self.images)})"
        )

    def instance_type(self, name: str) -> InstanceType:
        """The real instance type ``name``; KeyError (with suggestions) otherwise. Aliases are refused."""
        try:
            return self.instance_types[name]
        except KeyError:
            raise KeyError(self._unknown_message(name)) from None

    def resolve(self, name: str) -> tuple[InstanceType, Alias | None]:
        """A real type as ``(it, None)``; an article alias as ``(target, alias)``; KeyError otherwise."""
        if name in self.instance_types:
            return self.instance_types[name], None
        if name in self.aliases:
            alias = self.aliases[name]
            return self.instance_types[alias.instance_type], alias
        raise KeyError(self._unknown_message(name))

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Up to ``n`` closest real type names and aliases to ``name`` (difflib ratio), best first."""
        candidates = list(self.instance_types) + list(self.aliases)
        return difflib.get_close_matches(name, candidates, n=n, cutoff=0.6)

    def gpu(self, instance: InstanceType) -> GpuModel | None:
        """The GPU model of ``instance``; None for CPU types or when the model is not named."""
        if instance.gpu_model is None:
            return None
        return self.gpus.get(instance.gpu_model)

    def zones(self, region: str) -> tuple[str, ...]:
        """Known zone IDs of ``region``; () when the region is not in the catalog."""
        found = self.regions.get(region)
        return found.zones if found else ()

    def storage_tier(self, kind: str, tier: str) -> StorageTier:
        """The storage option ``kind``/``tier`` (case-insensitive); KeyError listing the known ones."""
        for option in self.storage:
            if option.kind == kind.lower() and option.tier == tier.lower():
                return option
        known = ", ".join(f"{s.kind}/{s.tier}" for s in self.storage)
        raise KeyError(f"unknown storage tier {kind}/{tier}; known: {known}")

    def storage_tiers(self, kind: str) -> tuple[StorageTier, ...]:
        """All tiers of storage ``kind`` in file order; () for an unknown kind."""
        return tuple(s for s in self.storage if s.kind == kind.lower())

    def image_for(self, region: str, os: str | None = None) -> Image | None:
        """The image to use in ``region`` (optionally for ``os``): a region row beats a ``*`` row; file order is preference."""
        matching = [i for i in self.images if os is None or i.os.lower() == os.lower()]
        for wanted in (region, "*"):
            for image in matching:
                if image.region == wanted:
                    return image
        return None

    def query(
        self,
        *,
        gpu_model: str | None = None,
        min_gpus: int | None = None,
        max_gpus: int | None = None,
        region: str | None = None,
        priced_only: bool = False,
    ) -> list[InstanceType]:
        """Instance types matching every given filter, sorted by name.

        ``gpu_model`` matches a model key case-insensitively, or a key prefix ending at a dash, so
        ``"A100"`` finds ``A100-SXM4-80GB`` and ``A100-SXM4-40GB`` but ``"A10"`` finds only ``A10``.
        ``region`` keeps rows whose regions are unknown (empty) or include it.
        """
        out = []
        for it in self.instance_types.values():
            if gpu_model is not None and not _gpu_matches(it.gpu_model, gpu_model):
                continue
            if min_gpus is not None and it.gpu_count < min_gpus:
                continue
            if max_gpus is not None and it.gpu_count > max_gpus:
                continue
            if region is not None and it.regions and region not in it.regions:
                continue
            if priced_only and it.price_cny_per_hour is None:
                continue
            out.append(it)
        return sorted(out, key=lambda it: it.instance_type)

    def _unknown_message(self, name: str) -> str:
        alias = self.aliases.get(name)
        if alias is not None:
            # Only instance_type() gets here with an alias: say what it is rather than "did you mean" itself.
            return f"{name!r} is an article alias, not a real instance type: {alias.sentence}"
        text = f"{name!r} is not an instance type in catalog {self.version}"
        close = self.suggest(name)
        if close:
            text += "; did you mean " + ", ".join(repr(c) for c in close) + "?"
        return text


def _gpu_matches(model: str | None, wanted: str) -> bool:
    if model is None:
        return False
    model_l, wanted_l = model.lower(), wanted.lower()
    return model_l == wanted_l or model_l.startswith(wanted_l + "-")


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


class _CellError(ValueError):
    """A cell that does not parse; the reader adds file, line and column."""


def _text(raw: str) -> str:
    if not raw:
        raise _CellError("must not be empty")
    return raw


def _opt_text(raw: str) -> str | None:
    return raw or None


def _int_pos_or_zero(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise _CellError("must be a whole number") from None
    if value < 0:
        raise _CellError("must be >= 0")
    return value


def _int_pos(raw: str) -> int:
    value = _int_pos_or_zero(raw)
    if value == 0:
        raise _CellError("must be > 0")
    return value


def _opt_float(raw: str) -> float | None:
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise _CellError("must be a number or empty (unknown)") from None
    if value != value or value < 0:  # NaN or negative
        raise _CellError("must be a number >= 0")
    return value


def _float_pos(raw: str) -> float:
    value = _opt_float(_text(raw))
    assert value is not None
    if value <= 0:
        raise _CellError("must be > 0")
    return value


def _opt_bool(raw: str) -> bool | None:
    if not raw:
        return None
    if raw in ("true", "false"):
        return raw == "true"
    raise _CellError("must be true, false or empty (unknown)")


def _opt_choice(choices: tuple[str, ...]) -> Callable[[str], str | None]:
    def parse(raw: str) -> str | None:
        if not raw:
            return None
        if raw not in choices:
            raise _CellError(f"must be one of {', '.join(choices)} or empty")
        return raw

    return parse


def _date(raw: str) -> str:
    if not _DATE_RE.match(_text(raw)):
        raise _CellError("must be a date YYYY-MM-DD (or YYYY-MM / YYYY when the source is no finer)")
    return raw


def _opt_date(raw: str) -> str | None:
    return _date(raw) if raw else None


def _list(raw: str) -> tuple[str, ...]:
    items = tuple(part.strip() for part in raw.split(";")) if raw else ()
    if any(not item for item in items):
        raise _CellError("must be a ';'-separated list without empty items")
    return items


def _steps(raw: str) -> tuple[tuple[float, float], ...]:
    if not raw:
        return ()
    steps = []
    for part in raw.split(";"):
        bound, sep, mb_s = part.partition(":")
        try:
            if not sep:
                raise ValueError
            steps.append((float(bound), float(mb_s)))
        except ValueError:
            raise _CellError(f"step {part!r} must look like <capacity_gib>:<mb_s>") from None
    if [b for b, _ in steps] != sorted({b for b, _ in steps}):
        raise _CellError("step capacities must be strictly increasing")
    return tuple(steps)


_Schema = dict[str, Callable[[str], Any]]

_INSTANCE_SCHEMA: _Schema = {
    "instance_type": _text,
    "family": _text,
    "vcpus": _int_pos,
    "memory_gib": _float_pos,
    "gpu_model": _opt_text,
    "gpu_count": _int_pos_or_zero,
    "gpu_memory_gib": _opt_float,
    "network_gbps": _opt_float,
    "rdma": _opt_choice(RDMA_KINDS),
    "nvlink": _opt_bool,
    "price_cny_per_hour": _opt_float,
    "price_region": _opt_text,
    "price_date": _opt_date,
    "price_source": _opt_text,
    "price_confidence": _opt_choice(PRICE_CONFIDENCES),
    "spec_source": _text,
    "spec_date": _date,
    "regions": _list,
    "notes": str,
}

_GPU_SCHEMA: _Schema = {
    "gpu_model": _text,
    "memory_gib": _opt_float,
    "memory_type": _opt_text,
    "memory_bandwidth_gb_s": _opt_float,
    "fp32_tflops": _opt_float,
    "tf32_tflops": _opt_float,
    "fp16_tflops": _opt_float,
    "bf16_tflops": _opt_float,
    "fp8_tflops": _opt_float,
    "nvlink_gb_s": _opt_float,
    "tdp_w": _opt_float,
    "source": _text,
    "source_date": _date,
}

_REGION_SCHEMA: _Schema = {
    "region_id": _text,
    "name": _text,
    "zones": _list,
    "source": _text,
    "source_date": _date,
}

_STORAGE_SCHEMA: _Schema = {
    "kind": _text,
    "tier": _text,
    "file_system_type": _opt_text,
    "storage_type": _opt_text,
    "protocol_type": _opt_text,
    "min_capacity_gib": _opt_float,
    "max_capacity_gib": _opt_float,
    "throughput_mb_s_per_tib": _opt_float,
    "throughput_mb_s_max": _opt_float,
    "throughput_steps": _steps,
    "price_per_gib_month": _opt_float,
    "price_currency": _opt_text,
    "price_region": _opt_text,
    "price_date": _opt_date,
    "price_source": _opt_text,
    "source": _text,
    "source_date": _date,
    "notes": str,
}

_ALIAS_SCHEMA: _Schema = {
    "alias": _text,
    "article_description": _text,
    "gpu_model": _opt_text,
    "gpu_total": _int_pos,
    "instance_type": _text,
    "nodes": _int_pos,
    "sentence": _text,
    "source": _text,
}

_IMAGE_SCHEMA: _Schema = {
    "region": _text,
    "os": _text,
    "name_regex": _text,
    "image_id": _text,
    "source": _text,
    "source_date": _date,
}


def _read(path: pathlib.Path, schema: _Schema) -> list[tuple[int, dict[str, Any]]]:
    """Rows of ``path`` parsed by ``schema`` as ``(line, values)``; ValueError names file, line, column."""
    name = path.name
    try:
        handle = path.open(newline="", encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{name}: catalog file missing at {path}") from None
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        expected = list(schema)
        if header != expected:
            got = header or []
            missing = [c for c in expected if c not in got]
            extra = [c for c in got if c not in expected]
            detail = f"missing {missing}" if missing else ""
            if extra:
                detail += ("; " if detail else "") + f"unexpected {extra}"
            raise ValueError(
                f"{name} line 1: header must be exactly {','.join(expected)} ({detail or 'wrong order'})"
            )
        rows = []
        for cells in reader:
            line = reader.line_num
            if not any(cells):
                continue  # a blank line is harmless; skipping it keeps hand edits forgiving
            if len(cells) != len(expected):
                raise ValueError(f"{name} line {line}: expected {len(expected)} fields, got {len(cells)}")
            values: dict[str, Any] = {}
            for column, raw in zip(expected, cells):
                try:
                    values[column] = schema[column](raw.strip())
                except _CellError as exc:
                    raise ValueError(f"{name} line {line}, column {column!r}: {exc} (got {raw!r})") from None
            rows.append((line, values))
    return rows


def _fail(file: str, line: int, column: str, message: str) -> ValueError:
    return ValueError(f"{file} line {line}, column {column!r}: {message}")


def _unique(file: str, column: str, rows: list[tuple[int, dict[str, Any]]]) -> None:
    seen: dict[Any, int] = {}
    for line, values in rows:
        key = values[column]
        if key in seen:
            raise _fail(file, line, column, f"duplicate {key!r} (first on line {seen[key]})")
        seen[key] = line


def _load(directory: pathlib.Path) -> Catalog:
    version_path = directory / "VERSION"
    try:
        version = version_path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ValueError(f"VERSION: catalog version file missing at {version_path}") from None
    if not version:
        raise ValueError("VERSION line 1: must hold the catalog version, e.g. 2026-11-30.1")

    gpu_rows = _read(directory / "gpus.csv", _GPU_SCHEMA)
    _unique("gpus.csv", "gpu_model", gpu_rows)
    gpus = {v["gpu_model"]: GpuModel(**v) for _, v in gpu_rows}

    it_rows = _read(directory / "instance_types.csv", _INSTANCE_SCHEMA)
    _unique("instance_types.csv", "instance_type", it_rows)
    for line, v in it_rows:
        _check_instance("instance_types.csv", line, v, gpus)
    instance_types = {v["instance_type"]: InstanceType(**v) for _, v in it_rows}

    region_rows = _read(directory / "regions.csv", _REGION_SCHEMA)
    _unique("regions.csv", "region_id", region_rows)
    for line, v in region_rows:
        for zone in v["zones"]:
            # Zone IDs extend their region ID (cn-shanghai-e, ap-southeast-1a); anything else is a typo.
            if not zone.startswith(v["region_id"]) or zone == v["region_id"]:
                raise _fail("regions.csv", line, "zones", f"zone {zone!r} is not in region {v['region_id']!r}")
    regions = {v["region_id"]: Region(**v) for _, v in region_rows}

    storage_rows = _read(directory / "storage.csv", _STORAGE_SCHEMA)
    seen_tiers: dict[tuple[str, str], int] = {}
    for line, v in storage_rows:
        key = (v["kind"], v["tier"])
        if key in seen_tiers:
            raise _fail("storage.csv", line, "tier", f"duplicate {key[0]}/{key[1]} (first on line {seen_tiers[key]})")
        seen_tiers[key] = line
        _check_price("storage.csv", line, v, "price_per_gib_month", ("price_currency", "price_region", "price_date", "price_source"))
    storage = [StorageTier(**v) for _, v in storage_rows]

    alias_rows = _read(directory / "aliases.csv", _ALIAS_SCHEMA)
    _unique("aliases.csv", "alias", alias_rows)
    for line, v in alias_rows:
        _check_alias("aliases.csv", line, v, instance_types, gpus)
    aliases = {v["alias"]: Alias(**v) for _, v in alias_rows}

    image_rows = _read(directory / "images.csv", _IMAGE_SCHEMA)
    for line, v in image_rows:
        try:
            re.compile(v["name_regex"])
        except re.error as exc:
            raise _fail("images.csv", line, "name_regex", f"not a valid regex: {exc}") from None
        if not re.match(v["name_regex"], v["image_id"]):
            raise _fail("images.csv", line, "image_id", f"{v['image_id']!r} does not match name_regex {v['name_regex']!r}")
    images = [Image(**v) for _, v in image_rows]

    return Catalog(
        version=version,
        instance_types=instance_types,
        gpus=gpus,
        regions=regions,
        storage=storage,
        aliases=aliases,
        images=images,
    )


def _check_price(file: str, line: int, v: dict[str, Any], price_column: str, required: tuple[str, ...]) -> None:
    # A price without where, when and from whom cannot be judged, so it is refused outright.
    if v[price_column] is None:
        return
    for column in required:
        if v[column] is None:
            raise _fail(file, line, column, f"required because {price_column} is set")


def _check_instance(file: str, line: int, v: dict[str, Any], gpus: Mapping[str, GpuModel]) -> None:
    if not v["instance_type"].startswith("ecs."):
        raise _fail(file, line, "instance_type", "real ECS types start with 'ecs.'")
    if v["gpu_model"] is not None and v["gpu_model"] not in gpus:
        raise _fail(file, line, "gpu_model", f"{v['gpu_model']!r} is not a gpu_model in gpus.csv")
    is_gpu_family = bool(GPU_FAMILY_RE.match(v["family"]))
    if (v["gpu_count"] > 0) != (v["gpu_model"] is not None or is_gpu_family):
        raise _fail(file, line, "gpu_count", "must be > 0 exactly when gpu_model is set or the family is a GPU family")
    _check_price(file, line, v, "price_cny_per_hour", ("price_region", "price_date", "price_source", "price_confidence"))


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


@functools.lru_cache(maxsize=1)
def _load_default() -> Catalog:
    return _load(CATALOG_DIR)


def load_catalog(directory: pathlib.Path | None = None) -> Catalog:
    """Load and check the catalog from ``directory`` (default: the shipped data, cached).

    Raises ValueError naming the file, line and column of the first malformed cell or broken
    cross-reference.
    """
    if directory is None:
        return _load_default()
    return _load(pathlib.Path(directory))
