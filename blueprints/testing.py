"""Pytest kit for your own stacks: build a profile or any Pulumi program offline and assert on the Plan.

    from blueprints.testing import offline_plan, assert_guardrails

    def test_my_stack_is_safe():
        plan = offline_plan("medical-imaging", overrides={"compute.nodes": 4})
        assert_guardrails(plan)
        assert plan.find("ecs.EcsInstanceSet")[0].inputs["amount"] == 4
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

from blueprints import guardrails
from blueprints.plan import Plan, PlannedResource
from blueprints.preview import preview_profile, record
from blueprints.stackconfig import read_stack_config, resolve_profile


def offline_plan(preset: str | None = None, *, profile: dict[str, Any] | None = None, stack_config: Path | None = None, overrides: dict[str, Any] | None = None) -> Plan:
    """The Plan of a preset and/or profile dict (merged preset → stack config → profile → overrides)."""
    stack_preset, stack_profile = read_stack_config(Path(stack_config)) if stack_config else (None, {})
    from blueprints.stackconfig import merge

    merged = merge(stack_profile, profile or {})
    data, model = resolve_profile(preset or stack_preset, merged, list((overrides or {}).items()))
    return preview_profile(data, model)


def record_program(program: Callable[[], None], *, zones: Iterable[str], image_id: str | None = None, config: dict[str, str] | None = None) -> list[PlannedResource]:
    """Every resource ``program`` registers under mocks (with parents and data-safety options), in tree order.

    Use it to unit-test a single component: ``record_program(lambda: SharedStorage("s", args), zones=["cn-shanghai-a"])``.
    """
    resources, _ = record(program, config, zones=list(zones), image_id=image_id)
    return resources


def assert_guardrails(plan: Plan, skip: Iterable[str] = ()) -> None:
    """Fail with every finding listed when any guardrail (not skipped by id) is violated."""
    findings = guardrails.check(plan, skip=skip)
    if findings:
        lines = "\n".join(f"  [{f.rule}] {f.resource}: {f.message}" for f in findings)
        raise AssertionError(f"{len(findings)} guardrail finding(s):\n{lines}")
