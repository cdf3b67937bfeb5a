"""Plans are byte-identical across processes: two fresh interpreters with different PYTHONHASHSEED.

Running twice in one process would share every cache and the hash seed, so it proves nothing about set or
dict ordering; each process here runs the real CLI (``python -m blueprints.cli.main plan``) from a clean start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.profile.stackconfig import preset_names

ROOT = Path(__file__).resolve().parents[1]
PRESETS = tuple(preset_names())
FORMATS = ("json", "markdown")

# One process per seed plans every preset in every format through the CLI entry point, writing files:
# four commands in one interpreter keep the test fast, while the two seeds still run in separate processes.
_SCRIPT = """
import sys
from blueprints.cli.main import app
out = sys.argv[1]
for preset in {presets!r}:
    for fmt in {formats!r}:
        try:
            app(["plan", preset, "--format", fmt, "--out", f"{{out}}/{{preset}}.{{fmt}}"])
        except SystemExit as exc:
            if exc.code:
                raise
"""


def plan_in_fresh_process(seed: str, out: Path) -> dict[str, bytes]:
    out.mkdir()
    env = {**os.environ, "PYTHONHASHSEED": seed}
    script = _SCRIPT.format(presets=PRESETS, formats=FORMATS)
    subprocess.run(
        [sys.executable, "-c", script, str(out)], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120
    )
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("determinism")
    return plan_in_fresh_process("1", base / "seed-1"), plan_in_fresh_process("4242", base / "seed-4242")


def test_both_processes_wrote_every_plan(two_runs):
    first, second = two_runs
    expected = {f"{p}.{f}" for p in PRESETS for f in FORMATS}
    assert set(first) == set(second) == expected
    assert all(first.values())


@pytest.mark.parametrize("name", [f"{p}.{f}" for p in PRESETS for f in FORMATS])
def test_plan_bytes_identical_across_hash_seeds(two_runs, name):
    first, second = two_runs
    assert first[name] == second[name], f"{name} differs between PYTHONHASHSEED=1 and 4242"


def test_fresh_process_matches_the_golden_json(two_runs):
    first, _ = two_runs
    for preset in PRESETS:
        assert first[f"{preset}.json"] == (ROOT / "tests" / "golden" / f"{preset}.plan.json").read_bytes()
