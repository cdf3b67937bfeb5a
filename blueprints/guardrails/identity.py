"""RAM rules: node roles trust only ECS; node policies name only the plan's bucket."""

from __future__ import annotations

import json
import re
from typing import Iterator

from blueprints.guardrails.inputs import as_list, json_document, of_types, statements
from blueprints.guardrails.model import Rule
from blueprints.plan import Plan


def role_trust(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT007: node roles trust only the ECS service."""
    for r in of_types(plan, ("ram.Role",)):
        try:
            document = json.loads(r.inputs.get("assumeRolePolicyDocument", "{}"))
        except json.JSONDecodeError:
            yield r.name, "trust policy is not JSON"
            continue
        for statement in document.get("Statement", []):
            services = statement.get("Principal", {}).get("Service", [])
            if set(services) - {"ecs.aliyuncs.com"} or statement.get("Principal", {}).get("RAM"):
                yield r.name, f"trust policy admits more than the ECS service: {statement.get('Principal')}"


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
        policy_statements = statements(document)
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
                    yield r.name, f"Resource {resource!r} names bucket {bucket}, not this plan's ({', '.join(sorted(buckets))})"
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


RULES: tuple[Rule, ...] = (
    Rule("AIT007", "error", "node roles trust only the ECS service", role_trust),
    Rule("AIT011", "error", "node OSS policies name only the plan's bucket", bucket_policy_scope),
)
