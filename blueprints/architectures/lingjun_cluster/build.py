"""Builds the Lingjun cluster: the Lingjun nodes in the training VPC, then kubernetes-pool's ACK cluster and what
runs inside it, with a Lingjun node pool as the GPU pool."""

from __future__ import annotations

from blueprints.architectures.base.build import Foundation
from blueprints.architectures.kubernetes_pool.build import AckPoolBuilder
from blueprints.architectures.lingjun_cluster.spec import LingjunClusterSpec
from blueprints.components.kubernetes_cluster import KubernetesCluster, KubernetesClusterArgs
from blueprints.components.lingjun import LINGJUN_TAINT, LingjunKubernetesCluster, LingjunNodes, LingjunNodesArgs


class LingjunClusterBuilder(AckPoolBuilder[LingjunClusterSpec]):
    """The ACK builder with the Lingjun nodes first and a Lingjun node pool for GPUs."""

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The Lingjun nodes in the compute zone's vSwitch, then the ACK cluster and its workloads."""
        network = foundation.network
        spec = self.spec
        compute = spec.profile.compute
        p = spec.profile
        self.lingjun = LingjunNodes(
            f"{spec.compute_unit_name}-nodes",
            LingjunNodesArgs(
                machine_type=compute.instance_type,
                nodes=compute.nodes,
                zone_id=compute.zone,
                hpn_zone=compute.hpn_zone,
                image_id=compute.node_image_id,
                payment_type=compute.payment_type,
                period_months=compute.period_months,
                vpc_id=network.vpc_id,
                vswitch_id=network.vswitch_id(network.compute_zone_ids[0]),
                security_group_id=network.security_group_id,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        outputs = super().build_nodes(foundation)
        outputs.update(
            lingjun_cluster_id=self.lingjun.cluster.id,
            lingjun_node_group_id=self.lingjun.group.node_group_id,
            lingjun_nodes=compute.nodes,
            hpn_zone=compute.hpn_zone,
        )
        cpfs = p.cpfs
        if cpfs is not None:
            outputs["cpfs_for_lingjun_id"] = cpfs.file_system_id
        return outputs

    def gpu_taint(self) -> dict[str, str]:
        """ACK's Lingjun taint, without a value: job pods tolerate the key (operator Exists)."""
        key, effect = LINGJUN_TAINT
        return {"key": key, "effect": effect}

    def make_cluster(self, args: KubernetesClusterArgs) -> KubernetesCluster:
        """The ACK cluster whose GPU pool is the Lingjun node pool."""
        return LingjunKubernetesCluster(self.spec.compute_unit_name, args, self.lingjun, opts=self.opts)


BUILDER = LingjunClusterBuilder
