"""Validated training-infrastructure profiles (pydantic v2, strict, frozen): what a blueprint builds."""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from blueprints.catalog import load_catalog
from blueprints.errors import Problem, UserInputError, did_you_mean, join_allowed, problems_from_validation_error

BLUEPRINT_NAMES = ("fixed-cluster", "autoscaling-pool")

# The article's scale-out band ("scale out at 65–75 % CPU"); outside it only on purpose.
ARTICLE_SCALE_OUT_BAND = (65.0, 75.0)

# ESS limits: min_size / max_size are 0–2000 (terraform-provider-alicloud, ess_scaling_group docs, 2026-08-21).
ESS_MAX_SIZE = 2000


def storage_tiers(kind: str) -> tuple[str, ...]:
    """Allowed ``throughput_tier`` values (the NAS API's storage_type) for a storage kind, from the catalog."""
    return tuple(t.storage_type for t in load_catalog().storage_tiers(kind) if t.storage_type)


_NAME_RE = re.compile(r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$")


def check_resource_name(value: str) -> str:
    """Validate a resource-name prefix (3–24 chars: lowercase letters, digits, hyphens; starts with a letter)."""
    if not _NAME_RE.match(value):
        raise ValueError("must be 3–24 characters: lowercase letters, digits and hyphens, starting with a letter")
    return value
_HHMM_RE = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class FixedCompute(_Strict):
    """A fixed number of identical GPU nodes."""

    instance_type: str = Field(description="Real Alibaba Cloud ECS type (e.g. ecs.gn7e-c16g1.32xlarge) or one of the article's aliases, which resolve to real hardware.")
    nodes: int = Field(ge=1, le=2000, description="Number of nodes (instances), 1–2000.")
    image_id: str | None = Field(default=None, description="ECS image ID; when empty, the newest system image matching the catalog's name pattern is looked up.")
    system_disk_gib: int = Field(default=200, ge=20, le=2048, description="System disk size in GiB (ESSD, encrypted), 20–2048.")
    system_disk_performance_level: Literal["PL0", "PL1", "PL2", "PL3"] = Field(default="PL1", description="ESSD performance level of the system disk.")


class AutoscalingCompute(_Strict):
    """One GPU node type in an ESS scaling group."""

    instance_type: str = Field(description="Real Alibaba Cloud ECS type or one of the article's aliases.")
    min_nodes: int = Field(ge=0, le=ESS_MAX_SIZE, description="Scaling-group minimum size (instances), 0–2000.")
    max_nodes: int = Field(ge=1, le=ESS_MAX_SIZE, description="Scaling-group maximum size (instances), 1–2000.")
    desired_nodes: int | None = Field(default=None, ge=0, le=ESS_MAX_SIZE, description="Desired size (instances) during working hours; defaults to min_nodes.")
    scale_out_cpu_percent: float = Field(default=70.0, gt=0, lt=100, description="Scale out by one node when average CpuUtilization (%) stays at or above this.")
    scale_in_gpu_percent: float = Field(default=40.0, gt=0, lt=100, description="Scale in by one node when average GpuUtilizationAgent (%) stays below this.")
    allow_scale_out_outside_article_band: bool = Field(default=False, description="Permit scale_out_cpu_percent outside the 65–75 % band.")
    image_id: str | None = Field(default=None, description="ECS image ID; when empty, looked up by the catalog's name pattern.")
    system_disk_gib: int = Field(default=200, ge=20, le=2048, description="System disk size in GiB (ESSD, encrypted), 20–2048.")
    system_disk_performance_level: Literal["PL0", "PL1", "PL2", "PL3"] = Field(default="PL1", description="ESSD performance level of the system disk.")

    @model_validator(mode="after")
    def _bounds(self) -> "AutoscalingCompute":
        if self.min_nodes > self.max_nodes:
            raise ValueError(f"min_nodes ({self.min_nodes}) is greater than max_nodes ({self.max_nodes}); need min_nodes ≤ desired_nodes ≤ max_nodes")
        if self.desired_nodes is not None and not self.min_nodes <= self.desired_nodes <= self.max_nodes:
            raise ValueError(f"desired_nodes ({self.desired_nodes}) is outside [min_nodes, max_nodes] = [{self.min_nodes}, {self.max_nodes}]")
        low, high = ARTICLE_SCALE_OUT_BAND
        if not self.allow_scale_out_outside_article_band and not low <= self.scale_out_cpu_percent <= high:
            raise ValueError(
                f"scale_out_cpu_percent ({self.scale_out_cpu_percent:g}) is outside the recommended {low:g}–{high:g} % band; "
                "set compute.allow_scale_out_outside_article_band: true to use it anyway"
            )
        return self

    @property
    def working_hours_nodes(self) -> int:
        """Desired size during working hours."""
        return self.desired_nodes if self.desired_nodes is not None else self.min_nodes


class Storage(_Strict):
    """The shared storage pool mounted by every node."""

    kind: Literal["cpfs", "extreme_nas", "nas"] = Field(description="cpfs (General-purpose CPFS), extreme_nas (Extreme NAS) or nas (General-purpose NAS).")
    capacity_gib: int = Field(ge=100, le=1_048_576, description="Provisioned capacity in GiB (Extreme NAS and CPFS bill and perform by it).")
    throughput_tier: str = Field(description="nas: Performance|Capacity; extreme_nas: standard|advance; cpfs: advance_100|advance_200 (MB/s per TiB).")
    allow_unencrypted_cpfs: bool = Field(default=False, description="CPFS cannot be encrypted through the NAS API (encrypt_type supports standard and extreme only); set true to accept that.")
    recycle_bin_days: int = Field(default=7, ge=1, le=180, description="Days deleted files stay in the recycle bin (general-purpose NAS only), 1–180.")

    @model_validator(mode="after")
    def _tier_matches_kind(self) -> "Storage":
        allowed = storage_tiers(self.kind)
        if self.throughput_tier not in allowed:
            hint = did_you_mean(self.throughput_tier, allowed)
            raise ValueError(f"throughput_tier {self.throughput_tier!r} is not valid for kind {self.kind!r}; allowed: {join_allowed(allowed)}" + (f"; {hint}" if hint else ""))
        if self.kind == "cpfs" and not self.allow_unencrypted_cpfs:
            raise ValueError(
                "kind 'cpfs' cannot be encrypted at rest through the NAS API (encrypt_type supports standard and extreme only); "
                "use kind 'extreme_nas', or set storage.allow_unencrypted_cpfs: true"
            )
        return self


class Network(_Strict):
    """The VPC and who may reach the nodes."""

    vpc_cidr: str = Field(default="10.0.0.0/16", description="VPC CIDR: a private range (10/8, 172.16/12, 192.168/16 or inside them), prefix /8–/24.")
    zones: tuple[str, ...] = Field(default=(), description="Zone IDs to use, in order of preference; empty means every zone that offers the instance type.")
    admin_cidr: str | None = Field(default=None, description="Source CIDR allowed to SSH (port 22) into the nodes; empty means no admin ingress at all. At most 65,536 addresses (/16).")

    @field_validator("vpc_cidr")
    @classmethod
    def _vpc_cidr(cls, value: str) -> str:
        net = _parse_cidr(value)
        private = [ipaddress.ip_network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
        if net.version != 4 or not any(net.subnet_of(p) for p in private):
            raise ValueError("vpc_cidr must be inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16")
        if not 8 <= net.prefixlen <= 24:
            raise ValueError(f"vpc_cidr prefix /{net.prefixlen} is outside /8–/24")
        return str(net)

    @field_validator("admin_cidr")
    @classmethod
    def _admin_cidr(cls, value: str | None) -> str | None:
        if value is None:
            return None
        net = _parse_cidr(value)
        if net.prefixlen == 0:
            raise ValueError(f"{value} opens SSH to the whole internet; give your office or bastion range (e.g. 203.0.113.0/24), or leave it empty for no admin access")
        if net.num_addresses > 65536:
            raise ValueError(f"{value} spans {net.num_addresses:,} addresses; at most a /16 (65,536) is allowed for admin access")
        return str(net)


class OffHours(_Strict):
    """Scale the pool to zero outside working hours."""

    enabled: bool = Field(default=False, description="Scale to zero outside working hours.")
    timezone: str = Field(default="Asia/Shanghai", description="IANA time zone of the working hours.")
    work_start: str = Field(default="09:00", description="Start of the working day, HH:MM local time.")
    work_end: str = Field(default="19:00", description="End of the working day, HH:MM local time.")
    weekdays_only: bool = Field(default=True, description="Work on Monday–Friday only (otherwise every day).")
    start_date: str | None = Field(default=None, description="First day (YYYY-MM-DD) the schedule runs; ESS needs it within 90 days of deployment and repeats it for 364 days, so renew it yearly.")

    @field_validator("timezone")
    @classmethod
    def _tz(cls, value: str) -> str:
        import zoneinfo

        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            hint = did_you_mean(value, sorted(zoneinfo.available_timezones()))
            raise ValueError("unknown time zone; give an IANA name such as 'Asia/Shanghai'" + (f"; {hint}" if hint else "")) from None
        return value

    @field_validator("work_start", "work_end")
    @classmethod
    def _hhmm(cls, value: str) -> str:
        if not _HHMM_RE.match(value):
            raise ValueError("must be HH:MM on a 24-hour clock, e.g. '09:00'")
        return value

    @field_validator("start_date")
    @classmethod
    def _date(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date written YYYY-MM-DD, e.g. '2026-12-01'") from None
        return value

    @model_validator(mode="after")
    def _order(self) -> "OffHours":
        if self.enabled and self.start_date is None:
            raise ValueError("start_date is required when off_hours is enabled (YYYY-MM-DD, within 90 days of deployment)")
        if self.work_start >= self.work_end:
            raise ValueError(f"work_start ({self.work_start}) must be before work_end ({self.work_end})")
        return self


class Cost(_Strict):
    """Cost controls."""

    spot: bool = Field(default=False, description="Use preemptible (spot) instances at the market price, capped at the pay-as-you-go price.")
    off_hours: OffHours = Field(default_factory=OffHours, description="Scale-to-zero schedule (autoscaling-pool only).")


class _ProfileBase(_Strict):
    # Set by parse_profile when the instance type was one of the article's aliases.
    _alias_note: str | None = PrivateAttr(default=None)

    name: str = Field(default="aitrain", description="Prefix of every resource name: lowercase letters, digits and hyphens, 3–24 characters.")
    description: str = Field(default="", description="One line shown in plans.")
    region: str = Field(description="Alibaba Cloud region ID, e.g. cn-shanghai.")
    storage: Storage = Field(description="The shared storage pool.")
    network: Network = Field(default_factory=Network, description="VPC, zones and admin access.")
    cost: Cost = Field(default_factory=Cost, description="Spot and off-hours settings.")
    tags: dict[str, str] = Field(default_factory=dict, description="Tags added to every taggable resource.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_resource_name(value)

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        regions = load_catalog().regions
        if value not in regions:
            hint = did_you_mean(value, regions)
            raise ValueError(f"unknown region; the catalog knows {join_allowed(regions)}" + (f"; {hint}" if hint else ""))
        return value

    @model_validator(mode="after")
    def _zones_in_region(self):
        known = load_catalog().zones(self.region)
        bad = [z for z in self.network.zones if z not in known]
        if bad:
            raise ValueError(f"network.zones {bad} are not zones of {self.region}; allowed: {join_allowed(known)}")
        return self


class FixedClusterProfile(_ProfileBase):
    """Profile of the ``fixed-cluster`` blueprint."""

    blueprint: Literal["fixed-cluster"] = Field(description="Which blueprint builds this profile.")
    compute: FixedCompute = Field(description="GPU node type and count.")

    @model_validator(mode="after")
    def _no_off_hours(self) -> "FixedClusterProfile":
        if self.cost.off_hours.enabled:
            raise ValueError("cost.off_hours is for the autoscaling-pool blueprint; a fixed cluster keeps its nodes (use blueprint 'autoscaling-pool' to sleep off-hours)")
        return self


class AutoscalingProfile(_ProfileBase):
    """Profile of the ``autoscaling-pool`` blueprint."""

    blueprint: Literal["autoscaling-pool"] = Field(description="Which blueprint builds this profile.")
    compute: AutoscalingCompute = Field(description="GPU node type and scaling bounds.")


ProfileModel = FixedClusterProfile | AutoscalingProfile

_MODELS: dict[str, type[_ProfileBase]] = {"fixed-cluster": FixedClusterProfile, "autoscaling-pool": AutoscalingProfile}


def _parse_cidr(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not a valid CIDR ({exc}); write it like 10.0.0.0/16") from None


def known_fields(model: type[BaseModel] = FixedClusterProfile, prefix: str = "", out: dict[str, tuple[str, ...]] | None = None) -> dict[str, tuple[str, ...]]:
    """Map each dotted parent path to the keys allowed there (for "did you mean" on unknown keys)."""
    out = {} if out is None else out
    keys = set(out.get(prefix, ()))
    for field_name, field in model.model_fields.items():
        keys.add(field_name)
        annotation = field.annotation
        for candidate in getattr(annotation, "__args__", (annotation,)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                known_fields(candidate, f"{prefix}.{field_name}" if prefix else field_name, out)
    out[prefix] = tuple(sorted(keys))
    return out


def _all_known_fields() -> dict[str, tuple[str, ...]]:
    merged: dict[str, tuple[str, ...]] = {}
    for model in _MODELS.values():
        for path, keys in known_fields(model).items():
            merged[path] = tuple(sorted(set(merged.get(path, ())) | set(keys)))
    return merged


def parse_profile(data: Any, *, source: str = "profile") -> ProfileModel:
    """Validate a plain dict into a profile, resolving aliases; raise ``UserInputError`` listing every problem."""
    if not isinstance(data, dict):
        raise UserInputError(f"invalid {source}", [Problem("", data, "a profile must be a mapping of keys to values")])
    blueprint = data.get("blueprint")
    if blueprint not in _MODELS:
        hint = did_you_mean(str(blueprint), BLUEPRINT_NAMES) if blueprint is not None else None
        message = "required field is missing" if blueprint is None else "unknown blueprint"
        raise UserInputError(f"invalid {source}", [Problem("blueprint", blueprint, f"{message}; allowed: {join_allowed(BLUEPRINT_NAMES)}", hint)])
    model = _MODELS[blueprint]
    problems: list[Problem] = []
    data = _coerce_lists(data)
    compute = data.get("compute")
    alias_note = None
    if isinstance(compute, dict) and isinstance(compute.get("instance_type"), str):
        compute, alias_note, problem = _resolve_instance_type(compute, blueprint)
        if problem:
            problems.append(problem)
        data = {**data, "compute": compute}
    try:
        profile = model.model_validate(data)
    except ValidationError as exc:
        problems += problems_from_validation_error(exc, known_fields=_all_known_fields())
        raise UserInputError(f"invalid {source}", _dedupe(problems)) from None
    if problems:
        raise UserInputError(f"invalid {source}", problems)
    profile._alias_note = alias_note
    return profile


def alias_note(profile: ProfileModel) -> str | None:
    """The one sentence explaining an article alias that this profile used, if any."""
    return profile._alias_note


def resolve_gpu_type(name: str, path: str, catalog: Any = None) -> tuple[Any, Any, Problem | None]:
    """``(instance, alias, None)`` for a real GPU type or an article alias; ``(None, None, problem)`` otherwise.

    The problem names ``path``, the value, and the closest real types and aliases. ``catalog``
    defaults to ``load_catalog()``.
    """
    catalog = catalog if catalog is not None else load_catalog()
    try:
        instance, alias = catalog.resolve(name)
    except KeyError:
        suggestions = catalog.suggest(name)
        hint = f"did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else "run 'aitrain catalog' to list real types"
        return None, None, Problem(path, name, "not a real Alibaba Cloud ECS instance type in the catalog", hint)
    if not instance.is_gpu:
        return None, None, Problem(path, name, "is a CPU-only type; training needs a GPU type (run 'aitrain catalog --min-gpus 1')")
    return instance, alias, None


def _resolve_instance_type(compute: dict, blueprint: str) -> tuple[dict, str | None, Problem | None]:
    """Replace an article alias by its real type (scaling node counts); reject unknown types with suggestions."""
    name = compute["instance_type"]
    instance, alias, problem = resolve_gpu_type(name, "compute.instance_type")
    if problem is not None:
        return compute, None, problem
    if alias is None:
        return compute, None, None
    scaled = dict(compute, instance_type=instance.instance_type)
    count_fields = ("nodes",) if blueprint == "fixed-cluster" else ("min_nodes", "max_nodes", "desired_nodes")
    counts = []
    for key in count_fields:
        if isinstance(scaled.get(key), int) and not isinstance(scaled.get(key), bool):
            scaled[key] = scaled[key] * alias.nodes
            counts.append(f"{key} {compute[key]} × {name} = {scaled[key]} × {instance.instance_type}")
    note = alias.sentence + (f" Counts are in article units: {'; '.join(counts)}." if counts else "")
    return scaled, note, None


def _coerce_lists(data: dict) -> dict:
    """YAML gives lists where the model keeps tuples; strict mode would reject them."""
    network = data.get("network")
    if isinstance(network, dict) and isinstance(network.get("zones"), list):
        data = {**data, "network": {**network, "zones": tuple(network["zones"])}}
    return data


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        key = (p.path, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out
