"""Every metric an alarm reads is produced (AIT040): an ESS scaling alarm or a CloudMonitor host alarm on a metric
nothing in the plan reports never fires, so a pool that should scale in on idle GPUs keeps paying for them.

What produces a metric is ``blueprints/catalog/data/metrics.csv`` (with sources). The evidence is in the plan itself:
ECS basic metrics exist for every ECS node; the CloudMonitor agent exists where the nodes' user data runs Alibaba's
documented installer. (ACK's GPU exporter metrics are read by Prometheus alert rules, which are not in a plan.)
"""

from __future__ import annotations

import re
from typing import Iterator

from blueprints.catalog.metrics import PRODUCERS, MetricRecord, load_metrics, record_of
from blueprints.core import userdata
from blueprints.kinds import Role
from blueprints.review.guardrails.inputs import of_role, of_types, referenced
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan, PlannedResource

# Alibaba's CloudMonitor agent installer for ECS, as documented (blueprints/bootstrap/monitoring.py): any user data that
# fetches it installs the agent, aitrain's boot or a user's own script.
_AGENT_INSTALLER = re.compile(r"cms-agent-[a-z0-9-]+\.oss-[a-z0-9-]+\.aliyuncs\.com/Argus/agent_install")
# The CloudMonitor namespace of ECS host metrics (cms.Alarm ``project``); other namespaces are the services' own
# metrics (NAS, OSS…), produced by the service, so the rule leaves them alone.
_HOST_PROJECT = "acs_ecs_dashboard"
_ESS_NAMESPACE = "ess:system"


def _installs_agent(r: PlannedResource) -> bool:
    text = userdata.decode(r.inputs.get("userData")) or str(r.inputs.get("userData") or "")
    return bool(_AGENT_INSTALLER.search(text))


def _launch_sources(plan: Plan, group: str | None) -> list[PlannedResource]:
    """The node templates the scaling group launches from: its launch template, or configurations naming it."""
    by_name = {r.name: r for r in plan.resources}
    templates = of_role(plan, Role.NODE_TEMPLATE)
    if group is None or group not in by_name:
        return []
    template = referenced(by_name[group].inputs.get("launchTemplateId"))
    return [r for r in templates if r.name == template or referenced(r.inputs.get("scalingGroupId")) == group]


def _producers(plan: Plan, nodes: list[PlannedResource]) -> set[str]:
    """What produces metrics for ``nodes`` (ECS nodes): ECS itself, and the agent where their user data installs it."""
    have = {"ecs"} if nodes else set()
    if any(_installs_agent(r) for r in nodes):
        have.add("cloudmonitor-agent")
    return have


def _finding(metric: str, namespace: str, record: MetricRecord | None, have: set[str], where: str) -> str | None:
    if record is None:
        return (
            f"reads {metric!r} ({namespace}), which no row of blueprints/catalog/data/metrics.csv documents: aitrain "
            "cannot tell what produces it, so the alarm may never fire; use a documented metric or add its row "
            "(metric, namespace, producer, source)"
        )
    if record.producer in have:
        return None
    return (
        f"reads {metric!r} ({namespace}), produced by {PRODUCERS[record.producer]}, and {where}: the "
        "metric never reports and the alarm never fires"
    )


def metrics_produced(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT040: each ESS system alarm and CloudMonitor host alarm reads a metric something in the plan produces."""
    metrics = load_metrics()
    for alarm in of_types(plan, ("ess.Alarm",)):
        # A custom metric is reported by the user's own code: nothing in the plan can show it does.
        if alarm.inputs.get("metricType", "system") != "system":
            continue
        group = referenced(alarm.inputs.get("scalingGroupId"))
        sources = _launch_sources(plan, group)
        nodes = sources or of_role(plan, Role.NODE)
        metric = str(alarm.inputs.get("metricName"))
        where = f"scaling group {group}'s launch source does not run it" if sources else "no node of the plan runs it"
        message = _finding(
            metric, _ESS_NAMESPACE, record_of(metrics, metric, _ESS_NAMESPACE), _producers(plan, nodes), where
        )
        if message:
            yield alarm.name, message
    for alarm in of_types(plan, ("cms.Alarm",)):
        if alarm.inputs.get("project") != _HOST_PROJECT:
            continue
        metric = str(alarm.inputs.get("metric"))
        have = _producers(plan, of_role(plan, Role.NODE))
        message = _finding(
            metric, _HOST_PROJECT, record_of(metrics, metric, _HOST_PROJECT), have, "no node of the plan runs it"
        )
        if message:
            yield alarm.name, message


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT040",
        "error",
        "every metric an alarm reads is produced",
        metrics_produced,
        rationale="an alarm on a metric nobody reports stays in INSUFFICIENT_DATA forever: the pool's scale-in on"
        " GpuUtilizationAgent needs the CloudMonitor agent on every node (ESS CreateAlarm metric list;"
        " blueprints/catalog/data/metrics.csv)",
        fix="install what produces the metric (the node boot installs the CloudMonitor agent: keep"
        " EcsSpec.cloudmonitor_agent; on ACK add the arms-prometheus add-on), or read a metric the catalog documents;"
        " an image that ships the agent itself: skip AIT040 with that reason",
    ),
)
