"""The blueprint registry: every package here whose ``spec`` module exports ``SPEC`` is a blueprint.

Discovery, not a list: a new blueprint is its own package (``spec.py`` exporting ``SPEC``, ``build.py`` exporting
``BUILDER``) and a preset, with no line added here. The packages are found with ``pkgutil`` over this package's own
path rather than through an entry-point group: entry points live in installed metadata, so a new blueprint would
also need an edit to pyproject.toml and a reinstall before it exists, and a checkout run from its source tree
(``PYTHONPATH``, a copy, the editable install) would see the metadata of another tree. The path is the code itself.

Pure: only specs are imported here (``blueprints.architectures.base.build.builder_for`` finds a spec's builder).
A package without ``SPEC`` (``base``, ``ecs``) is a shared base, not a blueprint.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import importlib.util
import pkgutil
from typing import TYPE_CHECKING, Any

from blueprints.architectures.base.spec import BlueprintSpec
from blueprints.profile.model import ProfileBase
from blueprints.profile.parse import parse_profile

if TYPE_CHECKING:
    from blueprints.advisor.budget import BudgetTier
    from blueprints.catalog import Catalog

Spec = type[BlueprintSpec[Any]]


@functools.cache
def specs() -> dict[str, Spec]:
    """Every blueprint's spec class, by blueprint name (sorted), found in this package's sub-packages."""
    found: dict[str, Spec] = {}
    for package in sorted(pkgutil.iter_modules(__path__, prefix=f"{__name__}."), key=lambda m: m.name):
        if not package.ispkg or importlib.util.find_spec(f"{package.name}.spec") is None:
            continue
        spec = getattr(importlib.import_module(f"{package.name}.spec"), "SPEC", None)
        if spec is None:
            continue
        if not (isinstance(spec, type) and issubclass(spec, BlueprintSpec)):
            raise TypeError(f"{package.name}.spec.SPEC must be a BlueprintSpec subclass, not {spec!r}")
        if spec.name in found:
            raise TypeError(
                f"blueprint {spec.name!r} is declared twice: by {found[spec.name].__module__} and {spec.__module__}"
            )
        found[spec.name] = spec
    return dict(sorted(found.items()))


def profile_models() -> dict[str, type[ProfileBase]]:
    """Each blueprint's profile model, by blueprint name."""
    return {name: cls.profile_model for name, cls in specs().items()}


def parse(data: Any, *, catalog: "Catalog", today: dt.date, source: str = "profile") -> ProfileBase:
    """Validate a profile dict against the model of the blueprint it names."""
    return parse_profile(data, models=profile_models(), catalog=catalog, today=today, source=source)


def spec_for(profile: ProfileBase, catalog: "Catalog", today: dt.date) -> BlueprintSpec[Any]:
    """The spec of the blueprint this profile names, bound to it."""
    return specs()[profile.blueprint](profile, catalog, today)


def job_engines() -> dict[str, str]:
    """How `aitrain launch` starts a run on each blueprint's stack (``job_engine``), by blueprint name."""
    return {name: cls.job_engine for name, cls in specs().items()}


def budget_tiers(limits: dict[str, float]) -> tuple["BudgetTier", ...]:
    """Every blueprint's budget tiers, highest minimum first."""
    tiers = [tier for cls in specs().values() for tier in cls.budget_tiers(limits)]
    return tuple(sorted(tiers, key=lambda t: -t.min_cny_per_year))
