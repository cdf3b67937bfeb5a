"""The dataset and checkpoint bucket as pure data: OSS name rules, its policy documents and its VPC endpoint.

No pulumi here: the profile validates names with ``check_bucket_name``, the bucket component renders the
documents, and the guardrails read them back out of a plan.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

# OSS bucket naming rules ("Bucket naming conventions", Alibaba Cloud OSS user guide, updated 2026-03-20,
# https://www.alibabacloud.com/help/en/oss/user-guide/bucket-naming-conventions; the same three rules are
# listed under error 0015-00000001 "The specified bucket name is invalid").
BUCKET_NAME_MIN, BUCKET_NAME_MAX = 3, 63
BUCKET_NAME_RULE = "3-63 characters: lowercase letters, digits and hyphens, starting and ending with a letter or digit"
_ALLOWED = re.compile(r"[a-z0-9-]+")
_EDGE = re.compile(r"[a-z0-9]")

# A RAM policy document may hold at most 6144 bytes (pulumi_alicloud 4.0.0 ``ram.Policy`` docstring,
# ``policy_document``: "The maximum length is 6144 bytes").
RAM_POLICY_MAX_BYTES = 6144

# What a training node may do in its bucket (OSS RAM action table,
# https://www.alibabacloud.com/help/ja/oss/user-guide/ram-policy-overview/, as collected in
# ready-to-train.md §3b): list and read bucket info on the bucket itself ...
NODE_BUCKET_ACTIONS = ("oss:GetBucketInfo", "oss:ListObjects", "oss:ListObjectVersions")
# ... and read, write, delete and resume multipart uploads of its objects (checkpoints are large).
NODE_OBJECT_ACTIONS = (
    "oss:AbortMultipartUpload",
    "oss:DeleteObject",
    "oss:GetObject",
    "oss:ListParts",
    "oss:PutObject",
)


def check_bucket_name(name: str) -> str:
    """``name`` if OSS accepts it as a bucket name; otherwise ValueError naming the value and the rule it breaks."""
    if not isinstance(name, str):
        raise ValueError(f"bucket name {name!r} must be text ({BUCKET_NAME_RULE})")
    if not BUCKET_NAME_MIN <= len(name) <= BUCKET_NAME_MAX:
        raise ValueError(
            f"bucket name {name!r} has {len(name)} characters; OSS allows {BUCKET_NAME_MIN} to {BUCKET_NAME_MAX}"
        )
    if not _ALLOWED.fullmatch(name):
        bad = sorted({c for c in name if not _ALLOWED.fullmatch(c)})
        raise ValueError(
            f"bucket name {name!r} contains {', '.join(repr(c) for c in bad)}; "
            "OSS allows only lowercase letters, digits and hyphens"
        )
    if not (_EDGE.fullmatch(name[0]) and _EDGE.fullmatch(name[-1])):
        raise ValueError(f"bucket name {name!r} must start and end with a lowercase letter or digit, not a hyphen")
    return name


# The access-log bucket is the data bucket's name plus this suffix; a name too long for it is cut and given a short
# hash of the full name, so two long data-bucket names never share a log bucket.
ACCESS_LOG_SUFFIX = "-logs"
_HASH_CHARS = 8


def access_log_bucket_name(data_bucket: str) -> str:
    """The access-log bucket of ``data_bucket``: ``<data bucket>-logs``, or, past 63 characters, a cut of the name,
    8 hex characters of its SHA-256 and ``-logs``. It depends on the data bucket's name alone, so changing compute
    never renames it (names are global: pick ``bucket.access_log_bucket`` if another account holds it)."""
    check_bucket_name(data_bucket)
    name = data_bucket + ACCESS_LOG_SUFFIX
    if len(name) > BUCKET_NAME_MAX:
        digest = hashlib.sha256(data_bucket.encode("utf-8")).hexdigest()[:_HASH_CHARS]
        keep = BUCKET_NAME_MAX - len(ACCESS_LOG_SUFFIX) - _HASH_CHARS - 1
        name = f"{data_bucket[:keep].rstrip('-')}-{digest}{ACCESS_LOG_SUFFIX}"
    return check_bucket_name(name)


def internal_endpoint(region: str) -> str:
    """The OSS endpoint reachable from inside a VPC of ``region`` (no internet traffic, no public IP needed).

    Form ``oss-<region>-internal.aliyuncs.com`` as in the ossfs 2.0 guide
    (https://help.aliyun.com/en/oss/developer-reference/configure-ossfs-2-0) and the CSI driver's OSS example
    (ready-to-train.md §3b).
    """
    return f"oss-{region}-internal.aliyuncs.com"


def bucket_arn(bucket: str) -> str:
    """The RAM resource name of the bucket itself (``acs:oss:*:*:<bucket>``)."""
    return f"acs:oss:*:*:{bucket}"


def objects_arn(bucket: str) -> str:
    """The RAM resource name of every object in the bucket (``acs:oss:*:*:<bucket>/*``)."""
    return f"acs:oss:*:*:{bucket}/*"


def https_only_policy(bucket: str) -> str:
    """Bucket policy (JSON) that denies every request to ``bucket`` not made over HTTPS.

    One Deny on the bucket and its objects when ``acs:SecureTransport`` is false (aliyun/infraguard rule
    "oss-bucket-only-https-enabled"; Cloud Config rule of the same name; ready-to-train.md §3a). Deliberately no
    Allow: a bucket-policy Allow with Principal "*" would open the bucket to everyone, and a Deny with a
    Condition also binds the owner, who then simply has to use HTTPS too (OSS bucket-policy examples,
    https://www.alibabacloud.com/help/en/object-storage-service/latest/examples).
    """
    check_bucket_name(bucket)
    document = {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Deny",
                "Principal": ["*"],
                "Action": ["oss:*"],
                "Resource": [bucket_arn(bucket), objects_arn(bucket)],
                "Condition": {"Bool": {"acs:SecureTransport": ["false"]}},
            }
        ],
    }
    return _dump(document)


def node_bucket_policy(bucket: str) -> str:
    """RAM policy (JSON, version 1) letting training nodes use ``bucket`` and nothing else.

    Bucket-level actions on ``acs:oss:*:*:<bucket>``, object actions on ``acs:oss:*:*:<bucket>/*``
    (ready-to-train.md §3b). Raises ValueError if the document would exceed RAM's 6144-byte limit.
    """
    check_bucket_name(bucket)
    document: dict[str, Any] = {
        "Version": "1",
        "Statement": [
            {"Effect": "Allow", "Action": list(NODE_BUCKET_ACTIONS), "Resource": [bucket_arn(bucket)]},
            {"Effect": "Allow", "Action": list(NODE_OBJECT_ACTIONS), "Resource": [objects_arn(bucket)]},
        ],
    }
    text = _dump(document)
    size = len(text.encode("utf-8"))
    if size > RAM_POLICY_MAX_BYTES:  # cannot happen for a valid name today; guards future additions to the actions
        raise ValueError(f"node policy for bucket {bucket!r} is {size} bytes; RAM allows {RAM_POLICY_MAX_BYTES}")
    return text


def _dump(document: dict[str, Any]) -> str:
    """Compact, key-sorted JSON: byte-stable in plans and golden files."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))
