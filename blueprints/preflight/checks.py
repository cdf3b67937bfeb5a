"""The checks: ask a CloudReader for quotas, stock and file-system zones, and compare them with the plan's needs.

Pure: the reader is a protocol that takes the API's own request parameters and returns its documented JSON body,
so tests replay recorded responses and the SDK adapter (``blueprints.preflight.aliyun``) stays thin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from blueprints.preflight.needs import ComputeNeed, Needs, StorageNeed

# API names as ``product.Action`` (the reader's vocabulary and the report's ``api`` field).
ACCOUNT_ATTRIBUTES = "ecs.DescribeAccountAttributes"
AVAILABLE_RESOURCE = "ecs.DescribeAvailableResource"
NAS_ZONES = "nas.DescribeZones"
PRODUCT_QUOTAS = "quotas.ListProductQuotas"

# DescribeAccountAttributes AttributeName values (ECS API reference, and the SDK model's docstring):
# https://help.aliyun.com/en/ecs/developer-reference/api-ecs-2014-05-26-describeaccountattributes
VCPU_ATTRIBUTES = {
    False: ("max-postpaid-instance-vcpu-count", "used-postpaid-instance-vcpu-count"),
    True: ("max-spot-instance-vcpu-count", "used-spot-instance-vcpu-count"),
}
# Quota Center's "ECS Quotas by Instance Type": ProductCode ecs-spec, QuotaActionCode = the instance type
# (the documented ListProductQuotas example):
# https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-listproductquotas
INSTANCE_TYPE_QUOTA_PRODUCT = "ecs-spec"

OK, WARN, SHORT, UNKNOWN = "ok", "warn", "short", "unknown"
STATUSES = (OK, WARN, SHORT, UNKNOWN)

# The kinds of check, by the prefix of their id: the names `--accept-unanswered` takes, in run order.
KINDS = {
    "quota.vcpu.": "vcpu-quota",
    "quota.instance_type.": "instance-type-quota",
    "stock.": "stock",
    "storage.": "storage-zone",
}
KIND_NAMES = tuple(KINDS.values())


class CloudError(Exception):
    """An API call failed (permission, throttling, network): the check it served becomes ``unknown``."""

    def __init__(self, api: str, code: str, message: str):
        # One line whatever the SDK said: the report prints each reason on its check's line.
        self.api, self.code, self.message = api, " ".join(code.split()), " ".join(message.split())
        super().__init__(f"{api}: {self.code}: {self.message}")


class CloudReader(Protocol):
    """Calls one API with its documented request parameters and returns the documented response body."""

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """``call("ecs.DescribeAvailableResource", {"RegionId": ..., ...})`` → the JSON body as a dict."""
        ...


@dataclass(frozen=True)
class Check:
    """One question asked of the cloud and its answer, with the numbers."""

    id: str
    subject: str
    status: str
    needed: int | None
    available: int | None
    unit: str
    detail: str
    api: str

    @property
    def kind(self) -> str:
        """vcpu-quota | instance-type-quota | stock | storage-zone (the name ``--accept-unanswered`` takes)."""
        return next(kind for prefix, kind in KINDS.items() if self.id.startswith(prefix))

    def to_dict(self) -> dict[str, Any]:
        """JSON form (part of ``aitrain.preflight/v1``)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "subject": self.subject,
            "status": self.status,
            "needed": self.needed,
            "available": self.available,
            "unit": self.unit,
            "detail": self.detail,
            "api": self.api,
        }


def run_checks(needs: Needs, reader: CloudReader) -> list[Check]:
    """Every check for a plan, in a stable order: vCPU quotas, instance-type quotas, stock per zone, storage."""
    checks: list[Check] = []
    for spot in (False, True):
        wanted = needs.vcpus(spot=spot)
        if wanted:
            checks.append(vcpu_quota(needs.region, wanted, spot, reader))
    for instance_type in dict.fromkeys(c.instance_type for c in needs.compute):
        checks.extend(
            instance_type_quota(needs.region, [c for c in needs.compute if c.instance_type == instance_type], reader)
        )
    for group in needs.compute:
        checks.extend(stock(needs.region, group, reader))
    if needs.storage is not None:
        checks.append(storage_zone(needs.region, needs.storage, reader))
    return checks


