"""DataBucket: the OSS bucket that holds datasets and checkpoints, and the RAM policy that scopes nodes to it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from blueprints import objectstore
from blueprints.components.base import child, stateful, with_tags

# Unfinished multipart uploads (a checkpoint write killed mid-way) keep billing until aborted; 7 days leaves
# time to resume one (ready-to-train.md §3a, "Old checkpoint versions").
ABORT_MULTIPART_DAYS = 7

# OSS-managed keys: encryption at rest with nothing to rotate or pay for. With ``security.kms_key_id`` the key goes in
# ``kms_master_key_id`` with ``sse_algorithm="KMS"`` (pulumi_alicloud 4.0.0 ``oss.BucketServerSideEncryption``).
SSE_ALGORITHM = "AES256"
SSE_ALGORITHM_KMS = "KMS"

# TLS versions the bucket accepts (oss.BucketHttpsConfig ``tls_versions``): nothing older than TLS 1.2.
TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")


@dataclass(frozen=True)
class DataBucketArgs:
    """What the bucket needs to know. ``name`` is the profile name (it names the RAM policy)."""

    name: str
    region: str
    bucket: str
    noncurrent_days: int
    checkpoint_prefix: str = "checkpoints/"
    existing: bool = False
    # Customer-managed KMS key for server-side encryption (None: OSS-managed AES256).
    kms_key_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


class DataBucket(pulumi.ComponentResource):
    """One private, encrypted, versioned, HTTPS-only OSS bucket per profile, and a RAM policy on it alone.

    The bucket is split the way pulumi-alicloud 4.0.0 wants it (inline ``acl`` and ``policy`` on ``oss.Bucket``
    are deprecated since 1.220.0): ``oss.BucketAcl`` private, ``oss.BucketPublicAccessBlock``,
    ``oss.BucketVersioning`` Enabled, ``oss.BucketServerSideEncryption`` AES256 (or KMS with a customer key), an
    HTTPS-only ``oss.BucketPolicy`` and ``oss.BucketHttpsConfig`` accepting TLS 1.2 and 1.3 only. Lifecycle rules have no resource of their own in 4.0.0, so they stay inline: noncurrent
    versions under the checkpoint prefix expire after ``noncurrent_days``, and multipart uploads left
    unfinished are aborted after ``ABORT_MULTIPART_DAYS``. The bucket is ``protect`` + ``retain_on_delete`` and
    never ``force_destroy``; every resource name derives from this component's name, so no change of compute
    can touch it.

    With ``existing=True`` the bucket is adopted: no bucket resource at all (``managed`` is False), so its
    encryption, versioning and public access stay whatever its owner set. The RAM policy is created either way;
    compute units attach it to their node role with ``attach_bucket_policy``.
    """

    def __init__(self, name: str, args: DataBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:storage:DataBucket", name, None, opts)
        objectstore.check_bucket_name(args.bucket)
        tags = with_tags(args.tags, "bucket")
        self.managed = not args.existing
        self.internal_endpoint = objectstore.internal_endpoint(args.region)

        if self.managed:
            self.bucket_resource: alicloud.oss.Bucket | None = alicloud.oss.Bucket(
                f"{name}-bucket",
                bucket=args.bucket,
                storage_class="Standard",
                force_destroy=False,
                lifecycle_rules=_lifecycle_rules(args.checkpoint_prefix, args.noncurrent_days),
                tags=tags,
                opts=stateful(self),
            )
            # The bucket's own ``bucket`` output (its name), so every setting waits for the bucket.
            bucket_name: pulumi.Input[str] = self.bucket_resource.bucket
            alicloud.oss.BucketAcl(f"{name}-acl", bucket=bucket_name, acl="private", opts=child(self))
            alicloud.oss.BucketPublicAccessBlock(f"{name}-public-access-block", bucket=bucket_name, block_public_access=True, opts=child(self))
            # Versioning can be suspended but never turned off again (BucketVersioning docstring): the
            # lifecycle rule above is what bounds the cost of old checkpoint versions.
            alicloud.oss.BucketVersioning(f"{name}-versioning", bucket=bucket_name, status="Enabled", opts=child(self))
            alicloud.oss.BucketServerSideEncryption(
                f"{name}-encryption",
                bucket=bucket_name,
                sse_algorithm=SSE_ALGORITHM_KMS if args.kms_key_id else SSE_ALGORITHM,
                kms_master_key_id=args.kms_key_id,
                opts=child(self),
            )
            alicloud.oss.BucketHttpsConfig(f"{name}-tls", bucket=bucket_name, enable=True, tls_versions=list(TLS_VERSIONS), opts=child(self))
            alicloud.oss.BucketPolicy(f"{name}-https-only", bucket=bucket_name, policy=objectstore.https_only_policy(args.bucket), opts=child(self))
        else:
            self.bucket_resource = None

        self.policy = alicloud.ram.Policy(
            f"{name}-node-policy",
            policy_name=f"{args.name}-bucket",
            policy_document=objectstore.node_bucket_policy(args.bucket),
            description=f"aitrain training nodes: read and write oss://{args.bucket} only",
            opts=child(self),
        )
        self.bucket = args.bucket
        self.policy_name = self.policy.policy_name
        self.register_outputs({"bucket": self.bucket, "internal_endpoint": self.internal_endpoint, "policy_name": self.policy_name})


def _lifecycle_rules(checkpoint_prefix: str, noncurrent_days: int) -> list[alicloud.oss.BucketLifecycleRuleArgs]:
    """Old checkpoint versions expire; abandoned multipart uploads are aborted bucket-wide."""
    return [
        alicloud.oss.BucketLifecycleRuleArgs(
            id="checkpoint-noncurrent-versions",
            enabled=True,
            prefix=checkpoint_prefix,
            noncurrent_version_expirations=[alicloud.oss.BucketLifecycleRuleNoncurrentVersionExpirationArgs(days=noncurrent_days)],
            # Remove delete markers once no version is left behind them ("cannot be specified with Days, Date
            # or CreatedBeforeDate", pulumi_alicloud 4.0.0 oss/_inputs.py), so deleted checkpoints leave nothing.
            expirations=[alicloud.oss.BucketLifecycleRuleExpirationArgs(expired_object_delete_marker=True)],
        ),
        alicloud.oss.BucketLifecycleRuleArgs(
            id="abort-multipart-uploads",
            enabled=True,
            abort_multipart_uploads=[alicloud.oss.BucketLifecycleRuleAbortMultipartUploadArgs(days=ABORT_MULTIPART_DAYS)],
        ),
    ]


def attach_bucket_policy(parent: pulumi.Resource, name: str, role: alicloud.ram.Role, policy: pulumi.Input[str]) -> alicloud.ram.RolePolicyAttachment:
    """Attach the bucket policy ``policy`` (its name) to a compute unit's node ``role``, parented to ``parent``.

    Call it from the compute component, so parking or replacing compute removes only this attachment and
    never the bucket or its policy.
    """
    return alicloud.ram.RolePolicyAttachment(
        f"{name}-bucket-policy",
        role_name=role.role_name,
        policy_name=policy,
        policy_type="Custom",
        opts=child(parent),
    )
