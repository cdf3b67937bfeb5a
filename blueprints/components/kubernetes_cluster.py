"""The ACK cluster (KubernetesCluster): an ACK Pro control plane, a fixed CPU system pool and an autoscaled GPU pool."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, node_role, with_tags
from blueprints.components.bucket import attach_bucket_policy
from blueprints.components.node import SCRATCH_DISK_NAME
from blueprints.components.reservation import TARGET, CapacityHold, hold_capacity

# Where every node sees its scratch disk, as on the ECS blueprints (NodePoolDataDisk mount_target, with auto_format).
SCRATCH_MOUNT_PATH = "/mnt/scratch"

# The control-plane logs ACK collects (pulumi-alicloud 4.0.0 cs.ManagedKubernetes control_plane_log_components
# supports apiserver, kcm, scheduler, ccm and controlplane-events) and for how long (its default, 30 days).
CONTROL_PLANE_LOGS = ("apiserver", "kcm", "scheduler", "ccm", "controlplane-events")
CONTROL_PLANE_LOG_TTL_DAYS = "30"

# The seam's node placement (common brief): GPU pods select the label and tolerate the taint.
GPU_POOL_LABEL = ("aitrain.io/node-pool", "gpu")
SYSTEM_POOL_LABEL = ("aitrain.io/node-pool", "system")
GPU_TAINT = ("nvidia.com/gpu", "true", "NoSchedule")
DRIVER_LABEL = "ack.aliyun.com/nvidia-driver-version"

# Both pools are managed node pools with auto repair: ACK's node problem detector marks a node whose kubelet or
# container runtime hangs (or whose GPU fails) and ACK repairs it, restarting the node if the component repair fails
# (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/auto-repair; checkov CKV_ALI_31).
# It needs the ack-node-problem-detector and node-lifecycle-controller add-ons (NodePoolManagementArgs.auto_repair,
# pulumi-alicloud 4.0.0), which the catalog installs with every cluster. Auto upgrade stays off: a managed pool
# updates a node by draining it and replacing its system disk (managed node pools overview,
# https://www.alibabacloud.com/help/en/container-service-for-kubernetes/latest/managed-node-pools-overview), which would
# stop a training run mid-way; upgrades are planned by the operator. CVE auto-fix stays off: it needs Security Center,
# bought apart, and may restart nodes the same way. One node is repaired at a time (max_unavailable, the API default).
AUTO_REPAIR_RESTARTS_NODE = True
REPAIR_MAX_UNAVAILABLE = 1


def auto_repair_management() -> alicloud.cs.NodePoolManagementArgs:
    """A managed node pool with auto repair, one node at a time, no auto upgrade or CVE fix (see above)."""
    return alicloud.cs.NodePoolManagementArgs(
        enable=True,
        auto_repair=True,
        auto_repair_policy=alicloud.cs.NodePoolManagementAutoRepairPolicyArgs(restart_node=AUTO_REPAIR_RESTARTS_NODE),
        auto_upgrade=False,
        auto_vul_fix=False,
        max_unavailable=REPAIR_MAX_UNAVAILABLE,
    )


@dataclass(frozen=True)
class KubernetesClusterArgs:
    """An ACK managed cluster and its two node pools."""

    version: str
    cluster_spec: str
    vswitch_ids: Sequence[pulumi.Input[str]]
    security_group_id: pulumi.Input[str]
    service_cidr: str
    public_api_endpoint: bool
    audit_log_project: str | None
    addons: tuple[tuple[str, str, str], ...]  # (name, version, config JSON); "" version = ACK's default
    image_type: str
    system_instance_type: str
    system_nodes: int
    instance_type: str
    min_nodes: int
    max_nodes: int
    scale_in_gpu_percent: float
    system_disk_gib: int
    system_disk_performance_level: str
    scratch_disk_gib: int
    scratch_performance_level: str
    nvidia_driver_version: str | None
    spot: bool
    bucket_policy_name: pulumi.Input[str] | None
    # How long the kubeconfig the stack reads stays valid (get_cluster_credential temporary_duration_minutes, 15–4320).
    kubeconfig_minutes: int
    kms_key_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    # Capacity held for the GPU pool in its zone before any node starts; the pool's nodes start from it (Target mode).
    hold: CapacityHold | None = None
    zone_id: str = ""


class KubernetesCluster(pulumi.ComponentResource):
    """ACK Pro with a CPU system pool and a GPU pool the cluster autoscaler sizes between min and max.

    The cluster joins the training network (its vSwitch, its security group, its NAT for egress), so NCCL and the
    shared file system see pods' nodes exactly as they see ECS nodes. The GPU pool runs as its own RAM role that
    holds only the bucket's one-bucket policy; it is labelled and tainted so only GPU jobs land on it.
    """

    def __init__(self, name: str, args: KubernetesClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:kubernetes:KubernetesCluster", name, None, opts)
        self.tags = with_tags(args.tags, "kubernetes")
        self.cluster = self._cluster(name, args)
        # ACK requires a custom worker role to be a normal service role trusted by ECS, not named KubernetesMasterRole-*
        # or KubernetesWorkerRole* (pulumi-alicloud 4.0.0 cs.NodePool ram_role_name); node_role trusts ecs.aliyuncs.com
        # only. The system pool's role holds nothing: its pods (CoreDNS, the operator, the NAS CSI mounts) call no cloud
        # API, and ACK's shared worker role would give them policies the plan does not control (guardrail AIT035).
        self.system_role = node_role(self, f"{name}-system")
        self.system_pool = self._system_pool(name, args)
        self.gpu_role = node_role(self, f"{name}-gpu")
        self.bucket_attachment = (
            attach_bucket_policy(self, f"{name}-gpu", self.gpu_role, args.bucket_policy_name)
            if args.bucket_policy_name is not None
            else None
        )
        self.reservation = (
            hold_capacity(self, f"{name}-gpu", args.hold, args.instance_type, args.zone_id, self.tags)
            if args.hold is not None
            else None
        )
        self.gpu_pool = self._gpu_pool(name, args)
        # The cluster autoscaler's settings (one per cluster): scale in a GPU node below the profile's GPU use, and
        # scale the GPU pool up from zero nodes when a job is pending (ACK's defaults are 0.5 and true).
        self.autoscaler = alicloud.cs.AutoscalingConfig(
            f"{name}-autoscaler",
            cluster_id=self.cluster.id,
            gpu_utilization_threshold=f"{args.scale_in_gpu_percent / 100:g}",
            scale_down_enabled=True,
            scale_up_from_zero=True,
            opts=child(self),
        )
        # What the volumes and the job engine must wait for: both pools (add-ons are installed with the cluster).
        self.ready: list[pulumi.Resource] = [self.system_pool, self.gpu_pool, self.autoscaler]
        credential = alicloud.cs.get_cluster_credential_output(
            cluster_id=self.cluster.id,
            temporary_duration_minutes=args.kubeconfig_minutes,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(credential.kube_config)
        outputs: dict[str, object] = {
            "cluster_id": self.cluster.id,
            "gpu_node_pool_id": self.gpu_pool.node_pool_id,
            "gpu_role_name": self.gpu_role.role_name,
        }
        if self.reservation is not None:
            outputs["reservation_id"] = self.reservation.id
        self.register_outputs(outputs)

    def _cluster(self, name: str, args: KubernetesClusterArgs) -> alicloud.cs.ManagedKubernetes:
        project = args.audit_log_project
        extra: dict[str, Any] = {}
        if args.kms_key_id:
            # Secrets encrypted at rest with the profile's customer-managed key (ACK Pro only).
            extra["encryption_provider_key"] = args.kms_key_id
        if project:
            extra["control_plane_log_project"] = project
        return alicloud.cs.ManagedKubernetes(
            f"{name}-cluster",
            name=f"{name}-cluster",
            cluster_spec=args.cluster_spec,
            version=args.version,
            vswitch_ids=list(args.vswitch_ids),
            # The training network's NAT gateway (with its SNAT entries) already serves egress.
            new_nat_gateway=False,
            # Nodes join the training network's security group: it already admits node-to-node traffic (NCCL) and
            # reaches the file system's mount target, so pods see the same network as ECS training nodes.
            security_group_id=args.security_group_id,
            # Terway (terway-eniip with NetworkPolicy, the catalog's network add-on) gives pods VPC addresses from these
            # vSwitches. The SDK recommends pod vSwitches apart from the nodes' (pod_vswitch_ids, 4.0.0); the training
            # network has one vSwitch per zone, and the job pods use the node's own address (hostNetwork), so the pods
            # that take one are the few cluster services (CoreDNS, the operator).
            pod_vswitch_ids=list(args.vswitch_ids),
            service_cidr=args.service_cidr,
            slb_internet_enabled=args.public_api_endpoint,
            audit_log_config=alicloud.cs.ManagedKubernetesAuditLogConfigArgs(enabled=True, sls_project_name=project),
            control_plane_log_components=list(CONTROL_PLANE_LOGS),
            control_plane_log_ttl=CONTROL_PLANE_LOG_TTL_DAYS,
            # Pods get RAM roles through their service accounts (RRSA), never node credentials they do not need.
            enable_rrsa=True,
            # Keep the CA out of the state file: kubeconfigs come from get_cluster_credential (SDK recommendation).
            skip_set_certificate_authority=True,
            # No deletion protection: the cluster holds no data (storage and bucket are separate and retained).
            deletion_protection=False,
            addons=[
                alicloud.cs.ManagedKubernetesAddonArgs(name=n, version=v or None, config=c or None)
                for n, v, c in args.addons
            ],
            tags=self.tags,
            opts=child(self),
            **extra,
        )

    def _node_args(self, args: KubernetesClusterArgs) -> dict[str, Any]:
        """What every node of both pools shares: the cluster, the training network, pay-as-you-go, IMDSv2, an
        encrypted ESSD system disk (the profile's KMS key when set) and auto repair (managed node pool)."""
        return dict(
            cluster_id=self.cluster.id,
            vswitch_ids=list(args.vswitch_ids),
            image_type=args.image_type,
            security_group_ids=[args.security_group_id],
            instance_charge_type="PostPaid",
            instance_metadata_options=alicloud.cs.NodePoolInstanceMetadataOptionsArgs(http_tokens="required"),
            system_disk_category="cloud_essd",
            system_disk_size=args.system_disk_gib,
            system_disk_performance_level=args.system_disk_performance_level,
            system_disk_encrypted=True,
            system_disk_kms_key=args.kms_key_id,
            management=auto_repair_management(),
            tags=self.tags,
        )

    def _system_pool(self, name: str, args: KubernetesClusterArgs) -> alicloud.cs.NodePool:
        key, value = SYSTEM_POOL_LABEL
        return alicloud.cs.NodePool(
            f"{name}-system-pool",
            node_pool_name=f"{name}-system",
            instance_types=[args.system_instance_type],
            desired_size=str(args.system_nodes),
            ram_role_name=self.system_role.role_name,
            labels=[alicloud.cs.NodePoolLabelArgs(key=key, value=value)],
            opts=child(self),
            **self._node_args(args),
        )

    def _gpu_pool(self, name: str, args: KubernetesClusterArgs) -> alicloud.cs.NodePool:
        key, value = GPU_POOL_LABEL
        labels = [alicloud.cs.NodePoolLabelArgs(key=key, value=value)]
        if args.nvidia_driver_version:
            # ACK reads this label when it installs the driver, so it applies to nodes added after it is set.
            labels.append(alicloud.cs.NodePoolLabelArgs(key=DRIVER_LABEL, value=args.nvidia_driver_version))
        taint_key, taint_value, effect = GPU_TAINT
        scratch = (
            [
                alicloud.cs.NodePoolDataDiskArgs(
                    category="cloud_essd",
                    size=args.scratch_disk_gib,
                    performance_level=args.scratch_performance_level,
                    encrypted="true",
                    kms_key_id=args.kms_key_id,
                    # ACK formats and mounts the disk itself (auto_format), where the ECS blueprints mount scratch.
                    auto_format="true",
                    file_system="ext4",
                    mount_target=SCRATCH_MOUNT_PATH,
                    name=SCRATCH_DISK_NAME,
                )
            ]
            if args.scratch_disk_gib
            else None
        )
        return alicloud.cs.NodePool(
            f"{name}-gpu-pool",
            node_pool_name=f"{name}-gpu",
            instance_types=[args.instance_type],
            # The cluster autoscaler adds nodes for pending GPU pods and removes idle ones, down to min_size.
            scaling_config=alicloud.cs.NodePoolScalingConfigArgs(
                enable=True, min_size=args.min_nodes, max_size=args.max_nodes, type="gpu"
            ),
            spot_strategy="SpotAsPriceGo" if args.spot else "NoSpot",
            ram_role_name=self.gpu_role.role_name,
            labels=labels,
            taints=[alicloud.cs.NodePoolTaintArgs(key=taint_key, value=taint_value, effect=effect)],
            data_disks=scratch,
            # GPU metrics (GpuUtilization) in CloudMonitor.
            install_cloud_monitor=True,
            # Every node the autoscaler adds starts from the capacity held for the pool, or does not start.
            private_pool_options=alicloud.cs.NodePoolPrivatePoolOptionsArgs(
                private_pool_options_match_criteria=TARGET, private_pool_options_id=self.reservation.id
            )
            if self.reservation is not None
            else None,
            opts=child(self, depends_on=[self.bucket_attachment] if self.bucket_attachment is not None else None),
            **self._node_args(args),
        )