def vcpu_quota(region: str, needed: int, spot: bool, reader: CloudReader) -> Check:
    """Pay-as-you-go (or spot) vCPUs the account may still start in the region vs. what the plan starts."""
    max_name, used_name = VCPU_ATTRIBUTES[spot]
    kind = "spot" if spot else "pay-as-you-go"
    check_id, subject = f"quota.vcpu.{'spot' if spot else 'postpaid'}", f"{kind} vCPUs in {region}"
    try:
        body = reader.call(ACCOUNT_ATTRIBUTES, {"RegionId": region, "AttributeName": [max_name, used_name]})
    except CloudError as exc:
        return Check(check_id, subject, UNKNOWN, needed, None, "vCPUs", str(exc), ACCOUNT_ATTRIBUTES)
    values = _attribute_values(body)
    limit, used = values.get(max_name), values.get(used_name)
    if limit is None or used is None:
        missing = ", ".join(n for n, v in ((max_name, limit), (used_name, used)) if v is None)
        return Check(
            check_id,
            subject,
            UNKNOWN,
            needed,
            None,
            "vCPUs",
            f"the response has no value for {missing}",
            ACCOUNT_ATTRIBUTES,
        )
    free = limit - used
    status = OK if needed <= free else SHORT
    detail = f"quota {limit}, in use {used}, free {free}; the plan starts {needed}"
    if status == SHORT:
        detail += f" (short by {needed - free}: raise '{max_name}' in Quota Center)"
    return Check(check_id, subject, status, needed, free, "vCPUs", detail, ACCOUNT_ATTRIBUTES)


def _attribute_values(body: Mapping[str, Any]) -> dict[str, int]:
    """AttributeName → integer Value of its first ValueItem (vCPU counts come back as strings)."""
    out: dict[str, int] = {}
    for item in (body.get("AccountAttributeItems") or {}).get("AccountAttributeItem") or []:
        values = (item.get("AttributeValues") or {}).get("ValueItem") or []
        if values and str(values[0].get("Value", "")).strip().lstrip("-").isdigit():
            out[str(item.get("AttributeName"))] = int(str(values[0]["Value"]).strip())
    return out


# Quota units as Quota Center spells them (English or Chinese), mapped to the plan quantity they count.
_UNIT_WORDS = (
    ("vcpu", "vCPUs"),
    ("核", "vCPUs"),
    ("gpu", "GPUs"),
    ("卡", "GPUs"),
    ("instance", "instances"),
    ("台", "instances"),
)


def instance_type_quota(region: str, groups: list[ComputeNeed], reader: CloudReader) -> list[Check]:
    """Quota Center's per-instance-type quota (ecs-spec) for one type, compared in the unit the quota states."""
    instance_type = groups[0].instance_type
    check_id, subject = f"quota.instance_type.{instance_type}", f"{instance_type} quota in {region}"
    params = {
        "ProductCode": INSTANCE_TYPE_QUOTA_PRODUCT,
        "QuotaActionCode": instance_type,
        "Dimensions": [{"Key": "regionId", "Value": region}],
        "MaxResults": 100,
    }
    try:
        body = reader.call(PRODUCT_QUOTAS, params)
    except CloudError as exc:
        return [Check(check_id, subject, UNKNOWN, None, None, "", str(exc), PRODUCT_QUOTAS)]
    zones = {z for g in groups for z in g.zones}
    quotas = [
        q
        for q in body.get("Quotas") or []
        if q.get("QuotaActionCode") in (None, instance_type) and _dimensions_match(q.get("Dimensions"), region, zones)
    ]
    if not quotas:
        return [
            Check(
                check_id,
                subject,
                UNKNOWN,
                None,
                None,
                "",
                f"Quota Center lists no {INSTANCE_TYPE_QUOTA_PRODUCT} quota for this type in {region}",
                PRODUCT_QUOTAS,
            )
        ]
    wanted = {
        "vCPUs": sum(g.vcpus or 0 for g in groups),
        "GPUs": sum(g.gpus or 0 for g in groups),
        "instances": sum(g.nodes for g in groups),
    }
    checks = []
    for q in quotas:
        dims = q.get("Dimensions") or {}
        where = (
            ", ".join(f"{k}={v}" for k, v in sorted(dims.items()) if k != "regionId") if isinstance(dims, dict) else ""
        )
        suffix = f" ({where})" if where else ""
        total, usage, unit_text = q.get("TotalQuota"), q.get("TotalUsage"), str(q.get("QuotaUnit") or "")
        unit = next((u for word, u in _UNIT_WORDS if word in unit_text.lower()), None)
        if total is None:
            checks.append(
                Check(
                    check_id,
                    subject + suffix,
                    UNKNOWN,
                    None,
                    None,
                    unit_text,
                    "the quota has no TotalQuota",
                    PRODUCT_QUOTAS,
                )
            )
            continue
        free = int(float(total) - float(usage or 0))
        if unit is None:
            checks.append(
                Check(
                    check_id,
                    subject + suffix,
                    UNKNOWN,
                    None,
                    free,
                    unit_text,
                    f"quota {total:g}, in use {float(usage or 0):g} {unit_text}; unit not understood, so not compared",
                    PRODUCT_QUOTAS,
                )
            )
            continue
        needed = wanted[unit]
        status = OK if needed <= free else SHORT
        detail = f"quota {float(total):g}, in use {float(usage or 0):g}, free {free} {unit}; the plan starts {needed}"
        if status == SHORT:
            detail += f" (short by {needed - free}: request more for {instance_type} in Quota Center)"
        checks.append(Check(check_id, subject + suffix, status, needed, free, unit, detail, PRODUCT_QUOTAS))
    return checks


