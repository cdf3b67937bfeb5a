"""The policy pack reports exactly the plan's findings, every rule's (AIT001-AIT032, info findings included): each
preset's recorded resources, and every violating fixture of tests/test_guardrails.py, tests/test_guardrails_nodes.py
and tests/test_guardrails_data.py, go through every policy's validate as the engine would call it.

The records are real pulumi_policy classes (PolicyResource, PolicyResourceOptions, StackValidationArgs) with props
behind the SDK's unknown-checking proxy; the config is what ``aitrain policy config`` writes, applied the way the
analyzer applies it (disabled policies do not run; the rest get their properties). policy/__main__.py is never
imported: building a PolicyPack starts a server that never returns.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    Severity,
    StackValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy
from test_guardrails import (  # the violating fixtures of the offline rules, reused as they are
    AUTO,
    CASES,
    ERDMA,
    MED,
    UNIT_CASES,
    check,
    erdma_plan,  # noqa: F401  (fixture)
    full_plan,  # noqa: F401  (fixture)
    preset_plan,
    tamper,
    unit_resources,  # noqa: F401  (fixture)
    without,
)
from test_guardrails_data import CASES as DATA_CASES
from test_guardrails_data import added as data_added
from test_guardrails_data import opted_in, plans  # noqa: F401  (fixture)
from test_guardrails_nodes import CASES as NODE_CASES
from test_guardrails_nodes import added as node_added
from test_guardrails_nodes import login_and_bucket, med, pool  # noqa: F401  (fixtures)

from blueprints.core.tokens import referenced_names
from blueprints.policy.config import pack_config, policy_name
from blueprints.policy.pack import BLIND_SPOTS, UNKNOWN_REFERENCE, planned, policies, stack_plan
from blueprints.review import guardrails
from blueprints.review.guardrails import Skip
from blueprints.review.plan import Plan, PlannedResource

STACK_URN = "urn:pulumi:dev::aitrain::pulumi:pulumi:Stack::aitrain-dev"


def urn(r: PlannedResource) -> str:
    return f"urn:pulumi:dev::aitrain::{r.type}::{r.name}"


def engine_records(plan: Plan, *, ids: dict[str, str] | None = None) -> list[PolicyResource]:
    """``plan``'s resources as the engine hands them to a stack policy: a Stack root, parents and providers linked,
    property dependencies from the ``${name…}`` references, props behind the unknown-checking proxy.

    ``ids``: resources already deployed (name → cloud ID); their references become those IDs, as in a real preview.
    """
    ids = ids or {}
    stack = PolicyResource(
        "pulumi:pulumi:Stack", unknown_checking_proxy({}), STACK_URN, "aitrain-dev", options(), None, None, [], {}
    )
    records: dict[str, PolicyResource] = {}
    for r in plan.resources:
        props = {k: _deployed(v, ids) for k, v in r.inputs.items()}
        if r.name in ids:
            props["id"] = ids[r.name]
        provider = PolicyProviderResource(
            "pulumi:providers:alicloud",
            {},
            f"urn:pulumi:dev::aitrain::pulumi:providers:alicloud::{r.provider or 'default_4_0_0'}",
            r.provider or "default_4_0_0",
        )
        opts = options(
            protect=r.protect,
            ignore_changes=list(r.ignore_changes),
            delete_before_replace=r.delete_before_replace or None,
        )
        records[r.name] = PolicyResource(
            r.type, unknown_checking_proxy(props), urn(r), r.name, opts, provider if r.custom else None, None, [], {}
        )
    for r in plan.resources:
        record = records[r.name]
        record.parent = records[r.parent] if r.parent in records else stack
        record.opts.parent = record.parent.urn
        for key, value in r.inputs.items():
            deps = [records[n] for n in dict.fromkeys(referenced_names(value)) if n in records]
            if deps:
                record.property_dependencies[key] = deps
        record.dependencies = [
            *dict.fromkeys(
                [d for ds in record.property_dependencies.values() for d in ds]
                + [records[n] for n in r.depends_on if n in records]
            )
        ]
    return [stack, *records.values()]


def options(
    *, protect: bool = False, ignore_changes: list[str] | None = None, delete_before_replace: bool | None = None
) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect, ignore_changes or [], delete_before_replace, [], PolicyCustomTimeouts(0, 0, 0), [], None
    )


def _deployed(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _deployed(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_deployed(v, ids) for v in value]
    for name, cloud_id in ids.items():
        if value == f"${{{name}.id}}":
            return cloud_id
    return value


def run_pack(records: list[PolicyResource], config: dict[str, Any] | None = None) -> list[tuple[str, str, str]]:
    """Every policy's violations as (rule id, resource name, message), the config applied as the analyzer does."""
    names = {r.urn: r.name for r in records}
    found = []
    for rule, pol in zip(guardrails.RULES, policies(), strict=True):
        entry = dict((config or {}).get(pol.name, {}))
        if str(entry.pop("enforcementLevel", "")).lower() == "disabled":
            continue
        reported: list[tuple[str, str | None]] = []
        result = pol.validate(
            StackValidationArgs(records, entry or None), lambda message, u=None, out=reported: out.append((message, u))
        )
        assert result is None  # synchronous: nothing for the analyzer to await
        for message, u in reported:
            if u is None:  # a stack-level finding names what it is about in front of its message
                resource, _, message = message.partition(": ")
            else:
                resource = names[u]
            found.append((rule.id, resource, message))
    return found


