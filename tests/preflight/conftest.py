"""Shared fixtures: the offline plans of the two presets (built once per module: the mock run takes seconds)."""

from __future__ import annotations

import datetime as dt

import pytest

from blueprints.catalog import Catalog, load_catalog
from blueprints.engine.preview import preview
from blueprints.profile.stackconfig import parse_overrides, with_cli_inputs
from blueprints.review.plan import Plan

DAY = dt.date(2026, 11, 30)


def plan_of(preset: str, *assignments: str) -> Plan:
    """The plan `aitrain plan PRESET --set ...` shows."""
    from blueprints.architectures import profile_models

    return preview(
        with_cli_inputs({}, preset, parse_overrides(list(assignments), profile_models())),
        catalog=load_catalog(),
        today=DAY,
    )


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def imaging_plan() -> Plan:
    return plan_of("medical-imaging")


@pytest.fixture(scope="session")
def pool_plan() -> Plan:
    return plan_of("autoscaling-training")
