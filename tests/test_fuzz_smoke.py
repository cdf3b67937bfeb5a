"""The profile fuzzer (``bench/fuzz.py``) in process for 150 seeded draws: no crash, no unsafe acceptance."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("aitrain_bench_fuzz", ROOT / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_150_seeded_draws_have_no_crash_and_no_unsafe_acceptance():
    fuzz = _fuzz_module()
    summary = fuzz.fuzz(150, seed=20261130, jobs=0, quiet=True)
    assert summary["crash_details"] == {} and summary["unsafe_details"] == {}
    assert summary["draws"] == 150 and summary["accepted"] + summary["rejected"] == 150
    # Both outcomes occur, so the draws exercise the plan and the error paths.
    assert summary["accepted"] >= 20 and summary["rejected"] >= 20


def test_a_draw_is_reproducible_from_seed_and_index():
    fuzz = _fuzz_module()
    from blueprints.catalog import load_catalog

    values = fuzz.fuzzgen.Values(load_catalog())
    first, again = fuzz.fuzzgen.draw(values, 7, 123), fuzz.fuzzgen.draw(values, 7, 123)
    assert first.repro() == again.repro()
    assert first.repro() != fuzz.fuzzgen.draw(values, 7, 124).repro()


def test_the_checker_flags_what_the_engine_refuses():
    # The invariants must fire on a plan that breaks them, or a green fuzz run proves nothing.
    import dataclasses

    from blueprints.testing import offline_plan

    fuzz = _fuzz_module()
    plan = offline_plan("autoscaling-training", today=fuzz.TODAY)
    assert fuzz.plan_violations(plan, fuzz.TODAY) == []
    switch = plan.find("vpc.Switch")[0]
    task = plan.find("ess.ScheduledTask")[0]
    broken = dataclasses.replace(
        plan,
        resources=plan.resources
        + (
            dataclasses.replace(switch, inputs={**switch.inputs, "cidrBlock": "192.168.0.0/24"}),
            dataclasses.replace(task, inputs={**task.inputs, "launchTime": "2027-06-01T01:00Z"}),
        ),
    )
    problems = "\n".join(fuzz.plan_violations(broken, fuzz.TODAY))
    assert "duplicate URN" in problems
    assert "outside the VPC" in problems
    assert "launchTime 2027-06-01T01:00Z outside" in problems
