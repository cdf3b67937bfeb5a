"""Builds the Kubernetes pool: the ACK cluster with its system and GPU node pools, then what runs inside it."""

from __future__ import annotations

from typing import Any, TypeVar

from blueprints.architectures.base.build import BlueprintBuilder, Foundation, login_node_outputs
from blueprints.architectures.base.repair import kubernetes_repair
from blueprints.architectures.kubernetes_pool.kueue import configure_manager, kueue_objects
from blueprints.architectures.kubernetes_pool.spec import KUBECONFIG_MINUTES, AckPoolSpec, KubernetesPoolSpec
from blueprints.catalog.metrics import PROMETHEUS_ADDON, load_metrics, metric_producers
from blueprints.components.errors import names_resource
from blueprints.components.job_queue import JobQueue, JobQueueArgs
from blueprints.components.kubernetes_cluster import (
    AUTO_REPAIR_RESTARTS_NODE,
    GPU_POOL_LABEL,
    GPU_TAINT,
    REPAIR_MAX_UNAVAILABLE,
    KubernetesCluster,
    KubernetesClusterArgs,
)
from blueprints.components.kubernetes_workloads import KubernetesWorkloads, KubernetesWorkloadsArgs
from blueprints.components.reservation import hold_for
from blueprints.core.layout import check_vswitch_room
from blueprints.profile.image import node_image_output, platform_image_output

# The spec an ACK builder builds (kubernetes-pool's, lingjun-cluster's).
AS = TypeVar("AS", bound=AckPoolSpec[Any])


