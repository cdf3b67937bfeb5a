"""Metrics that exist: every metric a scaling rule or alarm may read, the namespace it lives in and what produces it.

``data/metrics.csv`` holds one row per metric with its source; ``PRODUCERS`` says what each producer is. The plan's
``metric_producers`` output (``metric_producers``) and guardrail AIT040 both read this table, so an alarm on a metric
nothing in the plan produces is caught before it is deployed. Pure Python like the rest of the catalog.
"""

from __future__ import annotations

import functools
import pathlib
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from blueprints.catalog.cells import _CellError, _date, _opt_text, _text
from blueprints.catalog.schema import read_rows

# What produces a metric. "ecs" needs nothing on the node; the agent is installed by the node boot (aitrain-node
# cms-agent); the GPU exporter comes with ACK's GPU monitoring once the Prometheus add-on is on the cluster.
PRODUCERS: dict[str, str] = {
    "ecs": "ECS basic monitoring in CloudMonitor (nothing to install on the node)",
    "cloudmonitor-agent": "the CloudMonitor agent, installed and started at node boot (aitrain-node cms-agent)",
    "ack-gpu-exporter": "ACK GPU monitoring (GPU exporter) into Managed Prometheus (add-on arms-prometheus)",
}

# Where a metric lives: an ESS system metric (CreateAlarm MetricType=system, no namespace passed), a CloudMonitor
# namespace (cms.Alarm ``project``), or the cluster's Managed Service for Prometheus.
NAMESPACES = ("ess:system", "acs_ecs_dashboard", "prometheus")

# The ACK add-on that turns on Managed Service for Prometheus (pulumi-alicloud 4.0.0 cs ManagedKubernetesAddonArgs
# example: ``"name" = "arms-prometheus"``); with it the cluster's GPU exporter metrics are collected.
PROMETHEUS_ADDON = "arms-prometheus"

METRICS_FILE = "metrics.csv"

_COLUMNS = ("metric", "namespace", "producer", "unit", "source", "retrieved", "notes")


def _producer(raw: str) -> str:
    if raw not in PRODUCERS:
        raise _CellError(f"must be one of {', '.join(PRODUCERS)}")
    return raw


def _namespace(raw: str) -> str:
    if raw not in NAMESPACES:
        raise _CellError(f"must be one of {', '.join(NAMESPACES)}")
    return raw


_SCHEMA = {
    "metric": _text,
    "namespace": _namespace,
    "producer": _producer,
    "unit": _text,
    "source": _text,
    "retrieved": _date,
    "notes": _opt_text,
}


@dataclass(frozen=True)
class MetricRecord:
    """One metric a rule or alarm can read, where it lives and what produces it (with the source saying so)."""

    metric: str
    namespace: str
    producer: str
    unit: str
    source: str
    retrieved: str
    notes: str | None


def read_metrics(directory: pathlib.Path) -> tuple[MetricRecord, ...]:
    """``metrics.csv`` of ``directory``; ValueError names file, line and column of a bad or repeated row."""
    rows = read_rows(directory / METRICS_FILE, {column: _SCHEMA[column] for column in _COLUMNS})
    seen: dict[tuple[str, str], int] = {}
    out = []
    for line, v in rows:
        key = (v["metric"], v["namespace"])
        if key in seen:
            raise ValueError(
                f"{METRICS_FILE} line {line}, column 'metric': {key[0]} in {key[1]} repeats line {seen[key]}"
            )
        seen[key] = line
        out.append(MetricRecord(**v))
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _cached(directory: str) -> tuple[MetricRecord, ...]:
    return read_metrics(pathlib.Path(directory))


def load_metrics(directory: pathlib.Path | str | None = None) -> tuple[MetricRecord, ...]:
    """The metric table of the catalog directory in use (``AITRAIN_CATALOG_DIR`` or the shipped one), read once."""
    if directory is None:
        from blueprints.catalog.loader import catalog_directory

        directory = catalog_directory()[0]
    return _cached(str(pathlib.Path(directory).resolve()))


def record_of(metrics: Iterable[MetricRecord], metric: str, namespace: str) -> MetricRecord | None:
    """The row of ``metric`` in ``namespace``, or None when the catalog documents no such metric."""
    return next((m for m in metrics if m.metric == metric and m.namespace == namespace), None)


def metric_producers(
    produced: Iterable[str],
    readers: Mapping[tuple[str, str], Sequence[str]],
    metrics: Sequence[MetricRecord],
    namespaces: Iterable[str] = NAMESPACES,
) -> list[dict[str, object]]:
    """The plan's ``metric_producers`` output: every catalog metric in ``namespaces`` one of ``produced`` makes, with
    the resources that read it (``readers``: (metric, namespace) → resource names), then every metric read that
    nothing produces (producer ``none``), so the plan shows the gap AIT040 fails on."""
    have = set(produced)
    unknown = have - set(PRODUCERS)
    if unknown:
        raise ValueError(f"unknown metric producers {sorted(unknown)}; known: {', '.join(PRODUCERS)}")
    shown = set(namespaces)
    out: list[dict[str, object]] = []
    for m in metrics:
        if m.producer in have and (m.namespace in shown or (m.metric, m.namespace) in readers):
            read_by = sorted(readers.get((m.metric, m.namespace), ()))
            out.append({"metric": m.metric, "namespace": m.namespace, "producer": m.producer, "read_by": read_by})
    listed = {(str(row["metric"]), str(row["namespace"])) for row in out}
    for (metric, namespace), names in sorted(readers.items()):
        if (metric, namespace) not in listed:
            out.append({"metric": metric, "namespace": namespace, "producer": "none", "read_by": sorted(names)})
    return out


__all__ = [
    "METRICS_FILE",
    "NAMESPACES",
    "PRODUCERS",
    "PROMETHEUS_ADDON",
    "MetricRecord",
    "load_metrics",
    "metric_producers",
    "read_metrics",
    "record_of",
]
