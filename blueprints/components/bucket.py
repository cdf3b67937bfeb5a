"""DataBucket: the OSS bucket that holds datasets and checkpoints, and the RAM policy that scopes nodes to it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, stateful, with_tags
from blueprints.components.errors import ResourceError, names_resource
from blueprints.core import objectstore

# Unfinished multipart uploads (a checkpoint write killed mid-way) keep billing until aborted; 7 days leaves
# time to resume one (ready-to-train.md §3a, "Old checkpoint versions").
ABORT_MULTIPART_DAYS = 7

# OSS-managed keys: encryption at rest with nothing to rotate or pay for. With ``security.kms_key_id`` the key goes in
# ``kms_master_key_id`` with ``sse_algorithm="KMS"`` (pulumi_alicloud 4.0.0 ``oss.BucketServerSideEncryption``).
SSE_ALGORITHM = "AES256"
SSE_ALGORITHM_KMS = "KMS"

# TLS versions the bucket accepts (oss.BucketHttpsConfig ``tls_versions``): nothing older than TLS 1.2.
TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")

# Where in the log bucket the data bucket's access logs land (oss.BucketLogging ``target_prefix``).
ACCESS_LOG_PREFIX = "access-logs/"


@dataclass(frozen=True)
class DataBucketArgs:
    """What the bucket needs to know. ``name`` is the profile name (it names the RAM policy)."""

    name: str
    region: str
    bucket: str
    noncurrent_days: int
    checkpoint_prefix: str = "checkpoints/"
    existing: bool = False
    # The access-log bucket (None: no access logging) and how many days a log object is kept.
    access_log_bucket: str | None = None
    access_log_days: int = 366
    # Customer-managed KMS key for server-side encryption (None: OSS-managed AES256).
    kms_key_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


class DataBucket(pulumi.ComponentResource):
    """One private, encrypted, versioned, HTTPS-only OSS bucket per profile, and a RAM policy on it alone.

    The bucket is split the way pulumi-alicloud 4.0.0 wants it (inline ``acl`` and ``policy`` on ``oss.Bucket``
    are deprecated since 1.220.0): ``oss.BucketAcl`` private, ``oss.BucketPublicAccessBlock``,
    ``oss.BucketVersioning`` Enabled, ``oss.BucketServerSideEncryption`` AES256 (or KMS with a customer key), an
    HTTPS-only ``oss.BucketPolicy`` and ``oss.BucketHttpsConfig`` accepting TLS 1.2 and 1.3 only. Lifecycle rules have
    no resource of their own in 4.0.0, so they stay inline: noncurrent versions under the checkpoint prefix expire after
    ``noncurrent_days``, and multipart uploads left unfinished are aborted after ``ABORT_MULTIPART_DAYS``. The bucket is
    ``protect`` + ``retain_on_delete`` and never ``force_destroy``; every resource name derives from this component's
    name, so no change of compute can touch it.

    With ``access_log_bucket`` set, OSS writes the bucket's access logs (hourly log objects) into that separate bucket
    (``oss.BucketLogging``), created here with the same safety settings (private, public access blocked, versioned,
    encrypted, HTTPS-only, TLS 1.2+, protected and retained: the logs are audit evidence) and a lifecycle rule that
    expires log objects after ``access_log_days``. OSS requires the log bucket in the data bucket's account and region
    and warns that a bucket logging into itself logs its own log writes in a loop
    (https://www.alibabacloud.com/help/en/oss/logging). The log bucket keeps OSS-managed AES256 keys even with a
    customer key: OSS itself writes the log objects, and delivery into an SSE-KMS bucket is not documented.

    With ``existing=True`` the bucket is adopted: no bucket resource at all (``managed`` is False), so its
    encryption, versioning and public access stay whatever its owner set. The RAM policy is created either way;
    compute units attach it to their node role with ``attach_bucket_policy``.
    """

    def __init__(self, name: str, args: DataBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:storage:DataBucket", name, None, opts)
        with names_resource(self):
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
                # With oss.BucketLogging the bucket must ignore its own ``logging`` input,
                # "otherwise oss.Bucket will keep disabling the logging configuration set
                # by this resource on every apply" (BucketLogging docstring, SDK 4.0.0).
                opts=pulumi.ResourceOptions.merge(stateful(self), pulumi.ResourceOptions(ignore_changes=["logging"]))
                if args.access_log_bucket
                else stateful(self),
            )
            # The bucket's own ``bucket`` output (its name), so every setting waits for the bucket.
            bucket_name: pulumi.Input[str] = self.bucket_resource.bucket
            alicloud.oss.BucketAcl(f"{name}-acl", bucket=bucket_name, acl="private", opts=child(self))
            alicloud.oss.BucketPublicAccessBlock(
                f"{name}-public-access-block", bucket=bucket_name, block_public_access=True, opts=child(self)
            )
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
            alicloud.oss.BucketHttpsConfig(
                f"{name}-tls", bucket=bucket_name, enable=True, tls_versions=list(TLS_VERSIONS), opts=child(self)
            )
            alicloud.oss.BucketPolicy(
                f"{name}-https-only",
                bucket=bucket_name,
                policy=objectstore.https_only_policy(args.bucket),
                opts=child(self),
            )
            self.log_bucket = self._access_log(name, args, bucket_name)
        else:
            self.bucket_resource = None
            self.log_bucket = None

        with names_resource(self):
            policy_document = objectstore.node_bucket_policy(args.bucket)
        self.policy = alicloud.ram.Policy(
            f"{name}-node-policy",
            policy_name=f"{args.name}-bucket",
            policy_document=policy_document,
            description=f"aitrain training nodes: read and write oss://{args.bucket} only",
            opts=child(self),
        )
        self.bucket = args.bucket
        self.access_log_bucket = args.access_log_bucket if self.log_bucket is not None else None
        self.policy_name = self.policy.policy_name
        self.register_outputs(
            {
                "bucket": self.bucket,
                "internal_endpoint": self.internal_endpoint,
                "policy_name": self.policy_name,
                "access_log_bucket": self.access_log_bucket,
            }
        )

    def _access_log(
        self, name: str, args: DataBucketArgs, data_bucket: pulumi.Input[str]
    ) -> alicloud.oss.Bucket | None:
        """The access-log bucket, its settings, and the data bucket's
        ``oss.BucketLogging`` into it (None: logging off)."""
        if args.access_log_bucket is None:
            return None
        with names_resource(self):
            log_name = objectstore.check_bucket_name(args.access_log_bucket)
        if log_name == args.bucket:
            raise ResourceError(
                f"access-log bucket {log_name!r} is the data bucket itself; OSS would log its own log writes in a loop",
                self,
            )
        log_bucket = alicloud.oss.Bucket(
            f"{name}-log-bucket",
            bucket=log_name,
            storage_class="Standard",
            force_destroy=False,
            lifecycle_rules=_log_lifecycle_rules(args.access_log_days, args.noncurrent_days),
            tags=with_tags(args.tags, "access-log"),
            opts=stateful(self),
        )
        target: pulumi.Input[str] = log_bucket.bucket
        alicloud.oss.BucketAcl(f"{name}-log-acl", bucket=target, acl="private", opts=child(self))
        alicloud.oss.BucketPublicAccessBlock(
            f"{name}-log-public-access-block", bucket=target, block_public_access=True, opts=child(self)
        )
        # Versioned like the data: a deleted or overwritten log object stays recoverable for noncurrent_days.
        alicloud.oss.BucketVersioning(f"{name}-log-versioning", bucket=target, status="Enabled", opts=child(self))
        alicloud.oss.BucketServerSideEncryption(
            f"{name}-log-encryption", bucket=target, sse_algorithm=SSE_ALGORITHM, opts=child(self)
        )
        alicloud.oss.BucketHttpsConfig(
            f"{name}-log-tls", bucket=target, enable=True, tls_versions=list(TLS_VERSIONS), opts=child(self)
        )
        alicloud.oss.BucketPolicy(
            f"{name}-log-https-only", bucket=target, policy=objectstore.https_only_policy(log_name), opts=child(self)
        )
        alicloud.oss.BucketLogging(
            f"{name}-logging",
            bucket=data_bucket,
            target_bucket=target,
            target_prefix=ACCESS_LOG_PREFIX,
            opts=child(self),
        )
        return log_bucket


def _abort_multipart_uploads() -> alicloud.oss.BucketLifecycleRuleArgs:
    """Abandoned multipart uploads are aborted bucket-wide (their parts are billed until then)."""
    return alicloud.oss.BucketLifecycleRuleArgs(
        id="abort-multipart-uploads",
        enabled=True,
        abort_multipart_uploads=[alicloud.oss.BucketLifecycleRuleAbortMultipartUploadArgs(days=ABORT_MULTIPART_DAYS)],
    )


def _lifecycle_rules(checkpoint_prefix: str, noncurrent_days: int) -> list[alicloud.oss.BucketLifecycleRuleArgs]:
    """Old checkpoint versions expire; abandoned multipart uploads are aborted bucket-wide."""
    return [
        alicloud.oss.BucketLifecycleRuleArgs(
            id="checkpoint-noncurrent-versions",
            enabled=True,
            prefix=checkpoint_prefix,
            noncurrent_version_expirations=[
                alicloud.oss.BucketLifecycleRuleNoncurrentVersionExpirationArgs(days=noncurrent_days)
            ],
            # Remove delete markers once no version is left behind them ("cannot be specified with Days, Date
            # or CreatedBeforeDate", pulumi_alicloud 4.0.0 oss/_inputs.py), so deleted checkpoints leave nothing.
            expirations=[alicloud.oss.BucketLifecycleRuleExpirationArgs(expired_object_delete_marker=True)],
        ),
        _abort_multipart_uploads(),
    ]


def _log_lifecycle_rules(log_days: int, noncurrent_days: int) -> list[alicloud.oss.BucketLifecycleRuleArgs]:
    """Log objects expire after ``log_days`` (OSS writes one an hour until logging is off and advises a lifecycle rule,
    https://www.alibabacloud.com/help/en/oss/logging); the version
    an expiry leaves behind goes ``noncurrent_days`` later."""
    return [
        alicloud.oss.BucketLifecycleRuleArgs(
            id="access-log-retention",
            enabled=True,
            prefix=ACCESS_LOG_PREFIX,
            expirations=[alicloud.oss.BucketLifecycleRuleExpirationArgs(days=log_days)],
            noncurrent_version_expirations=[
                alicloud.oss.BucketLifecycleRuleNoncurrentVersionExpirationArgs(days=noncurrent_days)
            ],
        ),
        _abort_multipart_uploads(),
    ]


def attach_bucket_policy(
    parent: pulumi.Resource, name: str, role: alicloud.ram.Role, policy: pulumi.Input[str]
) -> alicloud.ram.RolePolicyAttachment:
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