class AckPoolBuilder(BlueprintBuilder[AS]):
    """An ACK cluster on the training network; the file system and the bucket become volumes its jobs mount."""

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The login node (optional), the ACK cluster with its system and GPU node pools, and the seam's outputs."""
        network, storage, bucket = foundation
        spec = self.spec
        p, compute, k8s = spec.profile, spec.compute, spec.settings
        # aitrain resolves an ECS image for the login node only: the GPU pool's nodes boot ACK's image of image_type.
        image = self.image() if p.access.login_node else None
        login = self.build_login_node(network, image.image_id) if image is not None else None
        # Every node of both pools (and the login node) must fit the compute zone's vSwitch, or the autoscaler fails
        # later; a network too small for them is the network's error.
        zones = set(network.compute_zone_ids) | ({p.storage_zone} if login is not None else set())
        with names_resource(network):
            check_vswitch_room(
                p.network.vpc_cidr, compute.max_nodes + k8s.system_nodes + (1 if login is not None else 0), len(zones)
            )
        scratch = compute.scratch(self.catalog)
        addons = spec.addons()
        cluster = self.make_cluster(
            KubernetesClusterArgs(
                version=spec.kubernetes_version,
                cluster_spec=k8s.cluster_spec,
                vswitch_ids=[network.vswitch_id(zone) for zone in network.compute_zone_ids],
                security_group_id=network.security_group_id,
                service_cidr=k8s.service_cidr,
                public_api_endpoint=k8s.public_api_endpoint,
                audit_log_project=k8s.audit_log_project,
                addons=addons,
                image_type=k8s.image_type,
                system_instance_type=k8s.system_instance_type,
                system_nodes=k8s.system_nodes,
                instance_type=self.instance.instance_type,
                min_nodes=compute.min_nodes,
                scale_in_gpu_percent=compute.scale_in_gpu_percent,
                max_nodes=compute.max_nodes,
                system_disk_gib=compute.system_disk_gib,
                system_disk_performance_level=compute.system_disk_performance_level,
                scratch_disk_gib=scratch.cloud_disk_gib,
                scratch_performance_level=scratch.performance_level,
                nvidia_driver_version=k8s.nvidia_driver_version,
                spot=p.cost.spot,
                bucket_policy_name=bucket.policy_name,
                kubeconfig_minutes=KUBECONFIG_MINUTES,
                kms_key_id=p.security.kms_key_id,
                tags=p.tags,
                hold=hold_for(p.capacity.reservation, compute.max_nodes),
                zone_id=network.compute_zone_ids[0],
            ),
        )
        outputs: dict[str, object] = {}
        if image is not None and login is not None:
            outputs["node_image"] = node_image_output(
                image.image_id,
                image.pinned,
                applies_to=f"the login node; the GPU pool's nodes boot ACK's {k8s.image_type} image (k8s.image_type)",
            )
        else:
            # No ECS image at all: ACK picks the image of image_type, and a newer one reaches only nodes the pool adds
            # (cs.NodePool in blueprints/data/image_changes.csv: no upgrade_policy, so running nodes keep theirs).
            outputs["node_image"] = platform_image_output(
                f"the GPU pool's nodes boot ACK's {k8s.image_type} image (k8s.image_type); a newer one reaches only "
                "nodes the pool adds (no upgrade_policy), so running nodes are never re-imaged"
            )
        outputs.update(login_node_outputs(login))
        gpu_taint = self.gpu_taint()
        # Inside the cluster, through its own kubeconfig: the jobs' namespace, the file system and the bucket as static
        # volumes, and the job engine (Kubeflow Trainer with its runtime, or the legacy training operator); all after
        # both node pools exist (the controllers need a node to run on).
        workloads = KubernetesWorkloads(
            f"{p.name}-workloads",
            KubernetesWorkloadsArgs(
                name=p.name,
                region=p.region,
                namespace=k8s.namespace,
                kubeconfig=cluster.kubeconfig,
                storage_kind=p.storage.kind,
                file_system_id=storage.file_system_id,
                mount_source=storage.mount_source,
                capacity_gib=p.storage.capacity_gib,
                operator_image=k8s.operator_image,
                depends_on=cluster.ready,
                # The bucket as a volume, mounted keylessly with the
                # GPU pool's role (which holds the one-bucket policy).
                bucket=bucket.bucket,
                bucket_endpoint=bucket.internal_endpoint,
                node_role_name=cluster.gpu_role.role_name,
                job_engine=k8s.job_engine,
                trainer_image=k8s.images.trainer,
                jobset_image=k8s.images.jobset,
                gpus_per_node=self.instance.gpu_count,
                fabric=spec.fabric_link,
                rdma_device=spec.rdma_device,
                cpfs=spec.cpfs_volume,
                node_selector=dict([GPU_POOL_LABEL]),
                gpu_taint=gpu_taint,
            ),
            opts=self.opts,
        )
        # Kueue, after the namespace it admits jobs from: a ClusterQueue and a LocalQueue per team of queues.teams.
        queue = JobQueue(
            f"{p.name}-queue",
            JobQueueArgs(
                provider=workloads.provider,
                image=k8s.images.kueue,
                configure=lambda text: configure_manager(text, jobs_namespace=k8s.namespace, queues=p.queues),
                queue_objects=kueue_objects(
                    profile_name=p.name,
                    namespace=k8s.namespace,
                    gpus_per_node=self.instance.gpu_count,
                    node_vcpus=self.instance.vcpus,
                    node_memory_gib=self.instance.memory_gib,
                    max_nodes=compute.max_nodes,
                    node_labels=dict([GPU_POOL_LABEL]),
                    node_taint=gpu_taint,
                    queues=p.queues,
                    topology=spec.topology.levels,
                ),
                depends_on=[*cluster.ready, workloads.namespace_resource],
            ),
            opts=self.opts,
        )
        outputs.update(
            cluster_id=cluster.cluster.id,
            gpu_node_pool_id=cluster.gpu_pool.node_pool_id,
            kubernetes_namespace=workloads.namespace,
            min_nodes=compute.min_nodes,
            max_nodes=compute.max_nodes,
            max_gpus=compute.max_nodes * self.instance.gpu_count,
            nodes_per_job=compute.job_nodes,
            gpus_per_node=self.instance.gpu_count,
            fabric=spec.fabric_link,
            **({"rdma_device": spec.rdma_device} if spec.rdma_device else {}),
            shared_volume_claim=workloads.shared_claim,
            **({"bucket_volume_claim": workloads.bucket_claim} if workloads.bucket_claim is not None else {}),
            **({"cpfs_volume_claim": workloads.cpfs_claim} if workloads.cpfs_claim is not None else {}),
            gpu_node_selector=dict([GPU_POOL_LABEL]),
            gpu_taint=gpu_taint,
            **spec.engine_outputs(workloads.runtime_name),
            kueue_version=queue.version,
            # GPU metrics come from ACK's GPU exporter once Managed Service for Prometheus is on; nothing here reads
            # them yet (the node pool scales on its own utilisation), so every row says read_by [].
            metric_producers=metric_producers(
                ("ack-gpu-exporter",) if any(name == PROMETHEUS_ADDON for name, _v, _c in addons) else (),
                {},
                load_metrics(),
            ),
            repair=kubernetes_repair(restart_node=AUTO_REPAIR_RESTARTS_NODE, max_unavailable=REPAIR_MAX_UNAVAILABLE),
        )
        return outputs

    def gpu_taint(self) -> dict[str, str]:
        """The GPU pool's taint, which every job pod tolerates (key, value, effect)."""
        return dict(zip(("key", "value", "effect"), GPU_TAINT, strict=True))

    def make_cluster(self, args: KubernetesClusterArgs) -> KubernetesCluster:
        """The ACK cluster with its system pool and its GPU pool (an autoscaled ECS node pool here)."""
        return KubernetesCluster(self.spec.compute_unit_name, args, opts=self.opts)


class KubernetesPoolBuilder(AckPoolBuilder[KubernetesPoolSpec]):
    """kubernetes-pool: the ACK cluster with an autoscaled ECS GPU pool."""


BUILDER = KubernetesPoolBuilder
