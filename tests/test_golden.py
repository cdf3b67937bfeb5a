"""Golden plans: each preset's JSON and Markdown plan is committed and compared byte for byte.

Comparison only. ``--update-golden`` rewrites the files and then FAILS the run, so an update never reports
success; regenerating on purpose is ``make regen`` (runs this file as a script: ``python tests/test_golden.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
KINDS = ("json", "md")
# Beyond the presets: an eRDMA type (one ecs.Instance per node, each with an ERI) reached through a login node.
ERDMA_LOGIN = {
    "compute.instance_type": "ecs.ebmgn7ex.32xlarge",
    "compute.nodes": 2,
    "compute.scratch_gib": 3072,
    "network.admin_cidr": "203.0.113.0/24",
    "access.login_node": True,
    "access.key_pair_name": "ops",
}
# Golden file name → (preset, overrides).
GOLDEN_PLANS: dict[str, tuple[str, dict[str, object]]] = {
    "medical-imaging": ("medical-imaging", {}),
    "autoscaling-training": ("autoscaling-training", {}),
    "medical-imaging-erdma-login": ("medical-imaging", ERDMA_LOGIN),
    "kubernetes-training": ("kubernetes-training", {}),
}


@pytest.fixture(scope="module")
def erdma_login_plan():
    from blueprints.testing import offline_plan

    return offline_plan("medical-imaging", overrides=ERDMA_LOGIN)


@pytest.fixture(scope="module")
def kubernetes_plan():
    from blueprints.testing import offline_plan

    return offline_plan("kubernetes-training")


def golden_text(plan, kind: str) -> str:
    """The committed form of a plan: its JSON, or its Markdown rendering."""
    from blueprints.review.render import render_markdown

    return plan.to_json() if kind == "json" else render_markdown(plan)


def golden_path(preset: str, kind: str) -> Path:
    """Where the golden file of one preset and format lives."""
    return GOLDEN / f"{preset}.plan.{kind}"


@pytest.mark.parametrize(
    "preset, fixture",
    [
        ("medical-imaging", "medical_plan"),
        ("autoscaling-training", "autoscaling_plan"),
        ("medical-imaging-erdma-login", "erdma_login_plan"),
        ("kubernetes-training", "kubernetes_plan"),
    ],
)
@pytest.mark.parametrize("kind", KINDS)
def test_plan_matches_golden_file(preset, fixture, kind, request, update_golden):
    plan = request.getfixturevalue(fixture)
    text = golden_text(plan, kind)
    path = golden_path(preset, kind)
    if update_golden:
        path.write_text(text, encoding="utf-8")
        pytest.fail(f"golden files rewritten ({path.name}); review and commit — update mode never passes")
    assert path.exists(), f"missing {path}; run `make regen`"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed; review the diff, then run `make regen`"


def test_update_mode_writes_then_fails(tmp_path, monkeypatch, medical_plan, request):
    """--update-golden must rewrite the file and still end the run red, so an update is never a green run."""
    monkeypatch.setattr(sys.modules[__name__], "GOLDEN", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="golden files rewritten .*review and commit"):
        test_plan_matches_golden_file("medical-imaging", "medical_plan", "json", request, update_golden=True)
    assert (tmp_path / "medical-imaging.plan.json").read_text(encoding="utf-8") == medical_plan.to_json()


def test_compare_mode_fails_on_a_changed_file(tmp_path, monkeypatch, request):
    """A golden file that differs from the output fails with the file named."""
    monkeypatch.setattr(sys.modules[__name__], "GOLDEN", tmp_path)
    (tmp_path / "medical-imaging.plan.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="medical-imaging.plan.json changed"):
        test_plan_matches_golden_file("medical-imaging", "medical_plan", "json", request, update_golden=False)


def write_golden() -> list[Path]:
    """Rewrite every golden file from the current code (no pytest); return the files written."""
    from blueprints.testing import offline_plan

    written = []
    for name, (preset, overrides) in GOLDEN_PLANS.items():
        plan = offline_plan(preset, overrides=overrides)
        for kind in KINDS:
            path = golden_path(name, kind)
            path.write_text(golden_text(plan, kind), encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    # Run as a script (``make regen``): the repository root first, so this checkout's ``blueprints`` is used,
    # and the suite's clock (conftest.TODAY), so the files match what the tests compare against.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import conftest  # noqa: F401  (sets AITRAIN_TODAY)

    for written in write_golden():
        print(f"wrote {written.relative_to(Path.cwd()) if written.is_relative_to(Path.cwd()) else written}")
