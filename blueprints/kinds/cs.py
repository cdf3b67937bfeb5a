"""Container Service (ACK) kinds: the managed cluster, its node pools, its autoscaler and add-ons."""

from __future__ import annotations

from typing import Sequence

from blueprints.kinds.ecs import pool_size, system_disk
from blueprints.kinds.model import (
    Costs,
    Free,
    Kind,
    Neighbours,
    NodeGroup,
    Priced,
    ReplacingInputs,
    Resource,
    Role,
    Terraform,
    Unpriced,
)

SERVICES = ("cs",)
_MAPPED, _DOCS = Terraform.MAPPED, ReplacingInputs.TERRAFORM_DOCS

# clusterSpec → prices.csv ``ack`` tier. Only the Pro small spec has a recorded fee; other specs (Pro XL/2XL/4XL
# provisioned control planes, Basic) have no row, so they stay unknown, never 0.
CLUSTER_FEE_TIERS = {"ack.pro.small": "pro-cluster-fee"}


def _cluster_cost(costs: Costs, r: Resource) -> None:
    """The management fee per cluster-hour, and the API server's load balancer (no price recorded)."""
    spec = str(r.inputs.get("clusterSpec") or "")
    tier = CLUSTER_FEE_TIERS.get(spec, f"cluster-fee {spec or '(clusterSpec unset)'}")
    item = f"ACK cluster management fee ({spec or 'clusterSpec unset'})"
    costs.add(r, item, 1, "cluster-hour", costs.price("ack", tier), "hourly")
    # "A Classic Load Balancer (CLB) instance is required for the
    # API server" (ACK billing page, see prices.csv ack rows).
    price = costs.price("clb_api_server", None)
    costs.add(r, "API server load balancer (CLB instance and LCU fees)", 1, "hour", price, "hourly")


def _pool_cost(costs: Costs, r: Resource) -> None:
    """Nodes × the pool's first instance type and disks; an autoscaling pool at its minimum, with scenarios.

    A pool with ``scalingConfig.enable`` runs ``minSize`` nodes when idle (like an ESS group); otherwise it holds
    ``desiredSize`` (or the older ``nodeCount``) nodes.
    """
    types = r.inputs.get("instanceTypes") or []
    node = {**r.inputs, "instanceType": types[0] if types else None}
    fewest, most, scales = pool_size(r.inputs)
    if scales:
        costs.pool(r, node, system_disk(r.inputs), fewest, most)
    else:
        costs.nodes(r, fewest, node, system_disk(r.inputs))


def _pool_nodes(r: Resource, _: Neighbours) -> Sequence[NodeGroup]:
    """At the autoscaling ``maxSize`` when scaling is on, else the desired size; one group per listed type.

    A pool that lists several types may launch any of them, so each is counted for the whole pool (an upper bound).
    """
    most = pool_size(r.inputs)[1]
    return tuple(NodeGroup({**r.inputs, "instanceType": name}, most) for name in r.inputs.get("instanceTypes") or ())


KINDS = (
    Kind(
        token="alicloud:cs/managedKubernetes:ManagedKubernetes",
        key_properties=("clusterSpec", "version", "slbInternetEnabled", "deletionProtection", "serviceCidr"),
        pricing=Priced(_cluster_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:cs/nodePool:NodePool",
        key_properties=(
            "instanceTypes",
            "scalingConfig",
            "desiredSize",
            "spotStrategy",
            "systemDiskEncrypted",
            "instanceMetadataOptions",
            "dataDisks",
        ),
        pricing=Priced(_pool_cost),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
        roles=frozenset({Role.NODE}),
        computed_outputs=("nodePoolId",),
        capacity=_pool_nodes,
    ),
    Kind(
        token="alicloud:cs/autoscalingConfig:AutoscalingConfig",
        key_properties=("scaleUpFromZero", "scaleDownEnabled", "gpuUtilizationThreshold"),
        pricing=Free("the cluster autoscaler's settings cost nothing: the nodes it adds are priced on their pool"),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
    Kind(
        token="alicloud:cs/kubernetesAddon:KubernetesAddon",
        key_properties=("name", "version"),
        pricing=Unpriced(
            "an add-on runs on the cluster's nodes, but some (logging, ARMS) bill their own service on usage"
        ),
        terraform=_MAPPED,
        replacing_inputs=_DOCS,
    ),
)