def _dimensions_match(dims: Any, region: str, zones: set[str]) -> bool:
    if not isinstance(dims, dict):
        return True
    if dims.get("regionId") not in (None, region):
        return False
    return dims.get("zoneId") in (None, *zones)


def stock(region: str, group: ComputeNeed, reader: CloudReader) -> list[Check]:
    """DescribeAvailableResource for the group's type in each of its zones: Available/SoldOut and the stock level.

    A pool spread over several zones is short only when no zone has stock; a zone without stock is then a warning.
    """
    results: list[tuple[str, str, str]] = []  # (zone, status, detail)
    for zone in group.zones:
        params = stock_request(region, group.instance_type, group.charge_type, group.spot_strategy, zone=zone)
        try:
            body = reader.call(AVAILABLE_RESOURCE, params)
        except CloudError as exc:
            results.append((zone, UNKNOWN, str(exc)))
            continue
        status, detail = _stock_status(body, zone, group.instance_type)
        if detail.startswith(NOT_OFFERED) and not group.zones_from_catalog:
            detail += (
                "; the offline plan assumed this zone because the catalog lists no zones for the type here: "
                "run `aitrain zones --write` and plan again"
            )
        results.append((zone, status, detail))
    any_ok = any(s in (OK, WARN) for _, s, _ in results)
    checks = []
    for zone, status, detail in results:
        if status == SHORT and any_ok and len(group.zones) > 1:
            status, detail = WARN, detail + "; the other zones of the group have stock"
        kind = "spot " if group.spot else ""
        checks.append(
            Check(
                f"stock.{group.instance_type}.{zone}",
                f"{kind}{group.instance_type} in {zone} ({group.resource})",
                status,
                group.nodes,
                None,
                "nodes",
                detail,
                AVAILABLE_RESOURCE,
            )
        )
    return checks


NOT_OFFERED = "not offered in this zone"


def stock_request(
    region: str, instance_type: str, charge_type: str, spot_strategy: str, *, zone: str | None = None
) -> dict[str, Any]:
    """DescribeAvailableResource's parameters for one type's stock, in one zone or (no ``zone``) every zone of the
    region. IoOptimized=optimized with InstanceType is what the API reference recommends for this query:
    https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource"""
    params: dict[str, Any] = {"RegionId": region}
    if zone is not None:
        params["ZoneId"] = zone
    params.update(
        DestinationResource="InstanceType",
        IoOptimized="optimized",
        InstanceType=instance_type,
        InstanceChargeType=charge_type,
    )
    if charge_type == "PostPaid":
        params["SpotStrategy"] = spot_strategy
    return params


