"""What a kubernetes-pool stack puts inside its cluster: the jobs' namespace, the shared file system and the bucket as
static volumes, and the job engine (Kubeflow Trainer v2 with JobSet and the stack's TrainingRuntime, or the legacy
Kubeflow training operator), all through the cluster's own kubeconfig."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

import pulumi
import pulumi_kubernetes as k8s
import yaml

from blueprints.catalog.engines import (
    JOBSET_DEPLOYMENT,
    JOBSET_IMAGE,
    LEGACY_ENGINE,
    TRAINER_BUNDLE,
    TRAINER_DEPLOYMENT,
    TRAINER_ENGINE,
    TRAINER_IMAGE,
    TRAINER_VERSION,
    TRAINING_OPERATOR_VERSION,
)
from blueprints.components.base import child
from blueprints.components.errors import ResourceError
from blueprints.components.vendored import KubernetesObject, bundle, install_bundle, with_container_image
from blueprints.launch.trainjob import RUNTIME_NAME, torch_runtime

# Vendored from github.com/kubeflow/training-operator v1.9.0: the PyTorchJob CRD as released (PYTORCHJOB_CRD.md) and
# the standalone install rendered by scan/render_training_operator.py (PyTorchJob scheme only; see its header).
OPERATOR_DIR = (
    Path(__file__).resolve().parents[1] / "data" / "kubeflow" / f"training-operator-{TRAINING_OPERATOR_VERSION}"
)
OPERATOR_FILES = ("kubeflow.org_pytorchjobs.yaml", "operator.yaml")
OPERATOR_IMAGE = "kubeflow/training-operator:v1-5170a36"  # manifests/overlays/standalone/kustomization.yaml of v1.9.0

# Alibaba Cloud's NAS CSI driver: a static volume names the mount target as ``server`` and the export as ``path``,
# ``vers: "3"``, and ``volumeHandle`` equals the PV's name (kubernetes-sigs/alibaba-cloud-csi-driver@5318afe3
# examples/nas/pv.yaml); NFS options go in the PV's mountOptions, as ACK's NAS volume docs write them
# ("nolock,tcp,noresvport", "vers=3").
NAS_CSI_DRIVER = "nasplugin.csi.alibabacloud.com"
NAS_MOUNT_OPTIONS = ("nolock,tcp,noresvport", "vers=3")
NAS_NFS_VERSION = "3"
# Alibaba Cloud's OSS CSI driver, keyless: authType "sts" makes ossfs take the STS credentials of the RAM role named by
# roleName from the node's metadata service
# (kubernetes-sigs/alibaba-cloud-csi-driver@8aacf9009bf92ff786b07ece73cc3a4d1e600ed5 pkg/oss/utils.go reads
# authType/roleName, pkg/mounter/fuse_pod_manager/oss/ossfs/manager.go requires roleName on a node for "sts"; ACK "Mount
# a statically provisioned OSS volume", method 3, shows authType "sts"). No AccessKey, no Secret. roleName is the bare
# role name: the driver's note (pkg/oss/utils.go, AuthTypeSTS) says the metadata-URL form cannot use IMDSv2, which the
# GPU pool enforces (http_tokens required).
OSS_CSI_DRIVER = "ossplugin.csi.alibabacloud.com"
# The CPFS for Lingjun CSI driver: a static volume's volumeHandle is the file system's id, and its attributes name the
# VSC and VPC mount targets; Lingjun nodes mount over VSC, others over the VPC
# (kubernetes-sigs/alibaba-cloud-csi-driver@8dbbf62866b69f632f89f24b23924614b16cc4ce docs/bmcpfs-helm-readme.md).
BMCPFS_CSI_DRIVER = "bmcpfsplugin.csi.alibabacloud.com"
OSS_AUTH_TYPE = "sts"
# allow_other: containers that do not run as root read the mount too; max_stat_cache_size=0: other writers' objects are
# seen at once (both from the ACK example's otherOpts).
OSS_OTHER_OPTS = "-o max_stat_cache_size=0 -o allow_other"

# The jobs' namespace is default-deny (Terway enforces NetworkPolicy; the catalog's terway-eniip add-on turns it on).
# What the job pods still need: each other (rendezvous, NCCL, the operator's headless services, all in the namespace)
# and the cluster DNS (CoreDNS in kube-system, port 53). The volumes need no pod traffic: the CSI drivers mount NAS and
# OSS on the node. NetworkPolicy does not govern hostNetwork pods (the eRDMA jobs): they use the node's network and
# its security group.
DNS_PORTS = (("UDP", 53), ("TCP", 53))
NAMESPACE_LABEL = "kubernetes.io/metadata.name"  # set by Kubernetes on every namespace (1.22+)


def network_policies(namespace: str) -> dict[str, dict[str, Any]]:
    """The namespace's NetworkPolicy specs by name: deny everything, then admit the namespace itself and DNS."""
    same_namespace: list[dict[str, Any]] = [{"pod_selector": {}}]
    dns = {
        "to": [{"namespace_selector": {"match_labels": {NAMESPACE_LABEL: "kube-system"}}}],
        "ports": [{"protocol": proto, "port": port} for proto, port in DNS_PORTS],
    }
    return {
        "default-deny": {"pod_selector": {}, "policy_types": ["Ingress", "Egress"]},
        "allow-namespace-and-dns": {
            "pod_selector": {},
            "policy_types": ["Ingress", "Egress"],
            "ingress": [{"from": same_namespace}],
            "egress": [{"to": same_namespace}, dns],
        },
    }


