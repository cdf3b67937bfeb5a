"""What the CLI tests that ask the cloud share: the environment with and without credentials, and the SDK reader
replaced by a recorded one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import pytest

from blueprints.preflight import aliyun

CREDS = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret", "AITRAIN_CATALOG_DIR": ""}
NO_CREDS = {
    "ALIBABA_CLOUD_ACCESS_KEY_ID": "",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "",
    "ALIBABA_CLOUD_ROLE_ARN": "",
    "ALIBABA_CLOUD_ECS_METADATA": "",
    "ALIBABA_CLOUD_CREDENTIALS_FILE": "",
    "ALIBABA_CLOUD_CREDENTIALS_URI": "",
    "ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true",
    "ALICLOUD_ACCESS_KEY": "",
    "ALICLOUD_SECRET_KEY": "",
    "ALICLOUD_SECURITY_TOKEN": "",
    "ALICLOUD_PROFILE": "",
}
"""Every credential source the chain reads, emptied (a developer's own never leaks into a test)."""

R = TypeVar("R")


def replay_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, reader: R) -> R:
    """The CLI's SDK reader replaced by ``reader`` (which lists the regions it was built for in ``readers_built``);
    the SDK clients are never built, and HOME is a scratch folder."""
    monkeypatch.setattr(aliyun, "sdk_client_classes", lambda: {})

    def build(region: str, **_: Any) -> R:
        reader.readers_built.append(region)  # type: ignore[attr-defined]
        return reader

    monkeypatch.setattr(aliyun, "SdkReader", build)
    monkeypatch.setenv("HOME", str(tmp_path))
    return reader
