"""The pytest plugin installed with aitrain (entry point ``aitrain``): no Pulumi test passes without its checks running.

Pulumi's ``@pulumi.runtime.test`` awaits the Output a test returns, but if nothing has called ``set_mocks`` the
resources never resolve, so an ``apply`` check is never called and the test passes having checked nothing. Wherever
aitrain is installed, this plugin runs such a test (one with no mocks set) inside ``blueprints.testing.offline_mocks``:
its outputs resolve, its ``apply`` checks run, a failing one fails the test. A test that set its own mocks (a fixture,
a module-level ``set_mocks``) runs under those, untouched. The ``mocked`` fixture is available without an import.

The plugin imports nothing heavy until a Pulumi test runs; ``pytest -p no:aitrain`` turns it off.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Generator, Iterator

import pytest


def is_pulumi_test(function: Callable[..., Any]) -> bool:
    """Whether ``function`` is wrapped by ``@pulumi.runtime.test`` (every such wrapper shares one code object)."""
    mocks = sys.modules.get("pulumi.runtime.mocks")
    if mocks is None:  # pulumi was never imported, so no test can be one of its
        return False
    wrapper_code = getattr(mocks.test(lambda: None), "__code__", None)
    return wrapper_code is not None and getattr(function, "__code__", None) is wrapper_code


def _mocks_set() -> bool:
    from pulumi.runtime import settings

    return settings.get_monitor() is not None


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Run a ``@pulumi.runtime.test`` test under the kit's mocks when it has none of its own."""
    if not is_pulumi_test(pyfuncitem.obj) or _mocks_set():
        return (yield)
    from blueprints.testing import offline_mocks

    with offline_mocks():
        return (yield)


@pytest.fixture(name="mocked")
def _mocked() -> Iterator[Any]:
    """An ``offline_mocks()`` stack around the test (default
    zones): ``mocked.resolve(output)``, ``mocked.resources``."""
    from blueprints.testing import offline_mocks

    with offline_mocks() as stack:
        yield stack
