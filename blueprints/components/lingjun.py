"""Lingjun compute (LingjunNodes): a Lite Lingjun cluster in the training VPC, one node group of one machine type, and
its nodes; and the ACK cluster whose GPU pool is those nodes (LingjunKubernetesCluster: a Lingjun node pool).

Shape (ACK, "Create and manage a Lingjun node pool", updated 2026-09-21,
https://www.alibabacloud.com/help/zh/ack/ack-managed-and-ack-dedicated/user-guide/create-and-manage-a-lingjun-node-pool):
a Lite Lingjun cluster with a node group, an ACK managed Pro cluster of 1.31 or later with Terway, and a node pool of
type ``lingjun`` naming the Lingjun cluster and group (pulumi-alicloud 4.0.0 cs.NodePool ``eflo_node_group``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, with_tags
from blueprints.components.kubernetes_cluster import (
    GPU_POOL_LABEL,
    KubernetesCluster,
    KubernetesClusterArgs,
    auto_repair_management,
)

# The Lingjun node pool's taint: ACK's own for Lingjun nodes (node-role.alibabacloud.com/lingjun, NoSchedule: ACK
# "Overview of Lingjun node pools", https://www.alibabacloud.com/help/en/ack/ack-lingjun-managed-clusters/user-guide/
# overview-of-lingjun-node-pools), set by the pool too and without a value, so a pod tolerating the key (operator
# Exists) lands whether ACK adds it or not.
LINGJUN_TAINT = ("node-role.alibabacloud.com/lingjun", "NoSchedule")

# eflo-controller's Lite cluster type: the one ACK's Lingjun node pools accept (the page above:
# "灵骏集群类型: 基础灵骏集群服务(Lite)"); the API's types are AckEdgePro,
# ExclusiveBareCluster and Lite (eflo-controller ListClusters).
LITE_CLUSTER = "Lite"


@dataclass(frozen=True)
class LingjunNodesArgs:
    """A Lingjun cluster of ``nodes`` × ``machine_type`` in one zone and HPN zone, placed in the training VPC."""

    machine_type: str
    nodes: int
    zone_id: str
    hpn_zone: str
    image_id: str
    payment_type: str
    period_months: int | None
    vpc_id: pulumi.Input[str]
    vswitch_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    tags: dict[str, str] = field(default_factory=dict)


class LingjunNodes(pulumi.ComponentResource):
    """The Lingjun cluster, its node group and its nodes; every node named by its index, so a larger count only adds."""

    def __init__(self, name: str, args: LingjunNodesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:lingjun:LingjunNodes", name, None, opts)
        tags = with_tags(args.tags, "lingjun")
        # The cluster sits in the training VPC (its vSwitch and security group), not in a Lingjun VPD: a VPD reaches a
        # VPC only through a Lingjun connection (VCC) and hub attachment, which pulumi-alicloud 4.0.0 cannot create
        # (no eflo Vcc or ErAttachment resource), and ACK's Lingjun node pools take Lite clusters in the VPC.
        self.cluster = alicloud.eflo.Cluster(
            f"{name}-cluster",
            cluster_name=f"{name}-cluster",
            cluster_type=LITE_CLUSTER,
            hpn_zone=args.hpn_zone,
            # A failed node task fails the apply: a cluster silently short of nodes would start jobs on fewer.
            ignore_failed_node_tasks=False,
            networks=alicloud.eflo.ClusterNetworksArgs(
                vpc_id=args.vpc_id,
                vswitch_id=args.vswitch_id,
                vswitch_zone_id=args.zone_id,
                security_group_id=args.security_group_id,
                tail_ip_version="IPv4",
            ),
            tags=tags,
            opts=child(self),
        )
        self.group = alicloud.eflo.NodeGroup(
            f"{name}-group",
            cluster_id=self.cluster.id,
            node_group_name=f"{name}-group",
            machine_type=args.machine_type,
            az=args.zone_id,
            zone_id=args.zone_id,
            image_id=args.image_id,
            opts=child(self),
        )
        subscription: dict[str, Any] = (
            {"period": args.period_months, "renewal_status": "ManualRenewal"}
            if args.payment_type == "Subscription"
            else {}
        )
        self.nodes = [
            alicloud.eflo.Node(
                f"{name}-node-{index}",
                machine_type=args.machine_type,
                payment_type=args.payment_type,
                zone=args.zone_id,
                hpn_zone=args.hpn_zone,
                cluster_id=self.cluster.id,
                node_group_id=self.group.node_group_id,
                hostname=f"{name}-{index}",
                vpc_id=args.vpc_id,
                vswitch_id=args.vswitch_id,
                tags=tags,
                opts=child(self),
                **subscription,
            )
            for index in range(args.nodes)
        ]
        self.register_outputs(
            {"lingjun_cluster_id": self.cluster.id, "node_group_id": self.group.node_group_id, "nodes": args.nodes}
        )


class LingjunKubernetesCluster(KubernetesCluster):
    """The ACK cluster of the Lingjun nodes: its GPU pool is a Lingjun node pool of their cluster and node group."""

    def __init__(
        self,
        name: str,
        args: KubernetesClusterArgs,
        lingjun: LingjunNodes,
        opts: pulumi.ResourceOptions | None = None,
    ):
        self._lingjun = lingjun
        super().__init__(name, args, opts)

    def _gpu_pool(self, name: str, args: KubernetesClusterArgs) -> alicloud.cs.NodePool:
        key, value = GPU_POOL_LABEL
        taint_key, effect = LINGJUN_TAINT
        lingjun = self._lingjun
        return alicloud.cs.NodePool(
            f"{name}-gpu-pool",
            node_pool_name=f"{name}-gpu",
            cluster_id=self.cluster.id,
            type="lingjun",
            eflo_node_group=alicloud.cs.NodePoolEfloNodeGroupArgs(
                cluster_id=lingjun.cluster.id, group_id=lingjun.group.node_group_id
            ),
            vswitch_ids=list(args.vswitch_ids),
            security_group_ids=[args.security_group_id],
            ram_role_name=self.gpu_role.role_name,
            # As every aitrain node: IMDSv2 and an encrypted system disk. Whether ACK applies these two to Lingjun
            # nodes (bare metal with their own disks) no page states (UNVERIFIED); they are asked for all the same.
            instance_metadata_options=alicloud.cs.NodePoolInstanceMetadataOptionsArgs(http_tokens="required"),
            system_disk_encrypted=True,
            system_disk_kms_key=args.kms_key_id,
            labels=[alicloud.cs.NodePoolLabelArgs(key=key, value=value)],
            taints=[alicloud.cs.NodePoolTaintArgs(key=taint_key, effect=effect)],
            # ACK's auto repair covers Lingjun nodes too (custom node auto repair, Lingjun included:
            # https://help.aliyun.com/en/ack/ack-managed-and-ack-dedicated/user-guide/custom-node-auto-repair).
            management=auto_repair_management(),
            tags=self.tags,
            opts=child(
                self,
                depends_on=[*lingjun.nodes, *([self.bucket_attachment] if self.bucket_attachment is not None else [])],
            ),
        )
