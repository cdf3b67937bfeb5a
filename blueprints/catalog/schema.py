"""Reading one catalog CSV: the column schema of each file (its cells parsed by ``catalog.cells``) and a reader
that names file, line and column."""

from __future__ import annotations

import csv
import pathlib
from typing import Any, Callable

from blueprints.catalog.cells import (
    _CellError,
    _choice,
    _date,
    _float_pos,
    _int_pos,
    _int_pos_or_zero,
    _list,
    _opt_bool,
    _opt_choice,
    _opt_date,
    _opt_fingerprint,
    _opt_float,
    _opt_index_url,
    _opt_text,
    _opt_version,
    _sha256_list,
    _steps,
    _text,
    _version,
)

RDMA_KINDS = ("none", "erdma", "roce")
"""Allowed non-empty values of ``instance_types.csv:rdma``."""
GPU_MODEL_CONFIDENCES = ("stated", "inferred")
"""Allowed values of ``instance_types.csv:gpu_model_confidence``: the source names the GPU, or its documented peak
and memory identify the class (see README.md, "inferred")."""

PRICE_CONFIDENCES = ("high", "medium", "low")
"""Allowed values of ``instance_prices.csv:confidence``."""
PRICE_CURRENCIES = ("CNY", "USD")
# prices.csv: an official list price, a third party's figure, a figure someone converted (say how in notes), or none.
PRICE_STATUSES = ("official", "third-party", "converted", "unknown")
BILLINGS = ("payg",)
"""Allowed values of ``instance_prices.csv:billing``: pay-as-you-go, the basis of every cost the plan shows."""

Schema = dict[str, Callable[[str], Any]]
"""Column name → cell parser, in header order."""

INSTANCE_SCHEMA: Schema = {
    "instance_type": _text,
    "family": _text,
    "vcpus": _int_pos,
    "memory_gib": _float_pos,
    "gpu_model": _opt_text,
    "gpu_model_confidence": _opt_choice(GPU_MODEL_CONFIDENCES),
    "gpu_count": _int_pos_or_zero,
    "gpu_memory_gib": _opt_float,
    "network_gbps": _opt_float,
    "rdma": _opt_choice(RDMA_KINDS),
    "rdma_gbps": _opt_float,
    "rdma_nics": lambda raw: _int_pos(raw) if raw else None,
    "nvlink": _opt_bool,
    "spec_source": _text,
    "spec_date": _date,
    "regions": _list,
    "notes": str,
}

