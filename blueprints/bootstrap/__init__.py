"""Node boot: the cloud-init user data and the ``aitrain-torchrun``
launcher every training node gets (pure: jinja2 only)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

import jinja2

from blueprints.bootstrap.fabric import erdma_mtus, nccl_env, nccl_table
from blueprints.bootstrap.monitoring import (
    CLOUDMONITOR_BINARY,
    CLOUDMONITOR_LOG,
    CLOUDMONITOR_PROCESS,
    CloudMonitorAgent,
)
from blueprints.core import userdata
from blueprints.core.objectstore import internal_endpoint

# ECS user data: "实例自定义数据需要Base64编码后传入，且编码前的自定义数据不能超过16 KB" (Base64-encoded, at most
# 16 KB before encoding): https://help.aliyun.com/knowledge_detail/49121.html (and the zh-TW copy
# https://www.alibabacloud.com/help/tc/doc-detail/49121.htm). Newer pages may allow 32 KB (UNVERIFIED); we hold the
# stricter documented figure, counted as the gzip-compressed bytes ECS receives before Base64 (cloud-init
# uncompresses gzip user data: blueprints.core.userdata).
USER_DATA_LIMIT_BYTES = 16 * 1024

LAUNCHER_PATH = "/usr/local/bin/aitrain-torchrun"
NODE_SCRIPT_PATH = "/usr/local/sbin/aitrain-node"
ENV_DIR = "/etc/aitrain"
STATUS_PATH = "/etc/aitrain/status"
SCRATCH_MOUNT = "/mnt/scratch"
SCRATCH_LABEL = "aitrain-scratch"
# Same value as blueprints.components.base.SHARED_MOUNT_PATH (duplicated: this package must not import pulumi;
# tests/test_bootstrap.py keeps the two equal).
SHARED_MOUNT = "/mnt/shared"
REGISTRY_DIR = f"{SHARED_MOUNT}/.aitrain/hosts"
RUNS_DIR = f"{SHARED_MOUNT}/.aitrain/runs"
# The job user. The file system's access rule squashes root (storage.nfs_squash root_squash: "All root users are treated
# as nobody users", AlibabaCloudDocs/nas "User Guide/Manage the data access permissions of a file
# system.md"), so root on a node can neither create nor chown anything on the share that nobody may
# not. Every write aitrain makes there (host registry, run directories, logs, status) and the job
# itself run as this user, created at boot with the same uid and gid on every node, so the share sees
# one owner everywhere. 2000: outside the distributions' system (<1000) and first-login (1000) ranges.
JOB_USER = "aitrain"
JOB_UID = 2000
JOB_HOME = "/home/aitrain"
RDZV_PORT = 29400
# torchrun --max-restarts when the launch names none. torchrun's own default is 0 (the first failure ends the run); each
# restart restarts every node's workers, which resume from their newest checkpoint. 3 absorbs the failures that pass
# (a node replaced or rebooted, a spot node reclaimed, one NCCL timeout) and still ends a run that fails the same way
# every time (a bug, a bad GPU) after 3 more tries instead of looping on it. `aitrain launch --max-restarts N`
# overrides it.
DEFAULT_MAX_RESTARTS = 3
# Where runs keep their checkpoints on the shared file system: <shared>/.aitrain/checkpoints/<run-id>
# (the job's AITRAIN_CHECKPOINT_DIR).
CHECKPOINTS_DIR = f"{SHARED_MOUNT}/.aitrain/checkpoints"
# Seconds torchrun waits for the workers after SIGTERM before SIGKILL
# (TORCH_ELASTIC_SHUTDOWN_TIMEOUT; torch's default is 30).
SHUTDOWN_SECONDS = 120
# Alibaba's IMDS address; security hardening mode (IMDSv2) takes a PUT to /latest/api/token with header
# X-aliyun-ecs-metadata-token-ttl-seconds, then header X-aliyun-ecs-metadata-token on every read:
# https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata/ (updated 2026-05-15).
METADATA_HOST = "100.100.100.200"
# The eRDMA MTU without jumbo frames (1400) and the NCCL environment per inter-node link (name, value, note shown
# above it): one table for the node boot (/etc/aitrain/nccl.env) and for Kubernetes pods (`aitrain launch
# --kubernetes`). Both come from blueprints/bootstrap/data (fabric_links.csv, nccl_env.csv), one source per value.
ERDMA_MTU_NO_JUMBO = erdma_mtus()[0]
NCCL_ENV: dict[str, tuple[tuple[str, str, str | None], ...]] = {
    link: tuple((v.name, v.value, v.note or None) for v in variables) for link, variables in nccl_table().items()
}


# Where nodes install PyTorch (a venv, so the image's system
# Python stays untouched); the launcher puts it first on PATH.
TORCH_VENV = "/opt/aitrain/venv"

_TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class GpuSoftware:
    """How the GPU stack reaches the node: an image that ships it, Alibaba's auto-install script, or none (CPU node)."""

    method: Literal["driver_image", "install_script", "none"]
    driver_version: str | None
    cuda_version: str | None
    cudnn_version: str | None
    fabric_manager: bool  # NVSwitch types (8 x A100/H-class SXM): nvidia-fabricmanager matching the driver
    # PyTorch for torchrun (its wheels bring the CUDA runtime and NCCL), from this pip index; None: none installed.
    pytorch_version: str | None = None
    pytorch_index_url: str | None = None
    # The torch wheels' sha256 (one per Python build) pip must match before it installs torch; empty: not checked.
    pytorch_sha256: tuple[str, ...] = ()
    # The OpenPGP fingerprint the CUDA repository keyring must
    # hold before it is installed (Fabric Manager's apt source).
    cuda_repo_key: str | None = None


