"""``aitrain preflight --choose``: walk the profile's shape, then ``capacity.fallbacks`` in order, against the cloud's
quota and stock, and say which is the first that fits — as explicit settings to pin in the stack config.

Pure: the candidates and what each changes come from the profile and the catalog; whether one fits is the preflight
``Report`` of its own offline plan, which the caller builds (``evaluate``). Nothing here writes or calls anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from blueprints.catalog import instance_price
from blueprints.preflight.checks import SHORT, UNKNOWN
from blueprints.preflight.report import EXIT_OK, Report
from blueprints.profile.capacity import Alternative, Shape

if TYPE_CHECKING:
    from blueprints.catalog import Catalog
    from blueprints.profile.model import ProfileBase

OWN_SHAPE = "the profile's own shape"


@dataclass(frozen=True)
class Candidate:
    """One shape to try: the profile's own (``index`` None) or ``capacity.fallbacks[index]``."""

    index: int | None
    shape: Shape
    # The profile settings that pin this shape (dotted path → value), as `--set` would give them.
    settings: tuple[tuple[str, Any], ...]
    changes: tuple[str, ...]

    @property
    def name(self) -> str:
        """``the profile's own shape`` or ``capacity.fallbacks[1]``."""
        return OWN_SHAPE if self.index is None else f"capacity.fallbacks[{self.index}]"

    def settings_dict(self) -> dict[str, Any]:
        """The pinned settings as a nested mapping to merge into ``aitrain:profile``."""
        out: dict[str, Any] = {}
        for path, value in self.settings:
            node = out
            *parents, leaf = path.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class Tried:
    """A candidate and what the cloud said: its preflight report, or why no plan could be made for it."""

    candidate: Candidate
    report: Report | None
    refused: str | None = None

    @property
    def fits(self) -> bool:
        """Nothing short and every check answered (or accepted by name)."""
        return self.report is not None and self.report.exit_code == EXIT_OK

    def reason(self) -> str:
        """Why it does not fit, in one line (or that it fits)."""
        if self.refused is not None:
            return f"no plan: {self.refused}"
        assert self.report is not None
        if self.fits:
            return "fits: nothing short" + (
                f", {self.report.count(UNKNOWN)} unanswered check(s) accepted" if self.report.count(UNKNOWN) else ""
            )
        short = [c for c in self.report.checks if c.status == SHORT]
        if short:
            return "; ".join(f"{c.subject}: {c.detail}" for c in short)
        blocking = self.report.unanswered(accepted=False)
        return "unanswered, so nothing proves it fits: " + "; ".join(f"{c.subject}: {c.detail}" for c in blocking)


def candidates(profile: "ProfileBase", catalog: "Catalog") -> list[Candidate]:
    """The profile's own shape, then each fallback, with the settings that pin it and what it changes."""
    primary = profile.shape
    nodes = _node_count(profile)
    out = [Candidate(None, primary, (), ("as configured",))]
    for index, alternative in enumerate(profile.capacity.fallbacks):
        shape = primary.with_alternative(alternative)
        if shape == primary:
            continue  # the shape pinned now (an earlier --choose chose it): tried first already
        out.append(
            Candidate(
                index,
                shape,
                _settings(alternative, shape, profile, catalog),
                _changes(primary, shape, profile, catalog, nodes),
            )
        )
    return out


def walk(found: list[Candidate], evaluate: Callable[[Candidate], Tried]) -> list[Tried]:
    """Try each candidate in order and stop at the first that fits (later ones are not asked about)."""
    tried: list[Tried] = []
    for candidate in found:
        tried.append(evaluate(candidate))
        if tried[-1].fits:
            break
    return tried


