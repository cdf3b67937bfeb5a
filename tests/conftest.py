"""Shared fixtures: offline plans of the presets (computed once per session) and the golden-file update flag."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

# Every plan in the suite (and in subprocesses it starts) is made "today" = this date, so golden plans and
# off-hours schedules are byte-deterministic whatever day the suite runs.
TODAY = "2026-11-30"
os.environ["AITRAIN_TODAY"] = TODAY


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help=(
            "rewrite tests/golden/* from the current output, then fail "
            "the run (review and commit); `make regen` is the normal way"
        ),
    )


@pytest.fixture
def outputs_file(tmp_path):
    """Writes stack outputs (``pulumi stack output --json``) to a file and returns its path, for the launch tests."""

    def write(data: Any) -> str:
        path = tmp_path / "outputs.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return str(path)

    return write


@pytest.fixture(scope="session")
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


@pytest.fixture(scope="session")
def medical_plan():
    from blueprints.testing import offline_plan

    return offline_plan("medical-imaging")


@pytest.fixture(scope="session")
def autoscaling_plan():
    from blueprints.testing import offline_plan

    return offline_plan("autoscaling-training")


# Info rules that report an opt-in control left off (KMS key, access logging, alarms, flow log, tags, ActionTrail):
# a preset or a component with default settings carries these and nothing else.
OPT_IN_INFO_RULES = frozenset({"AIT019", "AIT022", "AIT028", "AIT029", "AIT031", "AIT032"})


def beyond_opt_in(findings) -> list:
    """The findings (dicts or Finding objects) that are not the info reports of opt-in controls left off."""
    out = []
    for f in findings:
        rule, level = (f["rule"], f["level"]) if isinstance(f, dict) else (f.rule, f.level)
        if not (level == "info" and rule in OPT_IN_INFO_RULES):
            out.append(f)
    return out
