"""OSS kinds: the bucket and the settings resources that make
it private, versioned, encrypted, HTTPS-only and logged."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from blueprints.kinds.model import Costs, Free, Kind, Priced, ReplacingInputs, Resource, Role, Terraform

SERVICES = ("oss",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS
_SETTING = "a bucket setting has no charge of its own"


def logs_of(resources: Iterable[Resource], bucket: str) -> list[str]:
    """The other buckets whose access logs ``bucket`` receives
    (``oss.BucketLogging`` targetBucket, or a bucket's inline ``logging``)."""
    sources = []
    for r in resources:
        target = (
            r.inputs.get("targetBucket")
            if r.short_type == "oss.BucketLogging"
            else (r.inputs.get("logging") or {}).get("targetBucket")
            if r.short_type == "oss.Bucket"
            else None
        )
        if target == bucket and r.inputs.get("bucket") != bucket:
            sources.append(str(r.inputs.get("bucket")))
    return sources


def log_days(inputs: Mapping[str, Any]) -> str:
    """How long a bucket's lifecycle keeps an object: ``N days``
    (the shortest enabled expiry), or ``with no expiry``."""
    days = [
        e["days"]
        for rule in inputs.get("lifecycleRules") or []
        if isinstance(rule, dict) and rule.get("enabled") is not False
        for e in rule.get("expirations") or []
        if isinstance(e, dict) and isinstance(e.get("days"), int)
    ]
    return f"{min(days)} days" if days else "with no expiry"


def _bucket_cost(costs: Costs, r: Resource) -> None:
    """Storage per GiB-month: the log bucket's usage with its retention, the profile's dataset size, or usage."""
    storage_class = str(r.inputs.get("storageClass") or "Standard")
    price = costs.price("oss", storage_class)
    if logs_of(costs.resources, str(r.inputs.get("bucket"))):
        # The item stays short enough for the terminal's table; the logged buckets are in the log bucket's name.
        item = f"OSS {storage_class} per GiB stored: access logs, kept {log_days(r.inputs)} (usage; not in the plan)"
        costs.add(r, item, 0, "GiB-month", price, "usage")
    elif costs.dataset_gib is not None:
        item = f"OSS {storage_class} {costs.dataset_gib:g} GiB (the profile's dataset size)"
        costs.add(r, item, costs.dataset_gib, "GiB-month", price, "monthly")
    else:
        costs.add(r, f"OSS {storage_class} per GiB stored (usage; not in the plan)", 0, "GiB-month", price, "usage")


def _bucket_windows(inputs: Mapping[str, Any]) -> dict[str, float]:
    """How long each enabled lifecycle rule keeps noncurrent object versions (``noncurrentVersionExpirations``)."""
    windows: dict[str, float] = {}
    for index, rule in enumerate(inputs.get("lifecycleRules") or ()):
        if not isinstance(rule, dict) or rule.get("enabled") is False:
            continue
        for expiry in rule.get("noncurrentVersionExpirations") or ():
            days = expiry.get("days") if isinstance(expiry, dict) else None
            if isinstance(days, (int, float)) and not isinstance(days, bool):
                windows[f"noncurrent object versions (lifecycle rule {rule.get('id') or index})"] = days
    return windows


def _setting(token: str, key_properties: tuple[str, ...], why: str = _SETTING) -> Kind:
    return Kind(
        token=token, key_properties=key_properties, pricing=Free(why), terraform=_MAPPED, replacing_inputs=_DOCS
    )


KINDS = (
    Kind(
        token="alicloud:oss/bucket:Bucket",
        key_properties=("bucket", "storageClass", "forceDestroy"),
        pricing=Priced(_bucket_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.STATEFUL, Role.STORAGE_ACCESS}),
        recovery_windows=_bucket_windows,
    ),
    _setting("alicloud:oss/bucketAcl:BucketAcl", ("acl",)),
    _setting("alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock", ("blockPublicAccess",)),
    _setting(
        "alicloud:oss/bucketVersioning:BucketVersioning",
        ("status",),
        "versioning has no charge of its own: noncurrent versions are the bucket's storage",
    ),
    _setting("alicloud:oss/bucketServerSideEncryption:BucketServerSideEncryption", ("sseAlgorithm",)),
    # The policy document is long JSON (shown in full by --format json); the row names the bucket it guards.
    _setting("alicloud:oss/bucketPolicy:BucketPolicy", ("bucket",)),
    _setting("alicloud:oss/bucketHttpsConfig:BucketHttpsConfig", ("bucket", "enable", "tlsVersions")),
    _setting(
        "alicloud:oss/bucketLogging:BucketLogging",
        ("bucket", "targetBucket", "targetPrefix"),
        "logging has no charge of its own: the log objects are the target bucket's storage, priced on its line",
    ),
)
