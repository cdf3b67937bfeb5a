"""Golden plans: every preset's JSON and Markdown plan, and
each named variant's, is committed and compared byte for byte.

The list is derived: every bundled preset (``blueprints/presets/*.yaml``) plus the variants named here, so a new
preset without its golden files fails, and so does a golden file that nothing makes any more.

Comparison only. ``--update-golden`` rewrites the files and then FAILS the run, so an update never reports
success; regenerating on purpose is ``make regen`` (runs this file as a script: ``python tests/test_golden.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if __name__ == "__main__":
    # Run as a script (``make regen``): the repository root first, so this checkout's ``blueprints`` is used.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blueprints.profile.stackconfig import preset_names  # after the script's path

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
# The named variants: golden file name → (preset, overrides).
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "medical-imaging-erdma-login": ("medical-imaging", ERDMA_LOGIN),
}
# Golden file name → (preset, overrides): every bundled preset as it is, then the variants.
GOLDEN_PLANS: dict[str, tuple[str, dict[str, object]]] = {
    **{name: (name, {}) for name in preset_names()},
    **VARIANTS,
}
# Plans other tests share (conftest's session fixtures), so each is made once per run; the rest are made here once.
SHARED_FIXTURES = {"medical-imaging": "medical_plan", "autoscaling-training": "autoscaling_plan"}
_PLANS: dict[str, object] = {}


def plan_of(name: str, request: pytest.FixtureRequest):
    """The plan of one golden file: the shared session fixture when there is one, else made once in this module."""
    if name in SHARED_FIXTURES:
        return request.getfixturevalue(SHARED_FIXTURES[name])
    if name not in _PLANS:
        from blueprints.testing import offline_plan

        preset, overrides = GOLDEN_PLANS[name]
        _PLANS[name] = offline_plan(preset, overrides=overrides)
    return _PLANS[name]


def golden_text(plan, kind: str) -> str:
    """The committed form of a plan: its JSON, or its Markdown rendering."""
    from blueprints.review.render import render_markdown

    return plan.to_json() if kind == "json" else render_markdown(plan)


def golden_path(name: str, kind: str) -> Path:
    """Where the golden file of one plan and format lives."""
    return GOLDEN / f"{name}.plan.{kind}"


@pytest.mark.parametrize("name", list(GOLDEN_PLANS))
@pytest.mark.parametrize("kind", KINDS)
def test_plan_matches_golden_file(name, kind, request, update_golden):
    plan = plan_of(name, request)
    text = golden_text(plan, kind)
    path = golden_path(name, kind)
    if update_golden:
        path.write_text(text, encoding="utf-8")
        pytest.fail(f"golden files rewritten ({path.name}); review and commit — update mode never passes")
    assert path.exists(), f"missing {path}; run `make regen`"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed; review the diff, then run `make regen`"


def test_the_golden_plans_are_the_presets_and_the_variants():
    # Each preset once as it is; each variant of a bundled preset; and no committed golden file that nothing makes.
    assert [name for name in GOLDEN_PLANS if name not in VARIANTS] == preset_names()
    assert all(preset in preset_names() and overrides for preset, overrides in VARIANTS.values())
    committed = {path.name.removesuffix(f".plan.{kind}") for kind in KINDS for path in GOLDEN.glob(f"*.plan.{kind}")}
    assert committed == set(GOLDEN_PLANS)


def test_a_new_preset_without_golden_files_fails(tmp_path, monkeypatch, request):
    """The comparison of a plan whose golden file does not exist fails, naming the file and `make regen`."""
    monkeypatch.setattr(sys.modules[__name__], "GOLDEN", tmp_path)
    with pytest.raises(AssertionError, match=r"missing .*medical-imaging\.plan\.json; run `make regen`"):
        test_plan_matches_golden_file("medical-imaging", "json", request, update_golden=False)


def test_update_mode_writes_then_fails(tmp_path, monkeypatch, medical_plan, request):
    """--update-golden must rewrite the file and still end the run red, so an update is never a green run."""
    monkeypatch.setattr(sys.modules[__name__], "GOLDEN", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="golden files rewritten .*review and commit"):
        test_plan_matches_golden_file("medical-imaging", "json", request, update_golden=True)
    assert (tmp_path / "medical-imaging.plan.json").read_text(encoding="utf-8") == medical_plan.to_json()


def test_compare_mode_fails_on_a_changed_file(tmp_path, monkeypatch, request):
    """A golden file that differs from the output fails with the file named."""
    monkeypatch.setattr(sys.modules[__name__], "GOLDEN", tmp_path)
    (tmp_path / "medical-imaging.plan.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="medical-imaging.plan.json changed"):
        test_plan_matches_golden_file("medical-imaging", "json", request, update_golden=False)


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
    # The suite's clock (conftest.TODAY), so the files match what the tests compare against.
    import conftest  # noqa: F401  (sets AITRAIN_TODAY)

    for written in write_golden():
        print(f"wrote {written.relative_to(Path.cwd()) if written.is_relative_to(Path.cwd()) else written}")
