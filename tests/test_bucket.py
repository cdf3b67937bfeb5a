"""DataBucket under the recording mocks: the bucket's settings,
its data-safety options, adoption, and the policy attachment."""

from __future__ import annotations

import json

import pulumi
import pytest
from conftest import beyond_opt_in

from blueprints.components.base import node_role
from blueprints.components.bucket import DataBucket, DataBucketArgs, attach_bucket_policy
from blueprints.components.errors import ResourceError
from blueprints.review import guardrails
from blueprints.testing import as_plan, offline_mocks, record_program

ZONES = ["cn-shanghai-a"]


def args(**extra) -> DataBucketArgs:
    values = dict(name="med", region="cn-shanghai", bucket="med-train-data", noncurrent_days=30)
    values.update(extra)
    return DataBucketArgs(**values)


def by_type(resources, short_type):
    return [r for r in resources if r.short_type == short_type]


def one(resources, short_type):
    (r,) = by_type(resources, short_type)
    return r


def test_created_bucket_is_private_versioned_encrypted_https_only_and_retained():
    resources = record_program(lambda: DataBucket("med-data", args()), zones=ZONES)
    bucket = one(resources, "oss.Bucket")
    assert bucket.name == "med-data-bucket" and bucket.parent == "med-data"
    assert bucket.protect and bucket.retain_on_delete and not bucket.delete_before_replace
    assert bucket.inputs["bucket"] == "med-train-data" and bucket.inputs["storageClass"] == "Standard"
    assert bucket.inputs["forceDestroy"] is False
    assert bucket.inputs["tags"] == {"managed-by": "aitrain", "aitrain-component": "bucket"}
    # Deprecated inline settings stay unused: the split resources carry them.
    assert not {"acl", "policy", "versioning", "serverSideEncryptionRule"} & set(bucket.inputs)
    assert one(resources, "oss.BucketAcl").inputs == {"bucket": "med-train-data", "acl": "private"}
    assert one(resources, "oss.BucketPublicAccessBlock").inputs == {
        "bucket": "med-train-data",
        "blockPublicAccess": True,
    }
    assert one(resources, "oss.BucketVersioning").inputs == {"bucket": "med-train-data", "status": "Enabled"}
    assert one(resources, "oss.BucketServerSideEncryption").inputs == {
        "bucket": "med-train-data",
        "sseAlgorithm": "AES256",
    }
    policy = json.loads(one(resources, "oss.BucketPolicy").inputs["policy"])
    (deny,) = policy["Statement"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"acs:SecureTransport": ["false"]}}
    assert deny["Resource"] == ["acs:oss:*:*:med-train-data", "acs:oss:*:*:med-train-data/*"]
    # Everything in it is clean under every guardrail.
    assert beyond_opt_in(guardrails.check(as_plan(resources))) == []


def test_lifecycle_expires_old_checkpoint_versions_and_aborts_stale_uploads():
    resources = record_program(
        lambda: DataBucket("med-data", args(noncurrent_days=14, checkpoint_prefix="ckpt/")), zones=ZONES
    )
    rules = {r["id"]: r for r in one(resources, "oss.Bucket").inputs["lifecycleRules"]}
    assert rules == {
        "checkpoint-noncurrent-versions": {
            "id": "checkpoint-noncurrent-versions",
            "enabled": True,
            "prefix": "ckpt/",
            "noncurrentVersionExpirations": [{"days": 14}],
            "expirations": [{"expiredObjectDeleteMarker": True}],
        },
        "abort-multipart-uploads": {
            "id": "abort-multipart-uploads",
            "enabled": True,
            "abortMultipartUploads": [{"days": 7}],
        },
    }


def test_node_policy_names_only_this_bucket():
    resources = record_program(lambda: DataBucket("med-data", args()), zones=ZONES)
    policy = one(resources, "ram.Policy")
    assert policy.name == "med-data-node-policy" and policy.inputs["policyName"] == "med-bucket"
    document = json.loads(policy.inputs["policyDocument"])
    resources_named = [r for s in document["Statement"] for r in s["Resource"]]
    assert resources_named and all(
        r in ("acs:oss:*:*:med-train-data", "acs:oss:*:*:med-train-data/*") for r in resources_named
    )


def test_adopted_bucket_creates_only_the_policy_and_says_it_is_unmanaged():
    holder = {}
    resources = record_program(
        lambda: holder.setdefault("b", DataBucket("med-data", args(existing=True, bucket="team-datasets"))), zones=ZONES
    )
    assert sorted(r.short_type for r in resources if r.custom) == ["ram.Policy"]
    bucket = holder["b"]
    assert bucket.managed is False and bucket.bucket_resource is None and bucket.bucket == "team-datasets"
    assert "team-datasets" in one(resources, "ram.Policy").inputs["policyDocument"]


