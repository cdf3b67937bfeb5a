"""Validated training-infrastructure profiles (pydantic v2, strict, frozen): the parts every blueprint shares.

Each blueprint's spec (``blueprints/architectures/<name>/spec.py``) defines its own profile model on ``ProfileBase``;
``profile.parse.parse_profile`` validates a plain dict against the model its ``blueprint`` key names, with the catalog
and today's date passed in as validation context (``ProfileContext``), never read from globals.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from blueprints.core import objectstore
from blueprints.core.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile.capacity import Capacity, Shape, check_capacity
from blueprints.profile.context import context_of
from blueprints.profile.guardrails import Guardrails
from blueprints.profile.image import IMAGE_ID_RE, image_region_problem
from blueprints.profile.schedule import OffHours
from blueprints.profile.sections import Access, Bucket, Scratch, scratch_for
from blueprints.profile.security import Security
from blueprints.profile.strict import (
    CONTROL_RE,
    DESCRIPTION_MAX_LENGTH,
    Strict,
    check_one_line,
    parse_cidr,
    parse_ipv4_cidr,
)

if TYPE_CHECKING:
    from blueprints.catalog import Catalog

# ESS limits: min_size / max_size are 0–2000 (terraform-provider-alicloud, ess_scaling_group docs, 2026-08-21).
ESS_MAX_SIZE = 2000

# Tags: key 1–128 characters, not starting with "aliyun" or "acs:" (any case), no "http://" or "https://";
# value 0–128 characters, not starting with "acs:", no "http://" or "https://"
# (https://alibabacloud.com/help/en/emr/emr-on-ecs/developer-reference/api-emr-2021-03-20-struct-tag;
# case-insensitive prefixes: https://help.aliyun.com/en/oss/user-guide/0010-00000213).
# A resource holds at most 20 tags; aitrain adds its own (components/base.py with_tags).
TAG_MAX_LENGTH = 128
USER_TAG_LIMIT = 18
RESERVED_TAG_KEYS = ("managed-by", "aitrain-component")

_NAME_RE = re.compile(r"[a-z][a-z0-9-]{1,22}[a-z0-9]")


def check_resource_name(value: str) -> str:
    """Validate a resource-name prefix (3–24 chars: lowercase letters, digits, hyphens; starts with a letter)."""
    if not _NAME_RE.fullmatch(value):
        raise ValueError(
            "must be 3–24 characters: lowercase letters, digits and hyphens, "
            "starting with a letter and ending with a letter or digit"
        )
    return value


class ComputeBase(Strict):
    """What every node of every blueprint is built from."""

    # The catalog table ``instance_type`` names a row of (a blueprint whose nodes are not ECS types names its own).
    node_catalog: ClassVar[str] = "instance_types"

    instance_type: str = Field(
        description=(
            "Real Alibaba Cloud ECS type (e.g. ecs.gn7e-c16g1.32xlarge) or "
            "one of the article's aliases, which resolve to real hardware."
        )
    )
    image_id: str | None = Field(
        default=None,
        description=(
            "ECS image ID; when empty, the newest system image matching the catalog's name pattern is looked up at "
            "every `pulumi up` (a newer one re-images the nodes): `aitrain image pin` records the one they booted."
        ),
    )
    gpu_stack_in_image: bool | None = Field(
        default=None,
        description=(
            "Whether compute.image_id ships the NVIDIA driver and CUDA (an image `aitrain bake` made): true skips the "
            "install script and its reboot. Empty: what the catalog records (its GPU images per family and region)."
        ),
    )
    bake_image: bool = Field(
        default=False,
        description=(
            "Build the team's own image with this family's GPU stack once (ECS Image Builder: `aitrain bake` sets "
            "it); then pin it with compute.image_id and compute.gpu_stack_in_image true, and set this back to false."
        ),
    )
    system_disk_gib: int = Field(
        default=200, ge=20, le=2048, description="System disk size in GiB (ESSD, encrypted), 20–2048."
    )
    system_disk_performance_level: Literal["PL0", "PL1", "PL2", "PL3"] = Field(
        default="PL1", description="ESSD performance level of the system disk."
    )
    scratch_gib: int | None = Field(
        default=None,
        ge=0,
        le=1_048_576,
        description=(
            "Scratch per node at /mnt/scratch (an encrypted ESSD data disk), GiB. "
            "Empty: 3 × the node's memory (the article's memory : SSD = 1 : 3) within "
            "the disk's limits; 0: none. A type with local NVMe uses that instead."
        ),
    )
    scratch_performance_level: Literal["PL0", "PL1", "PL2", "PL3"] = Field(
        default="PL1", description="ESSD performance level of the scratch disk."
    )
    install_pytorch: bool = Field(
        default=True,
        description=(
            "Install the catalog's PyTorch (torchrun, NCCL) into /opt/aitrain/venv at boot; false if your image or "
            "shared environment brings its own torchrun."
        ),
    )

    @field_validator("image_id")
    @classmethod
    def _image_id(cls, value: str | None) -> str | None:
        # Custom images are m-…, public ones like ubuntu_22_04_x64_20G_alibase_20230815.vhd: no spaces, no other text.
        if value is not None and not IMAGE_ID_RE.fullmatch(value):
            raise ValueError(
                "must be an ECS image ID: 1–128 letters, digits, '.', '_' or '-' (e.g. m-uf6abc… or "
                "ubuntu_22_04_x64_20G_alibase_20230815.vhd)"
            )
        return value

    @model_validator(mode="after")
    def _scratch_fits(self, info: ValidationInfo) -> "ComputeBase":
        catalog = context_of(info).catalog
        instance = catalog.instance_types.get(self.instance_type)
        if instance is not None:
            try:
                scratch_for(self.scratch_gib, self.scratch_performance_level, instance, catalog)
            except ValueError as exc:
                raise FieldError("scratch_gib", self.scratch_gib, str(exc)) from None
        return self

    def scratch(self, catalog: "Catalog") -> Scratch:
        """This node's scratch (validated when the profile was)."""
        return scratch_for(
            self.scratch_gib, self.scratch_performance_level, catalog.instance_type(self.instance_type), catalog
        )