def plan_findings(plan: Plan, skips: tuple[Skip, ...] = ()) -> list[tuple[str, str, str]]:
    return [(f.rule, f.resource, f.message) for f in guardrails.check(plan, skips)]


def through_pack(plan: Plan, skips: tuple[Skip, ...] = ()) -> list[tuple[str, str, str]]:
    configured = guardrails.with_findings(plan, skips)
    return run_pack(engine_records(plan), pack_config(configured))


# ---- the presets ----


@pytest.mark.parametrize("fixture", ["medical_plan", "autoscaling_plan"])
def test_each_preset_gives_the_plans_findings(fixture, request):
    plan = request.getfixturevalue(fixture)
    expected = [(f["rule"], f["resource"], f["message"]) for f in plan.findings]
    assert run_pack(engine_records(plan), pack_config(plan)) == expected


@pytest.mark.parametrize("fixture", ["medical_plan", "autoscaling_plan"])
def test_the_pack_rebuilds_the_plans_resources(fixture, request):
    """What the rules read is the plan itself: types, names, parents, custom flags, inputs, options, providers."""
    plan = request.getfixturevalue(fixture)
    rebuilt = stack_plan(engine_records(plan)).resources
    keep = lambda r: dataclasses.replace(r, retain_on_delete=True, registered_outputs=())  # noqa: E731  (what the pack cannot see)
    assert [keep(r) for r in rebuilt] == [keep(r) for r in plan.resources]


# ---- every violating fixture of the offline rules ----


def without_rule(findings: list[tuple[str, str, str]], rule: str) -> list[tuple[str, str, str]]:
    return [f for f in findings if f[0] != rule]


@pytest.mark.parametrize("case, preset, suffix, changes, rule, message", CASES, ids=[c[0] for c in CASES])
def test_violating_fixtures_give_the_same_findings(
    case,
    preset,
    suffix,
    changes,
    rule,
    message,
    medical_plan,
    autoscaling_plan,
    erdma_plan,  # noqa: F811  (fixture)
):
    base = preset_plan(preset, medical_plan, autoscaling_plan, erdma_plan)
    name = f"{AUTO if preset == ERDMA else preset}-{suffix}"
    plan = tamper(base, name, **dict(changes))
    expected = plan_findings(plan)
    assert (rule, name, message) in expected, "the fixture violates its rule"
    if "retain_on_delete" in dict(changes):  # the blind spot: the engine does not tell policy packs
        assert rule in BLIND_SPOTS
        assert through_pack(plan) == without_rule(expected, rule) == plan_findings(base)
        return
    assert through_pack(plan) == expected
    # The profile's skip reaches the pack through the config: that policy is disabled, the others still run.
    skip = (Skip(rule, "accepted for the test"),)
    assert through_pack(plan, skip) == plan_findings(plan, skip) == without_rule(expected, rule)


