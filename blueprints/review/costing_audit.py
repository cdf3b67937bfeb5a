"""What customer keys add to a plan's costs: the KMS instance they live in (named by any resource, whatever its kind).

Pure (no pulumi), like ``blueprints.review.costing``, which calls it: a plan naming a customer-managed key carries the
KMS instance that key lives in, and a plan without one is told what that instance would cost. (The access-log
bucket's line is the bucket kind's pricer: ``blueprints.kinds.oss``.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

from blueprints.catalog import Catalog, CnyPrice, price_cny

# Inputs that name a customer-managed KMS key (pulumi-alicloud 4.0.0: disks, Extreme NAS, OSS SSE, ACK node pools and
# ACK secrets encryption), found at any depth (dataDisks[].kmsKeyId, systemDisk.kmsKeyId).
KEY_INPUTS = ("kmsKeyId", "kmsMasterKeyId", "systemDiskKmsKeyId", "systemDiskKmsKey", "encryptionProviderKey")

KMS_OPTION = (
    "KMS software key management instance (pay-as-you-go), which a customer-managed key (security.kms_key_id) lives in"
)


class Resource(Protocol):
    """What is read of a planned resource (``blueprints.review.plan.PlannedResource`` fits)."""

    @property
    def name(self) -> str:
        """Logical name."""

    @property
    def inputs(self) -> dict[str, Any]:
        """Engine-name inputs."""

    @property
    def short_type(self) -> str:
        """``oss.BucketLogging`` style type."""


@dataclass(frozen=True)
class KmsInstance:
    """The KMS instance a customer key lives in, as a cost line's resource: not one of the plan's resources (the stack
    names the key, it does not create the instance), so no pool or storage summary ever counts it as its own."""

    name: str = "KMS instance (outside this stack)"
    short_type: str = "kms.Instance"
    custom: bool = True
    inputs: dict[str, Any] = field(default_factory=dict)


def _key_ids(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [str(v) for k, v in value.items() if k in KEY_INPUTS and v]
        return found + [key for k, v in value.items() if k not in KEY_INPUTS for key in _key_ids(v)]
    if isinstance(value, list):
        return [key for item in value for key in _key_ids(item)]
    return []


def customer_keys(resources: Iterable[Resource]) -> list[tuple[Resource, str]]:
    """(first resource naming it, key id) per distinct customer-managed key in the resources' inputs, in plan order."""
    seen: dict[str, Resource] = {}
    for r in resources:
        for key in _key_ids(r.inputs):
            seen.setdefault(key, r)
    return [(r, key) for key, r in seen.items()]


def kms_parts(
    keys: list[tuple[Resource, str]], catalog: Catalog, region: str, days_per_month: float
) -> list[tuple[str, float, str, CnyPrice, str]]:
    """(item, quantity, unit, price, billing) of the KMS instance the keys live in: its pay-as-you-go instance fee and
    key fee a month, and its QPS fee (usage). One software instance holds them all; none when no key is named."""
    if not keys:
        return []
    names = ", ".join(key for _, key in keys)
    return [
        (
            f"KMS software key management instance holding {names} (pay-as-you-go; not created by this stack)",
            days_per_month,
            "instance-day",
            price_cny(catalog, "kms_instance", "software", region),
            "monthly",
        ),
        (
            f"KMS key fee: {len(keys)} key(s), one version each (each rotation adds one)",
            days_per_month * len(keys),
            "key-version-day",
            price_cny(catalog, "kms_key", "software", region),
            "monthly",
        ),
        ("KMS QPS fee (usage; not in the plan)", 0, "QPS-day", price_cny(catalog, "kms_qps", None, region), "usage"),
    ]


def kms_option(catalog: Catalog, region: str) -> tuple[str, CnyPrice]:
    """What ``security.kms_key_id`` would add, and the instance's price per day (a plan without a customer key)."""
    return KMS_OPTION, price_cny(catalog, "kms_instance", "software", region)