def _stock_status(body: Mapping[str, Any], zone: str, instance_type: str) -> tuple[str, str]:
    for zone_id, items in instance_types_by_zone(body):
        if zone_id != zone:
            continue
        for item in items:
            if item.get("Value") == instance_type:
                state, category = str(item.get("Status")), str(item.get("StatusCategory"))
                text = f"{state} ({category})"
                if state != "Available" or category == "WithoutStock":
                    return SHORT, f"{text}: none to start now; try another zone or later"
                if category == "ClosedWithStock":
                    return WARN, f"{text}: low stock that will not be replenished"
                return OK, text
    return SHORT, f"{NOT_OFFERED} (absent from DescribeAvailableResource)"


def zones_with_stock(body: Mapping[str, Any], instance_type: str) -> tuple[str, ...]:
    """The zones of a region-wide DescribeAvailableResource body where ``instance_type`` can start now (Available,
    not WithoutStock), in the answer's order."""
    return tuple(
        zone
        for zone, items in instance_types_by_zone(body)
        if any(
            i.get("Value") == instance_type
            and i.get("Status") == "Available"
            and i.get("StatusCategory") != "WithoutStock"
            for i in items
        )
    )


def instance_types_by_zone(body: Mapping[str, Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """(ZoneId, its InstanceType SupportedResource items) for every zone of a DescribeAvailableResource body.

    The one reading of that body's nesting (AvailableZones/AvailableZone/AvailableResources/AvailableResource/
    SupportedResources/SupportedResource), for the stock check and for ``aitrain zones``; malformed parts read as empty.
    """
    out = []
    for zone in _items(body.get("AvailableZones"), "AvailableZone"):
        items = [
            item
            for resource in _items(zone.get("AvailableResources"), "AvailableResource")
            if resource.get("Type") == "InstanceType"
            for item in _items(resource.get("SupportedResources"), "SupportedResource")
        ]
        out.append((str(zone.get("ZoneId") or ""), items))
    return out


def _items(container: Any, key: str) -> list[Mapping[str, Any]]:
    found = container.get(key) if isinstance(container, Mapping) else None
    return [x for x in found if isinstance(x, Mapping)] if isinstance(found, list) else []


def storage_zone(region: str, need: StorageNeed, reader: CloudReader) -> Check:
    """NAS DescribeZones for the file system type: does the zone offer this storage type and protocol?"""
    check_id = f"storage.{need.kind}.{need.zone}"
    subject = f"{need.kind} ({need.file_system_type} {need.storage_type}, {need.protocol_type}) in {need.zone}"
    try:
        body = reader.call(NAS_ZONES, {"RegionId": region, "FileSystemType": need.file_system_type})
    except CloudError as exc:
        return Check(check_id, subject, UNKNOWN, None, None, "", str(exc), NAS_ZONES)
    zones = {str(z.get("ZoneId")): z for z in (body.get("Zones") or {}).get("Zone") or []}
    zone = zones.get(need.zone)
    if zone is None:
        offered = ", ".join(sorted(zones)) or "none"
        return Check(
            check_id,
            subject,
            SHORT,
            None,
            None,
            "",
            f"{need.file_system_type} file systems are not offered in {need.zone}; zones that offer them: {offered}",
            NAS_ZONES,
        )
    pairs = {
        (str(t.get("StorageType", "")).lower(), str(t.get("ProtocolType", "")).lower())
        for t in (zone.get("InstanceTypes") or {}).get("InstanceType") or []
    }
    if not pairs:
        # Older answers list protocols under Performance / Capacity only (General-purpose NAS; the 2019 reference,
        # https://www.alibabacloud.com/help/doc-detail/94146.htm); the current one calls them reserved.
        for storage_type in ("Performance", "Capacity"):
            for protocol in (zone.get(storage_type) or {}).get("Protocol") or []:
                pairs.add((storage_type.lower(), str(protocol).lower()))
    wanted = (need.storage_type.lower(), need.protocol_type.lower())
    if wanted in pairs:
        return Check(check_id, subject, OK, None, None, "", "offered", NAS_ZONES)
    listed = ", ".join(f"{s}/{p}" for s, p in sorted(pairs)) or "nothing"
    return Check(
        check_id,
        subject,
        SHORT,
        None,
        None,
        "",
        f"{need.zone} offers {listed}, not {need.storage_type}/{need.protocol_type}",
        NAS_ZONES,
    )