@dataclass(frozen=True)
class Fabric:
    """The inter-node link NCCL uses: eRDMA, RoCE or plain TCP."""

    link: Literal["erdma", "roce", "tcp"]
    erdma_installer_version: str | None = None  # e.g. "1.5.7"; None = the installer's env_setup.sh default
    # eRDMA only: the nodes' jumbo-frame state, which the MTU must match (8500 on, 1400 off: fabric_links.csv). True
    # only when the instances really turn jumbo frames on (blueprints.bootstrap.fabric.erdma_mtu decides both).
    jumbo_frames: bool = False
    mtu_reason: str = ""  # why the MTU is what it is (the plan's fabric line and a comment in nccl.env)

    @property
    def mtu(self) -> int | None:
        """The MTU the boot sets on the ERI's netdev and eth0: eRDMA only (the other links keep the image's)."""
        if self.link != "erdma":
            return None
        without, jumbo = erdma_mtus()
        return jumbo if self.jumbo_frames else without


@dataclass(frozen=True)
class BootSpec:
    """Everything a node's boot needs to know about its cluster (filled by the blueprint from profile and catalog)."""

    cluster: str
    region: str
    gpus_per_node: int
    storage_kind: str
    mount_source: str
    mount_options: str  # empty = not NFS (CPFS is mounted by its own client)
    nfs_package: str
    gpu: GpuSoftware
    fabric: Fabric
    scratch_gib: int  # 0 = no scratch disk
    scratch_local_nvme: bool
    bucket: str
    role_name: str
    # The compute vSwitches' CIDRs: aitrain-torchrun refuses a host
    # (registry entry or --hosts) outside them. Empty: no check.
    registry_cidrs: tuple[str, ...] = ()
    # The CloudMonitor agent to install at boot (the *Agent metrics ESS alarms read); None: not installed.
    cloudmonitor: CloudMonitorAgent | None = None


class UserDataTooLarge(ValueError):
    """The rendered user data is over the ECS limit."""


# Boot-to-ready minutes per method, with where the figure comes from; None = no published figure (unknown).
BOOT_MINUTES: dict[str, tuple[int | None, int | None, str]] = {
    "install_script": (
        10,
        20,
        "Alibaba's auto-install doc (v3.1, AlibabaCloudDocs/ecs "
        "'Create an NVIDIA GPU-accelerated instance'): 10-20 min, "
        "then the instance reboots; the GPU is unusable meanwhile. v4.0 timing UNVERIFIED.",
    ),
    "driver_image": (
        None,
        None,
        "unknown: no Alibaba page states a boot-to-ready time for an image with the GPU stack; what is known is "
        "that the install script's 10-20 min and its reboot are skipped (an ordinary boot plus cloud-init)",
    ),
    "none": (None, None, "unknown: no published figure for an ordinary boot plus cloud-init without GPU software"),
}


def boot_minutes(gpu: GpuSoftware) -> tuple[int | None, int | None]:
    """(low, high) minutes from boot to ``state=ready`` (None: no published figure); ``BOOT_MINUTES`` says where
    each figure comes from."""
    low, high, _source = BOOT_MINUTES[gpu.method]
    return low, high


