"""`aitrain recommend` stays fast: the blueprints (and their budget tiers) load without the Pulumi SDK on its path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_recommend_does_not_import_pulumi():
    # The Pulumi SDK alone costs about 0.3 s to import; the recommend table never needs it (only --write does).
    code = (
        "import sys; from typer.testing import CliRunner; from blueprints.cli.main import app; "
        "r = CliRunner().invoke(app, ['recommend', 'examples/medical-imaging.yaml']); "
        "print(r.exit_code, sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_alicloud')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "0 []"
