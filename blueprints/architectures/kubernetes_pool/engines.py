"""The engines' settings in a kubernetes-pool profile: which job engine, and where each controller's image comes from
(default: the release's registry, by tag; nodes in mainland-China regions often cannot pull from registry.k8s.io or
ghcr.io, so give copies in a registry the cluster reaches, pinned by digest)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from blueprints.catalog.engines import (
    JOBSET_IMAGE,
    JOBSET_VERSION,
    KUEUE_IMAGE,
    KUEUE_VERSION,
    TRAINER_IMAGE,
    TRAINER_VERSION,
)
from blueprints.profile.strict import Strict

JobEngine = Literal["trainer-v2", "training-operator-v1"]

# [registry[:port]/]repository[:tag][@sha256:digest] (the OCI distribution reference grammar, simplified).
IMAGE_RE = re.compile(
    r"(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(?:@sha256:[a-f0-9]{64})?"
)


def check_image(value: str, example: str) -> str:
    """A container image reference, or a ValueError that shows the grammar and ``example``."""
    if not IMAGE_RE.fullmatch(value):
        raise ValueError(
            "must be a container image reference: [registry/]repository[:tag][@sha256:digest], lowercase "
            f"repository, no spaces (e.g. {example})"
        )
    return value


class EngineImages(Strict):
    """Where the cluster pulls each engine's controller from (default: the release's registry, by tag)."""

    kueue: str = Field(default=KUEUE_IMAGE, description=f"Kueue {KUEUE_VERSION}'s controller image.")
    trainer: str = Field(default=TRAINER_IMAGE, description=f"Kubeflow Trainer {TRAINER_VERSION}'s controller image.")
    jobset: str = Field(default=JOBSET_IMAGE, description=f"JobSet {JOBSET_VERSION}'s controller image.")

    @field_validator("kueue", "trainer", "jobset")
    @classmethod
    def _image(cls, value: str) -> str:
        return check_image(value, "registry.cn-shanghai.aliyuncs.com/team/kueue@sha256:<64 hex>")
