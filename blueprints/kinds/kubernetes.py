"""Kubernetes kinds: the objects aitrain puts into an ACK cluster (volumes, claims, namespaces, network policies,
the vendored engines: Kueue, Kubeflow Trainer with JobSet, the legacy training operator; the queues and the runtime)
and the other kinds its replacement data covers.

They run on the cluster's nodes, so most cost nothing of their own (the node pools are priced); the export refuses
them (``--cloud-only`` leaves them out); their replacing inputs are pulumi-kubernetes' forceNewProperties.
"""

from __future__ import annotations

from blueprints.catalog import CnyPrice
from blueprints.kinds.model import Costs, Free, Kind, Priced, Pricing, ReplacingInputs, Resource, Terraform

SERVICES = ("kubernetes",)
_IN_CLUSTER = Free("an object in the cluster costs nothing of its own: the node pools it runs on are priced")


def _service_cost(costs: Costs, r: Resource) -> None:
    """A LoadBalancer Service makes ACK buy a CLB instance, which the catalog has no price for (ClusterIP is free)."""
    if (r.inputs.get("spec") or {}).get("type") == "LoadBalancer":
        price = CnyPrice(None, "unknown", "the catalog's prices.csv has no CLB price for a LoadBalancer Service", None)
        costs.add(r, "CLB instance of a LoadBalancer Service", 1, "hour", price, "hourly")


def _claim_cost(costs: Costs, r: Resource) -> None:
    """A claim bound to a volume of the plan is free; one its storage class provisions buys a disk or file system."""
    spec = r.inputs.get("spec") or {}
    if spec.get("storageClassName") and not spec.get("volumeName"):
        requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "?")
        price = CnyPrice(
            None, "unknown", f"storage class {spec['storageClassName']} provisions it; not in the plan", None
        )
        costs.add(r, f"volume provisioned for the claim ({requested})", 1, "volume-month", price, "monthly")


def _object(kind: str, key_properties: tuple[str, ...], pricing: Pricing = _IN_CLUSTER) -> Kind:
    return Kind(
        token=f"kubernetes:{kind}",
        key_properties=key_properties,
        pricing=pricing,
        terraform=Terraform.KUBERNETES,
        replacing_inputs=ReplacingInputs.KUBERNETES_DIFF,
    )


_NAMED = ("metadata.namespace", "metadata.name")

KINDS = (
    _object("core/v1:Namespace", ("metadata.name",)),
    _object(
        "core/v1:PersistentVolume",
        (
            "metadata.name",
            "spec.capacity.storage",
            "spec.csi.driver",
            "spec.persistentVolumeReclaimPolicy",
            "spec.accessModes",
        ),
    ),
    _object(
        "core/v1:PersistentVolumeClaim",
        (*_NAMED, "spec.volumeName", "spec.resources.requests.storage", "spec.accessModes"),
        Priced(_claim_cost),
    ),
    _object("core/v1:Secret", (*_NAMED, "type")),
    _object("core/v1:ConfigMap", _NAMED),
    _object("core/v1:Service", (*_NAMED, "spec.type", "spec.ports"), Priced(_service_cost)),
    _object("core/v1:ServiceAccount", _NAMED),
    _object("apps/v1:Deployment", (*_NAMED, "spec.replicas")),
    _object("networking.k8s.io/v1:NetworkPolicy", (*_NAMED, "spec.policyTypes")),
    _object("rbac.authorization.k8s.io/v1:ClusterRole", ("metadata.name",)),
    _object("rbac.authorization.k8s.io/v1:ClusterRoleBinding", ("metadata.name", "roleRef.name", "subjects")),
    _object("rbac.authorization.k8s.io/v1:Role", _NAMED),
    _object("rbac.authorization.k8s.io/v1:RoleBinding", (*_NAMED, "roleRef.name", "subjects")),
    _object("apiextensions.k8s.io/v1:CustomResourceDefinition", ("spec.group", "spec.names.kind", "spec.scope")),
    _object("admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration", ("metadata.name",)),
    _object("admissionregistration.k8s.io/v1:MutatingWebhookConfiguration", ("metadata.name",)),
    _object("scheduling.k8s.io/v1:PriorityClass", ("metadata.name", "value", "preemptionPolicy")),
    _object("storage.k8s.io/v1:StorageClass", ("metadata.name", "provisioner", "reclaimPolicy", "volumeBindingMode")),
    _object("apiregistration.k8s.io/v1:APIService", ("metadata.name", "spec.service.name", "spec.service.namespace")),
    # Kueue's objects (kueue.x-k8s.io/v1beta2, its storage version in v0.19.2): the queues and what they admit.
    _object("kueue.x-k8s.io/v1beta2:ResourceFlavor", ("metadata.name", "spec.nodeLabels", "spec.nodeTaints")),
    _object("kueue.x-k8s.io/v1beta2:Cohort", ("metadata.name", "spec.resourceGroups")),
    _object("kueue.x-k8s.io/v1beta2:ClusterQueue", ("metadata.name", "spec.cohortName", "spec.resourceGroups")),
    _object("kueue.x-k8s.io/v1beta2:LocalQueue", (*_NAMED, "spec.clusterQueue")),
    _object("kueue.x-k8s.io/v1beta2:WorkloadPriorityClass", ("metadata.name", "value")),
    _object("kueue.x-k8s.io/v1beta2:Topology", ("metadata.name", "spec.levels")),
    # Kubeflow Trainer v2's runtime, which every TrainJob of the stack names.
    _object("trainer.kubeflow.org/v1alpha1:TrainingRuntime", (*_NAMED, "spec.mlPolicy")),
)
