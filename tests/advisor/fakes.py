"""A small hand-made catalog so selection tests have stable, hand-checkable numbers (real prices may change)."""

from __future__ import annotations

import dataclasses

from blueprints.catalog import Catalog, GpuModel, InstancePrice, InstanceType, Region, StorageTier

A100 = GpuModel("A100-SXM4-80GB", 80, "HBM2e", 2039, 19.5, 156, 312, 312, None, 600, 400, "test", "2026-01-01")
V100 = GpuModel("V100-SXM2-32GB", 32, "HBM2", 900, 15.7, None, 125, None, None, 300, 300, "test", "2026-01-01")


def instance(
    name: str,
    gpu: GpuModel | None,
    count: int,
    network: float | None,
    nvlink: bool | None = True,
    rdma: str | None = "none",
    rdma_gbps: float | None = None,
) -> InstanceType:
    """A GPU instance type with only the fields the advisor reads set to meaningful values (prices: ``PRICES``)."""
    return InstanceType(
        instance_type=name,
        family=name.split(".")[1],
        vcpus=8 * count,
        memory_gib=64.0 * count,
        gpu_model=gpu.gpu_model if gpu else None,
        gpu_model_confidence="stated" if gpu else None,
        gpu_count=count,
        gpu_memory_gib=gpu.memory_gib if gpu else 80.0,
        network_gbps=network,
        rdma=rdma,
        rdma_gbps=rdma_gbps,
        rdma_nics=None,
        nvlink=nvlink,
        spec_source="test",
        spec_date="2026-01-01",
        regions=(),
        notes="",
    )


def storage() -> list[StorageTier]:
    """Extreme NAS standard (step table, USD price) and CPFS advance_200 (200 MB/s per TiB, capped at 45,000)."""
    common = dict(
        file_system_type=None, storage_type=None, protocol_type=None, source="test", source_date="2026-01-01", notes=""
    )
    nas = StorageTier(
        kind="extreme_nas",
        tier="standard",
        min_capacity_gib=100,
        max_capacity_gib=262144,
        throughput_mb_s_per_tib=None,
        throughput_mb_s_max=1200,
        throughput_steps=((100, 150), (500, 300), (2048, 600), (4096, 900), (8192, 1200)),
        **common,
    )
    cpfs = StorageTier(
        kind="cpfs",
        tier="advance_200",
        min_capacity_gib=None,
        max_capacity_gib=None,
        throughput_mb_s_per_tib=200,
        throughput_mb_s_max=45000,
        throughput_steps=(),
        **common,
    )
    return [nas, cpfs]


def fake_catalog(sold_in: dict[str, tuple[str, ...]] | None = None) -> Catalog:
    """ecs.a8 (8 × A100, ¥240/h = ¥30/GPU-h, 64 Gbit/s TCP), ecs.a1 (1 × A100,
    ¥40/h, 8 Gbit/s), ecs.v8 (8 × V100, ¥160/h), ecs.x8 (8 × A100, no price).

    ``sold_in`` gives a type its known regions (by default none is known).
    """
    types = [
        instance("ecs.a8.32xlarge", A100, 8, 64.0),
        instance("ecs.a1.4xlarge", A100, 1, 8.0, nvlink=None),
        instance("ecs.v8.24xlarge", V100, 8, 32.0),
        instance("ecs.x8.32xlarge", A100, 8, 64.0),
    ]
    types = [dataclasses.replace(t, regions=(sold_in or {}).get(t.instance_type, ())) for t in types]
    return Catalog(
        version="test",
        instance_types={t.instance_type: t for t in types},
        gpus={g.gpu_model: g for g in (A100, V100)},
        regions={"cn-shanghai": Region("cn-shanghai", "China (Shanghai)", ("cn-shanghai-a",), "test", "2026-01-01")},
        storage=storage(),
        aliases={},
        images=(),
        instance_prices=[price(name, cny) for name, cny in PRICES.items()],
    )


PRICES = {"ecs.a8.32xlarge": 240.0, "ecs.a1.4xlarge": 40.0, "ecs.v8.24xlarge": 160.0}
"""Pay-as-you-go CNY per hour in cn-shanghai of the fake types (ecs.x8 has none)."""


def price(name: str, cny: float, region: str = "cn-shanghai") -> InstancePrice:
    """A medium-confidence pay-as-you-go row of ``instance_prices.csv``."""
    return InstancePrice(name, region, "payg", cny, "CNY", "2023-06", "test", "medium", "")
