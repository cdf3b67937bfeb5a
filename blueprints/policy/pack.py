"""The guardrails as Pulumi CrossGuard policies: one StackValidationPolicy per rule, running the same rule functions.

``policy/__main__.py`` builds the ``PolicyPack`` from ``policies()`` (constructing a PolicyPack starts a gRPC server
and never returns, so nothing else may). Each policy turns the stack's ``PolicyResource`` records into the same
``PlannedResource`` records the offline plan holds, builds a ``Plan`` and reports what ``rule.check`` finds.

How the engine's view differs from the offline plan, and what the pack does about it:

- Values unknown during preview (IDs of resources not yet created) become plan references, as the offline plan
  shows them: ``${name.id}`` when the property depends on exactly one custom resource, else ``${unknown}``. A
  known value equal to a dependency's ``id`` becomes ``${name.id}`` too. So a rule never trips over an unknown
  (the SDK would turn the read into an advisory "can't run policy during preview" and skip the whole rule).
  A whole property that is unknown and depends on nothing is one the provider computes, not one the program set:
  it is left out, as the offline plan (inputs only) leaves it out; so are null properties.
- The engine sends a resource's state, so an existing resource also shows the provider's defaults: the pack then
  judges what is deployed, which the offline plan can only infer from the inputs.
- ``retain_on_delete`` is not sent to policy packs (pulumi-policy 1.21.0 ``PolicyResourceOptions`` and the engine's
  analyzer options have no such field). The pack assumes it is set; rules in ``BLIND_SPOTS`` say so in their
  description, and ``aitrain plan`` checks it.
- The profile is not visible: skips and summary facts come from ``--policy-pack-config`` (``blueprints.policy.config``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import (  # private, but the only way to read a value without the unknown check (1.21.0 pinned)
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    _DictProxy,
    _ListProxy,
)

from blueprints.policy.config import FACTS_KEY, REASON_KEY, SUMMARY_FACTS, facts_from_config, policy_name
from blueprints.review.guardrails import RULES, Rule
from blueprints.review.plan import Plan, PlannedResource

PACK_NAME = "aitrain-guardrails"
SEVERITY = {"error": Severity.HIGH, "warning": Severity.MEDIUM, "info": Severity.LOW}
# Errors block `pulumi up`; warnings and info findings are shown and let it proceed.
ENFORCEMENT = {
    "error": EnforcementLevel.MANDATORY,
    "warning": EnforcementLevel.ADVISORY,
    "info": EnforcementLevel.ADVISORY,
}
UNKNOWNS = frozenset(
    {
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_STRING_VALUE,
    }
)
UNKNOWN_REFERENCE = "${unknown}"
STACK_TYPE = "pulumi:pulumi:Stack"
# Rules that read what a policy pack cannot see, and what the pack says about it in the policy's description.
BLIND_SPOTS = {
    "AIT004": "retain_on_delete is not visible to policy packs "
    "(pulumi-policy 1.21.0 has no such option), so only protect and"
    " delete_before_replace are checked here; `aitrain plan` checks retain_on_delete",
}

CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        # Untyped per fact: a rule that starts reading a new summary value must not make the CLI refuse the config.
        FACTS_KEY: {
            "type": "object",
            "description": (
                f"Plan summary facts the rules read ({', '.join(SUMMARY_FACTS)}), written by `aitrain policy config`."
            ),
        },
        REASON_KEY: {"type": "string", "description": "Why the profile skips this rule (guardrails.skip)."},
    }
)


def raw(value: Any) -> Any:
    """``value`` with the SDK's unknown-checking proxies removed
    (plain dicts and lists, sentinels kept, whole numbers as int)."""
    if isinstance(value, _DictProxy):
        value = value["__target"]
    elif isinstance(value, _ListProxy):
        value = value["__target"]
    if isinstance(value, Mapping):
        return {str(k): raw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [raw(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the engine sends every number as a double; the plan (and rule messages) show 500, not 500.0
    return value


def is_custom(resource_type: str) -> bool:
    """Whether a type token names a custom resource (``pkg:module/file:Type`` or a provider), not a component."""
    parts = resource_type.split(":")
    return resource_type.startswith("pulumi:providers:") or (len(parts) == 3 and "/" in parts[1])


def _referencing(value: Any, deps: list[PolicyResource]) -> Any:
    """Unknowns and dependency IDs inside ``value`` as plan references (``${name.id}``)."""
    if isinstance(value, dict):
        return {k: _referencing(v, deps) for k, v in value.items()}
    if isinstance(value, list):
        return [_referencing(v, deps) for v in value]
    if isinstance(value, str):
        if value in UNKNOWNS:
            return f"${{{deps[0].name}.id}}" if len(deps) == 1 else UNKNOWN_REFERENCE
        for dep in deps:
            if value == raw(dep.props).get("id"):
                return f"${{{dep.name}.id}}"
    return value


def _parent_name(resource: PolicyResource) -> str | None:
    parent = resource.parent
    if parent is not None:
        return None if parent.resource_type == STACK_TYPE else parent.name
    urn = getattr(resource.opts, "parent", None)  # the URN, when the parent record was not linked
    if not urn or urn.split("::")[-2].endswith(STACK_TYPE):
        return None
    return str(urn.rsplit("::", 1)[-1])


def _provider_name(resource: PolicyResource) -> str | None:
    # The engine names default providers "default" / "default_4_0_0"; the offline plan records those as None.
    provider = resource.provider
    return None if provider is None or provider.name.startswith("default") else provider.name


def planned(resource: PolicyResource) -> PlannedResource:
    """One stack resource as the offline plan records it (engine input names, references for unknowns)."""
    props = raw(resource.props)
    inputs = {}
    for key, value in props.items():
        if key.startswith("__") or (key == "id" and is_custom(resource.resource_type)):
            continue  # the ID is not an input; the offline plan shows it only as ${name.id}
        if value is None or (
            isinstance(value, str) and value in UNKNOWNS and not resource.property_dependencies.get(key)
        ):
            # unset, or computed by the provider (a value the program set from another resource has a dependency)
            continue
        deps = [d for d in resource.property_dependencies.get(key, []) if is_custom(d.resource_type)]
        inputs[key] = _referencing(value, deps)
    property_deps = {d.urn for deps in resource.property_dependencies.values() for d in deps}
    opts = resource.opts
    return PlannedResource(
        type=resource.resource_type,
        name=resource.name,
        parent=_parent_name(resource),
        custom=is_custom(resource.resource_type),
        inputs=inputs,
        protect=bool(opts.protect),
        retain_on_delete=True,  # not visible to policy packs: see BLIND_SPOTS
        delete_before_replace=bool(opts.delete_before_replace),
        ignore_changes=tuple(opts.ignore_changes or ()),
        depends_on=tuple(d.name for d in resource.dependencies if d.urn not in property_deps),
        provider=_provider_name(resource),
    )


def stack_plan(resources: Iterable[PolicyResource], config: Mapping[str, Any] | None = None) -> Plan:
    """The Plan the rules read: every resource but the stack itself and default providers, plus the config's facts."""
    kept = [
        planned(r)
        for r in resources
        if r.resource_type != STACK_TYPE
        and not (r.resource_type.startswith("pulumi:providers:") and r.name.startswith("default"))
    ]
    return Plan(
        blueprint="(stack)",
        region="",
        profile_name="(policy pack)",
        summary=facts_from_config(config),
        notes=(),
        resources=tuple(kept),
    )


