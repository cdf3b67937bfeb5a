"""The blueprint registry: the one place that maps blueprint names to the classes that own them."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from blueprints.architectures.autoscaling_pool import AutoscalingPoolBlueprint
from blueprints.architectures.base import Blueprint
from blueprints.architectures.fixed_cluster import FixedClusterBlueprint
from blueprints.architectures.kubernetes_pool import KubernetesPoolBlueprint
from blueprints.profile.model import ProfileBase
from blueprints.profile.parse import parse_profile

if TYPE_CHECKING:
    from blueprints.advisor.budget import BudgetTier
    from blueprints.catalog import Catalog

# Adding a blueprint: write its module (profile model + Blueprint subclass) and list it here.
BLUEPRINTS: dict[str, type[Blueprint]] = {
    cls.name: cls for cls in (FixedClusterBlueprint, AutoscalingPoolBlueprint, KubernetesPoolBlueprint)
}


def profile_models() -> dict[str, type[ProfileBase]]:
    """Each blueprint's profile model, by blueprint name."""
    return {name: cls.profile_model for name, cls in BLUEPRINTS.items()}


def parse(data: Any, *, catalog: "Catalog", today: dt.date, source: str = "profile") -> ProfileBase:
    """Validate a profile dict against the model of the blueprint it names."""
    return parse_profile(data, models=profile_models(), catalog=catalog, today=today, source=source)


def blueprint_for(profile: ProfileBase, catalog: "Catalog", today: dt.date) -> Blueprint:
    """The blueprint instance that builds this profile."""
    return BLUEPRINTS[profile.blueprint](profile, catalog, today)


def budget_tiers(limits: dict[str, float]) -> tuple["BudgetTier", ...]:
    """Every blueprint's budget tiers, highest minimum first."""
    tiers = [tier for cls in BLUEPRINTS.values() for tier in cls.budget_tiers(limits)]
    return tuple(sorted(tiers, key=lambda t: -t.min_cny_per_year))
