"""Money adds up the same on every Python: amounts are summed as decimals, never with ``sum()`` of floats.

Python 3.12 made ``sum()`` of floats compensate its rounding (Neumaier); 3.11 does not, and the medical-imaging plan's
``cny_per_run`` read 134200.97 on one and 134200.98 on the other. The test plans every golden plan with ``sum``
replaced by 3.12's algorithm and requires the same JSON; CI also runs the golden tests under 3.12 and 3.13 themselves
(``.ci/other-pythons``), where the stand-in is checked against the real ``sum()``.
"""

from __future__ import annotations

import builtins
import math
import sys

import pytest

from tests.test_golden import GOLDEN_PLANS, golden_path

_BUILTIN_SUM = builtins.sum


def neumaier_sum(iterable, /, start=0):
    """``sum`` as Python 3.12 computes it for floats: compensated (Neumaier) summation; anything else as before."""
    items = list(iterable)
    if not items or not all(isinstance(x, float) for x in items) or not isinstance(start, (int, float)):
        return _BUILTIN_SUM(items, start)
    total, compensation = float(start), 0.0
    for x in items:
        t = total + x
        compensation += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    return total + compensation


def test_the_stand_in_is_3_12s_sum():
    """On 3.11 the stand-in differs from ``sum()`` where 3.12 does; on 3.12 and later it is ``sum()`` (CI runs both)."""
    values = [0.1] * 10
    assert neumaier_sum(values) == 1.0 == math.fsum(values)
    samples = [values, [1e16, 1.0, -1e16], [0.1, 0.2, 0.3] * 7, [3432.25 / 7] * 7]
    if sys.version_info >= (3, 12):
        assert [_BUILTIN_SUM(v) for v in samples] == [neumaier_sum(v) for v in samples]
    else:
        assert _BUILTIN_SUM(values) != 1.0


@pytest.mark.parametrize("name", sorted(GOLDEN_PLANS))
def test_golden_plans_are_identical_under_3_12s_float_summation(name, monkeypatch):
    from blueprints.testing import offline_plan

    preset, overrides = GOLDEN_PLANS[name]
    monkeypatch.setattr(builtins, "sum", neumaier_sum)
    plan = offline_plan(preset, overrides=overrides)
    monkeypatch.undo()
    assert plan.to_json() == golden_path(name, "json").read_text(encoding="utf-8")


def test_the_case_studies_page_is_identical_under_3_12s_float_summation(monkeypatch):
    from blueprints.advisor import casestudies
    from blueprints.advisor.casestudies import DEFAULT_DOC
    from blueprints.advisor.data import limits
    from blueprints.architectures import budget_tiers
    from blueprints.catalog import load_catalog

    catalog, tiers = load_catalog(), budget_tiers(limits())
    monkeypatch.setattr(builtins, "sum", neumaier_sum)
    text = casestudies.generate(catalog, tiers)
    monkeypatch.undo()
    assert text == DEFAULT_DOC.read_text(encoding="utf-8")


def test_folded_cost_rows_add_up_exactly():
    """The Markdown's "… and N more" row sums its lines like costing does, not with sum() of floats."""
    from blueprints.review.render.costs import collapse_lines

    lines = [
        {"resource": f"n{i}", "type": "ecs.Instance", "cny_per_hour": 0.1, "cny_per_month": 0.1, "status": "list"}
        for i in range(13)
    ]
    folded, count = collapse_lines(lines, keep=3)
    assert count == 10 and (folded[3]["cny_per_hour"], folded[3]["cny_per_month"]) == (1.0, 1.0)
