"""The dataset and checkpoint bucket: private, versioned, encrypted, HTTPS-only."""

from __future__ import annotations

from typing import Any, Iterator

from blueprints import objectstore
from blueprints.guardrails.inputs import as_list, json_document, of_types, statements
from blueprints.guardrails.model import Rule
from blueprints.plan import Plan, PlannedResource

# ---- the dataset and checkpoint bucket (AIT010, AIT011) ----

# Split resources that configure a bucket, keyed by their ``bucket`` input (the bucket's name).
_BUCKET_SETTINGS = ("oss.BucketAcl", "oss.BucketPublicAccessBlock", "oss.BucketVersioning", "oss.BucketServerSideEncryption", "oss.BucketPolicy")
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
            yield r.name, f"bucket {name} does not block public access (oss.BucketPublicAccessBlock block_public_access=True)"
        versioning = settings.get(("oss.BucketVersioning", name))
        status = versioning.inputs.get("status") if versioning else (r.inputs.get("versioning") or {}).get("status")
        if status != "Enabled":
            yield r.name, f"bucket {name} is not versioned (oss.BucketVersioning status=Enabled); an overwritten checkpoint would be lost"
        sse = settings.get(("oss.BucketServerSideEncryption", name))
        algorithm = sse.inputs.get("sseAlgorithm") if sse else (r.inputs.get("serverSideEncryptionRule") or {}).get("sseAlgorithm")
        if algorithm not in SSE_ALGORITHMS:
            yield r.name, f"bucket {name} has no server-side encryption (oss.BucketServerSideEncryption AES256 or KMS)"
        if r.inputs.get("forceDestroy"):
            yield r.name, f"bucket {name} has force_destroy, which deletes every object with the bucket"
        policy = settings.get(("oss.BucketPolicy", name))
        document = json_document(policy.inputs.get("policy") if policy else r.inputs.get("policy"))
        if document is None:
            yield r.name, f"bucket {name} has no bucket policy that denies plain HTTP (acs:SecureTransport false)"
            continue
        policy_statements = statements(document)
        if any(s.get("Effect") == "Allow" and "*" in as_list(s.get("Principal")) for s in policy_statements):
            yield r.name, f'bucket {name} policy allows Principal "*", which opens the bucket to everyone'
        if not any(_denies_plain_http(s, name) for s in policy_statements):
            yield r.name, f"bucket {name} policy does not deny plain HTTP on the bucket and its objects (acs:SecureTransport false)"


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


RULES: tuple[Rule, ...] = (
    Rule("AIT010", "error", "OSS buckets are private, versioned, encrypted and HTTPS-only", bucket_safety),
)
