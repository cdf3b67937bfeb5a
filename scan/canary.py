"""The canary: the default preset's Terraform export with known violations injected, so a scan that finds
nothing there proves it did not run (or no longer reads Terraform JSON), rather than that all is well."""

from __future__ import annotations

import copy
from typing import Any

# What checkov must report on the canary (checkov/terraform/checks/resource/alicloud/*.py @ checkov 3.3.30):
# CKV_ALI_2 an ingress rule from 0.0.0.0/0 whose port range covers 22; CKV_ALI_7 an alicloud_disk without
# ``encrypted = true``; CKV_ALI_32 a launch template data disk without ``encrypted = true``.
EXPECTED_FAILURES = frozenset({"CKV_ALI_2", "CKV_ALI_7", "CKV_ALI_32"})


def inject(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of a Terraform JSON export with the three violations above added (the original is untouched)."""
    canary = copy.deepcopy(document)
    resources = canary.setdefault("resource", {})
    groups = resources.get("alicloud_security_group", {})
    if not groups:
        raise ValueError("the canary needs an export with an alicloud_security_group")
    group = sorted(groups)[0]
    resources.setdefault("alicloud_security_group_rule", {})["canary-public-ssh"] = {
        "type": "ingress",
        "ip_protocol": "tcp",
        "port_range": "22/22",
        "cidr_ip": "0.0.0.0/0",
        "policy": "accept",
        "security_group_id": f"${{alicloud_security_group.{group}.id}}",
    }
    resources.setdefault("alicloud_disk", {})["canary-unencrypted-disk"] = {
        "availability_zone": "cn-shanghai-a",
        "category": "cloud_essd",
        "size": 100,
        "encrypted": False,
    }
    # A data disk without encryption on the export's own launch template (or on a new one if it has none).
    templates = resources.setdefault("alicloud_ecs_launch_template", {})
    template = (
        templates[sorted(templates)[0]]
        if templates
        else templates.setdefault("canary-template", {"launch_template_name": "canary"})
    )
    template.setdefault("data_disks", []).append(
        {"category": "cloud_essd", "name": "canary-unencrypted", "size": 100, "encrypted": False}
    )
    return canary
