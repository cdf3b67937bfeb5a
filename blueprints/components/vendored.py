"""Vendored Kubernetes installs (the training operator, Kueue, Kubeflow Trainer with JobSet) as one typed Pulumi
resource per object, and the objects of a CRD's kind (Kueue's queues, Trainer's runtimes) as plain manifests.

Each bundle is a file rendered from a pinned upstream release (``blueprints/data/<project>/<project>-<tag>/``, with
its SOURCE.md); the stack installs it object by object so the plan lists every object and a reviewer sees each one.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

import pulumi
import pulumi_kubernetes as k8s
import yaml

DATA = Path(__file__).resolve().parents[1] / "data"

# Every kind a vendored install contains, (apiVersion, kind) → its pulumi_kubernetes resource. A bundle with a kind
# not here is refused when it is installed (KeyError names it), never skipped.
VENDORED_KINDS: dict[tuple[str, str], Any] = {
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): k8s.apiextensions.v1.CustomResourceDefinition,
    ("apiregistration.k8s.io/v1", "APIService"): k8s.apiregistration.v1.APIService,
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "Role"): k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
    ): k8s.admissionregistration.v1.ValidatingWebhookConfiguration,
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
    ): k8s.admissionregistration.v1.MutatingWebhookConfiguration,
}

# Fields each controller writes into its own objects once it runs (its webhook certificate, the CA bundle it injects
# into its webhooks, its aggregated API and its CRDs' conversion webhooks): Pulumi must not take them back on the next
# `pulumi up`. The CRD path applies only to a CRD with a conversion webhook (Kueue's cert controller fills it).
CONTROLLER_OWNED_FIELDS = {
    "Secret": ["data"],
    "ValidatingWebhookConfiguration": ["webhooks"],
    "MutatingWebhookConfiguration": ["webhooks"],
    "APIService": ["spec.caBundle"],
}
CONVERSION_CA_BUNDLE = "spec.conversion.webhook.clientConfig.caBundle"


@lru_cache(maxsize=None)
def bundle(relative: str) -> tuple[dict[str, Any], ...]:
    """The objects of one vendored file under ``blueprints/data``, parsed once per process (they run to megabytes)."""
    text = (DATA / relative).read_text(encoding="utf-8")
    return tuple(d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d)


def owned_fields(obj: Mapping[str, Any]) -> list[str] | None:
    """The fields of ``obj`` its controller writes (see CONTROLLER_OWNED_FIELDS), or None."""
    kind = obj["kind"]
    if kind == "CustomResourceDefinition":
        webhook = ((obj.get("spec") or {}).get("conversion") or {}).get("strategy") == "Webhook"
        return [CONVERSION_CA_BUNDLE] if webhook else None
    return CONTROLLER_OWNED_FIELDS.get(kind)


def snake(key: str) -> str:
    """A manifest's top-level key as the resource argument (``roleRef`` → ``role_ref``)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def install_bundle(
    prefix: str,
    objects: tuple[dict[str, Any], ...],
    opts: pulumi.ResourceOptions,
    transform: Callable[[dict[str, Any]], dict[str, Any]] = lambda obj: obj,
) -> dict[tuple[str, str], pulumi.CustomResource]:
    """One typed resource per object, named ``<prefix>-<kind>-<name>``; returns them by (kind, name).

    Deleting a CRD deletes every object of its kind: removing or replacing an engine must never delete the jobs (or
    queues) that are running, so CRDs are left in the cluster.
    """
    made: dict[tuple[str, str], pulumi.CustomResource] = {}
    for original in objects:
        obj = transform(original)
        kind, meta = obj["kind"], obj["metadata"]
        resource_type = VENDORED_KINDS[(obj["apiVersion"], kind)]
        fields = {snake(key): value for key, value in obj.items() if key not in ("apiVersion", "kind")}
        extra = pulumi.ResourceOptions(
            ignore_changes=owned_fields(obj), retain_on_delete=kind == "CustomResourceDefinition" or None
        )
        made[(kind, meta["name"])] = resource_type(
            f"{prefix}-{kind.lower()}-{meta['name']}", opts=pulumi.ResourceOptions.merge(opts, extra), **fields
        )
    return made


def with_container_image(obj: dict[str, Any], deployment: str, image: str) -> dict[str, Any]:
    """The Deployment named ``deployment`` with ``image`` in its containers (a mirror the cluster can pull from);
    every other object as is."""
    if obj.get("kind") != "Deployment" or obj["metadata"]["name"] != deployment:
        return obj
    template = obj["spec"]["template"]
    containers = [{**c, "image": image} for c in template["spec"]["containers"]]
    return {
        **obj,
        "spec": {**obj["spec"], "template": {**template, "spec": {**template["spec"], "containers": containers}}},
    }


def with_pod_annotation(obj: dict[str, Any], deployment: str, key: str, value: str) -> dict[str, Any]:
    """The Deployment named ``deployment`` with ``key: value`` on its pod template; every other object as is."""
    if obj.get("kind") != "Deployment" or obj["metadata"]["name"] != deployment:
        return obj
    template = obj["spec"]["template"]
    metadata = template.get("metadata") or {}
    annotations = {**(metadata.get("annotations") or {}), key: value}
    template = {**template, "metadata": {**metadata, "annotations": annotations}}
    return {**obj, "spec": {**obj["spec"], "template": template}}


class KubernetesObject(pulumi.CustomResource):
    """One object of a custom resource kind, from its whole manifest (``apiVersion``, ``kind``, ``metadata`` and any
    other top-level fields: a WorkloadPriorityClass has ``value`` beside no ``spec``).

    pulumi_kubernetes' ``apiextensions.CustomResource`` takes ``spec`` only in Python; the type token and the inputs
    here are what it registers (``kubernetes:<apiVersion>:<kind>``, the manifest's own keys), so the provider sees
    the same object.
    """

    def __init__(self, name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None):
        token = f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}"
        super().__init__(token, name, dict(manifest), opts)