def test_resource_names_depend_only_on_the_component_name():
    """Another bucket name, retention or compute never renames a resource (so none is replaced by a rename)."""
    first = record_program(lambda: DataBucket("med-data", args()), zones=ZONES)
    second = record_program(
        lambda: DataBucket("med-data", args(bucket="other-bucket", noncurrent_days=90)), zones=ZONES
    )
    assert [r.name for r in first] == [r.name for r in second]
    assert all(r.name.startswith("med-data") for r in first)


def test_outputs_and_registered_keys():
    with offline_mocks(zones=ZONES) as stack:
        bucket = DataBucket("med-data", args())
        assert bucket.managed is True
        assert bucket.bucket == "med-train-data"
        assert bucket.internal_endpoint == "oss-cn-shanghai-internal.aliyuncs.com"
        assert stack.resolve(bucket.policy_name) == "med-bucket"
    (component,) = [r for r in stack.resources if not r.custom]
    assert component.type == "aitrain:storage:DataBucket"
    assert component.registered_outputs == ("access_log_bucket", "bucket", "internal_endpoint", "policy_name")


def test_a_bad_bucket_name_fails_before_anything_is_created():
    with pytest.raises(ResourceError, match="bucket name 'Med_Data' contains"):
        record_program(lambda: DataBucket("med-data", args(bucket="Med_Data")), zones=ZONES)
    with offline_mocks(zones=ZONES) as stack:
        with pytest.raises(ResourceError, match="bucket name 'Med_Data' contains") as raised:
            DataBucket("med-data", args(bucket="Med_Data"))
        # Refused right after the component registers (the error names it), before any bucket resource exists.
        assert [r for r in stack.resources if r.custom] == []
    assert raised.value.resource.pulumi_resource_name == "med-data"


def test_attachment_lives_with_compute_so_parking_compute_removes_only_it():
    def program():
        data = DataBucket("med-data", args())
        compute = pulumi.ComponentResource("aitrain:compute:GpuCluster", "gpu")
        role = node_role(compute, "gpu")
        attach_bucket_policy(compute, "gpu", role, data.policy_name)

    resources = record_program(program, zones=ZONES)
    attachment = one(resources, "ram.RolePolicyAttachment")
    assert attachment.name == "gpu-bucket-policy" and attachment.parent == "gpu"
    assert attachment.inputs == {"roleName": "gpu-node", "policyName": "med-bucket", "policyType": "Custom"}
    # Without compute (parked), the bucket and its policy are still all there, and nothing else changed.
    parked = record_program(lambda: DataBucket("med-data", args()), zones=ZONES)
    assert {(r.name, r.short_type) for r in parked} == {
        (r.name, r.short_type) for r in resources if r.parent == "med-data" or r.name == "med-data"
    }


def test_managed_bucket_accepts_only_tls_1_2_and_1_3():
    resources = record_program(lambda: DataBucket("med-data", args()), zones=ZONES)
    tls = one(resources, "oss.BucketHttpsConfig")
    assert tls.name == "med-data-tls" and tls.parent == "med-data"
    assert tls.inputs == {"bucket": "med-train-data", "enable": True, "tlsVersions": ["TLSv1.2", "TLSv1.3"]}


def test_bucket_encryption_uses_the_customer_kms_key_when_given():
    key = "key-hzz630494463ejqjx0001"
    sse = one(
        record_program(lambda: DataBucket("med-data", args(kms_key_id=key)), zones=ZONES),
        "oss.BucketServerSideEncryption",
    )
    assert (sse.inputs["sseAlgorithm"], sse.inputs["kmsMasterKeyId"]) == ("KMS", key)
    default = one(record_program(lambda: DataBucket("med-data", args()), zones=ZONES), "oss.BucketServerSideEncryption")
    assert default.inputs["sseAlgorithm"] == "AES256" and "kmsMasterKeyId" not in default.inputs


def test_adopted_bucket_gets_no_tls_config():
    resources = record_program(lambda: DataBucket("med-data", args(existing=True)), zones=ZONES)
    assert not by_type(resources, "oss.BucketHttpsConfig")


def test_bucket_names_do_not_change_with_a_kms_key():
    def names(**extra):
        return sorted(
            (r.type, r.name) for r in record_program(lambda: DataBucket("med-data", args(**extra)), zones=ZONES)
        )

    assert names() == names(kms_key_id="key-hzz630494463ejqjx0001")


