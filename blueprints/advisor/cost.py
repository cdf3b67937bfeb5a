"""Compute cost: price × nodes × hours, per run, per year and always-on (CNY; unknown prices stay None)."""

from __future__ import annotations

from blueprints.advisor.data import limits


def cost_cny_per_hour(price_cny_per_hour: float | None, nodes: int) -> float | None:
    """Cluster price per hour, CNY = nodes × list price per node-hour (None when the price is unknown)."""
    return None if price_cny_per_hour is None else price_cny_per_hour * nodes


def cost_cny_per_run(price_cny_per_hour: float | None, nodes: int, hours: float) -> float | None:
    """Compute cost of one run, CNY = nodes × price per node-hour × run hours (nodes released between runs)."""
    per_hour = cost_cny_per_hour(price_cny_per_hour, nodes)
    return None if per_hour is None else per_hour * hours


def cost_cny_per_year(per_run: float | None, runs_per_year: float) -> float | None:
    """Compute cost of a year, CNY = cost per run × runs per year."""
    return None if per_run is None else per_run * runs_per_year


def always_on_cny_per_year(price_cny_per_hour: float | None, nodes: int) -> float | None:
    """What the same nodes cost if kept running all year, CNY = nodes × price × 8,760 h (a dedicated cluster)."""
    per_hour = cost_cny_per_hour(price_cny_per_hour, nodes)
    return None if per_hour is None else per_hour * limits()["hours_per_year"]
