"""Builds the fixed cluster: one GpuCluster (a LowLatency deployment set) in the first compute zone."""

from __future__ import annotations

from blueprints.architectures.base.repair import fixed_cluster_repair
from blueprints.architectures.ecs.build import EcsBuilder
from blueprints.architectures.fixed_cluster.spec import FixedClusterSpec
from blueprints.components.compute import GpuCluster, GpuClusterArgs
from blueprints.components.network import TrainingNetwork
from blueprints.components.node import NodeSpec
from blueprints.components.reservation import hold_for


class FixedClusterBuilder(EcsBuilder[FixedClusterSpec]):
    """The cluster's nodes, all in one zone; none at all while parked."""

    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        """One GpuCluster in the first compute zone; none at all when parked (nodes 0)."""
        nodes = self.spec.nodes
        generations = dict(self.spec.profile.compute.replace_nodes)
        outputs: dict[str, object] = {
            "nodes": nodes,
            "gpus": nodes * self.instance.gpu_count,
            "expected_nodes": nodes,
            "repair": fixed_cluster_repair(
                nodes=nodes,
                one_instance_per_node=self.spec.profile.one_instance_per_node(self.catalog),
                generations=generations,
            ),
        }
        if nodes == 0:
            return {**outputs, "node_instance_ids": [], "node_private_ips": []}
        zone = network.compute_zone_ids[0]
        hold = hold_for(self.spec.profile.capacity.reservation, nodes)
        cluster = GpuCluster(
            self.spec.compute_unit_name,
            GpuClusterArgs(
                node=node,
                nodes=nodes,
                zone_id=zone,
                vswitch_id=network.vswitch_id(zone),
                replace_generations=generations,
                hold=hold,
            ),
            opts=self.opts,
        )
        return {
            **outputs,
            "deployment_set_id": cluster.deployment_set.id,
            "node_instance_ids": cluster.instance_ids,
            "node_private_ips": cluster.private_ips,
        }


BUILDER = FixedClusterBuilder
