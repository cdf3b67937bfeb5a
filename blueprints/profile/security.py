"""The profile's ``security`` section: customer-managed KMS key, VPC flow log, ActionTrail and an egress allow-list.

Everything here is off by default: each needs something that lives outside the stack (a KMS key, an SLS project,
a trail destination) or changes what the nodes may reach. The guardrails report each choice as an info finding.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from blueprints.profile.strict import Strict, parse_ipv4_cidr

# KMS key IDs: ``key-`` followed by lowercase letters and digits (KMS 3.0, e.g. key-hzz630494463ejqjx****), or the
# older UUID form (e.g. 05754286-3ba2-4fa6-8d41-4323aca6****). Both appear as KeyId in the DescribeKey reference:
# https://www.alibabacloud.com/help/en/kms/key-management-service/developer-reference/api-kms-2016-01-20-describekey
# and https://alibabacloud.com/help/tc/kms/key-management-service/developer-reference/api-describekey
_KMS_KEY_RE = re.compile(r"key-[a-z0-9]{8,64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
KMS_KEY_FORMS = (
    "key-<8–64 lowercase letters or digits> (e.g. key-hzz630494463ejqjx0001) or a UUID (e.g. "
    "05754286-3ba2-4fa6-8d41-4323aca60001)"
)

# SLS project names: 3–63 characters, lowercase letters, digits and hyphens, starting and ending with a letter or
# digit (https://alibabacloud.com/help/en/sls/developer-reference/create-project). Logstore names may also hold
# underscores (https://www.alibabacloud.com/help/en/sls/developer-reference/logstores).
_SLS_PROJECT_RE = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
_SLS_LOGSTORE_RE = re.compile(r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]")

# ActionTrail's SLS destination is a project ARN, acs:log:<region>:<account id>:project/<project>
# (pulumi_alicloud 4.0.0 actiontrail.Trail ``sls_project_arn``; ARN form as in ready-to-train.md §8).
_SLS_PROJECT_ARN_RE = re.compile(r"acs:log:[a-z0-9-]+:\d+:project/[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
# RAM role ARNs: acs:ram::<account id>:role/<role name>.
_ROLE_ARN_RE = re.compile(r"acs:ram::\d+:role/[A-Za-z0-9.@-]{1,64}")

# Egress ports: one port or a range "low/high" as the security group rule's port_range takes it.
_PORT_RANGE_RE = re.compile(r"(\d{1,5})(?:/(\d{1,5}))?")


class FlowLog(Strict):
    """Where the VPC flow log goes: an SLS project and logstore you already have (aitrain does not create them)."""

    project: str = Field(
        description=(
            "SLS project name: 3–63 lowercase letters, digits or hyphens, starting and ending with a letter or digit."
        )
    )
    logstore: str = Field(
        description=(
            "SLS logstore name in that project: 3–63 lowercase letters, "
            "digits, '-' or '_', starting and ending with a letter or digit."
        )
    )

    @field_validator("project")
    @classmethod
    def _project(cls, value: str) -> str:
        if not _SLS_PROJECT_RE.fullmatch(value):
            raise ValueError(
                "must be an SLS project name: 3–63 lowercase letters, digits "
                "or hyphens, starting and ending with a letter or digit"
            )
        return value

    @field_validator("logstore")
    @classmethod
    def _logstore(cls, value: str) -> str:
        if not _SLS_LOGSTORE_RE.fullmatch(value):
            raise ValueError(
                "must be an SLS logstore name: 3–63 lowercase letters, digits, "
                "'-' or '_', starting and ending with a letter or digit"
            )
        return value


class ActionTrail(Strict):
    """An account-wide trail of every API call (all regions, reads and writes) to SLS or OSS."""

    name: str | None = Field(
        default=None,
        description=(
            "Trail name: 6–36 lowercase letters, digits, '-' or '_', starting with a "
            "letter. Empty: <profile name>-audit (one per stack, so stacks never "
            "collide); give an existing trail's name only with `pulumi import` of it."
        ),
    )
    sls_project_arn: str | None = Field(
        default=None, description="Deliver to this SLS project: acs:log:<region>:<account id>:project/<name>."
    )
    sls_write_role_arn: str | None = Field(
        default=None, description="RAM role ActionTrail assumes to write to SLS (empty: the service-linked role)."
    )
    oss_bucket: str | None = Field(
        default=None,
        description="Deliver to this OSS bucket (not the training bucket: audit logs live apart from data).",
    )
    oss_write_role_arn: str | None = Field(
        default=None, description="RAM role ActionTrail assumes to write to OSS (empty: the service-linked role)."
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        # CreateTrail's Name rule (6–36 characters: lowercase letters, digits, '-', '_'; starts with a letter) is
        # UNVERIFIED here (the SDK docstring gives none); a stricter API would refuse it at deploy time, not silently.
        if not re.fullmatch(r"[a-z][a-z0-9_-]{5,35}", value):
            raise ValueError("must be 6–36 lowercase letters, digits, '-' or '_', starting with a letter")
        return value

    @field_validator("sls_project_arn")
    @classmethod
    def _sls_arn(cls, value: str | None) -> str | None:
        if value is not None and not _SLS_PROJECT_ARN_RE.fullmatch(value):
            raise ValueError("must be an SLS project ARN: acs:log:<region>:<account id>:project/<project name>")
        return value

    @field_validator("sls_write_role_arn", "oss_write_role_arn")
    @classmethod
    def _role_arn(cls, value: str | None) -> str | None:
        if value is not None and not _ROLE_ARN_RE.fullmatch(value):
            raise ValueError("must be a RAM role ARN: acs:ram::<account id>:role/<role name>")
        return value

    @field_validator("oss_bucket")
    @classmethod
    def _bucket(cls, value: str | None) -> str | None:
        from blueprints.core.objectstore import check_bucket_name

        return None if value is None else check_bucket_name(value)

    @model_validator(mode="after")
    def _one_destination(self) -> "ActionTrail":
        if self.sls_project_arn is None and self.oss_bucket is None:
            raise ValueError(
                "names no destination: set sls_project_arn (acs:log:<region>:<account id>:project/<name>) or oss_bucket"
            )
        return self


class EgressRule(Strict):
    """One destination the nodes may reach: a CIDR and TCP ports."""

    cidr: str = Field(description="Destination IPv4 CIDR, e.g. 203.0.113.0/24 (a package mirror or registry).")
    ports: str = Field(default="443", description="TCP port or range 'low/high', e.g. 443 or 8000/8100.")
    description: str = Field(default="", description="Why the nodes need it (shown on the rule).")

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        return str(parse_ipv4_cidr(value, "203.0.113.0/24"))

    @field_validator("ports")
    @classmethod
    def _ports(cls, value: str) -> str:
        return port_range(value)

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        from blueprints.profile.strict import check_one_line

        return check_one_line(value, 200)


class Egress(Strict):
    """An outbound allow-list: the VPC, Alibaba Cloud's service range, these entries, and nothing else."""

    allow: tuple[EgressRule, ...] = Field(
        default=(),
        description="Destinations beyond the VPC and Alibaba Cloud's internal service range (100.64.0.0/10).",
    )