@pytest.mark.parametrize("case, name, change, rule, resource, message", UNIT_CASES, ids=[c[0] for c in UNIT_CASES])
def test_unit_fixtures_give_the_same_findings(case, name, change, rule, resource, message, full_plan):  # noqa: F811
    plan = without(full_plan, name) if change == "remove" else tamper(full_plan, name, **dict(change))
    assert [(f.rule, f.resource, f.message) for f in check(plan, base=full_plan)] == [(rule, resource or name, message)]
    assert through_pack(plan) == plan_findings(plan)


@pytest.mark.parametrize("case, fixture, change, rule, name, message", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_node_fixtures_give_the_same_findings(case, fixture, change, rule, name, message, request):
    base = request.getfixturevalue(fixture)
    plan = change(base)
    assert [(f.rule, f.resource, f.message) for f in node_added(plan, base)] == [(rule, name, message)]
    assert through_pack(plan) == plan_findings(plan)


@pytest.mark.parametrize("case, preset, mutate, rule, level, name, message", DATA_CASES, ids=[c[0] for c in DATA_CASES])
def test_data_fixtures_give_the_same_findings(case, preset, mutate, rule, level, name, message, plans):  # noqa: F811
    base = opted_in(plans[preset])
    plan = mutate(base)
    assert (rule, name, message) in [(f.rule, f.resource, f.message) for f in data_added(base, plan)]
    if rule in BLIND_SPOTS and any(
        r.protect and not r.retain_on_delete for r in plan.resources
    ):  # retain_on_delete: unseen
        assert through_pack(plan) == [f for f in plan_findings(plan) if f != (rule, name, message)]
        return
    assert through_pack(plan) == plan_findings(plan)


def test_findings_on_the_summary_need_the_config(medical_plan):
    """AIT013 and AIT031 read summary facts the engine never sends: with the config they report at stack level,
    without it not at all (the resource rules still do)."""
    plan = dataclasses.replace(
        medical_plan, summary={**medical_plan.summary, "scratch_gib_per_node": 500, "memory_gib_per_node": 1000}
    )
    expected = plan_findings(plan)
    assert [(f.rule, f.resource) for f in check(plan, base=medical_plan)] == [
        ("AIT013", "summary.scratch_gib_per_node")
    ]
    assert ("AIT031", "tags") in [(r, n) for r, n, _ in expected]
    assert through_pack(plan) == expected
    assert run_pack(engine_records(plan)) == [f for f in expected if f[0] not in ("AIT013", "AIT031")]


def test_the_bucket_fact_lets_ait011_compare(full_plan):  # noqa: F811
    """An adopted bucket is known only from the summary: the config carries it to the pack."""
    adopted = full_plan
    for name in (
        "med-data-bucket",
        "med-data-acl",
        "med-data-public-access-block",
        "med-data-versioning",
        "med-data-encryption",
        "med-data-https-only",
    ):
        adopted = without(adopted, name)
    other = tamper(
        adopted,
        "med-data-node-policy",
        inputs={
            "policyDocument": (
                '{"Version": "1", "Statement": [{"Effect": "Allow", "Action": '
                '["oss:GetObject"], "Resource": ["acs:oss:*:*:other-data/*"]}]}'
            )
        },
    )
    assert through_pack(other) == plan_findings(other) != []


def test_several_findings_keep_rule_order(medical_plan):
    plan = tamper(
        medical_plan, f"{MED}-cluster-template", inputs={"httpTokens": "optional", "internetMaxBandwidthOut": 1}
    )
    assert through_pack(plan) == plan_findings(plan)
    assert [f.rule for f in check(plan, base=medical_plan)] == ["AIT001", "AIT008"]
    assert [f[0] for f in through_pack(plan)] == sorted(f[0] for f in through_pack(plan))


# ---- values the engine shows differently from the offline plan ----


def test_unknowns_become_references_to_their_one_dependency(autoscaling_plan):
    """During preview a new resource's ID is unknown: with one dependency it reads as ``${name.id}``, as in the plan."""
    records = engine_records(autoscaling_plan)
    mount = next(r for r in records if r.name == f"{AUTO}-storage-mount-target")
    target = mount.props["__target"]
    for key in ("vswitchId", "fileSystemId"):
        assert target[key].startswith("${")
        target[key] = UNKNOWN_STRING_VALUE
    with pytest.raises(UnknownValueError) as raised:
        mount.props["fileSystemId"]  # what the SDK does to a policy that reads it
    assert raised.value.message == "string value at .fileSystemId can't be known during preview"
    rebuilt = planned(mount)
    original = next(r for r in autoscaling_plan.resources if r.name == mount.name)
    assert rebuilt.inputs["fileSystemId"] == original.inputs["fileSystemId"] == f"${{{AUTO}-storage-fs.id}}"
    assert rebuilt.inputs["vswitchId"] == original.inputs["vswitchId"]
    assert run_pack(records, pack_config(autoscaling_plan)) == plan_findings(autoscaling_plan)


def test_provider_computed_unknowns_and_nulls_are_left_out(medical_plan):
    """A whole property unknown with no dependency is computed by the provider: the offline plan never has it."""
    records = engine_records(medical_plan)
    rule = next(r for r in records if r.name == f"{MED}-network-sg-intra-cluster")
    original = planned(rule).inputs
    rule.props["__target"]["ruleId"] = UNKNOWN_STRING_VALUE
    rule.props["__target"]["sourceGroupOwnerAccount"] = None
    assert planned(rule).inputs == original


def test_unknowns_without_one_dependency_are_a_visible_reference(medical_plan):
    records = engine_records(medical_plan)
    rule = next(r for r in records if r.name == f"{MED}-network-sg-intra-cluster")
    rule.props["__target"]["description"] = UNKNOWN_STRING_VALUE
    rule.property_dependencies["description"] = [
        r for r in records if r.name.endswith(("-network-vpc", "-network-sg"))
    ]  # two sources: whose ID?
    assert len(rule.property_dependencies["description"]) == 2
    assert planned(rule).inputs["description"] == UNKNOWN_REFERENCE
    # Where a rule needs the value, the pack judges the unknown exactly as the offline plan judges that reference.
    rule.props["__target"]["cidrIp"] = {
        "nested": UNKNOWN_STRING_VALUE
    }  # an unknown inside a value: no dependency to name
    rule.props["__target"].pop("sourceSecurityGroupId")
    rule.property_dependencies.pop("sourceSecurityGroupId", None)
    as_plan = tamper(
        medical_plan,
        rule.name,
        inputs={"cidrIp": {"nested": UNKNOWN_REFERENCE}, "description": UNKNOWN_REFERENCE},
        drop=("sourceSecurityGroupId",),
    )
    assert stack_plan(records).resources == stack_plan(engine_records(as_plan)).resources
    assert run_pack(records, pack_config(as_plan)) == plan_findings(as_plan)


def test_unknowns_inside_objects_and_lists_become_references(medical_plan):
    records = engine_records(medical_plan)
    template = next(r for r in records if r.name == f"{MED}-cluster-template")
    target = template.props["__target"]
    target["networkInterfaces"] = unknown_checking_proxy(
        {"x": {"vswitchId": UNKNOWN_STRING_VALUE, "ids": [UNKNOWN_STRING_VALUE]}}
    )
    template.property_dependencies["networkInterfaces"] = [next(r for r in records if r.name == f"{MED}-network-vpc")]
    assert planned(template).inputs["networkInterfaces"] == {
        "x": {"vswitchId": f"${{{MED}-network-vpc.id}}", "ids": [f"${{{MED}-network-vpc.id}}"]}
    }


def test_deployed_ids_read_as_references(medical_plan):
    """On a stack that exists, references are real IDs: those of a dependency read as ``${name.id}`` again."""
    plan = tamper(medical_plan, f"{MED}-storage-access-rule-cn-shanghai-a", inputs={"sourceCidrIp": "0.0.0.0/0"})
    deployed = {r.name: f"id-{i}" for i, r in enumerate(plan.resources) if r.custom}
    records = engine_records(plan, ids=deployed)
    assert stack_plan(records).resources == stack_plan(engine_records(plan)).resources
    assert run_pack(records, pack_config(plan)) == plan_findings(plan) != []


def test_engine_numbers_are_doubles(medical_plan):
    """Protobuf sends 500 as 500.0; the pack reads it back as 500, so messages match the plan's."""
    plan = tamper(
        medical_plan,
        f"{MED}-cluster-nodes-0",
        inputs={"dataDisks": [{"diskCategory": "cloud_essd", "size": 800, "diskName": "aitrain-scratch"}]},
    )
    records = engine_records(plan)
    nodes = next(r for r in records if r.name == f"{MED}-cluster-nodes-0")
    nodes.props["__target"]["dataDisks"]["__target"][0]["__target"]["size"] = 800.0
    assert run_pack(records, pack_config(plan)) == plan_findings(plan)
    assert [(f.rule, f.resource, f.message) for f in check(plan, base=medical_plan)] == [
        ("AIT003", nodes.name, "data disk 0 (cloud_essd, 800 GiB) is not encrypted")
    ]


# ---- the policies themselves ----


def test_one_policy_per_rule_with_its_level():
    pols = policies()
    assert [p.name for p in pols] == [policy_name(r) for r in guardrails.RULES]
    assert len({p.name for p in pols}) == len(pols)
    for rule, pol in zip(guardrails.RULES, pols, strict=True):
        assert pol.name.startswith(rule.id.lower() + "-") and len(pol.name) <= 100
        assert pol.enforcement_level == (
            EnforcementLevel.MANDATORY if rule.level == "error" else EnforcementLevel.ADVISORY
        )
        assert pol.severity == {"error": Severity.HIGH, "warning": Severity.MEDIUM, "info": Severity.LOW}[rule.level]
        assert pol.description.startswith(rule.title)
        assert (pol.description == rule.title) == (rule.id not in BLIND_SPOTS)
        assert pol.remediation_steps == (rule.fix or None)


def test_policy_names_are_the_ids_and_title_slugs():
    ait001 = next(r for r in guardrails.RULES if r.id == "AIT001")
    assert policy_name(dataclasses.replace(ait001, title="No public IP (nodes) — v2")) == "ait001-no-public-ip-nodes-v2"


def test_blind_spots_name_every_rule_that_reads_retain_on_delete():
    import inspect

    readers = {r.id for r in guardrails.RULES if "retain_on_delete" in inspect.getsource(r.check)}
    assert readers == set(BLIND_SPOTS)
    assert "retain_on_delete is not visible to policy packs" in BLIND_SPOTS["AIT004"]


def test_a_parent_known_only_by_urn_is_named_from_it(medical_plan):
    records = engine_records(medical_plan)
    child = next(r for r in records if r.name == f"{MED}-storage-fs")
    child.opts.parent = None
    assert planned(child).parent == f"{MED}-storage"  # the linked record alone names it
    child.opts.parent = child.parent.urn
    child.parent = None
    assert planned(child).parent == f"{MED}-storage"
    child.opts.parent = STACK_URN
    assert planned(child).parent is None


def test_the_stack_and_default_providers_are_not_resources(medical_plan):
    records = engine_records(medical_plan)
    default = PolicyResource(
        "pulumi:providers:alicloud",
        {},
        "urn:pulumi:dev::aitrain::pulumi:providers:alicloud::default_4_0_0",
        "default_4_0_0",
        options(),
        None,
        records[0],
        [],
        {},
    )
    names = [r.name for r in stack_plan([*records, default]).resources]
    assert "aitrain-dev" not in names and "default_4_0_0" not in names
    assert names == [r.name for r in medical_plan.resources]
    explicit = [r for r in stack_plan(records).resources if r.provider]
    assert explicit and all(r.provider == "medical-imaging-cn-shanghai" for r in explicit)