def _settings(
    alternative: Alternative, shape: Shape, profile: "ProfileBase", catalog: "Catalog"
) -> tuple[tuple[str, Any], ...]:
    """The explicit profile settings for ``shape``: a region change also pins the file system's zone there."""
    out: list[tuple[str, Any]] = []
    if alternative.region is not None and alternative.region != profile.region:
        out.append(("region", shape.region))
        # The old storage.zone is not a zone of the new region: the new file system goes to the compute zone, or to
        # the region's first zone in the catalog, pinned so it never moves afterwards.
        out.append(("storage.zone", shape.zones[0] if shape.zones else catalog.zones(shape.region)[0]))
    if alternative.zone is not None or (alternative.region is not None and alternative.region != profile.region):
        out.append(("network.zones", shape.zones))
    if alternative.instance_type is not None:
        out.append(("compute.instance_type", shape.instance_type))
    if alternative.spot is not None:
        out.append(("cost.spot", shape.spot))
    return tuple(out)


def _changes(primary: Shape, shape: Shape, profile: "ProfileBase", catalog: "Catalog", nodes: int) -> tuple[str, ...]:
    """What moving from ``primary`` to ``shape`` changes: place, price, fabric and time, each in one phrase."""
    out: list[str] = []
    if shape.region != primary.region:
        out.append(
            f"region {primary.region} → {shape.region}: a new network, file system and bucket there; the data in "
            f"{primary.region} does not move"
        )
    elif shape.zones != primary.zones:
        storage = profile.storage_zone
        away = [z for z in shape.zones if z != storage]
        out.append(
            f"compute zone {', '.join(primary.zones) or storage + ' (network.zones empty: the storage zone first)'}"
            f" → {', '.join(shape.zones)}"
            + (
                f" (a new vSwitch; the file system stays in {storage}, reached across zones)"
                if away
                else f" (beside the file system in {storage})"
            )
        )
    out.append(_price_change(primary, shape, catalog, nodes))
    old, new = catalog.instance_types.get(primary.instance_type), catalog.instance_types.get(shape.instance_type)
    if shape.instance_type != primary.instance_type and old is not None and new is not None:
        out.append(f"fabric {_fabric(old)} → {_fabric(new)}")
        out.append(
            f"time: the same {new.gpu_count} × {new.gpu_model} per node; only communication-bound steps can differ "
            "with the fabric"
        )
    if shape.spot != primary.spot:
        out.append(
            "spot: nodes can be reclaimed mid-run (the run resumes from its last checkpoint, so time grows with each "
            "preemption)"
            if shape.spot
            else "pay-as-you-go: no preemption"
        )
    return tuple(out)


def _price_change(primary: Shape, shape: Shape, catalog: "Catalog", nodes: int) -> str:
    """The nodes' hourly price before and after. Spot is capped at the pay-as-you-go price (SpotAsPriceGo) and its
    market price is not in the catalog, so a spot side reads "at most"."""

    def hourly(s: Shape) -> tuple[float | None, str]:
        price = instance_price(catalog, s.instance_type, s.region)
        return (None if price.cny is None else price.cny * nodes), price.source

    def text(s: Shape, amount: float) -> str:
        return f"{'at most ' if s.spot else ''}¥{amount:,.2f}/h"

    old, _ = hourly(primary)
    new, why = hourly(shape)
    if new is None:
        return f"price unknown for {nodes} × {shape.instance_type} in {shape.region} ({why})"
    if old is None:
        return f"price {text(shape, new)} for {nodes} nodes (the current shape's is unknown)"
    if abs(new - old) < 0.005 and shape.spot == primary.spot:
        return f"price unchanged, {text(shape, new)} for {nodes} nodes"
    return f"price {text(primary, old)} → {text(shape, new)} for {nodes} nodes"


def _fabric(instance: Any) -> str:
    """``eRDMA 160 Gbit/s`` or ``TCP 64 Gbit/s``: the link NCCL uses between nodes, as the catalog knows it."""
    link = instance.fabric_link
    if link != "tcp":
        speed = f" {instance.rdma_gbps:g} Gbit/s" if instance.rdma_gbps else " (bandwidth not published)"
        return f"{'eRDMA' if link == 'erdma' else 'RoCE'}{speed}"
    return f"TCP {instance.network_gbps:g} Gbit/s" if instance.network_gbps else "TCP (bandwidth unknown)"


def _node_count(profile: "ProfileBase") -> int:
    compute = profile.compute
    for field in ("nodes", "max_nodes"):
        value = getattr(compute, field, None)
        if isinstance(value, int):
            return value
    return 1
