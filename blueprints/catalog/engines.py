"""The engines a kubernetes-pool stack installs in its cluster, pinned: Kueue (queues and admission), Kubeflow Trainer
v2 with JobSet (the job engine), or the legacy Kubeflow training operator v1 for one more release.

Versions, files and images are the vendored releases' (``blueprints/data/kueue/kueue-<tag>/SOURCE.md``,
``blueprints/data/kubeflow/trainer-<tag>/SOURCE.md``, both rendered by ``scan/render_engines.py``).
"""

from __future__ import annotations

from typing import Final

KUEUE_VERSION = "v0.19.2"
KUEUE_BUNDLE = f"kueue/kueue-{KUEUE_VERSION}/kueue.yaml"
KUEUE_NAMESPACE = "kueue-system"
KUEUE_DEPLOYMENT = "kueue-controller-manager"
KUEUE_CONFIGMAP = "kueue-manager-config"
KUEUE_IMAGE = f"registry.k8s.io/kueue/kueue:{KUEUE_VERSION}"

TRAINER_VERSION = "v2.3.0"
TRAINER_BUNDLE = f"kubeflow/trainer-{TRAINER_VERSION}/trainer.yaml"
TRAINER_NAMESPACE = "kubeflow-system"
TRAINER_DEPLOYMENT = "kubeflow-trainer-controller-manager"
TRAINER_IMAGE = f"ghcr.io/kubeflow/trainer/trainer-controller-manager:{TRAINER_VERSION}"
JOBSET_VERSION = "v0.12.0"  # Trainer v2.3.0's manifests/third-party/jobset
JOBSET_DEPLOYMENT = "jobset-controller-manager"
JOBSET_IMAGE = f"registry.k8s.io/jobset/jobset:{JOBSET_VERSION}"

TRAINER_ENGINE: Final = "trainer-v2"
LEGACY_ENGINE: Final = "training-operator-v1"
# The legacy engine (kubernetes.job_engine training-operator-v1), vendored in kubeflow/training-operator-v1.9.0/.
TRAINING_OPERATOR_VERSION = "v1.9.0"
