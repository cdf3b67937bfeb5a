"""Data path: pick the shared storage tier and capacity that can feed the GPUs, or report the shortfall with numbers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from blueprints.advisor.sizing import GIB, TB
from blueprints.catalog import CnyPrice, price_cny, storage_price_key

# Preference when several tiers are fast enough and none has a known price: Extreme NAS first because the
# profile can encrypt it, CPFS only when it is needed (CPFS cannot be encrypted through the NAS API; profile.py).
PREFERENCE = (
    ("extreme_nas", "standard"),
    ("extreme_nas", "advance"),
    ("cpfs", "advance_100"),
    ("cpfs", "advance_200"),
    ("nas", "capacity"),
    ("nas", "performance"),
)
# The profile's capacity bounds (blueprints/profile/model.py Storage.capacity_gib: 100–1,048,576 GiB).
PROFILE_MIN_GIB = 100
PROFILE_MAX_GIB = 1_048_576


@dataclass(frozen=True)
class StorageChoice:
    """A storage tier and capacity for the job, the rate it needs and the rate the tier gives."""

    kind: str
    tier: str
    profile_tier: str
    capacity_gib: int
    throughput_mb_s: float | None
    needed_mb_s: float | None
    price: CnyPrice
    shortfall_mb_s: float | None

    @property
    def price_per_gib_month(self) -> float | None:
        """CNY per GiB-month (official, third-party or converted through the catalog's cited rate); None = unknown."""
        return self.price.cny

    @property
    def price_currency(self) -> str | None:
        """``CNY`` when the price is known (every catalog price is read in CNY), else None."""
        return None if self.price.cny is None else "CNY"

    @property
    def price_per_month(self) -> float | None:
        """Capacity × unit price, CNY per month (None when unknown)."""
        return None if self.price.cny is None else self.price.cny * self.capacity_gib


def _bounds(tier: Any) -> tuple[int, int]:
    low = getattr(tier, "min_capacity_gib", None) or PROFILE_MIN_GIB
    high = getattr(tier, "max_capacity_gib", None) or PROFILE_MAX_GIB
    return max(int(low), PROFILE_MIN_GIB), min(int(high), PROFILE_MAX_GIB)


def _smallest_capacity(tier: Any, start: int, high: int, needed: float) -> int | None:
    """Smallest capacity ≥ start whose throughput reaches ``needed`` (throughput grows with capacity), or None."""
    top = tier.throughput_mb_s(high)
    if top is None or top < needed:
        return None
    if (tier.throughput_mb_s(start) or 0.0) >= needed:
        return start
    lo, hi = start, high  # throughput(lo) < needed ≤ throughput(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (tier.throughput_mb_s(mid) or 0.0) >= needed:
            hi = mid
        else:
            lo = mid
    return hi


def dataset_capacity_gib(dataset_tb: float | None) -> int:
    """Capacity that holds the dataset, GiB = ceil(TB × 10^12 ÷ 2^30), at least the profile minimum."""
    if dataset_tb is None:
        return PROFILE_MIN_GIB
    return max(PROFILE_MIN_GIB, math.ceil(dataset_tb * TB / GIB))


def choose_storage(catalog: Any, needed_mb_s: float | None, dataset_tb: float | None, region: str) -> StorageChoice:
    """Cheapest known-price tier (else the first in PREFERENCE) that holds the dataset and reaches ``needed_mb_s``.

    Capacity is raised above the dataset size when a tier's throughput grows with capacity (CPFS, Extreme NAS).
    When no tier is fast enough, the fastest tier at its fastest capacity is returned with ``shortfall_mb_s`` set.
    Tiers whose throughput is unknown cannot be checked and are used only when nothing else is known.
    """
    need = needed_mb_s or 0.0
    base = dataset_capacity_gib(dataset_tb)
    fits: list[tuple[tuple[Any, ...], StorageChoice]] = []
    fastest: tuple[float, int, StorageChoice] | None = None
    for rank, (kind, tier_name) in enumerate(PREFERENCE):
        try:
            tier = catalog.storage_tier(kind, tier_name)
        except KeyError:
            continue
        low, high = _bounds(tier)
        start = max(base, low)
        if start > high:
            continue
        price = price_cny(catalog, *storage_price_key(tier), region)
        capacity = _smallest_capacity(tier, start, high, need)
        # The profile names a tier as the NAS API does (storage_type: Performance, advance_200, …).
        profile_tier = tier.storage_type or tier_name
        if capacity is not None:
            choice = StorageChoice(
                kind, tier_name, profile_tier, capacity, tier.throughput_mb_s(capacity), needed_mb_s, price, None
            )
            # Known CNY prices first, cheapest first; unknown prices after, by preference.
            key = (0 if price.cny is not None else 1, (price.cny or 0.0) * capacity, rank)
            fits.append((key, choice))
            continue
        top = tier.throughput_mb_s(high)
        if top is not None:
            capacity_top = _smallest_capacity(tier, start, high, top) or high
            if fastest is None or top > fastest[0]:
                fastest = (
                    top,
                    rank,
                    StorageChoice(kind, tier_name, profile_tier, capacity_top, top, needed_mb_s, price, None),
                )
    if fits:
        return min(fits, key=lambda item: item[0])[1]
    if fastest is not None:
        top, _, choice = fastest
        return StorageChoice(
            choice.kind,
            choice.tier,
            choice.profile_tier,
            choice.capacity_gib,
            top,
            needed_mb_s,
            choice.price,
            need - top,
        )
    raise LookupError("the catalog has no storage tier with a known throughput")