@dataclass(frozen=True)
class KubernetesWorkloadsArgs:
    """What the cluster needs inside it: names, the kubeconfig, the file system to expose and the job engine."""

    name: str
    region: str
    namespace: str
    kubeconfig: pulumi.Input[str]
    storage_kind: str
    file_system_id: pulumi.Input[str]
    mount_source: pulumi.Input[str]
    capacity_gib: int
    operator_image: str = OPERATOR_IMAGE
    depends_on: Sequence[pulumi.Resource] = ()
    # The job engine: Kubeflow Trainer v2 (with JobSet and the stack's TrainingRuntime) or the legacy operator.
    job_engine: str = TRAINER_ENGINE
    trainer_image: str = TRAINER_IMAGE
    jobset_image: str = JOBSET_IMAGE
    # What the TrainingRuntime gives every pod: GPUs per node (torchrun's processes), the fabric (eRDMA: host network
    # and NCCL's settings), and the GPU pool's label and taint.
    gpus_per_node: int = 1
    fabric: str = "tcp"
    node_selector: Mapping[str, str] = field(default_factory=dict)
    gpu_taint: Mapping[str, str] = field(default_factory=dict)
    # An RDMA device plugin's resource every pod asks for one of (Lingjun nodes: rdma/hca); None: none.
    rdma_device: str | None = None
    # An existing CPFS for Lingjun file system as a third volume: (id, VPC mount target, VSC mount target, GiB).
    cpfs: tuple[str, str, str, int] | None = None
    # The bucket as a second volume, mounted with the GPU nodes' RAM role (which holds the one-bucket policy); all
    # three or none (then no bucket volume and ``bucket_claim`` is None).
    bucket: pulumi.Input[str] | None = None
    bucket_endpoint: pulumi.Input[str] | None = None
    node_role_name: pulumi.Input[str] | None = None


def trainer_objects() -> tuple[dict[str, Any], ...]:
    """The vendored Kubeflow Trainer install with its JobSet controller (CRDs, RBAC, webhooks, controllers)."""
    return bundle(TRAINER_BUNDLE)


