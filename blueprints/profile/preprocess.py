"""The optional CPU preprocessing node group (``preprocess:``) of the fixed-cluster and autoscaling-pool profiles.

CPU nodes that decode and augment the training data so the GPU nodes do not wait on their own vCPUs (the advisor's
input-pipeline check, ``blueprints/advisor/feed.py``, says when that is needed and how many). They share the GPU
nodes' VPC, vSwitch and security group, mount the shared file system and reach the bucket with a role scoped to it;
no GPU, no public IP, encrypted disks. Off unless the profile has the section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationInfo, model_validator

from blueprints.catalog import instance_price
from blueprints.core.errors import FieldError, did_you_mean, join_allowed
from blueprints.profile.context import context_of
from blueprints.profile.strict import Strict

if TYPE_CHECKING:
    from blueprints.catalog import Catalog

# The group's default type: docs/sources/alibaba-cloud-facts.md section 5, "Suggested generator defaults"
# (preprocessing on g7 or g8i 8xlarge); the same default as the advisor's sizing (blueprints/advisor/feed.py).
DEFAULT_PREPROCESS_TYPE = "ecs.g7.8xlarge"
# aitrain's limit, not the cloud's: each node is one ecs.Instance named by its index (so a resize adds or removes
# only the last ones); 100 is the advisor's default node limit (blueprints/advisor/data/limits.csv max_nodes_default).
PREPROCESS_MAX_NODES = 100
# The component's name suffix (``<profile>-preprocess``): its node role is ``<profile>-preprocess-node``.
PREPROCESS_UNIT = "preprocess"


class PreprocessGroup(Strict):
    """CPU nodes for decode and augmentation, beside the GPU nodes, on the same network, file system and bucket."""

    instance_type: str = Field(
        default=DEFAULT_PREPROCESS_TYPE,
        description="A CPU instance type from the catalog (no GPU), e.g. ecs.g7.8xlarge or ecs.c7.2xlarge.",
    )
    nodes: int = Field(
        ge=1,
        le=PREPROCESS_MAX_NODES,
        description=f"Number of CPU preprocessing nodes, 1–{PREPROCESS_MAX_NODES} (`aitrain recommend` sizes it).",
    )
    system_disk_gib: int = Field(
        default=100, ge=20, le=2048, description="System disk size in GiB (ESSD, encrypted), 20–2048."
    )
    system_disk_performance_level: Literal["PL0", "PL1", "PL2", "PL3"] = Field(
        default="PL1", description="ESSD performance level of the system disk."
    )

    @model_validator(mode="after")
    def _cpu_type_in_catalog(self, info: ValidationInfo) -> "PreprocessGroup":
        catalog = context_of(info).catalog
        cpu_types = sorted(name for name, it in catalog.instance_types.items() if not it.is_gpu)
        found = catalog.instance_types.get(self.instance_type)
        if found is not None and found.is_gpu:
            raise FieldError(
                "instance_type",
                self.instance_type,
                f"is a GPU type ({found.gpu_count} × {found.gpu_model or 'unnamed GPU'}); the preprocessing group runs "
                f"decode and augmentation on CPUs so the GPUs train; use a CPU type: {join_allowed(cpu_types)}",
            )
        if found is None:
            hint = did_you_mean(self.instance_type, cpu_types)
            raise FieldError(
                "instance_type",
                self.instance_type,
                f"is not a CPU instance type in the catalog; allowed: {join_allowed(cpu_types)}"
                + (f"; {hint}" if hint else ""),
            )
        return self


def preprocess_summary(group: PreprocessGroup | None, catalog: "Catalog", region: str) -> dict[str, Any]:
    """The plan summary's lines for the group (none without one): its size, what it shares, and its price."""
    if group is None:
        return {}
    cpu = catalog.instance_type(group.instance_type)
    out: dict[str, Any] = {
        "preprocess_nodes": group.nodes,
        "preprocess_instance_type": cpu.instance_type,
        "preprocess_vcpus": group.nodes * cpu.vcpus,
        "preprocess": (
            f"{group.nodes} × {cpu.instance_type} ({cpu.vcpus} vCPU, {cpu.memory_gib:g} GiB, no GPU) in the first "
            "compute zone's vSwitch and the nodes' security group, no public IP, encrypted ESSD system disk; they "
            "mount the shared file system at /mnt/shared and use the bucket with their own role (the bucket policy "
            "attached to it)"
        ),
    }
    price = instance_price(catalog, cpu.instance_type, region)
    if price.cny is None:
        out["preprocess_price"] = f"unknown: {price.source}"
    else:
        out["preprocess_cny_per_hour"] = round(price.cny * group.nodes, 2)
        out["preprocess_price_basis"] = (
            f"{group.nodes} × {price.cny:g} CNY/h pay-as-you-go ({price.status}; {price.region}, {price.date}; "
            f"{price.source})"
        )
    return out
