"""Builds the slurm-ecs stub: the controller and the compute nodes, each a GpuCluster in the first compute zone."""

from __future__ import annotations

from dataclasses import replace

from blueprints.architectures.ecs.build import EcsBuilder
from blueprints.architectures.slurm_ecs.spec import SlurmSpec
from blueprints.components.compute import GpuCluster, GpuClusterArgs
from blueprints.components.network import TrainingNetwork
from blueprints.components.node import NodeSpec


class SlurmBuilder(EcsBuilder[SlurmSpec]):
    """One controller node (CPU, no scratch, no ERI) beside the compute nodes, on the same boot and network."""

    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        """The controller and the compute nodes; their IDs and addresses are the launch targets."""
        spec = self.spec
        compute = spec.profile.compute
        zone = network.compute_zone_ids[0]
        vswitch = network.vswitch_id(zone)
        controller = GpuCluster(
            f"{spec.compute_unit_name}-controller",
            GpuClusterArgs(
                node=replace(node, instance_type=compute.controller_instance_type, scratch_disk_gib=0, eri=False),
                nodes=1,
                zone_id=zone,
                vswitch_id=vswitch,
            ),
            opts=self.opts,
        )
        nodes = GpuCluster(
            spec.compute_unit_name,
            GpuClusterArgs(node=node, nodes=compute.nodes, zone_id=zone, vswitch_id=vswitch),
            opts=self.opts,
        )
        return {
            "nodes": compute.nodes,
            "gpus": compute.nodes * self.instance.gpu_count,
            "expected_nodes": compute.nodes,
            "controller_instance_ids": controller.instance_ids,
            "node_instance_ids": nodes.instance_ids,
            "node_private_ips": nodes.private_ips,
        }


BUILDER = SlurmBuilder
