"""The catalog's GPU software: ``gpu_software.csv`` (per-family driver, CUDA, NCCL, Fabric Manager pins),
``gpu_driver_minimums.csv`` (the oldest driver each GPU architecture runs on) and the images that ship the stack
(``images.csv`` rows with ``families``). Loading checks them against each other; errors name file, line, column."""

from __future__ import annotations

import pathlib
import re
from typing import Any, Mapping

from blueprints.catalog.records import DriverMinimum, GpuSoftware, Image, InstanceType
from blueprints.catalog.schema import DRIVER_MINIMUM_SCHEMA, GPU_SOFTWARE_SCHEMA, IMAGE_SCHEMA, read_rows

__all__ = ["driver_key", "load_driver_minimums", "load_gpu_software", "load_images", "minimum_for"]


def _fail(file: str, line: int, column: str, message: str) -> ValueError:
    return ValueError(f"{file} line {line}, column {column!r}: {message}")


def driver_key(version: str) -> tuple[int, ...]:
    """A dotted driver version as numbers, so 570.26 sorts after 550.127.08 (the schema allows digits only)."""
    return tuple(int(part) for part in version.split("."))


def load_driver_minimums(directory: pathlib.Path) -> tuple[tuple[int, DriverMinimum], ...]:
    """``gpu_driver_minimums.csv`` rows with their lines; a GPU model or family in two rows is refused."""
    rows = read_rows(directory / "gpu_driver_minimums.csv", DRIVER_MINIMUM_SCHEMA)
    seen: dict[str, int] = {}
    for line, v in rows:
        if not v["gpu_models"] and not v["families"]:
            raise _fail("gpu_driver_minimums.csv", line, "families", "name at least one GPU model or family")
        for column in ("gpu_models", "families"):
            for name in v[column]:
                if name in seen:
                    raise _fail("gpu_driver_minimums.csv", line, column, f"{name!r} is already on line {seen[name]}")
                seen[name] = line
    return tuple((line, DriverMinimum(**v)) for line, v in rows)


def minimum_for(
    family: str, gpu_models: set[str], minimums: tuple[tuple[int, DriverMinimum], ...]
) -> tuple[int, DriverMinimum] | None:
    """The row (with its line) that covers ``family``: by family name first, else by one of its GPU models."""
    for line, row in minimums:
        if family in row.families:
            return line, row
    for line, row in minimums:
        if gpu_models & set(row.gpu_models):
            return line, row
    return None


def _check_software_row(line: int, v: dict[str, Any]) -> None:
    file = "gpu_software.csv"
    if (v["method"] == "driver_image") != bool(v["image_name_regex"]):
        raise _fail(file, line, "image_name_regex", "is required for method driver_image and only for it")
    if bool(v["pytorch_version"]) != bool(v["pytorch_index_url"]):
        raise _fail(
            file,
            line,
            "pytorch_index_url",
            "pytorch_version and pytorch_index_url go together (both empty: nodes get no PyTorch)",
        )
    if v["pytorch_wheel_sha256"] and not v["pytorch_version"]:
        raise _fail(file, line, "pytorch_wheel_sha256", "needs pytorch_version (the wheels these digests check)")
    if v["fabric_manager_min_gpus"] and not v["cuda_repo_key_fingerprint"]:
        raise _fail(
            file,
            line,
            "cuda_repo_key_fingerprint",
            "is required with fabric_manager_min_gpus (nodes check NVIDIA's CUDA keyring against it)",
        )
    # NVIDIA Fabric Manager runs only at exactly the driver's version (Fabric Manager user guide), so its pin is
    # the driver's; a stray pin on a family without NVSwitch would never be read.
    if bool(v["fabric_manager_min_gpus"]) != bool(v["fabric_manager_version"]):
        raise _fail(file, line, "fabric_manager_version", "is set exactly when fabric_manager_min_gpus is")
    if v["fabric_manager_version"] and v["fabric_manager_version"] != v["driver_version"]:
        raise _fail(
            file,
            line,
            "fabric_manager_version",
            f"{v['fabric_manager_version']} must equal driver_version {v['driver_version']} "
            "(Fabric Manager runs only at the driver's exact version)",
        )


def load_gpu_software(
    directory: pathlib.Path,
    instance_types: Mapping[str, InstanceType],
    minimums: tuple[tuple[int, DriverMinimum], ...],
) -> dict[str, GpuSoftware]:
    """``gpu_software.csv`` by family: every GPU family has a row, and no family is pinned below its GPU's minimum."""
    rows = read_rows(directory / "gpu_software.csv", GPU_SOFTWARE_SCHEMA)
    seen: dict[str, int] = {}
    for line, v in rows:
        if v["family"] in seen:
            raise _fail(
                "gpu_software.csv", line, "family", f"duplicate {v['family']!r} (first on line {seen[v['family']]})"
            )
        seen[v["family"]] = line
        models = {it.gpu_model for it in instance_types.values() if it.family == v["family"] and it.gpu_model}
        found = minimum_for(v["family"], models, minimums)
        if found is not None:
            min_line, row = found
            if driver_key(v["driver_version"]) < driver_key(row.min_driver_version):
                raise _fail(
                    "gpu_software.csv",
                    line,
                    "driver_version",
                    f"{v['driver_version']} is older than {row.min_driver_version}, the oldest driver "
                    f"{row.architecture} GPUs run on (gpu_driver_minimums.csv line {min_line}: CUDA "
                    f"{row.first_cuda} is the first to support them); pin {row.min_driver_version} or newer",
                )
        _check_software_row(line, v)
    software = {v["family"]: GpuSoftware(**v) for _, v in rows}
    missing = sorted({it.family for it in instance_types.values() if it.is_gpu} - set(software))
    if missing:
        raise ValueError(f"gpu_software.csv: no row for GPU families {missing}; every GPU family needs its driver path")
    return software


def load_images(
    directory: pathlib.Path,
    software: Mapping[str, GpuSoftware],
    instance_types: Mapping[str, InstanceType],
    minimums: tuple[tuple[int, DriverMinimum], ...],
) -> list[Image]:
    """``images.csv``: each pattern matches its ID; a GPU image names GPU families with a driver path, and the
    driver it ships, which must not be older than those families' GPUs need."""
    rows = read_rows(directory / "images.csv", IMAGE_SCHEMA)
    for line, v in rows:
        try:
            re.compile(v["name_regex"])
        except re.error as exc:
            raise _fail("images.csv", line, "name_regex", f"not a valid regex: {exc}") from None
        if not re.match(v["name_regex"], v["image_id"]):
            raise _fail(
                "images.csv", line, "image_id", f"{v['image_id']!r} does not match name_regex {v['name_regex']!r}"
            )
        if bool(v["families"]) != bool(v["driver_version"]):
            raise _fail(
                "images.csv",
                line,
                "driver_version",
                "is set exactly when families is (the driver a GPU image ships; empty for a plain OS image)",
            )
        for family in v["families"]:
            if family not in software:
                raise _fail("images.csv", line, "families", f"{family!r} is not a family in gpu_software.csv")
            models = {it.gpu_model for it in instance_types.values() if it.family == family and it.gpu_model}
            found = minimum_for(family, models, minimums)
            if found and driver_key(v["driver_version"]) < driver_key(found[1].min_driver_version):
                raise _fail(
                    "images.csv",
                    line,
                    "driver_version",
                    f"{v['driver_version']} is older than {found[1].min_driver_version}, the oldest driver "
                    f"{family}'s {found[1].architecture} GPUs run on (gpu_driver_minimums.csv line {found[0]})",
                )
    return [Image(**v) for _, v in rows]
