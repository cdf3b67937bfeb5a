"""Audit kinds: the ActionTrail trail of every API call (actiontrail) and the Log Service projects and stores it and
VPC flow logs deliver to (log)."""

from __future__ import annotations

from blueprints.kinds.model import Free, Kind, ReplacingInputs, Role, Terraform, Unpriced

SERVICES = ("actiontrail", "log")
_SLS = Unpriced("Log Service bills ingested, indexed and stored data on usage, which the plan does not know")

KINDS = (
    Kind(
        token="alicloud:actiontrail/trail:Trail",
        key_properties=("trailRegion", "eventRw", "status", "slsProjectArn", "ossBucketName"),
        pricing=Free("a trail is free: the events it delivers bill as Log Service or OSS usage"),
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.TERRAFORM_DOCS,
        # It holds no data itself, but deleting it ends the account's audit record: guarded like data (AIT004, diff).
        roles=frozenset({Role.STATEFUL}),
        stateful_loss="the account's ActionTrail trail would be deleted: API calls in every region stop being recorded",
    ),
    Kind(
        token="alicloud:log/project:Project",
        key_properties=("projectName",),
        pricing=_SLS,
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    Kind(
        token="alicloud:log/store:Store",
        key_properties=("projectName", "logstoreName", "retentionPeriod", "shardCount"),
        pricing=_SLS,
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
)
