"""The cloud-config of a CPU preprocessing node: mount the shared file system, point OSS tools at the bucket through
the node's role, nothing else (no GPU stack, no launcher, no host-registry entry: torchrun never counts it)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, fields

from blueprints.bootstrap import ENV_DIR, SHARED_MOUNT, USER_DATA_LIMIT_BYTES, UserDataTooLarge
from blueprints.core import userdata
from blueprints.core.objectstore import internal_endpoint

# Text a cloud-config line must not carry (line breaks and other control characters).
_CONTROL = tuple(chr(c) for c in [*range(0x20), 0x7F, 0x85, 0x2028, 0x2029])
PREPROCESS_ENV = f"{ENV_DIR}/preprocess.env"


@dataclass(frozen=True)
class PreprocessBoot:
    """What a CPU preprocessing node's boot needs: its cluster, the shared file system and the bucket."""

    cluster: str
    region: str
    storage_kind: str
    mount_source: str
    mount_options: str  # empty = not NFS (CPFS is mounted by its own client)
    nfs_package: str
    bucket: str
    role_name: str


def _check(boot: PreprocessBoot) -> None:
    for field in fields(boot):
        value = getattr(boot, field.name)
        if any(c in value for c in _CONTROL):
            raise ValueError(f"PreprocessBoot.{field.name}: {value!r} holds a control character; use one line of text")


def render_preprocess_user_data(boot: PreprocessBoot) -> str:
    """The node's ``#cloud-config`` text; raises ``UserDataTooLarge`` over the ECS limit."""
    _check(boot)
    q = json.dumps  # a JSON string is a YAML double-quoted scalar
    env = {
        "AITRAIN_CLUSTER": boot.cluster,
        "AITRAIN_NODE_ROLE": "preprocess",
        "AITRAIN_BUCKET": boot.bucket,
        "AITRAIN_OSS_ENDPOINT": internal_endpoint(boot.region),
        "AITRAIN_STORAGE_KIND": boot.storage_kind,
        "AITRAIN_STORAGE_SOURCE": boot.mount_source,
        "AITRAIN_MOUNT_PATH": SHARED_MOUNT,
    }
    oss = {
        "OSS_BUCKET": boot.bucket,
        "OSS_ENDPOINT": internal_endpoint(boot.region),
        "ALIBABA_CLOUD_ECS_METADATA": boot.role_name,
        "ALIBABA_CLOUD_IMDSV1_DISABLED": "true",
    }
    lines = [
        "#cloud-config",
        f"# aitrain CPU preprocessing node of {boot.cluster}: shared {boot.storage_kind} at {SHARED_MOUNT}, "
        f"bucket {boot.bucket} through role {boot.role_name}; no GPU.",
    ]
    if boot.mount_options:
        lines += ["package_update: true", "packages:", f"  - {q(boot.nfs_package)}"]
    lines += ["write_files:", f"  - path: {PREPROCESS_ENV}", '    permissions: "0644"', "    content: |"]
    lines += [f"      {key}={shlex.quote(value)}" for key, value in env.items()]
    lines += [f"  - path: {ENV_DIR}/oss.env", '    permissions: "0644"', "    content: |"]
    lines += [f"      {key}={shlex.quote(value)}" for key, value in oss.items()]
    lines += [
        "  - path: /etc/profile.d/aitrain.sh",
        '    permissions: "0644"',
        "    content: |",
        f"      set -a; . {shlex.quote(ENV_DIR)}/oss.env; set +a",
    ]
    if boot.mount_options:
        lines += [
            "mounts:",
            f'  - [{q(boot.mount_source)}, {q(SHARED_MOUNT)}, "nfs", {q(boot.mount_options)}, "0", "0"]',
        ]
    lines += ["runcmd:", f"  - mkdir -p {shlex.quote(SHARED_MOUNT)}"]
    lines.append(
        "  - mount -a -t nfs"
        if boot.mount_options
        else '  # CPFS is mounted by its POSIX client, which the CPFS console installs on the nodes; see README "CPFS".'
    )
    text = "\n".join(lines) + "\n"
    size = len(userdata.compressed(text))
    if size > USER_DATA_LIMIT_BYTES:
        raise UserDataTooLarge(
            f"The preprocessing node user data for cluster {boot.cluster!r} is {size} bytes gzip-compressed, over the "
            f"ECS limit of {USER_DATA_LIMIT_BYTES}; shorten the mount source ({len(boot.mount_source)} chars)"
        )
    return text
