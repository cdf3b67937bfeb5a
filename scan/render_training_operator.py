r"""Render the Kubeflow training operator's standalone install (v1.9.0) for aitrain (a tool, not runtime).

Usage:
    python scan/render_training_operator.py TRAINING_OPERATOR_GIT_DIR \
        > blueprints/data/kubeflow/training-operator-v1.9.0/operator.yaml

Reads ``manifests/overlays/standalone`` of github.com/kubeflow/training-operator at tag v1.9.0 (``git show``) and
applies what that kustomization does, by hand (no kustomize on these machines): namespace ``kubeflow`` on the
namespaced objects and on the webhook's service reference (base/webhook/kustomizeconfig.yaml), the image tag
(``images: kubeflow/training-operator newTag``), the empty webhook-cert Secret (``secretGenerator``, no hash
suffix), base/webhook/patch.yaml (service name ``training-operator``, configuration name
``validator.training-operator.kubeflow.org``) and the webhook's ``control-plane`` label.

aitrain's one change: only the PyTorchJob scheme. The CRDs of the other five job kinds are 575 KB each; the stack
installs the PyTorchJob CRD alone (``kubeflow.org_pytorchjobs.yaml`` beside this file), so the operator is started
with ``--enable-scheme=pytorchjob`` (cmd/training-operator.v1/main.go) and the webhook validates pytorchjobs only.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import yaml

TAG = "v1.9.0"
NAMESPACE = "kubeflow"
IMAGE_TAG = "v1-5170a36"  # manifests/overlays/standalone/kustomization.yaml, images[0].newTag
BASE = "manifests/base"
FILES = (
    f"{BASE}/rbac/cluster-role-binding.yaml",
    f"{BASE}/rbac/role.yaml",
    f"{BASE}/rbac/service-account.yaml",
    f"{BASE}/webhook/manifests.yaml",
    f"{BASE}/service.yaml",
    f"{BASE}/deployment.yaml",
    "manifests/overlays/standalone/namespace.yaml",
)
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingWebhookConfiguration",
    "CustomResourceDefinition",
}


def show(repo: str, path: str) -> str:
    """One file of the repository at the tag."""
    return subprocess.run(
        ["git", "-C", repo, "show", f"{TAG}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def render(repo: str) -> list[dict[str, Any]]:
    """The standalone overlay's objects, transformed as kustomize would, PyTorchJob only."""
    objects = [doc for path in FILES for doc in yaml.safe_load_all(show(repo, path)) if doc]
    objects.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "training-operator-webhook-cert"}})
    for obj in objects:
        kind = obj["kind"]
        if kind not in CLUSTER_SCOPED:
            obj["metadata"]["namespace"] = NAMESPACE
        if kind == "ClusterRoleBinding":
            for subject in obj["subjects"]:
                subject["namespace"] = NAMESPACE
        if kind == "Deployment":
            container = obj["spec"]["template"]["spec"]["containers"][0]
            container["image"] = f"{container['image']}:{IMAGE_TAG}"
            container["args"] = ["--enable-scheme=pytorchjob"]
        if kind == "ValidatingWebhookConfiguration":
            obj["metadata"]["name"] = "validator.training-operator.kubeflow.org"
            obj["metadata"]["labels"] = {"control-plane": "kubeflow-training-operator"}
            obj["webhooks"] = [w for w in obj["webhooks"] if w["rules"][0]["resources"] == ["pytorchjobs"]]
            for webhook in obj["webhooks"]:
                webhook["clientConfig"]["service"].update(name="training-operator", namespace=NAMESPACE)
    return objects


def main() -> None:
    repo = sys.argv[1]
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", f"{TAG}^{{commit}}"], check=True, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"# Rendered by scan/render_training_operator.py from github.com/kubeflow/training-operator {TAG} ({commit}),"
    )
    print("# manifests/overlays/standalone, PyTorchJob scheme only. Do not edit by hand.")
    print(yaml.safe_dump_all(render(repo), sort_keys=True), end="")


if __name__ == "__main__":
    main()
