"""The dataset and checkpoint bucket: private, versioned, expiring old
versions, encrypted, HTTPS-only over TLS 1.2+, logged to a safe bucket."""

from __future__ import annotations

from typing import Any, Iterator

from blueprints.core import objectstore
from blueprints.review.guardrails.inputs import as_list, json_document, of_types, statements
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan, PlannedResource

# ---- the dataset and checkpoint bucket (AIT010, AIT011) ----

# Split resources that configure a bucket, keyed by their ``bucket`` input (the bucket's name).
_BUCKET_SETTINGS = (
    "oss.BucketAcl",
    "oss.BucketPublicAccessBlock",
    "oss.BucketVersioning",
    "oss.BucketServerSideEncryption",
    "oss.BucketPolicy",
)
SSE_ALGORITHMS = ("AES256", "KMS")  # oss.BucketServerSideEncryption ``sse_algorithm`` values (SDK 4.0.0)


def bucket_safety(plan: Plan) -> Iterator[tuple[str, str]]:
    """Each created bucket: private, public access blocked, versioned, encrypted, HTTPS-only, never force-destroyed."""
    settings: dict[tuple[str, str], PlannedResource] = {}
    for r in of_types(plan, _BUCKET_SETTINGS):
        settings[(r.short_type, str(r.inputs.get("bucket")))] = r
    for r in of_types(plan, ("oss.Bucket",)):
        name = str(r.inputs.get("bucket"))
        acl = settings.get(("oss.BucketAcl", name))
        if (acl.inputs.get("acl") if acl else r.inputs.get("acl")) != "private":
            yield r.name, f"bucket {name} has no private ACL (oss.BucketAcl acl=private)"
        block = settings.get(("oss.BucketPublicAccessBlock", name))
        if not (block and block.inputs.get("blockPublicAccess") is True):
            yield (
                r.name,
                f"bucket {name} does not block public access (oss.BucketPublicAccessBlock block_public_access=True)",
            )
        versioning = settings.get(("oss.BucketVersioning", name))
        status = versioning.inputs.get("status") if versioning else (r.inputs.get("versioning") or {}).get("status")
        if status != "Enabled":
            yield (
                r.name,
                f"bucket {name} is not versioned (oss.BucketVersioning "
                "status=Enabled); an overwritten checkpoint would be lost",
            )
        sse = settings.get(("oss.BucketServerSideEncryption", name))
        algorithm = (
            sse.inputs.get("sseAlgorithm")
            if sse
            else (r.inputs.get("serverSideEncryptionRule") or {}).get("sseAlgorithm")
        )
        if algorithm not in SSE_ALGORITHMS:
            yield r.name, f"bucket {name} has no server-side encryption (oss.BucketServerSideEncryption AES256 or KMS)"
        if r.inputs.get("forceDestroy"):
            yield r.name, f"bucket {name} has force_destroy, which deletes every object with the bucket"
        if not _expires_noncurrent_versions(r):
            yield (
                r.name,
                (
                    f"bucket {name} keeps noncurrent versions forever (no enabled "
                    "lifecycleRules entry with noncurrentVersionExpirations);"
                    " every overwritten checkpoint stays billed"
                ),
            )
        policy = settings.get(("oss.BucketPolicy", name))
        document = json_document(policy.inputs.get("policy") if policy else r.inputs.get("policy"))
        if document is None:
            yield r.name, f"bucket {name} has no bucket policy that denies plain HTTP (acs:SecureTransport false)"
            continue
        policy_statements = statements(document)
        if any(s.get("Effect") == "Allow" and "*" in as_list(s.get("Principal")) for s in policy_statements):
            yield r.name, f'bucket {name} policy allows Principal "*", which opens the bucket to everyone'
        if not any(_denies_plain_http(s, name) for s in policy_statements):
            yield (
                r.name,
                f"bucket {name} policy does not deny plain HTTP on the "
                "bucket and its objects (acs:SecureTransport false)",
            )


def _expires_noncurrent_versions(bucket: PlannedResource) -> bool:
    """An enabled lifecycle rule deletes noncurrent versions after some days (versioning alone keeps them all)."""
    for rule in as_list(bucket.inputs.get("lifecycleRules")):
        if isinstance(rule, dict) and rule.get("enabled") is not False:
            if any(
                isinstance(e, dict) and isinstance(e.get("days"), int) and e["days"] > 0
                for e in as_list(rule.get("noncurrentVersionExpirations"))
            ):
                return True
    return False


def _denies_plain_http(statement: dict[str, Any], bucket: str) -> bool:
    """A Deny of every OSS action, for everyone, on the bucket and its objects, when the request is not HTTPS."""
    condition = (statement.get("Condition") or {}).get("Bool") or {}
    insecure = [str(v).lower() for v in as_list(condition.get("acs:SecureTransport"))] == ["false"]
    return (
        statement.get("Effect") == "Deny"
        and "*" in as_list(statement.get("Principal"))
        and bool({"oss:*", "*"} & set(as_list(statement.get("Action"))))
        and {objectstore.bucket_arn(bucket), objectstore.objects_arn(bucket)} <= set(as_list(statement.get("Resource")))
        and insecure
    )


# ---- TLS versions (AIT021) and access logging (AIT022) ----

SAFE_TLS = ("TLSv1.2", "TLSv1.3")  # oss.BucketHttpsConfig tls_versions values at or above TLS 1.2


def _by_bucket(plan: Plan, short_type: str) -> dict[str, PlannedResource]:
    return {str(r.inputs.get("bucket")): r for r in of_types(plan, (short_type,))}


