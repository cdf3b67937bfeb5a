"""Render a Plan for people: a terminal table and Markdown for pull requests (JSON lives on the Plan)."""

from __future__ import annotations

import base64
import binascii
import io
from pathlib import Path
from typing import Any

import jinja2
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from blueprints.guardrails import RULES
from blueprints.plan import Plan, PlannedResource
from blueprints.text import html_text, md_code, md_fence, md_text, plain, plain_block

TEMPLATE_DIR = Path(__file__).parent / "templates"

# The inputs a reviewer checks first, per resource type (engine names).
KEY_PROPERTIES: dict[str, tuple[str, ...]] = {
    "vpc.Network": ("cidrBlock",),
    "vpc.Switch": ("zoneId", "cidrBlock"),
    "ecs.SecurityGroup": ("innerAccessPolicy",),
    "ecs.SecurityGroupRule": ("type", "ipProtocol", "portRange", "cidrIp", "sourceSecurityGroupId", "policy"),
    "vpc.NatGateway": ("natType", "paymentType", "internetChargeType"),
    "ecs.EipAddress": ("bandwidth", "internetChargeType"),
    "ecs.EipAssociation": ("instanceType",),
    "vpc.SnatEntry": ("sourceVswitchId", "snatIp"),
    "nas.FileSystem": ("fileSystemType", "storageType", "capacity", "encryptType", "zoneId"),
    "nas.AccessGroup": ("accessGroupName", "accessGroupType"),
    "nas.AccessRule": ("sourceCidrIp", "rwAccessType", "userAccessType"),
    "nas.MountTarget": ("networkType", "vswitchId"),
    "ram.Role": ("roleName",),
    "ecs.EcsDeploymentSet": ("strategy",),
    "ecs.EcsLaunchTemplate": ("instanceType", "systemDisk", "internetMaxBandwidthOut", "httpTokens", "spotStrategy"),
    "ecs.EcsInstanceSet": ("amount", "instanceType", "zoneId", "internetMaxBandwidthOut", "deletionProtection", "spotStrategy", "dataDisks"),
    "ecs.Instance": ("instanceType", "availabilityZone", "networkInterfaceTrafficMode", "internetMaxBandwidthOut", "httpTokens", "systemDiskEncrypted", "dataDisks"),
    "oss.Bucket": ("bucket", "storageClass", "forceDestroy"),
    "oss.BucketAcl": ("acl",),
    "oss.BucketPublicAccessBlock": ("blockPublicAccess",),
    "oss.BucketVersioning": ("status",),
    "oss.BucketServerSideEncryption": ("sseAlgorithm",),
    "ram.Policy": ("policyName",),
    "ram.RolePolicyAttachment": ("policyName", "policyType"),
    "ess.ScalingGroup": ("minSize", "maxSize", "desiredCapacity", "multiAzPolicy", "groupDeletionProtection"),
    "ess.ScalingConfiguration": ("instanceType", "systemDiskEncrypted", "internetMaxBandwidthOut", "spotStrategy", "dataDisks", "networkInterfaces"),
    "ess.ScalingRule": ("adjustmentType", "adjustmentValue"),
    "ess.Alarm": ("metricName", "comparisonOperator", "threshold", "period", "evaluationCount"),
    "ess.ScheduledTask": ("launchTime", "recurrenceType", "recurrenceValue", "minValue", "desiredCapacity"),
}

# A PR comment holds at most 65,536 characters; the Markdown plan stays under this by summarising.
MARKDOWN_LIMIT = 60_000


def key_properties(resource: PlannedResource) -> dict[str, Any]:
    """The reviewer-relevant inputs of one resource, in a fixed order, absent ones skipped."""
    keys = KEY_PROPERTIES.get(resource.short_type, ())
    return {k: resource.inputs[k] for k in keys if k in resource.inputs}