class Storage(Strict):
    """The shared storage pool mounted by every node. Its inputs never depend on compute, so it is never replaced."""

    kind: Literal["cpfs", "extreme_nas", "nas"] = Field(
        description="cpfs (General-purpose CPFS), extreme_nas (Extreme NAS) or nas (General-purpose NAS)."
    )
    capacity_gib: int = Field(
        ge=100, le=1_048_576, description="Provisioned capacity in GiB (Extreme NAS and CPFS bill and perform by it)."
    )
    throughput_tier: str = Field(
        description=(
            "nas: Performance|Capacity; extreme_nas: standard|advance; cpfs: advance_100|advance_200 (MB/s per TiB)."
        )
    )
    zone: str | None = Field(
        default=None,
        description=(
            "Zone of the file system. Empty: the region's first zone in the catalog. "
            "Pin it in the stack config: it is fixed for the life of the data."
        ),
    )
    allow_unencrypted_cpfs: bool = Field(
        default=False,
        description=(
            "CPFS cannot be encrypted through the NAS API (encrypt_type "
            "supports standard and extreme only); set true to accept that."
        ),
    )
    recycle_bin_days: int = Field(
        default=7,
        ge=1,
        le=180,
        description="Days deleted files stay in the recycle bin (general-purpose NAS only), 1–180.",
    )
    nfs_squash: Literal["root_squash", "all_squash", "no_squash"] = Field(
        default="root_squash",
        description=(
            "NAS access rule user mapping: root_squash (root on a node is nobody on the share), all_squash, or "
            "no_squash (needs guardrails.skip AIT024 with a reason)."
        ),
    )
    # nas.AutoSnapshotPolicy retention_days: -1 (keep until the snapshot limit) or 1–65536 days
    # (terraform-provider-alicloud@81c43b67 website/docs/r/nas_auto_snapshot_policy.html.markdown#L62).
    snapshot_retention_days: int = Field(
        default=7,
        ge=-1,
        le=65536,
        description=(
            "Extreme NAS: days automatic snapshots are kept, 1–65536, or -1 to keep them until the snapshot limit."
        ),
    )

    @field_validator("snapshot_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        if value == 0:
            raise ValueError("0 is not allowed: give 1–65536 days, or -1 to keep snapshots until the snapshot limit")
        return value

    @model_validator(mode="after")
    def _tier_matches_kind(self, info: ValidationInfo) -> "Storage":
        catalog = context_of(info).catalog
        allowed = tuple(t.storage_type for t in catalog.storage_tiers(self.kind) if t.storage_type)
        if self.throughput_tier not in allowed:
            hint = did_you_mean(self.throughput_tier, allowed)
            raise ValueError(
                f"throughput_tier {self.throughput_tier!r} is not valid "
                f"for kind {self.kind!r}; allowed: {join_allowed(allowed)}" + (f"; {hint}" if hint else "")
            )
        # The tier's own capacity range from the catalog (Extreme
        # NAS standard stops at 256 TiB, below the field's 1 PiB).
        tier = next(t for t in catalog.storage_tiers(self.kind) if t.storage_type == self.throughput_tier)
        low, high = tier.min_capacity_gib, tier.max_capacity_gib
        if (low is not None and self.capacity_gib < low) or (high is not None and self.capacity_gib > high):
            span = f"{low or 0:,.0f}–{high:,.0f}" if high is not None else f"at least {low:,.0f}"
            raise ValueError(
                f"capacity_gib {self.capacity_gib:,} is outside {self.kind} "
                f"{self.throughput_tier}'s {span} GiB (catalog storage tiers)"
            )
        if self.kind == "cpfs" and not self.allow_unencrypted_cpfs:
            raise ValueError(
                "kind 'cpfs' cannot be encrypted at rest through the NAS "
                "API (encrypt_type supports standard and extreme only); "
                "use kind 'extreme_nas', or set storage.allow_unencrypted_cpfs: true"
            )
        return self


class Network(Strict):
    """The VPC and who may reach the nodes."""

    vpc_cidr: str = Field(
        default="10.0.0.0/16",
        description="VPC CIDR: a private range (10/8, 172.16/12, 192.168/16 or inside them), prefix /8–/24.",
    )
    zones: tuple[str, ...] = Field(
        default=(),
        description=(
            "Zone IDs for compute, in order of preference; empty means every zone that offers the instance type."
        ),
    )
    admin_cidr: str | None = Field(
        default=None,
        description=(
            "Source CIDR allowed to SSH (port 22) into the nodes; empty "
            "means no admin ingress at all. At most 65,536 addresses (/16)."
        ),
    )

    @field_validator("vpc_cidr")
    @classmethod
    def _vpc_cidr(cls, value: str) -> str:
        net = parse_cidr(value, "10.0.0.0/16")
        private = [ipaddress.ip_network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
        if net.version != 4 or not any(net.subnet_of(p) for p in private):  # type: ignore[arg-type]
            raise ValueError("vpc_cidr must be inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16")
        if not 8 <= net.prefixlen <= 24:
            raise ValueError(f"vpc_cidr prefix /{net.prefixlen} is outside /8–/24")
        return str(net)

    @field_validator("zones")
    @classmethod
    def _unique_zones(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        repeated = sorted({z for z in value if value.count(z) > 1})
        if repeated:
            raise ValueError(f"lists {', '.join(repeated)} more than once; give each zone once, in order of preference")
        return value

    @field_validator("admin_cidr")
    @classmethod
    def _admin_cidr(cls, value: str | None) -> str | None:
        if value is None:
            return None
        net = parse_ipv4_cidr(value, "203.0.113.0/24")
        if net.prefixlen == 0:
            raise ValueError(
                f"{value} opens SSH to the whole internet; give your office or bastion range (e.g. 203.0.113.0/24), or "
                "leave it empty for no admin access"
            )
        if net.num_addresses > 65536:
            raise ValueError(
                f"{value} spans {net.num_addresses:,} addresses; at most a /16 (65,536) is allowed for admin access"
            )
        return str(net)


class Cost(Strict):
    """Cost controls."""

    spot: bool = Field(
        default=False,
        description="Use preemptible (spot) instances at the market price, capped at the pay-as-you-go price.",
    )
    off_hours: OffHours = Field(
        default_factory=OffHours, description="Scale-to-zero schedule (blueprints that scale only)."
    )
    run_hours: float | None = Field(
        default=None,
        gt=0,
        le=87_600,
        allow_inf_nan=False,
        description=(
            "Hours one training run takes (e.g. from `aitrain estimate`); "
            "the plan prices a run with it. Empty: no per-run cost."
        ),
    )


class ProfileBase(Strict):
    """Fields every blueprint's profile has; a blueprint module subclasses it with its own ``compute``."""

    # Which compute fields count nodes: an article alias multiplies them by its node count.
    alias_count_fields: ClassVar[tuple[str, ...]] = ()
    # Whether the blueprint's nodes can draw from capacity.reservation (a private pool in Target mode).
    takes_reservation: ClassVar[bool] = False
    # Set by parse_profile when the instance type was one of the article's aliases.
    _alias_note: str | None = PrivateAttr(default=None)

    blueprint: str = Field(description="Which blueprint builds this profile.")
    compute: ComputeBase = Field(description="GPU node type and count.")
    name: str = Field(
        default="aitrain",
        description="Prefix of every resource name: lowercase letters, digits and hyphens, 3–24 characters.",
    )
    description: str = Field(
        default="", description=f"One line shown in plans (at most {DESCRIPTION_MAX_LENGTH} characters)."
    )
    region: str = Field(description="Alibaba Cloud region ID, e.g. cn-shanghai.")
    storage: Storage = Field(description="The shared storage pool.")
    network: Network = Field(default_factory=Network, description="VPC, zones and admin access.")
    cost: Cost = Field(default_factory=Cost, description="Spot and off-hours settings.")
    bucket: Bucket = Field(default_factory=Bucket, description="The OSS bucket for datasets and checkpoints.")
    access: Access = Field(
        default_factory=Access, description="How people reach the nodes: Cloud Assistant, or an SSH login node."
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Tags added to every taggable resource (at most 18; Alibaba Cloud's tag rules apply).",
    )
    guardrails: Guardrails = Field(
        default_factory=Guardrails,
        description="Guardrails this stack skips on purpose, each with its reason (shown in every plan).",
    )
    security: Security = Field(
        default_factory=Security,
        description="Customer-managed KMS key, VPC flow log, ActionTrail and egress allow-list (all off by default).",
    )
    capacity: Capacity = Field(
        default_factory=Capacity,
        description="Fallback shapes for `aitrain preflight --choose`, reserved capacity, all-or-nothing nodes.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_resource_name(value)

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        return check_one_line(value)

    @field_validator("region")
    @classmethod
    def _region(cls, value: str, info: ValidationInfo) -> str:
        regions = context_of(info).catalog.regions
        if value not in regions:
            hint = did_you_mean(value, regions)
            raise ValueError(
                f"unknown region; the catalog knows {join_allowed(regions)}" + (f"; {hint}" if hint else "")
            )
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: dict[str, str]) -> dict[str, str]:
        problems = [p for key, text in value.items() for p in tag_problems(key, text)]
        if len(value) > USER_TAG_LIMIT:
            problems.append(
                f"{len(value)} tags given; at most {USER_TAG_LIMIT} (a "
                f"resource holds 20 and aitrain adds {len(RESERVED_TAG_KEYS)})"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @model_validator(mode="after")
    def _zones_in_region(self, info: ValidationInfo) -> "ProfileBase":
        known = context_of(info).catalog.zones(self.region)
        # Named by field (not the whole profile): a region change usually leaves both zone settings behind.
        bad_network = [z for z in self.network.zones if z not in known]
        if bad_network:
            raise FieldError(
                "network.zones",
                bad_network,
                f"{bad_network} are not zones of region {self.region}; allowed: {join_allowed(known)}",
            )
        if self.storage.zone is not None and self.storage.zone not in known:
            raise FieldError(
                "storage.zone",
                self.storage.zone,
                f"is not a zone of region {self.region}; allowed: {join_allowed(known)}",
            )
        return self

    @model_validator(mode="after")
    def _capacity(self, info: ValidationInfo) -> "ProfileBase":
        if self.capacity.reservation is not None and not self.takes_reservation:
            raise FieldError(
                "capacity.reservation",
                self.capacity.reservation.kind,
                f"is not available on blueprint {self.blueprint!r}: its nodes do not draw from a reservation in this "
                "release (a fixed cluster's and an ACK GPU pool's do); remove it",
            )
        check_capacity(self.capacity, self.shape, context_of(info).catalog, nodes=self.reserved_nodes)
        return self

    @property
    def shape(self) -> Shape:
        """Where and on what the nodes run: region, preferred zones, instance type, spot."""
        return Shape(self.region, self.network.zones, self.compute.instance_type, self.cost.spot)

    @property
    def reserved_nodes(self) -> int | None:
        """The nodes that draw from ``capacity.reservation`` (a blueprint that takes one says how many)."""
        return None

    @model_validator(mode="after")
    def _image_in_region(self, info: ValidationInfo) -> "ProfileBase":
        problem = image_region_problem(self.compute.image_id, self.region, context_of(info).catalog)
        if problem:
            raise FieldError("compute.image_id", self.compute.image_id, problem)
        return self

    @model_validator(mode="after")
    def _squash_skipped(self) -> "ProfileBase":
        # no_squash makes root on any VPC host root on the share: only with the guardrail skipped, and why.
        if self.storage.nfs_squash == "no_squash" and not self.skips_rule("AIT024"):
            raise FieldError(
                "storage.nfs_squash",
                "no_squash",
                "lets root on any host in the VPC act as root on the share; allowed: root_squash, all_squash, "
                "or no_squash together with guardrails.skip: [{rule: AIT024, reason: ...}]",
            )
        return self

    @model_validator(mode="after")
    def _log_bucket_apart(self) -> "ProfileBase":
        # A bucket logging into itself logs its own log writes in a loop
        # (https://www.alibabacloud.com/help/en/oss/logging).
        if self.bucket.access_log_bucket is not None and self.bucket.access_log_bucket == self.bucket_name:
            raise FieldError(
                "bucket.access_log_bucket",
                self.bucket.access_log_bucket,
                "is the data bucket itself; OSS would log its own log writes in a "
                "loop: name another bucket, or leave it empty for <data bucket>-logs",
            )
        return self

    def skips_rule(self, rule: str) -> bool:
        """Whether ``guardrails.skip`` turns ``rule`` off (with a reason, which the skip itself requires)."""
        return any(s.rule == rule for s in self.guardrails.skip)

    @model_validator(mode="after")
    def _login_node(self, info: ValidationInfo) -> "ProfileBase":
        if not self.access.login_node:
            return self
        if self.network.admin_cidr is None:
            raise FieldError(
                "access.login_node",
                True,
                "needs network.admin_cidr, which is empty: the login node admits SSH only from admin_cidr; "
                "set network.admin_cidr to your office or VPN range (e.g. 203.0.113.0/24), "
                "or leave access.login_node false and use Cloud Assistant",
            )
        if self.access.key_pair_name is None:
            raise FieldError(
                "access.key_pair_name",
                None,
                "is empty but access.login_node is true: name the ECS key pair "
                "whose key may log in (create one with `aliyun ecs ImportKeyPair`)",
            )
        catalog = context_of(info).catalog
        login = catalog.instance_types.get(self.access.login_instance_type)
        if login is None or login.is_gpu:
            cpu_types = sorted(name for name, it in catalog.instance_types.items() if not it.is_gpu)
            hint = did_you_mean(self.access.login_instance_type, cpu_types)
            raise FieldError(
                "access.login_instance_type",
                self.access.login_instance_type,
                f"is not a CPU instance type in the catalog; allowed: {join_allowed(cpu_types)}"
                + (f"; {hint}" if hint else ""),
            )
        return self

    @property
    def bucket_name(self) -> str:
        """The dataset and checkpoint bucket: ``bucket.name``, else ``<name>-<region>-data``."""
        return self.bucket.name or f"{self.name}-{self.region}-data"

    @property
    def access_log_bucket_name(self) -> str | None:
        """Where the data bucket's access logs go: ``bucket.access_log_bucket``, else ``<data bucket>-logs``; None when
        ``bucket.access_logging`` is off or the bucket is adopted
        (aitrain changes nothing on a bucket it does not own)."""
        if not self.bucket.access_logging or self.bucket.existing:
            return None
        return self.bucket.access_log_bucket or objectstore.access_log_bucket_name(self.bucket_name)

    @property
    def storage_zone(self) -> str:
        """Where the file system lives: ``storage.zone``, else derived from storage inputs alone (the region)."""
        return self.storage.zone or self._region_zones[0]

    @property
    def alias_note(self) -> str | None:
        """The one sentence explaining an article alias that this profile used, if any."""
        return self._alias_note

    # Set by parse_profile from the catalog, so storage_zone needs no global lookup.
    _region_zones: tuple[str, ...] = PrivateAttr(default=())


def tag_problems(key: str, value: str) -> list[str]:
    """What is wrong with one tag under Alibaba Cloud's tag rules (empty when it is fine)."""
    out = []
    lowered = key.lower()
    if not 1 <= len(key) <= TAG_MAX_LENGTH:
        out.append(f"tag key {key!r} must be 1–{TAG_MAX_LENGTH} characters")
    if lowered.startswith(("aliyun", "acs:")):
        out.append(f"tag key {key!r} starts with a prefix Alibaba Cloud reserves ('aliyun', 'acs:')")
    if key in RESERVED_TAG_KEYS:
        out.append(f"tag key {key!r} is set by aitrain itself")
    if len(value) > TAG_MAX_LENGTH:
        out.append(f"tag value of {key!r} is {len(value)} characters; at most {TAG_MAX_LENGTH}")
    if value.lower().startswith("acs:"):
        out.append(f"tag value of {key!r} starts with the reserved prefix 'acs:'")
    for text, what in ((key, "key"), (value, "value")):
        if "http://" in text.lower() or "https://" in text.lower():
            out.append(f"tag {what} {text!r} contains 'http://' or 'https://', which Alibaba Cloud rejects")
        if CONTROL_RE.search(text):
            out.append(f"tag {what} {text!r} contains control characters")
    return out