def bucket_tls(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT021: each created bucket accepts only TLS 1.2 and 1.3."""
    configs = _by_bucket(plan, "oss.BucketHttpsConfig")
    for r in of_types(plan, ("oss.Bucket",)):
        name = str(r.inputs.get("bucket"))
        config = configs.get(name)
        if config is None or config.inputs.get("enable") is not True:
            yield (
                r.name,
                f"bucket {name} accepts TLS 1.0 and 1.1: add an oss.BucketHttpsConfig "
                "with enable true and tlsVersions [TLSv1.2, TLSv1.3]",
            )
            continue
        versions = as_list(config.inputs.get("tlsVersions"))
        if not versions or set(versions) - set(SAFE_TLS):
            yield r.name, f"bucket {name} allows TLS versions {versions}; allow only {list(SAFE_TLS)}"


def log_buckets(plan: Plan) -> set[str]:
    """The buckets that receive another bucket's access logs (``oss.BucketLogging`` or inline ``logging``)."""
    pairs = [(r.inputs.get("bucket"), r.inputs.get("targetBucket")) for r in of_types(plan, ("oss.BucketLogging",))]
    pairs += [
        (r.inputs.get("bucket"), (r.inputs.get("logging") or {}).get("targetBucket"))
        for r in of_types(plan, ("oss.Bucket",))
    ]
    return {str(target) for source, target in pairs if target and target != source}


def _log_target_problems(plan: Plan, target: str) -> list[str]:
    """Why ``target`` is no place for audit logs: not private, public access not blocked, or not encrypted at rest."""
    settings = {
        short: _by_bucket(plan, short).get(target)
        for short in ("oss.BucketAcl", "oss.BucketPublicAccessBlock", "oss.BucketServerSideEncryption")
    }
    bucket = _by_bucket(plan, "oss.Bucket")[target]
    acl, block, sse = (
        settings["oss.BucketAcl"],
        settings["oss.BucketPublicAccessBlock"],
        settings["oss.BucketServerSideEncryption"],
    )
    problems = []
    if (acl.inputs.get("acl") if acl else bucket.inputs.get("acl")) != "private":
        problems.append("is not private")
    if not (block and block.inputs.get("blockPublicAccess") is True):
        problems.append("does not block public access")
    if (
        sse.inputs.get("sseAlgorithm")
        if sse
        else (bucket.inputs.get("serverSideEncryptionRule") or {}).get("sseAlgorithm")
    ) not in SSE_ALGORITHMS:
        problems.append("is not encrypted")
    return problems


def bucket_logging(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT022: each created bucket logs access to another, private and encrypted bucket.

    A bucket that receives another bucket's logs is not asked to log its own access: that would need a third bucket,
    and so on; its reads are the rare ones an incident asks about, and ActionTrail (AIT032) records who changed it.
    """
    logs = _by_bucket(plan, "oss.BucketLogging")
    created = _by_bucket(plan, "oss.Bucket")
    receiving = log_buckets(plan)
    for name, r in created.items():
        logging = logs.get(name)
        target = logging.inputs.get("targetBucket") if logging else (r.inputs.get("logging") or {}).get("targetBucket")
        if not target:
            if name not in receiving:
                yield (
                    r.name,
                    (
                        f"bucket {name} has no access logging: set bucket.access_logging "
                        "true (aitrain then writes the logs to a separate"
                        " log bucket it creates), or add an oss.BucketLogging with "
                        "targetBucket a separate private, encrypted log bucket,"
                        " so reads of the data can be audited"
                    ),
                )
        elif target == name:
            yield (
                r.name,
                f"bucket {name} logs access to itself; log to a separate "
                "bucket so the log cannot be changed with the data",
            )
        elif target not in created:
            yield (
                r.name,
                f"bucket {name} logs access to {target}, which this plan does not create: check that it is private, "
                "blocks public access and is encrypted",
            )
        else:
            problems = _log_target_problems(plan, str(target))
            if problems:
                yield (
                    r.name,
                    f"bucket {name} logs access to {target}, which {', '.join(problems)}: the audit trail of the data "
                    "would be readable or unprotected",
                )


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT010",
        "error",
        "OSS buckets are private, versioned, encrypted and HTTPS-only",
        bucket_safety,
        rationale=(
            "a public, unversioned or plain-HTTP bucket leaks or "
            "loses the dataset and checkpoints; CKV_ALI_1, CKV_ALI_10;"
            " KICS 62232513, 70919c0b, 7db8bd7e, c01d10de, ec62a32c; CIS 5.1, 5.4"
        ),
        fix=(
            "use the DataBucket unit: BucketAcl private, PublicAccessBlock, Versioning Enabled, SSE, a Deny on "
            "acs:SecureTransport false, noncurrent-version expiry"
        ),
        references=(4, 12, 13, 15, 16),
    ),
    Rule(
        "AIT021",
        "warning",
        "OSS buckets accept only TLS 1.2 or later",
        bucket_tls,
        rationale=(
            "TLS 1.0/1.1 are broken and OSS accepts them by default; infraguard oss-bucket-tls-version-check; CIS 5.4"
        ),
        fix="add oss.BucketHttpsConfig(bucket, enable=True, tls_versions=['TLSv1.2', 'TLSv1.3'])",
        references=(15,),
    ),
    Rule(
        "AIT022",
        "info",
        "OSS access is logged to another bucket",
        bucket_logging,
        rationale="without access logs nobody can say who read the training data; CKV_ALI_12; KICS 05db341e; CIS 5.3",
        fix=(
            "keep bucket.access_logging true (the default: a separate private, encrypted log bucket), or add "
            "oss.BucketLogging(bucket, target_bucket=<such a bucket>)"
        ),
        references=(17,),
    ),
)
