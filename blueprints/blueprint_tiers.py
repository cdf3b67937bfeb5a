"""Each blueprint's budget tiers and how a recommended (type, nodes) becomes its ``compute`` section, by blueprint name.

Kept apart from ``blueprints.architectures`` (whose modules load the Pulumi SDK, about 0.3 s) so that
``aitrain recommend`` can map a budget to a blueprint without importing Pulumi. The blueprint classes'
``budget_tiers`` / ``compute_from_choice`` return these, so the registry and this table cannot drift
(tests/advisor/test_timing.py checks they agree).
"""

from __future__ import annotations

from typing import Any

from blueprints.advisor.budget import BudgetTier

FIXED_CLUSTER = "fixed-cluster"
AUTOSCALING_POOL = "autoscaling-pool"


def fixed_cluster_compute(instance_type: str, nodes: int) -> dict[str, Any]:
    """The recommended node count, all the time."""
    return {"instance_type": instance_type, "nodes": nodes}


def autoscaling_pool_compute(instance_type: str, nodes: int) -> dict[str, Any]:
    """Scale to zero between runs; a run scales out to the recommended node count."""
    return {"instance_type": instance_type, "min_nodes": 0, "max_nodes": nodes}


def fixed_cluster_tiers(limits: dict[str, float]) -> tuple[BudgetTier, ...]:
    """Dedicated (≥ the dedicated minimum, or unpriced) and single node (below the pool minimum)."""
    return (
        BudgetTier("dedicated", FIXED_CLUSTER, limits["tier_dedicated_min_cny_per_year"], "dedicated training cluster", fixed_cluster_compute),
        BudgetTier("single-node", FIXED_CLUSTER, 0.0, "single node", fixed_cluster_compute, spot_when_allowed=True, single_node=True),
    )


def autoscaling_pool_tiers(limits: dict[str, float]) -> tuple[BudgetTier, ...]:
    """The article's mixed pool (¥100k–300k), extended over its ¥300k–500k gap."""
    return (
        BudgetTier(
            "pool", AUTOSCALING_POOL, limits["tier_pool_min_cny_per_year"], "autoscaling pool that scales to zero between runs", autoscaling_pool_compute,
            spot_when_allowed=True, scales_to_zero=True,
        ),
    )


def budget_tiers(limits: dict[str, float]) -> tuple[BudgetTier, ...]:
    """Every blueprint's budget tiers, highest minimum first (the same answer as ``blueprints.architectures.budget_tiers``)."""
    tiers = [*fixed_cluster_tiers(limits), *autoscaling_pool_tiers(limits)]
    return tuple(sorted(tiers, key=lambda t: -t.min_cny_per_year))
