"""The advisor's pure logic must not import pulumi, and every public function and class has a docstring."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

PURE = ["job", "data", "sizing", "cost", "storage", "selection", "stack", "render", "casestudies", "commands"]


def test_pure_modules_do_not_import_pulumi():
    code = "import sys\n" + "".join(f"import blueprints.advisor.{m}\n" for m in PURE) + "print('pulumi' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


@pytest.mark.parametrize("name", PURE)
def test_public_objects_have_docstrings(name):
    module = importlib.import_module(f"blueprints.advisor.{name}")
    assert module.__doc__
    missing = [
        n
        for n, obj in vars(module).items()
        if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__ and not obj.__doc__
    ]
    assert not missing, f"{name}: no docstring on {missing}"
