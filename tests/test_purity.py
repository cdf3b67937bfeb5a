"""Every public class and function has a docstring. (Which module may import what is import-linter's job:
the contracts in pyproject.toml, run by `make check`.)"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import blueprints

ALL_MODULES = sorted(m.name for m in pkgutil.walk_packages(blueprints.__path__, "blueprints."))


@pytest.mark.parametrize("name", ALL_MODULES)
def test_public_objects_have_docstrings(name):
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"
    missing = [
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module.__name__
        and not obj.__doc__
    ]
    assert not missing, f"{name}: no docstring on {missing}"
