"""The bucket's pure rules: OSS names, the HTTPS-only bucket policy, the one-bucket node policy and the endpoint."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprints.core import objectstore


@pytest.mark.parametrize("name", ["abc", "examplebucket1", "test-bucket-2021", "0-9", "a" * 63, "medical-imaging-data"])
def test_valid_names_pass_through(name):
    assert objectstore.check_bucket_name(name) == name


@pytest.mark.parametrize(
    "name, message",
    [
        ("ab", "bucket name 'ab' has 2 characters; OSS allows 3 to 63"),
        ("a" * 64, f"bucket name '{'a' * 64}' has 64 characters; OSS allows 3 to 63"),
        (
            "Examplebucket1",
            "bucket name 'Examplebucket1' contains 'E'; OSS allows only lowercase letters, digits and hyphens",
        ),
        (
            "test_bucket.2021",
            "bucket name 'test_bucket.2021' contains '.', '_'; OSS allows only lowercase letters, digits and hyphens",
        ),
        (
            "aliyun-oss-bucket-",
            "bucket name 'aliyun-oss-bucket-' must start and end with a lowercase letter or digit, not a hyphen",
        ),
        ("-data", "bucket name '-data' must start and end with a lowercase letter or digit, not a hyphen"),
    ],
)
def test_invalid_names_name_the_value_and_the_rule(name, message):
    with pytest.raises(ValueError) as error:
        objectstore.check_bucket_name(name)
    assert str(error.value) == message


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.AZ ", min_size=0, max_size=70))
def test_name_check_agrees_with_the_three_documented_rules(name):
    ok = (
        3 <= len(name) <= 63
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in name)
        and name[0] != "-"
        and name[-1] != "-"
    )
    if ok:
        assert objectstore.check_bucket_name(name) == name
    else:
        with pytest.raises(ValueError) as error:
            objectstore.check_bucket_name(name)
        assert str(error.value).startswith(f"bucket name {name!r} ")


def test_internal_endpoint():
    assert objectstore.internal_endpoint("cn-shanghai") == "oss-cn-shanghai-internal.aliyuncs.com"
    assert objectstore.internal_endpoint("ap-southeast-1") == "oss-ap-southeast-1-internal.aliyuncs.com"


def test_https_only_policy_is_one_deny_on_the_bucket_and_its_objects():
    document = json.loads(objectstore.https_only_policy("med-data"))
    assert document == {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Deny",
                "Principal": ["*"],
                "Action": ["oss:*"],
                "Resource": ["acs:oss:*:*:med-data", "acs:oss:*:*:med-data/*"],
                "Condition": {"Bool": {"acs:SecureTransport": ["false"]}},
            }
        ],
    }
    # The Principal "*" pitfall: nothing here may grant anything.
    assert all(s["Effect"] == "Deny" for s in document["Statement"])


def test_node_policy_grants_only_this_bucket():
    document = json.loads(objectstore.node_bucket_policy("med-data"))
    assert document["Version"] == "1"
    by_resource = {tuple(s["Resource"]): (s["Effect"], set(s["Action"])) for s in document["Statement"]}
    assert by_resource == {
        ("acs:oss:*:*:med-data",): ("Allow", {"oss:GetBucketInfo", "oss:ListObjects", "oss:ListObjectVersions"}),
        ("acs:oss:*:*:med-data/*",): (
            "Allow",
            {"oss:GetObject", "oss:PutObject", "oss:DeleteObject", "oss:AbortMultipartUpload", "oss:ListParts"},
        ),
    }
    resources = [r for s in document["Statement"] for r in s["Resource"]]
    assert all(r in ("acs:oss:*:*:med-data", "acs:oss:*:*:med-data/*") for r in resources)


def test_node_policy_fits_ram_limit_for_the_longest_name():
    longest = "a" * 63
    assert len(objectstore.node_bucket_policy(longest).encode()) <= objectstore.RAM_POLICY_MAX_BYTES == 6144


def test_node_policy_refuses_to_exceed_the_ram_limit(monkeypatch):
    monkeypatch.setattr(objectstore, "NODE_OBJECT_ACTIONS", tuple(f"oss:Action{i:04d}" for i in range(400)))
    with pytest.raises(ValueError, match=r"node policy for bucket 'med-data' is \d+ bytes; RAM allows 6144"):
        objectstore.node_bucket_policy("med-data")


@pytest.mark.parametrize("render", [objectstore.https_only_policy, objectstore.node_bucket_policy])
def test_documents_refuse_a_bad_bucket_name(render):
    with pytest.raises(ValueError, match="bucket name 'Bad_Name'"):
        render("Bad_Name")


def test_a_bucket_name_that_is_not_text_is_refused():
    with pytest.raises(ValueError, match=r"bucket name 42 must be text"):
        objectstore.check_bucket_name(42)  # type: ignore[arg-type]


def test_access_log_bucket_name_is_the_data_bucket_plus_logs():
    assert (
        objectstore.access_log_bucket_name("medical-imaging-cn-shanghai-data")
        == "medical-imaging-cn-shanghai-data-logs"
    )
    assert objectstore.access_log_bucket_name("a" * 58) == "a" * 58 + "-logs"  # exactly 63


@given(st.from_regex(r"[a-z0-9][a-z0-9-]{57,61}[a-z0-9]", fullmatch=True))
def test_a_long_data_bucket_gets_a_valid_stable_distinct_log_bucket(name):
    """Past 63 characters the name is cut and hashed: still a
    valid OSS name, the same every time, never the data bucket."""
    log = objectstore.access_log_bucket_name(name)
    assert objectstore.check_bucket_name(log) == log and len(log) <= 63 and log.endswith("-logs") and log != name
    assert objectstore.access_log_bucket_name(name) == log
    # Two names that share the kept prefix still differ by their hash.
    other = name[:-1] + ("b" if name[-1] != "b" else "c")
    assert objectstore.access_log_bucket_name(other) != log