def format_value(value: Any) -> str:
    """Compact, deterministic text for a property value."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def markdown_cell(value: Any) -> str:
    """A value safe inside a Markdown table cell: one line, Markdown and HTML escaped, pipes escaped."""
    return md_text(format_value(value))


def guardrails_holding(plan: Plan) -> list[tuple[str, str]]:
    """(rule id, claim) of every guardrail with no finding in the plan: the only claims a summary may make."""
    fired = {f["rule"] for f in plan.findings}
    return [(rule.id, rule.title) for rule in RULES if rule.id not in fired]


def safety_flags(resource: PlannedResource) -> str:
    """Short text for the data-safety options set on a resource."""
    flags = [name for name, on in (("protect", resource.protect), ("retain-on-delete", resource.retain_on_delete), ("delete-before-replace", resource.delete_before_replace)) if on]
    if resource.ignore_changes:
        flags.append("ignore-changes: " + ",".join(resource.ignore_changes))
    return " ".join(flags)


def depth_of(plan: Plan) -> dict[str, int]:
    """Tree depth of every resource name (top level = 0)."""
    parents = {r.name: r.parent for r in plan.resources}
    depths: dict[str, int] = {}
    for name in parents:
        depth, cursor = 0, parents[name]
        while cursor is not None and cursor in parents:
            depth, cursor = depth + 1, parents[cursor]
        depths[name] = depth
    return depths


def user_data_blocks(plan: Plan) -> list[tuple[str, str]]:
    """(resource name, decoded cloud-init) for every resource that carries user data."""
    blocks = []
    for r in plan.resources:
        encoded = r.inputs.get("userData")
        if isinstance(encoded, str):
            try:
                blocks.append((r.name, base64.b64decode(encoded, validate=True).decode("utf-8")))
            except (binascii.Error, UnicodeDecodeError):
                blocks.append((r.name, encoded))
    return blocks


def render_table(plan: Plan, width: int = 160) -> str:
    """Terminal rendering: summary, notes, then the resource tree with key properties."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, record=True)
    summary = Table(title=Text(plain(f"aitrain plan: {plan.profile_name} ({plan.blueprint}, {plan.region})")), box=box.SIMPLE, show_header=False)
    summary.add_column("key", style="bold")
    summary.add_column("value")
    for key, value in plan.summary.items():
        summary.add_row(Text(plain(key)), Text(plain(format_value(value))))
    console.print(summary)
    for note in plan.notes:
        console.print(Text(f"note: {plain(note)}"))
    tree = Table(box=box.SIMPLE_HEAD, title=f"{sum(1 for r in plan.resources if r.custom)} resources in {sum(1 for r in plan.resources if not r.custom)} components")
    tree.add_column("resource", no_wrap=True)
    tree.add_column("type", no_wrap=True)
    tree.add_column("key properties", overflow="fold", ratio=1)
    tree.add_column("safety", no_wrap=True)
    depths = depth_of(plan)
    for r in plan.resources:
        props = ", ".join(f"{k}={format_value(v)}" for k, v in key_properties(r).items())
        # Text, not str: values such as "[a, b]" must not be read as rich markup.
        tree.add_row(Text("  " * depths[r.name] + plain(r.name)), Text(plain(r.short_type)), Text(plain(props)), Text(plain(safety_flags(r))))
    console.print(tree)
    for finding in plan.findings:
        console.print(Text(plain(f"{finding['level']}: [{finding['rule']}] {finding['resource']}: {finding['message']}")))
    # Name only the guardrails that hold: a finding removes its claim from the summary.
    console.print("guardrails: all passed" if not plan.findings else "guardrails holding:", markup=False)
    for rule_id, claim in guardrails_holding(plan):
        console.print(Text(f"  {rule_id} {claim}"))
    # A fixed width keeps the output byte-identical; rich pads cells, so trailing blanks are dropped.
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def render_markdown(plan: Plan) -> str:
    """Markdown for a pull request: summary, counts, tree, safety, user data; summarised to fit a PR comment."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["value"] = markdown_cell
    env.filters["text"] = md_text
    env.filters["code"] = lambda v: md_code(format_value(v))
    env.filters["html"] = html_text
    template = env.get_template("plan.md.j2")
    depths = depth_of(plan)
    rows: list[dict[str, Any]] = [{"r": r, "depth": depths[r.name], "props": key_properties(r), "safety": safety_flags(r)} for r in plan.resources]
    user_data = [(name, plain_block(text), md_fence(text)) for name, text in user_data_blocks(plan)]
    common = {"plan": plan, "counts": plan.count_by_type(), "holding": guardrails_holding(plan)}
    text = template.render(rows=rows, user_data=user_data, show_user_data=True, **common)
    if len(text) > MARKDOWN_LIMIT:
        text = template.render(rows=[x for x in rows if not x["r"].custom], user_data=[], show_user_data=False, **common)
    return text
