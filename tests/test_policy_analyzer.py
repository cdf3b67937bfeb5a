"""The pack through the SDK's own analyzer service, as `pulumi preview --policy-pack` drives it over gRPC.

The servicer is what ``PolicyPack`` serves (built here without the server, which never returns): Configure with
the config ``aitrain policy config`` writes, then AnalyzeStack with the stack's resources as protobuf messages —
so numbers arrive as doubles, unknowns as the engine's sentinels, and the findings come back as diagnostics.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel
from pulumi_policy.policy import _PolicyAnalyzerServicer
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE
from test_guardrails import MED, tamper

from blueprints.core.tokens import referenced_names
from blueprints.policy.config import pack_config
from blueprints.policy.pack import PACK_NAME, policies
from blueprints.review import guardrails
from blueprints.review.guardrails import Skip
from blueprints.review.plan import Plan, PlannedResource

LEVELS = {"mandatory": proto.MANDATORY, "advisory": proto.ADVISORY, "disabled": proto.DISABLED}


def urn(r: PlannedResource) -> str:
    return f"urn:pulumi:dev::aitrain::{r.type}::{r.name}"


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    json_format.ParseDict(value, message)
    return message


def request(plan: Plan, unknown: dict[str, str] | None = None) -> Any:
    """An AnalyzeStackRequest of ``plan``'s resources; ``unknown`` (name → input key) sends that input as unknown."""
    by_name = {r.name: r for r in plan.resources}
    resources = []
    for r in plan.resources:
        props = dict(r.inputs)
        if unknown and r.name in unknown:
            props[unknown[r.name]] = UNKNOWN_STRING_VALUE
        parent = (
            urn(by_name[r.parent])
            if r.parent in by_name
            else "urn:pulumi:dev::aitrain::pulumi:pulumi:Stack::aitrain-dev"
        )
        options = proto.AnalyzerResourceOptions(
            protect=r.protect,
            ignoreChanges=list(r.ignore_changes),
            deleteBeforeReplace=r.delete_before_replace,
            deleteBeforeReplaceDefined=True,
            parent=parent,
        )
        deps = {
            k: proto.AnalyzerPropertyDependencies(
                urns=[urn(by_name[n]) for n in dict.fromkeys(referenced_names(v)) if n in by_name]
            )
            for k, v in r.inputs.items()
        }
        provider = proto.AnalyzerProviderResource(
            type="pulumi:providers:alicloud",
            urn=f"urn:pulumi:dev::aitrain::pulumi:providers:alicloud::{r.provider or 'default_4_0_0'}",
            name=r.provider or "default_4_0_0",
            properties=struct({}),
        )
        resources.append(
            proto.AnalyzerResource(
                type=r.type,
                properties=struct(props),
                urn=urn(r),
                name=r.name,
                options=options,
                parent=parent,
                provider=provider if r.custom else None,
                propertyDependencies={k: v for k, v in deps.items() if v.urns},
            )
        )
    return proto.AnalyzeStackRequest(resources=resources)


def analyze(
    plan: Plan, config: dict[str, Any] | None = None, unknown: dict[str, str] | None = None
) -> list[tuple[str, str, str, int]]:
    """(policy name, resource name or "", message, enforcement level) of every diagnostic the analyzer returns."""
    servicer = _PolicyAnalyzerServicer(
        PACK_NAME, "0.0.1", policies(), EnforcementLevel.ADVISORY, None, None, None, None, None, None, None
    )
    if config is not None:
        # What the CLI sends for --policy-pack-config: each policy's
        # level (its own unless the file sets one) and the rest.
        own = {p.name: p.enforcement_level.value for p in policies() if p.enforcement_level is not None}
        configs = {}
        for name, entry in config.items():
            properties = {k: v for k, v in entry.items() if k != "enforcementLevel"}
            configs[name] = proto.PolicyConfig(
                enforcementLevel=LEVELS[entry.get("enforcementLevel", own[name])], properties=struct(properties)
            )
        servicer.Configure(proto.ConfigureAnalyzerRequest(policyConfig=configs), None)
    names = {urn(r): r.name for r in plan.resources}
    response = servicer.AnalyzeStack(request(plan, unknown), None)
    return [(d.policyName, names.get(d.urn, ""), d.message, d.enforcementLevel) for d in response.diagnostics]