class Security(Strict):
    """Defence in depth that needs account resources or changes reachability; all off by default."""

    kms_key_id: str | None = Field(
        default=None,
        description="Customer-managed KMS key for disks, Extreme NAS "
        f"and the bucket: {KMS_KEY_FORMS}. Empty: service-managed keys. "
        "Set it before the first deployment: the file system's key cannot "
        "change without replacing it (it is protected, so Pulumi refuses).",
    )
    flow_log: FlowLog | None = Field(
        default=None, description="Capture all VPC traffic into an existing SLS project and logstore."
    )
    actiontrail: ActionTrail | None = Field(
        default=None, description="Create an account-wide ActionTrail trail (all regions, all events)."
    )
    egress: Egress | None = Field(
        default=None,
        description="Restrict node egress to an allow-list (empty: egress is unrestricted, through the NAT gateway).",
    )

    @field_validator("kms_key_id")
    @classmethod
    def _kms_key_id(cls, value: str | None) -> str | None:
        if value is not None and not _KMS_KEY_RE.fullmatch(value):
            raise ValueError(f"is not a KMS key ID; allowed: {KMS_KEY_FORMS}")
        return value


def port_range(value: str) -> str:
    """Normalize a port or 'low/high' range (1–65535, low ≤ high) to the security group's 'low/high' form."""
    match = _PORT_RANGE_RE.fullmatch(value.strip())
    if not match:
        raise ValueError(f"{value!r} is not a port or range; write 443 or 8000/8100")
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if not 1 <= low <= high <= 65535:
        raise ValueError(f"{value!r} is outside 1–65535 or has low > high")
    return f"{low}/{high}"