def validator(rule: Rule) -> Any:
    """The ``validate`` callback of ``rule``'s policy: build the plan, run the rule, report each finding."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        plan = stack_plan(args.resources, args.get_config())
        urns = {r.name: r.urn for r in args.resources}
        for name, message in rule.check(plan):
            urn = urns.get(name)
            # Findings on the summary (e.g. summary.scratch_gib_per_node) are stack-level: no URN, name in the text.
            report_violation(message if urn else f"{name}: {message}", urn)

    return validate


def policy(rule: Rule) -> StackValidationPolicy:
    """The CrossGuard policy of one rule: name from its id and title, level → enforcement and severity."""
    blind = BLIND_SPOTS.get(rule.id)
    return StackValidationPolicy(
        name=policy_name(rule),
        description=f"{rule.title} ({blind})" if blind else rule.title,
        validate=validator(rule),
        enforcement_level=ENFORCEMENT[rule.level],
        severity=SEVERITY[rule.level],
        config_schema=CONFIG_SCHEMA,
        remediation_steps=rule.fix or None,
        tags=["aitrain", rule.id, rule.level],
    )


def policies() -> list[StackValidationPolicy]:
    """One policy per guardrail rule, in rule order (what ``policy/__main__.py`` packs)."""
    return [policy(rule) for rule in RULES]
