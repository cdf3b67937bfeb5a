"""Pytest kit for your own stacks: build a profile or any Pulumi program offline and assert on the Plan.

    from blueprints.testing import offline_plan, assert_guardrails

    def test_my_stack_is_safe():
        plan = offline_plan("medical-imaging", overrides={"compute.nodes": 4})
        assert_guardrails(plan)
        assert plan.find("ecs.EcsInstanceSet")[0].inputs["amount"] == 4
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Callable, Iterable

from blueprints import guardrails
from blueprints.plan import Plan, PlannedResource
from blueprints.catalog import Catalog
from blueprints.preview import preview, record


def offline_plan(
    preset: str | None = None,
    *,
    profile: dict[str, Any] | None = None,
    stack_config: Path | None = None,
    overrides: dict[str, Any] | None = None,
    catalog: Catalog | None = None,
    today: dt.date | None = None,
) -> Plan:
    """The Plan of a preset and/or profile dict (merged preset → stack config → profile → overrides).

    ``catalog`` defaults to ``load_catalog()`` and ``today`` to the clock (``AITRAIN_TODAY`` or the system date).
    """
    from blueprints import clock
    from blueprints.catalog import load_catalog
    from blueprints.stackconfig import PROFILE_KEY, engine_config, engine_value, merge, read_settings, with_cli_inputs

    config = engine_config(Path(stack_config)) if stack_config else {}
    if profile:
        current = read_settings(config, source="stack config").profile if PROFILE_KEY in config else {}
        config[PROFILE_KEY] = engine_value(merge(current, profile))
    config = with_cli_inputs(config, preset, list((overrides or {}).items()))
    return preview(config, catalog=catalog or load_catalog(), today=today or clock.today())


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
