"""Architecture rules: pure logic never imports Pulumi, and every public class and function has a docstring."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import blueprints

PURE = [
    "blueprints.errors", "blueprints.profile", "blueprints.stackconfig", "blueprints.layout", "blueprints.plan",
    "blueprints.guardrails", "blueprints.plandiff", "blueprints.render", "blueprints.text", "blueprints.catalog", "blueprints.catalog.render",
    *(f"blueprints.advisor.{m}" for m in ["job", "data", "sizing", "cost", "storage", "options", "choice", "explanations", "tiers", "stack", "render", "casestudies", "budget"]),
]
ALL_MODULES = sorted(m.name for m in pkgutil.walk_packages(blueprints.__path__, "blueprints."))


def test_pure_modules_do_not_import_pulumi():
    code = "import sys\n" + "".join(f"import {m}\n" for m in PURE) + "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_alicloud')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("name", ALL_MODULES)
def test_public_objects_have_docstrings(name):
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"
    missing = [
        n
        for n, obj in vars(module).items()
        if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__ and not obj.__doc__
    ]
    assert not missing, f"{name}: no docstring on {missing}"
