"""RAM rules: node roles trust only ECS; node policies name
only the plan's bucket; least privilege, no long-lived keys."""

from __future__ import annotations

import re
from typing import Any, Iterator

from blueprints.core import userdata
from blueprints.kinds import Role
from blueprints.review.guardrails.inputs import as_list, json_document, of_role, of_types, statements
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan

# The one service a node role may be assumed by.
ECS_SERVICE = "ecs.aliyuncs.com"


def role_trust(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT007: node roles trust only the ECS service."""
    for r in of_types(plan, ("ram.Role",)):
        document = json_document(r.inputs.get("assumeRolePolicyDocument", "{}"))
        if document is None:
            yield r.name, "trust policy is not JSON"
            continue
        for principal in beyond_ecs(document):
            yield r.name, f"trust policy admits more than the ECS service: {principal}"


def beyond_ecs(document: dict[str, Any]) -> list[Any]:
    """The principals of a trust policy that admit anything besides the ECS service (another service, an account, …).

    Shared by AIT007 (every role of the plan) and AIT035 (the role a node pool runs as).
    """
    wider = []
    for statement in statements(document):
        principal = statement.get("Principal", {})
        if (
            not isinstance(principal, dict)
            or set(as_list(principal.get("Service"))) != {ECS_SERVICE}
            or set(principal) - {"Service"}
        ):
            wider.append(principal)
    return wider


def bucket_policy_scope(plan: Plan) -> Iterator[tuple[str, str]]:
    """Every RAM policy that grants OSS actions names, in each Resource, one of the plan's buckets and nothing wider."""
    buckets = {str(r.inputs.get("bucket")) for r in of_types(plan, ("oss.Bucket",))}
    if isinstance(plan.summary.get("bucket"), str):  # an adopted bucket has no oss.Bucket; the summary names it
        buckets.add(plan.summary["bucket"])
    for r in of_types(plan, ("ram.Policy",)):
        document = json_document(r.inputs.get("policyDocument"))
        if document is None:
            yield r.name, "policy document is not JSON"
            continue
        # A Deny grants nothing, however wide its Resource.
        policy_statements = [s for s in statements(document) if s.get("Effect") != "Deny"]
        if not any(a == "*" or str(a).startswith("oss:") for s in policy_statements for a in as_list(s.get("Action"))):
            continue  # not about OSS
        named: set[str] = set()
        for s in policy_statements:
            if "NotResource" in s or "NotAction" in s:
                yield r.name, "policy uses NotResource/NotAction, which grants everything not listed"
            for resource in as_list(s.get("Resource")):
                bucket = _bucket_of(str(resource))
                if bucket is None:
                    yield r.name, f"Resource {resource!r} is not one named OSS bucket (no wildcards in the bucket name)"
                elif buckets and bucket not in buckets:
                    yield (
                        r.name,
                        f"Resource {resource!r} names bucket {bucket}, not this plan's ({', '.join(sorted(buckets))})",
                    )
                else:
                    named.add(bucket)
        if not buckets and len(named) > 1:
            yield r.name, f"policy names {len(named)} buckets ({', '.join(sorted(named))}); a node policy names one"


_OSS_RESOURCE = re.compile(r"acs:oss:[^:]*:[^:]*:([^/]*)(?:/.*)?")


def _bucket_of(resource: str) -> str | None:
    """The bucket an ``acs:oss:…:<bucket>[/key]`` resource names, or None when it is not exactly one bucket."""
    match = _OSS_RESOURCE.fullmatch(resource)
    if not match or any(c in match.group(1) for c in "*?") or not match.group(1):
        return None
    return match.group(1)


# ---- least privilege, no long-lived keys (AIT020) ----

# RAM users and their keys are long-lived secrets; nodes get short-lived STS tokens through their instance role.
_NO_USERS = {
    "ram.User": "a RAM user",
    "ram.AccessKey": "an AccessKey (a long-lived secret)",
    "ram.UserPolicyAttachment": "a policy attached to a user",
    "ram.GroupPolicyAttachment": "a policy attached to a group",
}
# AccessKey IDs start with "LTAI" (Alibaba Cloud's AccessKey pair format) followed by 12-30 letters and digits.
_ACCESS_KEY = re.compile(r"LTAI[0-9A-Za-z]{12,30}")


def least_privilege(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT020: no Allow of every action, no RAM users or keys, no AccessKey in user data."""
    for r in of_types(plan, ("ram.Policy",)):
        document = json_document(r.inputs.get("policyDocument"))
        for s in statements(document) if document else []:
            wild = sorted({str(a) for a in as_list(s.get("Action")) if str(a) in ("*", "*:*")})
            if s.get("Effect") == "Allow" and wild:
                yield (
                    r.name,
                    f"policy allows Action {', '.join(repr(a) for a in wild)}: "
                    "every action on every service; list the actions the nodes need",
                )
    for r in of_types(plan, tuple(_NO_USERS)):
        yield (
            r.name,
            f"{_NO_USERS[r.short_type]} in the plan: attach policies "
            "to roles only and let nodes use their instance role",
        )
    for r in of_role(plan, Role.NODE):
        text = _user_data_text(r.inputs.get("userData"))
        if text and _ACCESS_KEY.search(text):
            yield (
                r.name,
                "userData holds an AccessKey ID (LTAI…): use the node's "
                "RAM role (STS tokens from the metadata service) instead",
            )


def _user_data_text(value: object) -> str:
    """User data as text: the plain value plus its base64 decoding when it is base64 (how the components pass it)."""
    if not isinstance(value, str):
        return ""
    return f"{value}\n{userdata.decode(value) or ''}"


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT007",
        "error",
        "node roles trust only the ECS service",
        role_trust,
        rationale=(
            "A role another service or account can assume leaks the nodes' data "
            "access; CIS 1.15/1.16; infraguard ecs-instance-ram-role-attached."
        ),
        fix="Keep the node role's trust policy to Principal Service ecs.aliyuncs.com only.",
        references=(14,),
    ),
    Rule(
        "AIT011",
        "error",
        "node OSS policies name only the plan's bucket",
        bucket_policy_scope,
        rationale=(
            "A node policy on oss:* or every bucket lets one compromised "
            "node read every dataset; KICS e8e62026, 66505003."
        ),
        fix=(
            "Scope node policies to acs:oss:*:*:<bucket> and <bucket>/* "
            "of the plan's bucket (storage.bucket), without wildcards."
        ),
        references=(14,),
    ),
    Rule(
        "AIT020",
        "error",
        "RAM least privilege: no Action *, no RAM users or keys, no AccessKey in user data",
        least_privilege,
        rationale=(
            "Action * or a long-lived AccessKey turns one leaked node into "
            "the whole account; CIS 1.15/1.16; KICS e8e62026, 66505003."
        ),
        fix=(
            "List the needed actions in role policies and let nodes use their instance role; remove ram.User / "
            "AccessKey / user and group attachments."
        ),
        references=(14,),
    ),
)
