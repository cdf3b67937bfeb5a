"""The audit trail and customer keys in a plan's costs: the
access-log bucket's line, and the KMS instance a key needs."""

from __future__ import annotations

from decimal import Decimal

from blueprints.catalog import load_catalog
from blueprints.review.costing import HOURS_PER_MONTH, CostContext, price_plan
from blueprints.review.plan import PlannedResource
from blueprints.testing import offline_plan

CATALOG = load_catalog()
RATE = CATALOG.price("usd_cny", None, "cn-shanghai")[0].amount  # type: ignore[index]
DAYS = HOURS_PER_MONTH / 24  # 730 hours a month = 30.4167 days
KEY = "key-0123456789abcdef"


def res(type_: str, name: str, **inputs: object) -> PlannedResource:
    return PlannedResource(type=type_, name=name, parent=None, custom=True, inputs=dict(inputs))


DATA = res("alicloud:oss/bucket:Bucket", "data", bucket="team-data", storageClass="Standard")
LOG = res(
    "alicloud:oss/bucket:Bucket",
    "log",
    bucket="team-data-logs",
    storageClass="Standard",
    lifecycleRules=[
        {
            "id": "access-log-retention",
            "enabled": True,
            "expirations": [{"days": 366}],
            "noncurrentVersionExpirations": [{"days": 30}],
        }
    ],
)
LOGGING = res("alicloud:oss/bucketLogging:BucketLogging", "logging", bucket="team-data", targetBucket="team-data-logs")


def lines_of(costs: dict, resource: str) -> list[dict]:
    return [line for line in costs["lines"] if line["resource"] == resource]


def test_the_log_bucket_is_a_usage_line_naming_whose_logs_and_how_long_never_the_dataset():
    costs = price_plan([DATA, LOG, LOGGING], CATALOG, "cn-shanghai", scenarios_context=CostContext(dataset_gib=500))
    (data,) = lines_of(costs, "data")
    (log,) = lines_of(costs, "log")
    assert (
        data["item"] == "OSS Standard 500 GiB (the profile's dataset size)"
    )  # the dataset size prices the data bucket only
    assert log["item"] == "OSS Standard per GiB stored: access logs, kept 366 days (usage; not in the plan)"
    assert (log["billing"], log["cny_per_month"], log["unit_price_cny"]) == ("usage", None, data["unit_price_cny"])
    assert "log: " + log["item"] in costs["totals"]["unknown"]


def test_a_log_bucket_without_expiry_says_so():
    forever = res("alicloud:oss/bucket:Bucket", "log", bucket="team-data-logs")
    (log,) = lines_of(price_plan([DATA, forever, LOGGING], CATALOG, "cn-shanghai"), "log")
    assert "kept with no expiry" in log["item"]


def test_a_bucket_logging_into_itself_is_priced_as_data():
    itself = res("alicloud:oss/bucketLogging:BucketLogging", "logging", bucket="team-data", targetBucket="team-data")
    (data,) = lines_of(price_plan([DATA, itself], CATALOG, "cn-shanghai"), "data")
    assert data["item"] == "OSS Standard per GiB stored (usage; not in the plan)"


def test_a_customer_key_adds_its_kms_instance_key_and_qps_lines():
    disk = res("alicloud:ecs/ecsDisk:EcsDisk", "disk", encrypted=True, kmsKeyId=KEY, size=100)
    sse = res(
        "alicloud:oss/bucketServerSideEncryption:BucketServerSideEncryption",
        "sse",
        bucket="team-data",
        sseAlgorithm="KMS",
        kmsMasterKeyId=KEY,
    )
    costs = price_plan([DATA, disk, sse], CATALOG, "cn-shanghai")
    kms = lines_of(costs, "KMS instance (outside this stack)")
    assert [(line["type"], line["unit"], line["billing"]) for line in kms] == [
        ("kms.Instance", "instance-day", "monthly"),
        ("kms.Instance", "key-version-day", "monthly"),
        ("kms.Instance", "QPS-day", "usage"),
    ]
    instance, key, qps = kms
    assert (
        f"holding {KEY} (pay-as-you-go" in instance["item"] and "1 key(s)" in key["item"]
    )  # one key, named twice: one instance, one key
    # USD 4.5 an instance-day and 0.03 a key-version-day (prices.csv), converted at the catalog's rate, for 730/24 days.
    assert instance["cny_per_month"] == float(
        (Decimal("4.5") * Decimal(repr(RATE)) * Decimal(repr(DAYS))).quantize(Decimal("0.01"))
    )
    assert instance["cny_per_month"] == 984.38 and key["cny_per_month"] == 6.56
    assert instance["status"] == "converted" and "kms/key-management-service/pay-as-you-go" in instance["source"]
    assert qps["cny_per_month"] is None and costs["not_in_plan"] == []
    assert costs["totals"]["cny_per_month"] == round(instance["cny_per_month"] + key["cny_per_month"], 2)


def test_keys_in_nested_inputs_are_found_and_counted_once_each():
    pool = res(
        "alicloud:cs/nodePool:NodePool",
        "pool",
        instanceTypes=["ecs.g7.large"],
        desiredSize="0",
        systemDiskKmsKey=KEY,
        dataDisks=[{"size": 100, "kmsKeyId": "key-other"}],
    )
    (_, key, _) = lines_of(price_plan([pool], CATALOG, "cn-shanghai"), "KMS instance (outside this stack)")
    assert key["item"].startswith("KMS key fee: 2 key(s)") and key["quantity"] == DAYS * 2


def test_without_a_customer_key_the_plan_offers_the_kms_instance_and_its_month():
    costs = price_plan([DATA], CATALOG, "cn-shanghai")
    assert not lines_of(costs, "KMS instance (outside this stack)")
    (option,) = costs["not_in_plan"]
    assert (
        option["item"].startswith("KMS software key management instance (pay-as-you-go)")
        and "security.kms_key_id" in option["item"]
    )
    assert (option["cny_per_month"], option["status"], option["date"]) == (984.38, "converted", "2024-08-15")


def test_the_presets_price_the_key_only_when_it_is_set():
    default = offline_plan("kubernetes-training")
    keyed = offline_plan("kubernetes-training", overrides={"security.kms_key_id": KEY})
    assert default.costs["not_in_plan"][0]["cny_per_month"] == 984.38 and keyed.costs["not_in_plan"] == []
    extra = keyed.costs["totals"]["cny_per_month"] - default.costs["totals"]["cny_per_month"]
    assert round(extra, 2) == 990.94  # ¥984.38 instance + ¥6.56 key
    # The default plan's AIT019 infos point to it; the keyed plan
    # has no AIT019 at all (the log bucket's OSS key is exempt).
    assert all("not in this plan" in f["message"] for f in default.findings if f["rule"] == "AIT019")
    assert not [f for f in keyed.findings if f["rule"] == "AIT019"]


def test_every_format_shows_what_the_key_would_cost():
    from blueprints.review.render import render_markdown, render_table

    default = offline_plan("autoscaling-training")
    assert (
        "**Not in this plan:** KMS software key management instance (pay-as-you-go), which a customer-managed key "
        "(security.kms_key_id) lives in: ¥984.38 per month (converted;" in render_markdown(default)
    )
    assert "not in this plan: KMS software key management instance (pay-as-you-go)" in render_table(default, width=400)
    keyed = offline_plan("autoscaling-training", overrides={"security.kms_key_id": KEY})
    assert "Not in this plan" not in render_markdown(keyed) and "KMS instance (outside this stack)" in render_markdown(
        keyed
    )
