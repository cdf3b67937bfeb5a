"""``make`` recreates a .venv made by another Python, or whose python no longer runs, instead of failing forever.

Each case runs the real Makefile, copied with pyproject.toml (its requires-python) into a temporary directory, on
the venv target alone (``make .venv/bin/python``), so no package is installed. "Another Python" is a wrapper
script that runs this interpreter but reports itself as Python 3.10 from another prefix, as ``python3.10`` would.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")

FAKE_310 = f"""#!/bin/sh
# Python 3.10 from /opt/python3.10, as far as `-c CODE` can tell; anything else (e.g. -m venv) fails.
[ "$1" = "-c" ] || exit 64
exec {sys.executable} -c "import sys; sys.version_info = (3, 10, 13, 'final', 0); sys.base_prefix = '/opt/python3.10'
$2"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def _make(project: Path, python: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", ".venv/bin/python", f"PYTHON={python}"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _venv_python(project: Path) -> str:
    return subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", "import sys; print(sys.version_info[:2], sys.base_prefix)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


THIS = f"{sys.version_info[:2]} {sys.base_prefix}"


def test_a_venv_made_by_another_python_is_recreated_with_PYTHON(project: Path) -> None:
    _script(project / ".venv" / "bin" / "python", FAKE_310)  # what a first try with 3.10 left behind
    (project / ".venv" / "left-by-3.10").touch()
    done = _make(project, sys.executable)
    assert done.returncode == 0, done.stderr
    assert "make: .venv was made by Python 3.10 /opt/python3.10, not" in done.stdout and "recreating it" in done.stdout
    assert _venv_python(project) == THIS
    assert not (project / ".venv" / "left-by-3.10").exists()


def test_a_venv_whose_python_no_longer_runs_is_recreated(project: Path) -> None:
    _script(
        project / ".venv" / "bin" / "python",
        "#!/bin/sh\necho 'python3.11: error while loading shared libraries' >&2\nexit 127\n",
    )
    done = _make(project, sys.executable)
    assert done.returncode == 0, done.stderr
    assert "make: .venv was made by a python that no longer runs" in done.stdout
    assert _venv_python(project) == THIS


def test_a_venv_whose_interpreter_was_removed_is_recreated(project: Path) -> None:
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "python").symlink_to("/nonexistent/python3.11")
    done = _make(project, sys.executable)
    assert done.returncode == 0, done.stderr
    assert _venv_python(project) == THIS


def test_a_venv_made_by_PYTHON_is_kept(project: Path) -> None:
    assert _make(project, sys.executable).returncode == 0
    (project / ".venv" / "kept").touch()
    again = _make(project, sys.executable)
    assert again.returncode == 0 and "recreating" not in again.stdout
    assert (project / ".venv" / "kept").exists()


def test_a_PYTHON_older_than_requires_python_is_refused_before_anything_is_made(project: Path) -> None:
    old = _script(project / "bin" / "python3.10", FAKE_310)
    done = _make(project, old)
    assert done.returncode == 2
    assert (
        f"make: PYTHON={old} is Python 3.10; aitrain needs Python 3.11 or newer (requires-python in pyproject.toml)"
        in done.stderr
    )
    assert "make PYTHON=python3.11" in done.stderr
    assert not (project / ".venv").exists()


def test_a_good_venv_survives_a_PYTHON_that_is_too_old(project: Path) -> None:
    assert _make(project, sys.executable).returncode == 0
    (project / ".venv" / "kept").touch()
    done = _make(project, _script(project / "bin" / "python3.10", FAKE_310))
    assert done.returncode == 2 and "needs Python 3.11 or newer" in done.stderr
    assert (project / ".venv" / "kept").exists() and _venv_python(project) == THIS
