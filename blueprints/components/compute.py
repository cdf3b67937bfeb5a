"""The fixed GPU cluster (GpuCluster): N nodes on one low-latency
fabric, as instance sets or as one instance per node."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, encoded_user_data, with_tags
from blueprints.components.errors import names_resource
from blueprints.components.node import (
    ERI_TRAFFIC_MODE,
    SCRATCH_DISK_NAME,
    NodeSpec,
    node_identity,
    node_launch_template,
    scratch_disk_fields,
)
from blueprints.components.reservation import TARGET, CapacityHold, hold_capacity
from blueprints.core.layout import instance_batches

# The tag that carries a node's replacement generation (compute.replace_nodes), and the property path Pulumi's
# replace_on_changes watches on that node only: a new generation replaces the node, every other change stays as it
# was (tags change in place on ecs.Instance). https://www.pulumi.com/docs/iac/concepts/options/replaceonchanges/
REPLACE_TAG = "aitrain-generation"
REPLACE_ON = f'tags["{REPLACE_TAG}"]'


@dataclass(frozen=True)
class GpuClusterArgs:
    """A fixed cluster: N nodes in one zone."""

    node: NodeSpec
    nodes: int
    zone_id: str
    vswitch_id: pulumi.Input[str]
    # Node name (node-003) → replacement generation; only one-instance-per-node clusters (eRDMA, or drawing from a
    # reservation) can honour it.
    replace_generations: Mapping[str, int] = field(default_factory=dict)
    # Capacity held for the nodes before any starts; they start from it (Target mode) or not at all.
    hold: CapacityHold | None = None

    @property
    def one_instance_per_node(self) -> bool:
        """eRDMA nodes (an ERI each) and nodes drawing from a private pool are one ecs.Instance each: neither an ERI
        nor private pool options are arguments of ecs.EcsInstanceSet (pulumi-alicloud 4.0.0)."""
        return self.node.eri or self.hold is not None


class GpuCluster(pulumi.ComponentResource):
    """N identical GPU nodes on one low-latency fabric.

    A ``LowLatency`` deployment set keeps every node in one zone's network topology (shortest hops for NCCL).
    Types without eRDMA come from ``ecs.EcsInstanceSet`` in batches of at most 100, so the plan has a handful of
    resources whatever the node count; a launch template carries what an instance set cannot (encrypted system
    disk, user data, IMDSv2). Types with eRDMA need an ERI, which neither instance sets nor launch templates can
    request (pulumi-alicloud 4.0.0; ready-to-train.md §2b), so each node is one ``ecs.Instance`` with a
    HighPerformance primary NIC, named by its index so a resize adds or removes only the last nodes. With capacity
    held for them (``args.hold``), a capacity reservation or elasticity assurance is created first and every node is
    likewise one ``ecs.Instance`` that starts from it in Target mode (private pool options are not arguments of an
    instance set): the nodes start from held capacity or not at all.
    """

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:compute:GpuCluster", name, None, opts)
        node = args.node
        self.tags = with_tags(node.tags, "gpu-cluster")
        self.role = node_identity(self, name, node)
        self.deployment_set = alicloud.ecs.EcsDeploymentSet(
            f"{name}-placement",
            deployment_set_name=f"{name}-low-latency",
            strategy="LowLatency",
            description="aitrain: all training nodes in one network topology",
            opts=child(self),
        )
        self.user_data = pulumi.Output.from_input(node.user_data).apply(encoded_user_data)
        self.reservation = (
            hold_capacity(self, name, args.hold, node.instance_type, args.zone_id, self.tags)
            if args.hold is not None
            else None
        )
        if args.one_instance_per_node:
            self.instance_ids, self.private_ips = self._one_instance_per_node(name, args)
        else:
            self.instance_ids, self.private_ips = self._instance_sets(name, args)
        outputs: dict[str, object] = {
            "deployment_set_id": self.deployment_set.id,
            "instance_ids": self.instance_ids,
            "private_ips": self.private_ips,
            "role_name": self.role.role_name,
        }
        if self.reservation is not None:
            outputs["reservation_id"] = self.reservation.id
        self.register_outputs(outputs)

    def _instance_sets(
        self, name: str, args: GpuClusterArgs
    ) -> tuple[pulumi.Output[list[str]], pulumi.Output[list[str]]]:
        node = args.node
        self.launch_template = node_launch_template(
            self,
            name,
            node,
            role_name=self.role.role_name,
            user_data=self.user_data,
            tags=self.tags,
            with_scratch=False,
            vswitch_id=args.vswitch_id,
            zone_id=args.zone_id,
            deployment_set_id=self.deployment_set.id,
        )
        # The instance set launches the nodes, so the scratch disk is asked for here (an instance set's data disks
        # are deleted with the instance: RunInstances' DataDisk.N.DeleteWithInstance defaults to true).
        scratch = (
            [
                alicloud.ecs.EcsInstanceSetDataDiskArgs(
                    disk_size=node.scratch_disk_gib,
                    disk_category="cloud_essd",
                    performance_level=node.scratch_performance_level,
                    encrypted=True,
                    kms_key_id=node.kms_key_id,
                    disk_name=SCRATCH_DISK_NAME,
                )
            ]
            if node.scratch_disk_gib
            else None
        )
        self.instance_sets: list[alicloud.ecs.EcsInstanceSet] = []
        with names_resource(self):
            batches = instance_batches(args.nodes)
        for index, amount in enumerate(batches):
            self.instance_sets.append(
                alicloud.ecs.EcsInstanceSet(
                    f"{name}-nodes-{index}",
                    amount=amount,
                    instance_type=node.instance_type,
                    image_id=node.image_id,
                    security_group_ids=[node.security_group_id],
                    vswitch_id=args.vswitch_id,
                    zone_id=args.zone_id,
                    deployment_set_id=self.deployment_set.id,
                    launch_template_id=self.launch_template.id,
                    ram_role_name=self.role.role_name,
                    instance_name=f"{name}-node-{index}-",
                    unique_suffix=True,
                    instance_charge_type="PostPaid",
                    spot_strategy=node.spot_strategy,
                    internet_max_bandwidth_out=0,
                    data_disks=scratch,
                    # Nodes are stateless (data lives on SharedStorage and the bucket). An instance set changes only
                    # its tags in place (provider docs), so any other change replaces it: deletion protection would
                    # block every resize, and replacing delete-first avoids needing GPU quota for two clusters at once.
                    deletion_protection=False,
                    tags=self.tags,
                    opts=child(self, delete_before_replace=True),
                )
            )
        ids = pulumi.Output.all(*[s.instance_ids for s in self.instance_sets]).apply(_flatten)
        # An instance set reports IDs only; its nodes' private IPs come from the instances data source, in ID order.
        found = alicloud.ecs.get_instances_output(ids=ids, opts=pulumi.InvokeOutputOptions(parent=self))
        ips = pulumi.Output.all(ids, found.instances).apply(lambda pair: _ips_in_order(pair[0], pair[1]))
        return ids, ips

    def _one_instance_per_node(
        self, name: str, args: GpuClusterArgs
    ) -> tuple[pulumi.Output[list[str]], pulumi.Output[list[str]]]:
        node = args.node
        scratch = [alicloud.ecs.InstanceDataDiskArgs(**scratch_disk_fields(node))] if node.scratch_disk_gib else None
        # Only what applies is set (None leaves an input out), so a cluster without eRDMA or a reservation plans
        # exactly as before.
        pool_id = self.reservation.id if self.reservation is not None else None
        self.instances: list[alicloud.ecs.Instance] = []
        for index in range(args.nodes):
            generation = args.replace_generations.get(f"node-{index:03d}")
            tags = self.tags if generation is None else {**self.tags, REPLACE_TAG: str(generation)}
            # Only a node with a generation watches it: raising it replaces that node and no other.
            watch = {} if generation is None else {"replace_on_changes": [REPLACE_ON]}
            self.instances.append(
                alicloud.ecs.Instance(
                    f"{name}-node-{index:03d}",
                    instance_name=f"{name}-node-{index:03d}",
                    instance_type=node.instance_type,
                    image_id=node.image_id,
                    security_groups=[node.security_group_id],
                    vswitch_id=args.vswitch_id,
                    availability_zone=args.zone_id,
                    deployment_set_id=self.deployment_set.id,
                    role_name=self.role.role_name,
                    instance_charge_type="PostPaid",
                    spot_strategy=node.spot_strategy,
                    internet_max_bandwidth_out=0,
                    http_tokens="required",
                    # eRDMA: an ERI, and the jumbo-frame state the boot's MTU assumes (8500 on, 1400 off): "an
                    # incorrect MTU causes data consistency issues" (ECS "Configure eRDMA on a GPU instance";
                    # bootstrap/data/fabric_links.csv).
                    network_interface_traffic_mode=ERI_TRAFFIC_MODE if node.eri else None,
                    enable_jumbo_frame=node.jumbo_frames if node.eri else None,
                    # Nodes start only from the capacity held for them (Target mode), or not at all.
                    private_pool_options_match_criteria=TARGET if pool_id is not None else None,
                    private_pool_options_id=pool_id,
                    system_disk_category="cloud_essd",
                    system_disk_size=node.system_disk_gib,
                    system_disk_performance_level=node.system_disk_performance_level,
                    system_disk_encrypted=True,
                    system_disk_kms_key_id=node.kms_key_id,
                    data_disks=scratch,
                    user_data=self.user_data,
                    deletion_protection=False,
                    tags=tags,
                    volume_tags=self.tags,
                    opts=child(self, delete_before_replace=True, **watch),
                )
            )
        ids = pulumi.Output.all(*[i.id for i in self.instances]).apply(list)
        ips = pulumi.Output.all(*[i.private_ip for i in self.instances]).apply(list)
        return ids, ips


def _flatten(batches: list[list[str] | None]) -> list[str]:
    return [i for batch in batches for i in (batch or [])]


def _ips_in_order(ids: list[str], instances: list[Any]) -> list[str]:
    by_id = {_get(i, "id"): _get(i, "private_ip") for i in instances}
    return [by_id.get(i, "") for i in ids]


def _get(item: Any, key: str) -> str:
    # Real invokes give typed objects; an engine answer seen through ``apply`` may be a plain dict.
    value = item.get(key) if isinstance(item, dict) else getattr(item, key, None)
    return str(value) if value is not None else ""
