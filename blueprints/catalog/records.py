"""The catalog's records: one frozen dataclass per row kind of ``data/*.csv``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FABRIC_LINKS",
    "GPU_SOFTWARE_METHODS",
    "PRECISIONS",
    "Alias",
    "DiskLimits",
    "GpuModel",
    "GpuSoftware",
    "Image",
    "InstanceType",
    "InstanceZones",
    "LocalDisk",
    "PriceRow",
    "Region",
    "StorageTier",
]

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
"""Precisions that ``GpuModel.peak_tflops`` understands (dense peaks)."""


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
        value: float | None = getattr(self, f"{precision}_tflops")
        return value


@dataclass(frozen=True)
class InstanceType:
    """One real ECS instance type with its specs and sources (its prices are in ``instance_prices.csv``)."""

    instance_type: str
    family: str
    vcpus: int
    memory_gib: float
    gpu_model: str | None
    gpu_model_confidence: str | None  # "stated" by the source, or "inferred" from its documented peak and memory
    gpu_count: int
    gpu_memory_gib: float | None
    network_gbps: float | None
    rdma: str | None
    rdma_gbps: float | None  # RDMA (eRDMA or RoCE) bandwidth per node, Gbit/s; None = not published
    rdma_nics: int | None  # ERIs (eRDMA NICs) per instance as PAI's eRDMA page states; None = not published
    nvlink: bool | None
    spec_source: str
    spec_date: str
    regions: tuple[str, ...]
    notes: str

    @property
    def is_gpu(self) -> bool:
        """True when the type has at least one GPU."""
        return self.gpu_count > 0

    @property
    def gpu_inferred(self) -> bool:
        """True when the GPU model is inferred from the documented peak and memory, not named by the source."""
        return self.gpu_model_confidence == "inferred"

    @property
    def fabric_link(self) -> str:
        """The link NCCL uses between nodes: ``erdma``, ``roce`` or ``tcp`` (no RDMA, or not known to have it).

        The one answer the advisor's scaling model and the plan's node bootstrap both read.
        """
        return self.rdma if self.rdma in ("erdma", "roce") else "tcp"


@dataclass(frozen=True)
class Region:
    """A region and the zone IDs known for it."""

    region_id: str
    name: str
    zones: tuple[str, ...]
    source: str
    source_date: str


@dataclass(frozen=True)
class InstanceZones:
    """The zones of one region that offer an instance type, or
    every type of a family (``instance_type`` = family name)."""

    instance_type: str
    region: str
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
    # GPU families the image ships the NVIDIA stack for (driver, CUDA) in this region; empty: a plain OS image.
    families: tuple[str, ...]
    driver_version: str | None
    cuda_version: str | None
    source: str
    source_date: str

    @property
    def has_gpu_stack(self) -> bool:
        """True for an image with the NVIDIA driver preinstalled (nodes skip the install script and its reboot)."""
        return bool(self.families)


GPU_SOFTWARE_METHODS = ("driver_image", "install_script")
"""How a GPU family gets its driver: an image that ships it, or Alibaba's auto-install user-data script."""

FABRIC_LINKS = ("erdma", "roce", "tcp")
"""The inter-node links NCCL can use, as ``InstanceType.fabric_link`` names them."""


@dataclass(frozen=True)
class GpuSoftware:
    """How one GPU family gets its NVIDIA driver, CUDA and cuDNN, from how
    many GPUs it needs Fabric Manager, and which PyTorch runs on it."""

    family: str
    method: str
    image_name_regex: str | None
    driver_version: str
    cuda_version: str
    cudnn_version: str | None
    nccl_version: str | None  # the NCCL the PyTorch wheels bring (nodes use no other)
    fabric_manager_min_gpus: int | None
    fabric_manager_version: str | None  # exactly driver_version wherever Fabric Manager is used
    pytorch_version: str | None
    pytorch_index_url: str | None
    pytorch_wheel_sha256: tuple[str, ...]
    cuda_repo_key_fingerprint: str | None
    source: str
    source_date: str
    notes: str

    def needs_fabric_manager(self, instance: InstanceType) -> bool:
        """True when ``instance`` has enough GPUs to sit on the family's NVSwitch baseboard."""
        return self.fabric_manager_min_gpus is not None and instance.gpu_count >= self.fabric_manager_min_gpus


@dataclass(frozen=True)
class DriverMinimum:
    """The oldest NVIDIA driver a GPU architecture runs on (the driver of the first CUDA that compiles for it)."""

    architecture: str
    gpu_models: tuple[str, ...]
    families: tuple[str, ...]
    min_driver_version: str
    first_cuda: str
    source: str
    source_date: str
    notes: str


@dataclass(frozen=True)
class DiskLimits:
    """Size range and throughput cap of one cloud-disk category and performance level."""

    category: str
    performance_level: str
    min_gib: int
    max_gib: int
    max_mb_s: float | None
    source: str
    source_date: str


@dataclass(frozen=True)
class LocalDisk:
    """Local NVMe storage that comes with an instance type."""

    instance_type: str
    local_nvme_gib: int
    source: str
    source_date: str


@dataclass(frozen=True)
class PriceRow:
    """One priced item of ``prices.csv`` (an amount per unit in CNY or USD; None = unknown) with its source."""

    item: str
    tier: str | None
    region_scope: tuple[str, ...]
    amount: float | None
    currency: str
    unit: str
    status: str
    source: str
    date: str
    notes: str

    def applies_to(self, region: str) -> bool:
        """Whether the row's scope names ``region`` (``*``: every region; ``cn-mainland``: cn-* but Hong Kong)."""
        if "*" in self.region_scope or region in self.region_scope:
            return True
        return "cn-mainland" in self.region_scope and region.startswith("cn-") and region != "cn-hongkong"


@dataclass(frozen=True)
class InstancePrice:
    """One row of ``instance_prices.csv``: what ``instance_type`` costs per hour in ``region`` under ``billing``,
    in the currency the source quoted (USD is converted through ``prices.csv`` ``usd_cny`` when used), with its
    date, source and confidence (high: Alibaba's own answer; medium: a dated copy of Alibaba's price; low: an
    approximation)."""

    instance_type: str
    region: str
    billing: str
    price_per_hour: float
    currency: str
    date: str
    source: str
    confidence: str
    notes: str