GPU_SCHEMA: Schema = {
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

REGION_SCHEMA: Schema = {
    "region_id": _text,
    "name": _text,
    "zones": _list,
    "source": _text,
    "source_date": _date,
}

STORAGE_SCHEMA: Schema = {
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
    "source": _text,
    "source_date": _date,
    "notes": str,
}

ALIAS_SCHEMA: Schema = {
    "alias": _text,
    "article_description": _text,
    "gpu_model": _opt_text,
    "gpu_total": _int_pos,
    "instance_type": _text,
    "nodes": _int_pos,
    "sentence": _text,
    "source": _text,
}

IMAGE_SCHEMA: Schema = {
    "region": _text,
    "os": _text,
    "name_regex": _text,
    "image_id": _text,
    "families": _list,
    "driver_version": _opt_version,
    "cuda_version": _opt_version,
    "source": _text,
    "source_date": _date,
}


DRIVER_MINIMUM_SCHEMA: Schema = {
    "architecture": _text,
    "gpu_models": _list,
    "families": _list,
    "min_driver_version": _version,
    "first_cuda": _version,
    "source": _text,
    "source_date": _date,
    "notes": str,
}


def read_rows(path: pathlib.Path, schema: Schema) -> list[tuple[int, dict[str, Any]]]:
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
            raise ValueError(f"{name} line 1: header must be exactly {','.join(expected)} ({detail or 'wrong order'})")
        rows = []
        for cells in reader:
            line = reader.line_num
            if not any(cells):
                continue  # a blank line is harmless; skipping it keeps hand edits forgiving
            if len(cells) < len(expected):
                # Name the first column without a cell: a short row is a dropped cell or comma, and the user must
                # know which column to look at (a column is never optional; empty means unknown).
                raise ValueError(
                    f"{name} line {line}, column {expected[len(cells)]!r}: missing; expected {len(expected)} fields, "
                    f"got {len(cells)} (every column must be present, left empty where unknown)"
                )
            if len(cells) > len(expected):
                raise ValueError(
                    f"{name} line {line}: expected {len(expected)} fields, got {len(cells)} "
                    "(quote a cell that contains a comma)"
                )
            values: dict[str, Any] = {}
            for column, raw in zip(expected, cells, strict=True):
                try:
                    values[column] = schema[column](raw.strip())
                except _CellError as exc:
                    raise ValueError(f"{name} line {line}, column {column!r}: {exc} (got {raw!r})") from None
            rows.append((line, values))
    return rows


def _nonempty_list(raw: str) -> tuple[str, ...]:
    items = _list(_text(raw))
    if len(set(items)) != len(items):
        raise _CellError("must not list a zone twice")
    return items


def _zone_list(raw: str) -> tuple[str, ...]:
    # Empty = the source names the region but not its zones ("region known, zones unknown").
    items = _list(raw)
    if len(set(items)) != len(items):
        raise _CellError("must not list a zone twice")
    return items


ZONES_SCHEMA: Schema = {
    "instance_type": _text,
    "region": _text,
    "zones": _zone_list,
    "source": _text,
    "source_date": _date,
}


GPU_SOFTWARE_SCHEMA: Schema = {
    "family": _text,
    "method": lambda raw: _opt_choice(("driver_image", "install_script"))(_text(raw)),
    "image_name_regex": _opt_text,
    "driver_version": _version,
    "cuda_version": _version,
    "cudnn_version": _opt_version,
    "nccl_version": _opt_version,
    "fabric_manager_min_gpus": lambda raw: _int_pos(raw) if raw else None,
    "fabric_manager_version": _opt_version,
    "pytorch_version": _opt_version,
    "pytorch_index_url": _opt_index_url,
    "pytorch_wheel_sha256": _sha256_list,
    "cuda_repo_key_fingerprint": _opt_fingerprint,
    "source": _text,
    "source_date": _date,
    "notes": str,
}

DISK_SCHEMA: Schema = {
    "category": _text,
    "performance_level": _text,
    "min_gib": _int_pos,
    "max_gib": _int_pos,
    "max_mb_s": _opt_float,
    "source": _text,
    "source_date": _date,
}

LOCAL_DISK_SCHEMA: Schema = {
    "instance_type": _text,
    "local_nvme_gib": _int_pos,
    "source": _text,
    "source_date": _date,
}


PRICE_SCHEMA: Schema = {
    "item": _text,
    "tier": _opt_text,
    "region_scope": _nonempty_list,
    "amount": _opt_float,
    "currency": _choice(PRICE_CURRENCIES),
    "unit": _text,
    "status": _choice(PRICE_STATUSES),
    "source": _text,
    "date": _date,
    "notes": str,
}


def _required(why: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if not raw:
            raise _CellError(f"must not be empty: {why}")
        return raw

    return parse


def _price(raw: str) -> float:
    if not raw:
        raise _CellError("must be a number > 0 (an unknown price has no row: never 0 or empty)")
    return _float_pos(raw)


def _price_date(raw: str) -> str:
    return _date(_required("a price without the day it was read cannot be judged")(raw))


INSTANCE_PRICE_SCHEMA: Schema = {
    "instance_type": _text,
    "region": _text,
    "billing": _choice(BILLINGS),
    "price_per_hour": _price,
    "currency": _choice(PRICE_CURRENCIES),
    "date": _price_date,
    "source": _required("a price needs the page, file or API answer it was read from"),
    "confidence": _choice(PRICE_CONFIDENCES),
    "notes": str,
}

LEGACY_PRICE_SCHEMA: Schema = {
    "price_cny_per_hour": _opt_float,
    "price_region": _opt_text,
    "price_date": _opt_date,
    "price_source": _opt_text,
    "price_confidence": _opt_choice(PRICE_CONFIDENCES),
}
"""The price columns ``instance_types.csv`` had before ``instance_prices.csv``; an older copy may still carry them
(``tools/drop_price_columns.py`` moves them out)."""