# Line breaks and control characters for sh and YAML (C0, DEL, C1 with NEL, LS, PS).
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# What a cloud-config block cannot carry verbatim (YAML folds \r, \x85, \u2028, \u2029 into \n, and refuses other
# control characters and lone surrogates); newline and tab are fine: quoted, they stay inside one shell word.
_NOT_IN_YAML = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _num(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"boot template: {value!r} is not a whole number")
    return str(value)


def shell_templates(folder: Path) -> jinja2.Environment:
    """A jinja2 environment for shell templates in ``folder``: strict, and the quoting filters below (the node boot's
    templates and the health gate's node script use the same ones)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # Every value that reaches a shell line goes through a filter: `q` (one shell word), `num` (an int, digits only),
    # `oneline` (comments: a line break would end the comment), `qy` (`q` inside a YAML block at 6 spaces: the
    # continuation lines stay in the block), `dq` (inside "...": backslash before \\ $ ` and "). tests/test_injection.py
    # renders each template with hostile values.
    env.filters["q"] = lambda value: shlex.quote(str(value))
    env.filters["qy"] = lambda value: shlex.quote(str(value)).replace("\n", "\n" + " " * 6)
    env.filters["num"] = _num
    env.filters["dq"] = lambda value: re.sub(r'([\\$`"])', r"\\\1", str(value))
    env.filters["oneline"] = lambda value: _LINE_BREAKS.sub("?", str(value))
    env.filters["indent_block"] = lambda text, n: "".join(
        " " * n + line if line.strip() else line for line in str(text).splitlines(True)
    )
    return env


_ENV = shell_templates(_TEMPLATES)


def _check_values(spec: BootSpec) -> None:
    """Literal fields hold their choices, ints are ints, and no text holds a character cloud-config cannot carry."""
    records: list[tuple[str, Any]] = [("BootSpec", spec), ("GpuSoftware", spec.gpu), ("Fabric", spec.fabric)]
    if spec.cloudmonitor is not None:
        records.append(("CloudMonitorAgent", spec.cloudmonitor))
    for where, record in records:
        for field in fields(record):
            value = getattr(record, field.name)
            if isinstance(value, str) and (bad := _NOT_IN_YAML.search(value)):
                raise ValueError(
                    f"{where}.{field.name}: {value!r} holds the character "
                    f"{bad.group()!r}, which cloud-config user data cannot "
                    "carry verbatim; use printable text"
                )
    if spec.gpu.method not in ("driver_image", "install_script", "none"):
        raise ValueError(
            f"GpuSoftware.method: {spec.gpu.method!r} is not allowed; use driver_image, install_script or none"
        )
    if spec.fabric.link not in NCCL_ENV:
        raise ValueError(f"Fabric.link: {spec.fabric.link!r} is not allowed; use {', '.join(NCCL_ENV)}")
    if spec.fabric.jumbo_frames is not False and spec.fabric.link != "erdma":
        raise ValueError(
            f"Fabric.jumbo_frames: {spec.fabric.jumbo_frames!r} is not allowed on {spec.fabric.link}; "
            "jumbo frames (MTU 8500) are set for eRDMA only"
        )
    for name, number in (
        ("gpus_per_node", spec.gpus_per_node),
        ("scratch_gib", spec.scratch_gib),
    ):
        if isinstance(number, bool) or not isinstance(number, int):
            raise ValueError(f"BootSpec.{name}: {number!r} is not allowed; use a whole number")


_FINGERPRINT_RE = re.compile(r"^[0-9A-F]{40}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


_AGENT_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)+$")
_AGENT_SCRIPT_RE = re.compile(r"^[A-Za-z0-9_.-]+\.sh$")


def _check(spec: BootSpec) -> None:
    _check_values(spec)
    agent = spec.cloudmonitor
    if agent is not None and not (_AGENT_VERSION_RE.match(agent.version) and _AGENT_SCRIPT_RE.match(agent.script)):
        raise ValueError(
            f"CloudMonitorAgent: version {agent.version!r} / script {agent.script!r} is not allowed; use a dotted "
            "version such as 3.4.7 and an installer file name such as agent_install_ecs-1.2.sh"
        )
    gpu = spec.gpu
    if gpu.cuda_repo_key is not None and not _FINGERPRINT_RE.match(gpu.cuda_repo_key):
        raise ValueError(
            f"GpuSoftware.cuda_repo_key: {gpu.cuda_repo_key!r} is not "
            "allowed; use a 40-digit upper-case hex OpenPGP fingerprint"
        )
    if gpu.fabric_manager and gpu.cuda_repo_key is None:
        raise ValueError(
            "GpuSoftware: fabric_manager needs cuda_repo_key (the "
            "fingerprint the CUDA repository keyring is checked against)"
        )
    if not isinstance(gpu.pytorch_sha256, tuple) or not all(
        isinstance(h, str) and _SHA256_RE.match(h) for h in gpu.pytorch_sha256
    ):
        raise ValueError(
            f"GpuSoftware.pytorch_sha256: {gpu.pytorch_sha256!r} is not "
            "allowed; use a tuple of 64-digit lower-case hex sha256 digests"
        )
    if gpu.pytorch_sha256 and not gpu.pytorch_version:
        raise ValueError("GpuSoftware: pytorch_sha256 needs pytorch_version (the wheels it checks)")
    if spec.gpus_per_node < 1:
        raise ValueError(
            f"BootSpec.gpus_per_node: {spec.gpus_per_node} is not allowed; use 1 or more (torchrun --nproc-per-node)"
        )
    if spec.scratch_gib < 0:
        raise ValueError(
            f"BootSpec.scratch_gib: {spec.scratch_gib} is not allowed; use 0 (no scratch) or a size in GiB"
        )
    if bool(spec.gpu.pytorch_version) != bool(spec.gpu.pytorch_index_url):
        raise ValueError("GpuSoftware: pytorch_version and pytorch_index_url go together")
    if spec.gpu.method == "install_script" and not (
        spec.gpu.driver_version and spec.gpu.cuda_version and spec.gpu.cudnn_version
    ):
        raise ValueError(
            "GpuSoftware: method 'install_script' needs driver_version, "
            "cuda_version and cudnn_version (the script's arguments)"
        )


def _values(spec: BootSpec) -> dict[str, object]:
    return {
        "s": spec,
        "gpu": spec.gpu,
        "fabric": spec.fabric,
        "mtu": spec.fabric.mtu,
        "nccl_env": nccl_table()[spec.fabric.link],
        "oss_endpoint": internal_endpoint(spec.region),
        "launcher_path": LAUNCHER_PATH,
        "node_script_path": NODE_SCRIPT_PATH,
        "env_dir": ENV_DIR,
        "status_path": STATUS_PATH,
        "scratch_mount": SCRATCH_MOUNT,
        "scratch_label": SCRATCH_LABEL,
        "shared_mount": SHARED_MOUNT,
        "registry_dir": REGISTRY_DIR,
        "runs_dir": RUNS_DIR,
        "job_user": JOB_USER,
        "job_uid": JOB_UID,
        "job_home": JOB_HOME,
        "rdzv_port": RDZV_PORT,
        "metadata_host": METADATA_HOST,
        "max_restarts": DEFAULT_MAX_RESTARTS,
        "shutdown_seconds": SHUTDOWN_SECONDS,
        "torch_venv": TORCH_VENV,
        "boot_minutes": boot_minutes(spec.gpu),
        "cms_url": spec.cloudmonitor.installer_url(spec.region) if spec.cloudmonitor else None,
        "cms_process": CLOUDMONITOR_PROCESS,
        "cms_binary": CLOUDMONITOR_BINARY,
        "cms_log": CLOUDMONITOR_LOG,
    }


def boot_downloads(gpu: GpuSoftware, fabric: Fabric) -> list[tuple[str, str]]:
    """What a node downloads at boot and how each download is checked: ``(download, check)``, the unchecked ones
    saying why (no published checksum or signature that we found, or a mirror documented only over plain HTTP)."""
    out = [("distribution packages (cloud-init packages, apt/dnf)", "signed: the image's own repositories and keys")]
    if gpu.method == "install_script":
        out.append(
            (
                "Alibaba's auto_install_v4.0.sh (from the metadata source-address mirror) and what it fetches",
                "UNVERIFIED: Alibaba publishes no checksum or signature for the script; it runs as root",
            )
        )
    if fabric.link == "erdma":
        out.append(
            (
                "eRDMA env_setup.sh and installer (http://mirrors.cloud.aliyuncs.com/erdma/)",
                "UNVERIFIED: no published checksum; plain HTTP, the only "
                "scheme Alibaba documents for this VPC-internal mirror",
            )
        )
    if gpu.fabric_manager:
        out.append(
            (
                "NVIDIA cuda-keyring .deb (https://developer.download.nvidia.com), "
                "then nvidia-fabricmanager from that repository",
                f"the keyring is installed only if its one key is NVIDIA's {gpu.cuda_repo_key} (else state=failed); "
                "the packages after it are signed by that key (apt); on dnf images the image's configured repository",
            )
        )
    if gpu.pytorch_version:
        out.append(
            (
                f"PyTorch {gpu.pytorch_version} wheel ({gpu.pytorch_index_url})",
                f"pip --require-hashes against {len(gpu.pytorch_sha256)} sha256 digests from the catalog"
                if gpu.pytorch_sha256
                else "UNVERIFIED: the catalog has no sha256 for this wheel; HTTPS only",
            )
        )
        out.append(
            (
                "PyTorch's dependencies (nvidia-*, triton, sympy, ...)",
                "UNVERIFIED: HTTPS only; hashing them all (pip --require-hashes) "
                "needs a lock of every dependency, which aitrain does not ship",
            )
        )
    return out


def render_launcher(spec: BootSpec) -> str:
    """The ``aitrain-torchrun`` script (POSIX sh) installed at ``LAUNCHER_PATH``."""
    _check(spec)
    return _ENV.get_template("aitrain-torchrun.sh.j2").render(**_values(spec))


def render_node_script(spec: BootSpec) -> str:
    """The per-boot helper (``aitrain-node``): metadata, scratch, host registry, MTU, GPU status."""
    _check(spec)
    return _ENV.get_template("aitrain-node.sh.j2").render(**_values(spec))


def code_only(script: str) -> str:
    """A script without its comment lines, except the header (shebang, what it is, usage).

    The comments, with their sources, stay in the templates; the node gets the code, so the user data keeps within
    the 16 KB ECS limit.
    """
    lines = script.splitlines(keepends=True)
    header = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return "".join(lines[:header] + [line for line in lines[header:] if not line.lstrip().startswith("#")])


def render_user_data(spec: BootSpec) -> str:
    """The node's ``#cloud-config`` text; raises ``UserDataTooLarge`` when over ``USER_DATA_LIMIT_BYTES``."""
    _check(spec)
    values = _values(spec)
    launcher, node_script = code_only(render_launcher(spec)), code_only(render_node_script(spec))
    text = _ENV.get_template("user-data.yaml.j2").render(launcher=launcher, node_script=node_script, **values)
    size = len(userdata.compressed(text))
    if size > USER_DATA_LIMIT_BYTES:
        raise UserDataTooLarge(
            f"The node user data for cluster {spec.cluster!r} is {size} "
            f"bytes gzip-compressed ({len(text.encode('utf-8'))} as text), over the ECS limit of "
            f"{USER_DATA_LIMIT_BYTES} bytes (16 KB before Base64) by {size - USER_DATA_LIMIT_BYTES}. "
            "ECS rejects it at launch. Shorten the long values "
            f"(mount source {len(spec.mount_source)} chars, mount "
            f"options {len(spec.mount_options)} chars, cluster name "
            f"{len(spec.cluster)} chars) or move the extra setup into a custom image."
        )
    return text


__all__ = [
    "BOOT_MINUTES",
    "CHECKPOINTS_DIR",
    "CLOUDMONITOR_PROCESS",
    "DEFAULT_MAX_RESTARTS",
    "ENV_DIR",
    "ERDMA_MTU_NO_JUMBO",
    "JOB_HOME",
    "JOB_UID",
    "JOB_USER",
    "LAUNCHER_PATH",
    "METADATA_HOST",
    "NCCL_ENV",
    "NODE_SCRIPT_PATH",
    "RDZV_PORT",
    "REGISTRY_DIR",
    "RUNS_DIR",
    "SCRATCH_LABEL",
    "SCRATCH_MOUNT",
    "SHARED_MOUNT",
    "STATUS_PATH",
    "USER_DATA_LIMIT_BYTES",
    "BootSpec",
    "CloudMonitorAgent",
    "Fabric",
    "GpuSoftware",
    "UserDataTooLarge",
    "boot_downloads",
    "boot_minutes",
    "code_only",
    "nccl_env",
    "render_launcher",
    "render_node_script",
    "render_user_data",
    "shell_templates",
]
