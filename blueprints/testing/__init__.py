"""Pytest kit for your own stacks and components: offline, under mocks it sets up itself, so no test passes silently.

    from blueprints.testing import assert_guardrails, offline_mocks, offline_plan

    def test_my_stack_is_safe():
        plan = offline_plan("medical-imaging", overrides={"compute.nodes": 4})
        assert_guardrails(plan)
        assert plan.find("ecs.EcsInstanceSet")[0].inputs["amount"] == 4

    def test_my_component():
        with offline_mocks(zones=["cn-shanghai-a"]) as stack:
            storage = SharedStorage("data", args)
            assert stack.resolve(storage.file_system_id) == "${data-fs.id}"
        assert_guardrails(stack.resources)

Values are pulled out with ``stack.resolve(output)`` and checked with plain ``assert``; an ``output.apply(check)``
inside the block is awaited when the block ends, so a failing check fails the test too. A test written Pulumi's way
(``@pulumi.runtime.test`` returning an ``apply`` check) with no mocks of its own runs under these mocks too: the
pytest plugin installed with aitrain (``blueprints.testing.plugin``) sees to it, so its check runs and can fail.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import pulumi
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await

from blueprints.catalog import Catalog
from blueprints.engine.preview import (
    OFFLINE_STACK,
    OfflineMocks,
    _OptionsRecorder,
    planned_resources,
    preview,
    record,
    recording_mocks,
)
from blueprints.review import guardrails
from blueprints.review.plan import Plan, PlannedResource

DEFAULT_ZONES = ("cn-shanghai-a", "cn-shanghai-b", "cn-shanghai-c")
_ACTIVE: list[object] = []  # at most one offline stack at a time: pulumi's settings are process-global


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
    from blueprints.catalog import load_catalog
    from blueprints.core import clock
    from blueprints.profile.stackconfig import (
        PROFILE_KEY,
        engine_config,
        engine_value,
        merge,
        read_settings,
        with_cli_inputs,
    )

    config = engine_config(Path(stack_config)) if stack_config else {}
    if profile:
        current = read_settings(config, source="stack config").profile if PROFILE_KEY in config else {}
        config[PROFILE_KEY] = engine_value(merge(current, profile))
    config = with_cli_inputs(config, preset, list((overrides or {}).items()))
    return preview(config, catalog=catalog or load_catalog(), today=today or clock.today())


def record_program(
    program: Callable[[], None],
    *,
    zones: Iterable[str],
    image_id: str | None = None,
    config: dict[str, str] | None = None,
) -> list[PlannedResource]:
    """Every resource ``program`` registers under mocks (with parents and data-safety options), in tree order.

    Use it to unit-test a single component:
    ``record_program(lambda: SharedStorage("s", args), zones=["cn-shanghai-a"])``.
    """
    resources, _ = record(program, config, zones=list(zones), image_id=image_id)
    return resources


class OfflineStack:
    """What ``offline_mocks`` yields: resolve outputs to plain values, and list what was registered."""

    def __init__(self, mocks: OfflineMocks, recorder: _OptionsRecorder):
        self._mocks = mocks
        self._recorder = recorder
        self._resources: list[PlannedResource] | None = None

    def resolve(self, value: Any) -> Any:
        """The plain value of an Output (or anything ``Output.from_input`` takes), waiting for it now.

        Raises ``AssertionError`` if the value is unknown, so a check can never be skipped silently.
        """
        output = pulumi.Output.from_input(value)
        known = _sync_await(output.is_known())
        if not known:
            raise AssertionError(f"{value!r} is unknown under the offline mocks; nothing can be checked against it")
        return _sync_await(output.future())

    @property
    def resources(self) -> list[PlannedResource]:
        """Every resource registered so far, with parent and data-safety options, in tree order."""
        if self._resources is not None:
            return self._resources
        _sync_await(wait_for_rpcs())
        return planned_resources(self._mocks.registered, self._recorder.by_key)

    def plan(self) -> Plan:
        """The registered resources as a Plan with guardrail findings (for ``assert_guardrails`` or a renderer)."""
        return as_plan(self.resources)

    def _freeze(self) -> None:
        self._resources = planned_resources(self._mocks.registered, self._recorder.by_key)


@contextlib.contextmanager
def offline_mocks(
    zones: Sequence[str] = DEFAULT_ZONES,
    *,
    image_id: str | None = None,
    config: dict[str, str] | None = None,
    project: str = "aitrain",
) -> Iterator[OfflineStack]:
    """Build resources directly in a test under fresh offline mocks, on an event loop of its own.

    On leaving the block every registration and every ``apply`` is awaited: an exception in any of them (a failing
    ``assert`` inside ``apply``) is raised here and fails the test. ``stack.resources`` stays readable afterwards.
    """
    if _ACTIVE:
        raise RuntimeError(
            "offline_mocks is already active; pulumi's runtime settings are global, so nest nothing inside it"
        )
    mocks = OfflineMocks(list(zones), image_id)
    with recording_mocks(mocks, dict(config or {}), project=project) as recorder:
        stack = OfflineStack(mocks, recorder)
        _ACTIVE.append(stack)
        try:
            yield stack
            _sync_await(wait_for_rpcs())  # only on success: an error in the block must not be masked
            stack._freeze()
        finally:
            _ACTIVE.clear()
            pulumi_settings.reset_options(project=project, stack=OFFLINE_STACK)


def _mocked_fixture() -> Iterator[OfflineStack]:
    """Pytest fixture ``mocked``: an ``offline_mocks()`` stack around the test (default zones)."""
    with offline_mocks() as stack:
        yield stack


try:  # the fixture is optional: the kit works without pytest installed
    import pytest

    mocked = pytest.fixture(_mocked_fixture, name="mocked")
except ImportError:  # pragma: no cover
    pass


def as_plan(resources: Sequence[PlannedResource], *, name: str = "component") -> Plan:
    """A Plan holding just ``resources`` (what ``record_program`` returns), with its guardrail findings."""
    return guardrails.with_findings(
        Plan(
            blueprint="component", region="offline", profile_name=name, summary={}, notes=(), resources=tuple(resources)
        )
    )


def assert_guardrails(
    plan: Plan | Sequence[PlannedResource], skip: Iterable[str | guardrails.Skip] = (), fail_level: str = "warning"
) -> None:
    """Fail with every finding listed when a guardrail (not skipped) finds something at ``fail_level`` or above.

    Takes a Plan, or the resource list from ``record_program`` / ``offline_mocks`` (checked as a plan of its own).
    ``fail_level`` is ``error``, ``warning`` (the default: info findings report a choice, not a fault) or ``info``.
    """
    if fail_level not in guardrails.LEVELS:
        raise ValueError(f"fail_level {fail_level!r} is not one of {', '.join(guardrails.LEVELS)}")
    if not isinstance(plan, Plan):
        plan = as_plan(list(plan))
    findings = [f for f in guardrails.check(plan, skip=skip) if guardrails.at_or_above(f.level, fail_level)]
    if findings:
        lines = "\n".join(f"  {f.level}: [{f.rule}] {f.resource}: {f.message}" for f in findings)
        raise AssertionError(f"{len(findings)} guardrail finding(s) at {fail_level} or above:\n{lines}")
