"""How each blueprint repairs a bad node: the ``repair`` stack output and the plan notes a reviewer reads.

Pure data about what the program builds (the components hold the resources): the fixed cluster's `aitrain replace-node`,
the ESS pool's health check and SCALE_IN lifecycle hook, ACK's managed node pool auto repair. Sources are cited where
the behaviour is Alibaba's; what no document confirms says UNVERIFIED.
"""

from __future__ import annotations

from typing import Any, Mapping

# https://www.alibabacloud.com/help/en/ecs/api-redeployinstance: moves an instance that has a system event to a healthy
# physical server (same instance); RebootInstance otherwise restarts it where it is.
BATCH_ALTERNATIVE = "aliyun ecs RedeployInstance --InstanceId <id> (after an ECS system event; else RebootInstance)"

# ACK's managed node pool auto repair (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/
# auto-repair): ack-node-problem-detector finds the fault; for a system or Kubernetes component fault ACK restarts the
# kubelet or the container runtime and, when restart_node is allowed and that fails, cordons, drains and restarts the
# node; for a node instance fault it taints, drains and restarts the node or starts a hardware repair. Neither path
# replaces the instance. GPU fault isolation (https://www.alibabacloud.com/help/en/doc-detail/456446.html): NPD
# (≥ 1.2.24) with ack-nvidia-device-plugin (≥ 0.17.0) fences a GPU with XID/SXID errors from new pods, which is not a
# repair; since NPD 1.2.35 isolation only happens for the triggers configured on the device plugin, off by default
# (https://www.alibabacloud.com/help/en/ack/product-overview/product-change-update-to-the-gpu-automatic-isolation-feature).
ACK_REPAIR_STEPS = (
    "component fault: restart kubelet/container runtime, then (restart_node) cordon, drain, restart the node",
    "instance fault: taint, drain, then restart the node or start a hardware repair",
)


def fixed_cluster_repair(*, nodes: int, one_instance_per_node: bool, generations: Mapping[str, int]) -> dict[str, Any]:
    """The fixed cluster's repair path: replace-node on one-instance-per-node (eRDMA) clusters, ECS's own otherwise."""
    if nodes == 0:
        return {"mechanism": "parked: no nodes to repair", "command": None}
    if not one_instance_per_node:
        return {
            "mechanism": (
                "nodes are ecs.EcsInstanceSet batches, which Pulumi replaces only whole: no per-node replace; "
                "repair a node with ECS itself"
            ),
            "command": BATCH_ALTERNATIVE,
            "replace_node": False,
        }
    return {
        "mechanism": (
            "aitrain replace-node raises a node's generation (compute.replace_nodes); pulumi up replaces exactly that "
            "ecs.Instance (delete first, ~10–20 min), storage, bucket and the other nodes untouched"
        ),
        "command": "aitrain replace-node --stack-config Pulumi.<stack>.yaml NODE... --write && pulumi up",
        "replace_node": True,
        "generations": dict(sorted(generations.items())),
    }


def pool_repair(*, grace_seconds: int, spot: bool) -> dict[str, Any]:
    """The ESS pool's repair path: the group's ECS health check, and the SCALE_IN hook that waits for a checkpoint."""
    return {
        "mechanism": (
            "ESS ECS health check: an instance that stops running is removed and the group launches another; a "
            f"SCALE_IN lifecycle hook holds a leaving node up to {grace_seconds} s while its job checkpoints"
        ),
        # A GPU fault on a running node is invisible to the ECS health check: mark it so the group replaces it.
        "command": "aliyun ess SetInstanceHealth --InstanceId <id> --HealthStatus Unhealthy",
        "health_check": "ECS",
        "lifecycle_hook": {
            "transition": "SCALE_IN",
            "heartbeat_timeout_seconds": grace_seconds,
            "default_result": "CONTINUE",
            "notification": "OOS template ACS-ESS-LifeCycleRunCommand (SIGTERM to torchrun, wait for it to exit)",
        },
        "spot_instance_remedy": spot,
    }


def pool_repair_note(grace_seconds: int) -> str:
    """What a reviewer must know about the pool's scale-in hook: its prerequisite and what is not verified."""
    return (
        f"Scale-in waits up to {grace_seconds} s per node (compute.checkpoint_grace_seconds): the SCALE_IN lifecycle "
        "hook has CloudOps Orchestration Service run Alibaba's template ACS-ESS-LifeCycleRunCommand, a Cloud "
        "Assistant command that sends torchrun SIGTERM and waits for it to exit, so the job must checkpoint on "
        "SIGTERM. The template runs as the RAM role OOSServiceRole, which the account must have (trusted by "
        "oos.aliyuncs.com, allowed ecs:RunCommand, ecs:DescribeInvocations, ecs:DescribeInvocationResults and "
        "ess:CompleteLifecycleAction); without it the node is removed without waiting. UNVERIFIED: that ESS passes "
        "the hook's notification metadata to the template as its parameters. The ECS health check replaces a node "
        "that stops running, not one whose GPU failed: `aliyun ess SetInstanceHealth --HealthStatus Unhealthy` "
        "does that."
    )


def kubernetes_repair(*, restart_node: bool, max_unavailable: int) -> dict[str, Any]:
    """ACK's repair path for both node pools (managed node pool auto repair), and what it does to a running job."""
    return {
        "mechanism": (
            "ACK managed node pool auto repair (ack-node-problem-detector + node-lifecycle-controller): faulty GPU "
            "nodes are drained and restarted, never replaced"
        ),
        "command": None,
        "auto_repair": True,
        "restart_node": restart_node,
        "max_unavailable": max_unavailable,
        "steps": list(ACK_REPAIR_STEPS),
        "gpu_fault_isolation": (
            "NPD fences a GPU with XID/SXID errors from new pods when the device plugin's isolation triggers are "
            "configured (off by default since NPD 1.2.35; aitrain configures none)"
        ),
    }


def kubernetes_repair_note() -> str:
    """The plan note: auto repair can stop a running job, visibly (the pools repair one node at a time:
    management.max_unavailable 1 in blueprints/components/kubernetes_cluster.py)."""
    return (
        "Auto repair is on for both node pools: when ack-node-problem-detector reports a fault ACK first restarts "
        "the kubelet or container runtime, then cordons, drains and restarts the node (a component fault), or taints, "
        "drains and restarts it or starts a hardware repair (an instance fault). A drain evicts the training pods "
        "on that node mid-job: the job (a TrainJob's JobSet, or a legacy PyTorchJob) restarts them under its restart "
        "policy, from the last checkpoint it wrote. ACK repairs one node at a time and never replaces the instance; "
        "faults and repairs appear as node conditions and events in the Event Center. GPU fault isolation (fencing a "
        "GPU with XID errors from new pods) needs the device plugin's isolation triggers, which aitrain does not "
        "configure."
    )
