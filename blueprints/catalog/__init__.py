"""The instance / GPU / storage catalog: versioned CSV data with sources, and its loader.

The data lives in ``data/*.csv`` (documented column by column in ``README.md``). The package is
split by job: ``records`` (one frozen dataclass per row kind), ``schema`` (cell parsers and the
reader of one CSV), ``loader`` (cross-file checks and ``load_catalog``) and ``queries`` (the
``Catalog`` and its lookups). Pure Python on purpose: the planner, the cost model and the offline
Pulumi mocks all read it, and none of them may need ``pulumi`` to be importable.
"""

from __future__ import annotations

from blueprints.catalog.loader import (
    CATALOG_DIR,
    CATALOG_DIR_ENV,
    GPU_FAMILY_RE,
    CatalogError,
    catalog_directory,
    load_catalog,
)
from blueprints.catalog.pricing import CnyPrice, instance_price, price_cny, storage_price_key
from blueprints.catalog.queries import Catalog
from blueprints.catalog.records import (
    FABRIC_LINKS,
    PRECISIONS,
    Alias,
    DiskLimits,
    GpuModel,
    GpuSoftware,
    Image,
    InstancePrice,
    InstanceType,
    LocalDisk,
    PriceRow,
    Region,
    StorageTier,
)
from blueprints.catalog.schema import PRICE_CONFIDENCES, PRICE_STATUSES, RDMA_KINDS

__all__ = [
    "CATALOG_DIR",
    "CATALOG_DIR_ENV",
    "FABRIC_LINKS",
    "GPU_FAMILY_RE",
    "PRECISIONS",
    "PRICE_CONFIDENCES",
    "PRICE_STATUSES",
    "RDMA_KINDS",
    "Alias",
    "Catalog",
    "CatalogError",
    "CnyPrice",
    "DiskLimits",
    "GpuModel",
    "GpuSoftware",
    "Image",
    "InstancePrice",
    "InstanceType",
    "LocalDisk",
    "PriceRow",
    "Region",
    "StorageTier",
    "catalog_directory",
    "instance_price",
    "load_catalog",
    "price_cny",
    "storage_price_key",
]
