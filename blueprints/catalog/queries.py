"""The ``Catalog``: all tables, read-only, and the lookups the planner, cost model and mocks use."""

from __future__ import annotations

import difflib
import re
from types import MappingProxyType
from typing import Iterable, Mapping

from blueprints.catalog.kubernetes import KubernetesFacts
from blueprints.catalog.lingjun import LingjunNodeType
from blueprints.catalog.records import (
    Alias,
    DiskLimits,
    DriverMinimum,
    GpuModel,
    GpuSoftware,
    Image,
    InstancePrice,
    InstanceType,
    InstanceZones,
    LocalDisk,
    PriceRow,
    Region,
    StorageTier,
)

__all__ = ["Catalog"]


class Catalog:
    """All catalog tables, read-only, with lookups used by the planner, cost model and mocks."""

    version: str
    instance_types: Mapping[str, InstanceType]
    gpus: Mapping[str, GpuModel]
    regions: Mapping[str, Region]
    storage: tuple[StorageTier, ...]
    aliases: Mapping[str, Alias]
    images: tuple[Image, ...]
    instance_zones: tuple[InstanceZones, ...]
    gpu_software: Mapping[str, GpuSoftware]
    driver_minimums: tuple[DriverMinimum, ...]
    disks: tuple[DiskLimits, ...]
    local_disks: Mapping[str, LocalDisk]
    prices: tuple[PriceRow, ...]
    instance_prices: tuple[InstancePrice, ...]
    kubernetes: KubernetesFacts

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
        instance_zones: Iterable[InstanceZones] = (),
        gpu_software: Mapping[str, GpuSoftware] | None = None,
        driver_minimums: Iterable[DriverMinimum] = (),
        disks: Iterable[DiskLimits] = (),
        local_disks: Mapping[str, LocalDisk] | None = None,
        prices: Iterable[PriceRow] = (),
        instance_prices: Iterable[InstancePrice] = (),
        kubernetes: KubernetesFacts | None = None,
        lingjun: Mapping[str, LingjunNodeType] | None = None,
    ) -> None:
        self.version = version
        # Read-only views: the default catalog is cached and shared, so nobody may mutate it.
        self.instance_types = MappingProxyType(dict(instance_types))
        self.gpus = MappingProxyType(dict(gpus))
        self.regions = MappingProxyType(dict(regions))
        self.storage = tuple(storage)
        self.aliases = MappingProxyType(dict(aliases))
        self.images = tuple(images)
        self.instance_zones = tuple(instance_zones)
        self.gpu_software = MappingProxyType(dict(gpu_software or {}))
        self.driver_minimums = tuple(driver_minimums)
        self.disks = tuple(disks)
        self.local_disks = MappingProxyType(dict(local_disks or {}))
        self.prices = tuple(prices)
        self.instance_prices = tuple(instance_prices)
        # ACK versions, GPU node-pool families and add-ons
        # (catalog/kubernetes.py); empty for a catalog built without them.
        self.kubernetes = kubernetes or KubernetesFacts()
        # Lingjun (eflo) machine types (catalog/lingjun.py): not ECS types, so apart from instance_types.
        self.lingjun = MappingProxyType(dict(lingjun or {}))
        self._zone_rows = MappingProxyType({(z.instance_type, z.region): z for z in self.instance_zones})

    def price(self, item: str, tier: str | None, region: str) -> tuple[PriceRow, bool] | None:
        """The ``prices.csv`` row for ``item``/``tier`` in ``region``, and whether its scope covers the region.

        A row naming the region wins over ``cn-mainland``, which wins over ``*``; otherwise the first row of another
        scope is returned with False, so the caller can say the price was quoted for elsewhere. None: no row at all.
        """
        rows = [p for p in self.prices if p.item == item and p.tier == tier]
        for scope_rank in (
            lambda r: region in r.region_scope,
            lambda r: "*" not in r.region_scope and r.applies_to(region),
            lambda r: r.applies_to(region),
        ):
            for row in rows:
                if scope_rank(row):
                    return row, True
        return (rows[0], False) if rows else None

    def prices_of(self, instance_type: str, billing: str = "payg") -> tuple[InstancePrice, ...]:
        """The ``instance_prices.csv`` rows of ``instance_type`` for ``billing``, in file order; () = never priced.

        Which of them a plan uses is ``pricing.instance_price``'s choice (the plan's region, else its market).
        """
        return tuple(p for p in self.instance_prices if p.instance_type == instance_type and p.billing == billing)

    def __repr__(self) -> str:
        return (
            f"Catalog(version={self.version!r}, instance_types={len(self.instance_types)}, "
            f"gpus={len(self.gpus)}, regions={len(self.regions)}, storage={len(self.storage)}, "
            f"aliases={len(self.aliases)}, images={len(self.images)}, instance_zones={len(self.instance_zones)})"
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

    def zone_row(self, instance_type: str, region: str) -> InstanceZones | None:
        """The ``instance_zones.csv`` row that speaks for ``instance_type`` in ``region``; None when no source does.

        A row for the exact type wins over a row for its family. A row may name the region without its zones
        (``zones`` empty: the source says the type is sold there, not in which zones).
        """
        found = self._zone_rows.get((instance_type, region))
        if found is None:
            it = self.instance_types.get(instance_type)
            if it is not None:
                found = self._zone_rows.get((it.family, region))
        return found

    def zones_offering(self, instance_type: str, region: str) -> tuple[str, ...] | None:
        """Zones of ``region`` that offer ``instance_type``; None when the catalog does not know (not "nowhere").

        None too when a source names the region but not its zones (see ``zone_row``).
        """
        found = self.zone_row(instance_type, region)
        return found.zones if found is not None and found.zones else None

    def known_regions(self, instance: InstanceType) -> tuple[str, ...]:
        """Regions some source names for the type: its ``regions`` cell plus its ``instance_zones.csv`` regions.

        () = no source names one. A zone row says where the type is sold, never where it is not: only the
        ``regions`` cell (``sold_only_in``) is a complete list.
        """
        regions = list(instance.regions)
        for z in self.instance_zones:
            if z.instance_type in (instance.instance_type, instance.family) and z.region not in regions:
                regions.append(z.region)
        return tuple(regions)

    def sold_only_in(self, instance: InstanceType) -> tuple[str, ...]:
        """The complete list of regions selling the type (its ``regions`` cell); () = not known to be limited.

        ``aitrain zones --write`` fills it from the regions it asked; a document naming one region where a type is
        sold (a dated price listing, say) goes to ``instance_zones.csv`` instead and never hides the type elsewhere.
        """
        return instance.regions

    def software_for(self, instance: InstanceType) -> GpuSoftware | None:
        """How ``instance`` gets its GPU driver (by family); None for a CPU type or a family without a row."""
        return self.gpu_software.get(instance.family) if instance.is_gpu else None

    def disk_limits(self, category: str, performance_level: str) -> DiskLimits | None:
        """Size range of a cloud-disk category and level; None when the catalog does not record it."""
        return next(
            (d for d in self.disks if d.category == category and d.performance_level == performance_level), None
        )

    def local_nvme_gib(self, instance: InstanceType) -> int:
        """Local NVMe GiB that comes with ``instance`` (0 when it has none or the catalog records none)."""
        found = self.local_disks.get(instance.instance_type)
        return found.local_nvme_gib if found else 0

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
        """The plain OS image to use in ``region`` (optionally for ``os``): a
        region row beats a ``*`` row; file order is preference."""
        matching = [i for i in self.images if not i.has_gpu_stack and (os is None or i.os.lower() == os.lower())]
        for wanted in (region, "*"):
            for image in matching:
                if image.region == wanted:
                    return image
        return None

    def gpu_image_for(self, region: str, family: str) -> Image | None:
        """The image with the NVIDIA stack preinstalled for ``family`` in ``region`` (a region row beats ``*``), or
        None where the catalog names none: those nodes run the install script (or boot an image `aitrain bake` made)."""
        for wanted in (region, "*"):
            for image in self.images:
                if image.has_gpu_stack and family in image.families and image.region == wanted:
                    return image
        return None

    def image_regions(self, image_id: str) -> tuple[tuple[str, ...], Image] | None:
        """The regions the catalog records an image for, when ``image_id`` matches one of its patterns (``*``: all);
        None for an ID no pattern matches (a custom ``m-…`` image: its region is not known offline)."""
        for image in self.images:
            if re.match(image.name_regex, image_id):
                regions = tuple(i.region for i in self.images if i.name_regex == image.name_regex)
                return regions, image
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
        ``region`` drops rows whose complete region list (``sold_only_in``, the ``regions`` cell) leaves it
        out, and keeps rows with no such list (unknown is not "no"; a zone row naming another region is not
        a "no" either).
        """
        out = []
        for it in self.instance_types.values():
            if gpu_model is not None and not _gpu_matches(it.gpu_model, gpu_model):
                continue
            if min_gpus is not None and it.gpu_count < min_gpus:
                continue
            if max_gpus is not None and it.gpu_count > max_gpus:
                continue
            if region is not None:
                only = self.sold_only_in(it)
                if only and region not in only:
                    continue
            if priced_only and not self.prices_of(it.instance_type):
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
