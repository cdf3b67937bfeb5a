"""Kueue in a kubernetes-pool cluster: the vendored install, configured for all-or-nothing admission, and the
stack's queues (flavor, cohort, a ClusterQueue and a LocalQueue per team, priorities), through the cluster's own
kubeconfig."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pulumi
import pulumi_kubernetes as k8s

from blueprints.catalog.engines import (
    KUEUE_BUNDLE,
    KUEUE_CONFIGMAP,
    KUEUE_DEPLOYMENT,
    KUEUE_VERSION,
)
from blueprints.components.base import child
from blueprints.components.vendored import (
    KubernetesObject,
    bundle,
    install_bundle,
    with_container_image,
    with_pod_annotation,
)

CONFIG_KEY = "controller_manager_config.yaml"
# Kueue reads its configuration when it starts: the configuration's hash on the controller's pod template makes a
# changed configuration roll the controller (a Deployment rolls when its pod template changes).
CONFIG_HASH_ANNOTATION = "aitrain.io/kueue-config-sha256"


@dataclass(frozen=True)
class JobQueueArgs:
    """The cluster's provider, Kueue's image and configuration, and the queue objects to create."""

    provider: k8s.Provider
    image: str
    # The vendored controller_manager_config.yaml → the stack's (waitForPodsReady, integrations, namespaces).
    configure: Callable[[str], str]
    # Kueue objects (ResourceFlavor, Cohort, ClusterQueues, LocalQueues, WorkloadPriorityClasses, Topology), whole
    # manifests, in the order they are made; each named by kind and name.
    queue_objects: Sequence[dict[str, Any]]
    depends_on: Sequence[pulumi.Resource] = ()


class JobQueue(pulumi.ComponentResource):
    """Kueue v0.19.2 and the stack's queues: every job in the jobs' namespace waits in its team's queue and is
    admitted whole (all its pods) or not at all.

    The queue objects wait for Kueue's CRDs and its controller (whose webhooks validate them); CRDs are kept on delete
    (deleting one deletes every object of its kind: queues and the workloads of running jobs).
    """

    def __init__(self, name: str, args: JobQueueArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:kubernetes:JobQueue", name, None, opts)
        on_cluster = child(self, provider=args.provider, depends_on=list(args.depends_on))

        objects = bundle(KUEUE_BUNDLE)
        (vendored,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == KUEUE_CONFIGMAP]
        config = args.configure(vendored["data"][CONFIG_KEY])

        def configured(obj: dict[str, Any]) -> dict[str, Any]:
            if obj is vendored:
                return {**obj, "data": {**obj["data"], CONFIG_KEY: config}}
            return with_pod_annotation(
                with_container_image(obj, KUEUE_DEPLOYMENT, args.image),
                KUEUE_DEPLOYMENT,
                CONFIG_HASH_ANNOTATION,
                hashlib.sha256(config.encode()).hexdigest(),
            )

        made = install_bundle(f"{name}-kueue", objects, on_cluster, configured)
        after = [made[("Deployment", KUEUE_DEPLOYMENT)]]
        after += [r for (kind, _), r in made.items() if kind == "CustomResourceDefinition"]
        queue_opts = pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=after))
        self.queue_objects = [
            KubernetesObject(f"{name}-{obj['kind'].lower()}-{obj['metadata']['name']}", obj, opts=queue_opts)
            for obj in args.queue_objects
        ]
        self.version = KUEUE_VERSION
        self.register_outputs({"kueue_version": self.version})