@lru_cache(maxsize=1)
def operator_objects() -> tuple[dict[str, Any], ...]:
    """The vendored training-operator objects (CRD first), parsed once per process (the CRD alone is 600 KB)."""
    docs: list[dict[str, Any]] = []
    for name in OPERATOR_FILES:
        docs.extend(
            d for d in yaml.load_all((OPERATOR_DIR / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) if d
        )
    return tuple(docs)


def oss_volume_attributes(bucket: str, endpoint: str, role_name: str) -> dict[str, str]:
    """The OSS CSI driver's static-volume attributes for the whole bucket, keyless through the node's RAM role.

    The endpoint gets an explicit ``https://``: the driver gives a bare ``*-internal.aliyuncs.com`` endpoint ``http://``
    (pkg/oss/utils.go setTransmissionProtocol), which the bucket's HTTPS-only policy denies. Internal endpoints take
    HTTPS (the ossfs 2.0 guide mounts ``https://oss-cn-hangzhou-internal.aliyuncs.com``).
    """
    url = endpoint if endpoint.startswith(("https://", "http://")) else f"https://{endpoint}"
    return {
        "bucket": bucket,
        "url": url,
        "path": "/",
        "authType": OSS_AUTH_TYPE,
        "roleName": role_name,
        "otherOpts": OSS_OTHER_OPTS,
    }


def nas_volume_attributes(mount_source: str) -> dict[str, str]:
    """``<mount target domain>:<export path>`` → the NAS CSI driver's static-volume attributes."""
    server, _, path = mount_source.partition(":")
    return {"server": server, "path": path or "/", "vers": NAS_NFS_VERSION}


class KubernetesWorkloads(pulumi.ComponentResource):
    """The jobs' namespace, the shared file system as a PersistentVolume and claim, and the job engine.

    Every object goes through a Kubernetes provider made from the cluster's kubeconfig, never the ambient one. The
    volume is static and keeps its data (reclaim policy Retain; the file system itself is protected and retained by
    SharedStorage), and its objects are retained on delete: removing the cluster or this stack never needs the
    cluster to answer and never touches data.
    """

    def __init__(self, name: str, args: KubernetesWorkloadsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:kubernetes:KubernetesWorkloads", name, None, opts)
        if args.storage_kind not in ("nas", "extreme_nas"):
            raise ResourceError(
                f"storage.kind {args.storage_kind!r} has no static-volume "
                "recipe for ACK here; allowed: nas, extreme_nas",
                self,
            )
        bucket_parts = (args.bucket, args.bucket_endpoint, args.node_role_name)
        if any(part is None for part in bucket_parts) and any(part is not None for part in bucket_parts):
            raise ResourceError(
                "bucket, bucket_endpoint and node_role_name come together "
                "(the bucket volume needs all three) or not at all",
                self,
            )
        # delete_unreachable: once the cluster is gone its objects are gone too, so a destroy or a cluster replacement
        # drops them from the state instead of failing on an API server that no longer answers.
        self.provider = k8s.Provider(
            f"{name}-kubeconfig", kubeconfig=args.kubeconfig, delete_unreachable=True, opts=child(self)
        )
        on_cluster = child(self, provider=self.provider, depends_on=list(args.depends_on))
        labels = {"app.kubernetes.io/managed-by": "aitrain", "aitrain.io/profile": args.name}
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata={"name": args.namespace, "labels": labels}, opts=on_cluster
        )
        in_namespace = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[namespace]))
        self.network_policies = [
            k8s.networking.v1.NetworkPolicy(
                f"{name}-netpol-{policy}",
                metadata={"name": policy, "namespace": args.namespace, "labels": labels},
                spec=cast(Any, spec),
                opts=in_namespace,
            )
            for policy, spec in network_policies(args.namespace).items()
        ]

        self.shared_claim = self._static_volume(
            name,
            "shared",
            args,
            labels,
            namespace,
            csi={
                "driver": NAS_CSI_DRIVER,
                "volume_attributes": pulumi.Output.from_input(args.mount_source).apply(nas_volume_attributes),
            },
            mount_options=NAS_MOUNT_OPTIONS,
        )
        self.bucket_claim = (
            self._static_volume(
                name,
                "data",
                args,
                labels,
                namespace,
                csi={
                    "driver": OSS_CSI_DRIVER,
                    "volume_attributes": pulumi.Output.all(
                        args.bucket, args.bucket_endpoint, args.node_role_name
                    ).apply(lambda parts: oss_volume_attributes(*parts)),
                },
            )
            if args.bucket is not None
            else None
        )
        self.cpfs_claim = (
            self._static_volume(
                name,
                "cpfs",
                args,
                labels,
                namespace,
                csi={
                    "driver": BMCPFS_CSI_DRIVER,
                    "volume_attributes": {"vpcMountTarget": args.cpfs[1], "vscMountTarget": args.cpfs[2]},
                },
                volume_handle=args.cpfs[0],
                size_gib=args.cpfs[3],
            )
            if args.cpfs is not None
            else None
        )
        self.namespace = args.namespace
        self.namespace_resource = namespace
        if args.job_engine == LEGACY_ENGINE:
            self.engine_version = TRAINING_OPERATOR_VERSION
            self.runtime_name: str | None = None
            self._training_operator(name, args, on_cluster)
        else:
            self.engine_version = TRAINER_VERSION
            self.runtime_name = RUNTIME_NAME
            self._trainer(name, args, on_cluster, namespace)
        self.register_outputs(
            {
                "shared_claim": self.shared_claim,
                "bucket_claim": self.bucket_claim,
                **({"cpfs_claim": self.cpfs_claim} if self.cpfs_claim is not None else {}),
                "namespace": self.namespace,
                "job_engine_version": self.engine_version,
                "training_runtime": self.runtime_name,
            }
        )

    def _static_volume(
        self,
        name: str,
        use: str,
        args: KubernetesWorkloadsArgs,
        labels: dict[str, str],
        namespace: k8s.core.v1.Namespace,
        *,
        csi: dict[str, Any],
        mount_options: Sequence[str] = (),
        volume_handle: str | None = None,
        size_gib: int | None = None,
    ) -> str:
        """A static PersistentVolume ``<profile>-<use>`` through ``csi``
        and its claim bound to it by name; returns the claim's name.

        Both keep the data (reclaim policy Retain) and are retained on delete: a volume object is a pointer to data,
        so dropping it from the state is always safe. The size is the file system's: OSS has none, Kubernetes requires
        one, and a claim binds to a volume at least as large, so both say the same. ``volume_handle``: the driver's
        handle when it is not the PV's name (CPFS for Lingjun: the file system's id); ``size_gib``: when the volume is
        not the shared file system.
        """
        claim_name = f"{args.name}-{use}"
        size = f"{size_gib if size_gib is not None else args.capacity_gib}Gi"
        spec: Any = {  # a PersistentVolumeSpecArgsDict, built up
            "capacity": {"storage": size},
            "access_modes": ["ReadWriteMany"],
            "persistent_volume_reclaim_policy": "Retain",
            "storage_class_name": "",
            # The NAS and OSS CSI drivers require volumeHandle == the PV's name.
            "csi": {**csi, "volume_handle": volume_handle or claim_name},
        }
        if mount_options:
            spec["mount_options"] = list(mount_options)
        volume = k8s.core.v1.PersistentVolume(
            f"{name}-{use}-volume",
            metadata={"name": claim_name, "labels": {**labels, "aitrain.io/volume": use}},
            spec=spec,
            opts=child(self, provider=self.provider, depends_on=list(args.depends_on), retain_on_delete=True),
        )
        k8s.core.v1.PersistentVolumeClaim(
            f"{name}-{use}-claim",
            metadata={"name": claim_name, "namespace": args.namespace, "labels": labels},
            spec={
                "access_modes": ["ReadWriteMany"],
                "resources": {"requests": {"storage": size}},
                "storage_class_name": "",
                "volume_name": volume.metadata.apply(lambda m: m["name"]),
            },
            opts=child(self, provider=self.provider, depends_on=[namespace, *args.depends_on], retain_on_delete=True),
        )
        return claim_name

    def _training_operator(self, name: str, args: KubernetesWorkloadsArgs, opts: pulumi.ResourceOptions) -> None:
        """The vendored operator objects (the CRD, RBAC, webhook, service, deployment), one typed resource each."""
        install_bundle(
            f"{name}-operator",
            operator_objects(),
            opts,
            lambda obj: with_container_image(obj, "training-operator", args.operator_image),
        )

    def _trainer(
        self,
        name: str,
        args: KubernetesWorkloadsArgs,
        opts: pulumi.ResourceOptions,
        namespace: k8s.core.v1.Namespace,
    ) -> None:
        """Kubeflow Trainer and JobSet (vendored), then the jobs' TrainingRuntime once Trainer's webhook answers."""
        images = {TRAINER_DEPLOYMENT: args.trainer_image, JOBSET_DEPLOYMENT: args.jobset_image}

        def image(obj: dict[str, Any]) -> dict[str, Any]:
            deployment = obj["metadata"]["name"] if obj.get("kind") == "Deployment" else ""
            return with_container_image(obj, deployment, images[deployment]) if deployment in images else obj

        made = install_bundle(f"{name}-trainer", trainer_objects(), opts, image)
        # The runtime is validated by Trainer's webhook (served by its Deployment, which Pulumi waits to be ready)
        # and needs its CRD; the jobs' namespace holds it, next to the claims it mounts.
        after = [namespace, made[("Deployment", TRAINER_DEPLOYMENT)]]
        after += [r for (kind, _), r in made.items() if kind == "CustomResourceDefinition"]
        runtime = torch_runtime(
            name=RUNTIME_NAME,
            namespace=args.namespace,
            gpus_per_node=args.gpus_per_node,
            fabric=args.fabric,
            node_selector=dict(args.node_selector),
            taint=dict(args.gpu_taint),
            shared_claim=self.shared_claim,
            bucket_claim=self.bucket_claim,
            labels={"app.kubernetes.io/managed-by": "aitrain", "aitrain.io/profile": args.name},
            rdma_device=args.rdma_device,
            cpfs_claim=self.cpfs_claim,
        )
        KubernetesObject(
            f"{name}-runtime-{RUNTIME_NAME}",
            runtime,
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=after)),
        )
