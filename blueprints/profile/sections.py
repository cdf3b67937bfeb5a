"""Profile sections for a cluster you can train on: local scratch, the dataset/checkpoint bucket, and the way in."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from blueprints.core.objectstore import check_bucket_name
from blueprints.profile.strict import Strict

if TYPE_CHECKING:
    from blueprints.catalog import Catalog, InstanceType

# Scratch is an ESSD data disk (ready-to-train.md §4: plan scratch as ESSD PL1+ where the type has no local NVMe).
SCRATCH_DISK_CATEGORY = "cloud_essd"

# ECS key pair names: 2–128 characters of letters, digits, ':', '_' and '-', starting with a letter, not http(s)://
# (ROS ALIYUN::ECS::SSHKeyPair, KeyPairName:
# https://alibabacloud.com/help/tc/ros/developer-reference/aliyun-ecs-sshkeypair).
_KEY_PAIR_RE = re.compile(r"[A-Za-z][A-Za-z0-9:_-]{1,127}")

# The article's rule of thumb: memory : SSD = 1 : 3.
ARTICLE_SSD_PER_MEMORY = 3


class Bucket(Strict):
    """The OSS bucket for datasets and checkpoints: private, encrypted, versioned, kept when compute goes."""

    name: str | None = Field(
        default=None,
        description=(
            "Bucket name (globally unique; 3–63 lowercase letters, digits, hyphens). Empty: <profile "
            "name>-<region>-data; pick your own, names are global."
        ),
    )
    existing: bool = Field(
        default=False,
        description=(
            "Adopt an existing bucket by name: aitrain grants the nodes access to it but does not create or manage it."
        ),
    )
    noncurrent_days: int = Field(
        default=30,
        ge=1,
        le=3650,
        description=(
            "Days a replaced or deleted checkpoint version is kept before the lifecycle rule expires it, 1–3650."
        ),
    )
    access_logging: bool = Field(
        default=True,
        description=(
            "Write the bucket's OSS access logs to a separate private, encrypted log bucket the stack creates (false: "
            "no access log; guardrail AIT022 reports it)."
        ),
    )
    # China's Cybersecurity Law, art. 21(3), asks network operators to keep network logs "no less than six months"; 366
    # days keeps any twelve months whole (PCI DSS v4.0 10.5.1: 12 months of audit log history).
    access_log_days: int = Field(
        default=366,
        ge=1,
        le=3650,
        description=(
            "Days an access-log object is kept before the log bucket's lifecycle rule expires it, 1–3650 (default 366: "
            "a full year; China's Cybersecurity Law asks at least six months)."
        ),
    )
    access_log_bucket: str | None = Field(
        default=None,
        description=(
            "Name of the access-log bucket (globally unique). Empty: "
            "<data bucket>-logs (cut and hashed past 63 characters)."
        ),
    )

    @field_validator("name", "access_log_bucket")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return None if value is None else check_bucket_name(value)


class Access(Strict):
    """How people reach the nodes: Cloud Assistant (keyless, default) or an SSH login node."""

    login_node: bool = Field(
        default=False,
        description=(
            "Add a small CPU login node with an EIP, SSH only from "
            "network.admin_cidr; training nodes then admit SSH only from it."
        ),
    )
    login_instance_type: str = Field(
        default="ecs.g7.large", description="Instance type of the login node (a CPU type from the catalog)."
    )
    key_pair_name: str | None = Field(
        default=None,
        description=(
            "ECS key pair whose public key the login node accepts "
            "(required with login_node: SSH without a key is impossible)."
        ),
    )

    @field_validator("key_pair_name")
    @classmethod
    def _key_pair_name(cls, value: str | None) -> str | None:
        if value is not None and (not _KEY_PAIR_RE.fullmatch(value) or value.lower().startswith(("http:", "https:"))):
            raise ValueError(
                "must be an ECS key pair name: 2–128 characters, "
                "letters, digits, ':', '_' or '-', starting with a letter"
            )
        return value


@dataclass(frozen=True)
class Scratch:
    """Where a node's scratch comes from and how big it is."""

    gib: int
    local_nvme: bool
    performance_level: str

    @property
    def cloud_disk_gib(self) -> int:
        """Size of the ESSD data disk to create (0 when there is none: no scratch, or local NVMe)."""
        return 0 if self.local_nvme else self.gib


def scratch_for(requested: int | None, performance_level: str, instance: "InstanceType", catalog: "Catalog") -> Scratch:
    """The node's scratch: its local NVMe when it has one, else the requested ESSD size (or 3 × memory when unset).

    Raises ValueError with the allowed range (about ``scratch_gib``) when the request cannot be built.
    """
    local = catalog.local_nvme_gib(instance)
    if local:
        if requested:
            raise ValueError(
                f"is not used: {instance.instance_type} comes with {local:,} GiB of local NVMe, which is its scratch; "
                "leave scratch_gib empty (or 0 for no scratch)"
            )
        return Scratch(0 if requested == 0 else local, True, performance_level)
    limits = catalog.disk_limits(SCRATCH_DISK_CATEGORY, performance_level)
    if requested is None:
        wanted = math.ceil(ARTICLE_SSD_PER_MEMORY * instance.memory_gib)
        if limits is not None:
            wanted = min(max(wanted, limits.min_gib), limits.max_gib)
        return Scratch(wanted, False, performance_level)
    if requested and limits is not None and not limits.min_gib <= requested <= limits.max_gib:
        raise ValueError(
            f"{requested:,} GiB is outside ESSD {performance_level}'s "
            f"{limits.min_gib:,}–{limits.max_gib:,} GiB (catalog disks.csv); "
            "choose a size in that range, another scratch_performance_level, or 0 for no scratch"
        )
    return Scratch(requested, False, performance_level)
