"""blueprints/health/allreduce.py for real: two local processes under torchrun with gloo (PyTorch's CPU build)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.health.commands import ALLREDUCE_SCRIPT
from blueprints.health.verdict import allreduce_result

TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent))
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or TORCHRUN is None,
    reason="torch is not installed in this venv (pip install torch==2.13.0 installs the CPU build)",
)


@needs_torch
def test_gloo_allreduce_on_two_processes_reports_bus_bandwidth(tmp_path):
    argv = [TORCHRUN, "--standalone", "--nproc-per-node", "2", str(ALLREDUCE_SCRIPT),
            "--backend", "gloo", "--size-mb", "4", "--iters", "5", "--json"]  # fmt: skip
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    found = allreduce_result(result.stdout)
    assert found is not None, result.stdout
    assert found["world_size"] == 2 and found["backend"] == "gloo" and found["correct"] is True
    assert found["size_bytes"] == 4 * 1024 * 1024 and found["iters"] == 5
    # busbw = algbw x 2(n-1)/n: with n = 2 the two are equal; Gbit/s = 8 x GB/s.
    assert found["busbw_gbps"] == pytest.approx(found["algbw_gbps"]) and found["busbw_gbps"] > 0
    assert found["algbw_gbps"] == pytest.approx(found["algbw_GBps"] * 8)
    assert result.stdout.count("AITRAIN-ALLREDUCE") == 1  # rank 0 only
    print(json.dumps(found))


def test_bad_arguments_exit_2_before_torch_is_imported():
    result = subprocess.run([sys.executable, str(ALLREDUCE_SCRIPT), "--backend", "gloo", "--iters", "0"],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 2 and "--iters >= 1" in result.stderr
    missing = subprocess.run([sys.executable, str(ALLREDUCE_SCRIPT)], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "--backend" in missing.stderr
