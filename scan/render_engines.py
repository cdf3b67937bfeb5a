r"""Render the pinned Kueue and Kubeflow Trainer (with JobSet) installs for aitrain (a tool, not runtime).

Usage:
    python scan/render_engines.py KUEUE_GIT_DIR TRAINER_GIT_DIR JOBSET_GIT_DIR

Writes ``blueprints/data/kueue/kueue-<tag>/kueue.yaml`` and ``blueprints/data/kubeflow/trainer-<tag>/trainer.yaml``.
Each is ``kubectl kustomize`` (kustomize v5, built into kubectl) of the upstream tree at the pinned tag, taken with
``git archive``, doing exactly what each project's release does:

- Kueue: ``config/default`` with the controller image set as ``make prepare-manifests`` sets it for a release
  (Makefile: ``edit set image controller=$(IMAGE_TAG)``, ``IMAGE_TAG := $(IMAGE_REPO):$(GIT_TAG)``; releases are
  promoted to registry.k8s.io/kueue). This is the release's ``manifests.yaml``.
- Trainer: ``manifests/overlays/manager`` (the install the Trainer docs give), whose ``third-party/jobset`` pulls
  JobSet's release ``manifests.yaml`` by URL. No network here, so that one resource is pointed at JobSet's
  ``config/default`` at the same tag, which is what JobSet's release manifests are built from; the overlay's own
  image rename, namespace and Namespace-removal patch then apply as upstream.

Nothing else is changed: what aitrain configures (Kueue's waitForPodsReady, its integrations) is done by the stack
on the ConfigMap, in the plan, where a reviewer sees it.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

KUEUE_TAG = "v0.19.2"
KUEUE_IMAGE = f"registry.k8s.io/kueue/kueue:{KUEUE_TAG}"
TRAINER_TAG = "v2.3.0"
JOBSET_TAG = "v0.12.0"  # manifests/third-party/jobset/kustomization.yaml of Trainer v2.3.0
JOBSET_RELEASE_URL = f"https://github.com/kubernetes-sigs/jobset/releases/download/{JOBSET_TAG}/manifests.yaml"
DATA = Path(__file__).resolve().parents[1] / "blueprints" / "data"


def unpack(repo: str, tag: str, path: str, into: Path) -> None:
    """``path`` of ``repo`` at ``tag`` under ``into``."""
    archive = subprocess.run(["git", "-C", repo, "archive", tag, path], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def kustomize(directory: Path) -> str:
    """``kubectl kustomize`` of one directory (local files only)."""
    return subprocess.run(
        ["kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(directory)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def render_kueue(repo: str, work: Path) -> str:
    """Kueue's release install."""
    unpack(repo, KUEUE_TAG, "config", work)
    manager = work / "config" / "components" / "manager"
    kustomization = manager / "kustomization.yaml"
    text = kustomization.read_text()
    # `kustomize edit set image controller=<image>` writes this images entry.
    name, _, tag = KUEUE_IMAGE.rpartition(":")
    kustomization.write_text(text + f"images:\n- name: controller\n  newName: {name}\n  newTag: {tag}\n")
    return kustomize(work / "config" / "default")


def render_trainer(trainer_repo: str, jobset_repo: str, work: Path) -> str:
    """Trainer's manager overlay with JobSet's release install."""
    unpack(trainer_repo, TRAINER_TAG, "manifests", work / "trainer")
    unpack(jobset_repo, JOBSET_TAG, "config", work / "jobset")
    third_party = work / "trainer" / "manifests" / "third-party" / "jobset" / "kustomization.yaml"
    text = third_party.read_text()
    if JOBSET_RELEASE_URL not in text:
        raise SystemExit(f"{third_party}: expected the resource {JOBSET_RELEASE_URL}")
    third_party.write_text(text.replace(JOBSET_RELEASE_URL, "../../../../jobset/config/default"))
    return kustomize(work / "trainer" / "manifests" / "overlays" / "manager")


def main(kueue_repo: str, trainer_repo: str, jobset_repo: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kueue = render_kueue(kueue_repo, Path(tmp) / "kueue")
        trainer = render_trainer(trainer_repo, jobset_repo, Path(tmp) / "trainer")
    out = DATA / "kueue" / f"kueue-{KUEUE_TAG}" / "kueue.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(kueue)
    out = DATA / "kubeflow" / f"trainer-{TRAINER_TAG}" / "trainer.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(trainer)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
