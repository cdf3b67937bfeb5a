"""`aitrain recommend` stays fast: no Pulumi import on its path, and the Pulumi-free tier table agrees with the blueprints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from blueprints import architectures, blueprint_tiers
from blueprints.advisor.data import limits

ROOT = Path(__file__).resolve().parents[2]


def _fields(tiers):
    return [(t.name, t.blueprint, t.min_cny_per_year, t.note, t.spot_when_allowed, t.single_node, t.scales_to_zero, t.compute("ecs.x", 3)) for t in tiers]


def test_pulumi_free_tiers_match_the_blueprints():
    assert _fields(blueprint_tiers.budget_tiers(limits())) == _fields(architectures.budget_tiers(limits()))
    assert {t.blueprint for t in blueprint_tiers.budget_tiers(limits())} == set(architectures.BLUEPRINTS)


def test_recommend_does_not_import_pulumi():
    # The Pulumi SDK alone costs about 0.3 s to import; the recommend table never needs it (only --write does).
    code = (
        "import sys; from typer.testing import CliRunner; from blueprints.cli import app; "
        "r = CliRunner().invoke(app, ['recommend', 'examples/medical-imaging.yaml']); "
        "print(r.exit_code, sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_alicloud')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert out == "0 []"