def expected(plan: Plan, skips: tuple[Skip, ...] = ()) -> list[tuple[str, str, str, int]]:
    pols = {r.id: p for r, p in zip(guardrails.RULES, policies(), strict=True)}
    level = {"error": proto.MANDATORY, "warning": proto.ADVISORY, "info": proto.ADVISORY}
    names = {r.name for r in plan.resources}
    # A finding on no resource (``tags``, ``summary.…``) is a
    # stack-level diagnostic: no URN, its subject before the message.
    return [
        (pols[f.rule].name, f.resource, f"{pols[f.rule].description}\n{f.message}", level[f.level])
        if f.resource in names
        else (pols[f.rule].name, "", f"{pols[f.rule].description}\n{f.resource}: {f.message}", level[f.level])
        for f in guardrails.check(plan, skips)
    ]


def test_a_preset_through_the_analyzer_gives_its_advisories_only(medical_plan):
    """The preset's findings are info advisories (customer KMS key, alarms, flow log, tags, trail): nothing blocks."""
    result = analyze(medical_plan, pack_config(medical_plan))
    assert result == expected(medical_plan) != []
    # ait016: the Extreme NAS snapshot policy no resource applies (an advisory warning until ApplyAutoSnapshotPolicy
    # runs); ait027: the preset's HTTPS to any address.
    assert {d[0][:6] for d in result} == {"ait016", "ait019", "ait027", "ait028", "ait029", "ait031", "ait032"}
    assert {d[3] for d in result} == {proto.ADVISORY}


def test_findings_come_back_as_diagnostics_at_their_level(medical_plan):
    """An error blocks (mandatory), a warning advises; messages are the policy's description plus the rule's message."""
    plan = tamper(
        medical_plan,
        f"{MED}-cluster-template",
        inputs={
            "httpTokens": "optional",
            "internetMaxBandwidthOut": 1,
            "dataDisks": [{"category": "cloud_essd", "size": 500, "encrypted": False, "name": "aitrain-scratch"}],
        },
    )
    want = expected(plan)
    assert [w[0][:6] for w in want if w[3] == proto.MANDATORY] == ["ait001", "ait003", "ait008"]
    assert analyze(plan, pack_config(plan)) == want
    # Without a config every rule still runs on what the engine sends; AIT031's profile tags need the blueprint fact.
    assert analyze(plan) == [w for w in want if not w[0].startswith("ait031-")]


def test_a_skip_in_the_config_disables_the_policy(medical_plan):
    plan = tamper(medical_plan, f"{MED}-cluster-template", inputs={"httpTokens": "optional"})
    skips = (Skip("AIT008", "accepted for the test"),)
    config = pack_config(guardrails.with_findings(plan, skips))
    assert json.dumps(config).count('"disabled"') == 1
    assert analyze(plan, config) == expected(plan, skips)
    assert not any(d[0].startswith("ait008-") for d in expected(plan, skips))
    assert (
        [d for d in analyze(plan, pack_config(plan)) if d[0].startswith("ait008-")]
        == [d for d in expected(plan) if d[0].startswith("ait008-")]
        != []
    )


def test_an_unknown_id_during_preview_is_read_as_its_reference(medical_plan):
    """The NAS mount target's file system does not exist yet: the rules still run (no "can't run policy" diagnostic)."""
    plan = tamper(medical_plan, f"{MED}-storage-access-rule-cn-shanghai-a", inputs={"sourceCidrIp": "0.0.0.0/0"})
    unknown = {
        f"{MED}-storage-mount-target": "fileSystemId",
        f"{MED}-storage-access-rule-cn-shanghai-a": "accessGroupName",
    }
    result = analyze(plan, pack_config(plan), unknown=unknown)
    assert result == expected(plan) != []
    assert not any("can't run policy" in d[2] for d in result)
