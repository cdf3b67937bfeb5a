"""The stack output ``health_gate``: what the plan shows of the gate (its command, suite and all-reduce threshold)."""

from __future__ import annotations

import enum

from blueprints.catalog import Catalog, InstanceType
from blueprints.health.suites import expectations, suite_names
from blueprints.health.thresholds import threshold_for

CHECK_COMMAND = "aitrain check --stack outputs.json"
# On ACK the node health is Kubernetes' (the repair helper's node problem detector and GPU fault isolation).
KUBERNETES_GATE = (
    "ACK node problem detector with GPU fault isolation (node pool auto-repair); aitrain check covers torchrun stacks"
)


def health_gate_output(catalog: Catalog, instance: InstanceType, fabric: str, job_engine: str) -> dict[str, object]:
    """JSON-plain ``health_gate``: {"command", "suite", "allreduce": {fabric, expected, threshold, source}}."""
    exp = expectations(catalog, instance, fabric)
    return {
        "command": CHECK_COMMAND if job_engine == "torchrun" else KUBERNETES_GATE,
        "suite": suite_names(exp, "quick"),
        "allreduce": threshold_for(instance, fabric).as_output(),
    }


class OnUnhealthy(str, enum.Enum):
    """What ``aitrain launch`` does when the gate finds unhealthy nodes: stop (default) or exclude them."""

    stop = "stop"
    exclude = "exclude"