LOG = "med-train-data-logs"


def test_access_logs_go_to_a_separate_private_encrypted_retained_log_bucket():
    resources = record_program(
        lambda: DataBucket("med-data", args(access_log_bucket=LOG, access_log_days=366)), zones=ZONES
    )
    (logging,) = by_type(resources, "oss.BucketLogging")
    assert logging.name == "med-data-logging" and logging.parent == "med-data"
    assert logging.inputs == {"bucket": "med-train-data", "targetBucket": LOG, "targetPrefix": "access-logs/"}
    data = next(r for r in by_type(resources, "oss.Bucket") if r.inputs["bucket"] == "med-train-data")
    # Without it every apply of oss.Bucket would switch the logging off again (BucketLogging docstring, SDK 4.0.0).
    assert data.ignore_changes == ("logging",) and data.protect and data.retain_on_delete
    log = next(r for r in by_type(resources, "oss.Bucket") if r.inputs["bucket"] == LOG)
    # Audit evidence: protected and retained like the data, never force-destroyed, tagged as the access log.
    assert (
        log.name == "med-data-log-bucket"
        and log.protect
        and log.retain_on_delete
        and log.inputs["forceDestroy"] is False
    )
    assert log.inputs["tags"] == {"managed-by": "aitrain", "aitrain-component": "access-log"}
    settings = {
        r.short_type: r.inputs for r in resources if r.inputs.get("bucket") == LOG and r.short_type != "oss.Bucket"
    }
    assert settings["oss.BucketAcl"] == {"bucket": LOG, "acl": "private"}
    assert settings["oss.BucketPublicAccessBlock"] == {"bucket": LOG, "blockPublicAccess": True}
    assert settings["oss.BucketVersioning"] == {"bucket": LOG, "status": "Enabled"}
    # OSS-managed key: OSS writes the log objects itself.
    assert settings["oss.BucketServerSideEncryption"] == {"bucket": LOG, "sseAlgorithm": "AES256"}
    assert settings["oss.BucketHttpsConfig"] == {"bucket": LOG, "enable": True, "tlsVersions": ["TLSv1.2", "TLSv1.3"]}
    assert json.loads(settings["oss.BucketPolicy"]["policy"])["Statement"][0]["Resource"] == [
        f"acs:oss:*:*:{LOG}",
        f"acs:oss:*:*:{LOG}/*",
    ]
    # Log objects expire after the retention; the version an expiry leaves goes after noncurrent_days.
    assert log.inputs["lifecycleRules"][0] == {
        "id": "access-log-retention",
        "enabled": True,
        "prefix": "access-logs/",
        "expirations": [{"days": 366}],
        "noncurrentVersionExpirations": [{"days": 30}],
    }
    # Both buckets hold every guardrail, AIT022 included (logged, to a different private, encrypted bucket).
    assert [f for f in guardrails.check(as_plan(resources)) if f.rule != "AIT019"] == []


def test_access_logging_off_creates_no_log_bucket_and_ait022_reports_it():
    resources = record_program(lambda: DataBucket("med-data", args()), zones=ZONES)
    assert [r.inputs["bucket"] for r in by_type(resources, "oss.Bucket")] == ["med-train-data"] and not by_type(
        resources, "oss.BucketLogging"
    )
    (finding,) = [f for f in guardrails.check(as_plan(resources)) if f.rule == "AIT022"]
    assert finding.resource == "med-data-bucket" and "set bucket.access_logging true" in finding.message


def test_an_adopted_bucket_gets_no_logging_and_no_log_bucket():
    resources = record_program(lambda: DataBucket("med-data", args(existing=True, access_log_bucket=LOG)), zones=ZONES)
    assert sorted(r.short_type for r in resources if r.custom) == ["ram.Policy"]


def test_the_log_bucket_is_never_the_data_bucket():
    with pytest.raises(
        ResourceError, match=r"^aitrain:storage:DataBucket \(med-data\): access-log bucket .* is the data bucket itself"
    ):
        record_program(lambda: DataBucket("med-data", args(access_log_bucket="med-train-data")), zones=ZONES)


def test_log_bucket_resource_names_depend_only_on_the_component_name():
    first = record_program(lambda: DataBucket("med-data", args(access_log_bucket=LOG)), zones=ZONES)
    second = record_program(
        lambda: DataBucket("med-data", args(bucket="other-bucket", access_log_bucket="other-logs", access_log_days=30)),
        zones=ZONES,
    )
    assert [r.name for r in first] == [r.name for r in second]
