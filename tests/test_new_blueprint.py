"""The proof that a blueprint is only its own files: a throwaway one, added to a copy of the package, plans.

The ``blueprints`` package is copied to a temporary folder; only the stub's package (``tests/data/new_blueprint/
slurm_ecs/`` → ``blueprints/architectures/slurm_ecs/``) and its preset (→ ``blueprints/presets/``) are written into
the copy, and the diff of the copy against this checkout says so. ``aitrain plan`` then runs in a fresh interpreter
on the copy alone (``PYTHONPATH``) and its JSON plan shows the new blueprint built from the existing components,
priced, and free of guardrail errors. This checkout never sees the stub.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import blueprints
from blueprints.architectures import specs
from blueprints.catalog import instance_price, load_catalog
from blueprints.profile.stackconfig import preset_names

PACKAGE = Path(blueprints.__file__).resolve().parent
STUB = Path(__file__).parent / "data" / "new_blueprint"
NAME, PRESET = "slurm-ecs", "slurm-training"
# Stub file → where it goes in the copied package: the blueprint's own package and its preset, nothing else.
PLACED = {
    **{
        f"slurm_ecs/{path.name}": f"architectures/slurm_ecs/{path.name}"
        for path in sorted((STUB / "slurm_ecs").glob("*.py"))
    },
    f"{PRESET}.yaml": f"presets/{PRESET}.yaml",
}
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


def tree_files(root: Path) -> set[str]:
    """Every file under ``root`` (bytecode aside), relative to it."""
    return {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def aitrain(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter that imports ``blueprints`` from ``root`` only."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "blueprints.cli.main", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """A copy of the package with the stub blueprint and its preset written in (the folder holding ``blueprints``)."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(PACKAGE, root / "blueprints", ignore=IGNORED)
    for source, target in PLACED.items():
        destination = root / "blueprints" / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STUB / source, destination)
    return root


@pytest.fixture(scope="module")
def plan(copy) -> dict:
    result = aitrain(copy, "plan", PRESET, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_copy_differs_from_the_package_by_the_blueprint_s_own_files_alone(copy):
    original, copied = tree_files(PACKAGE), tree_files(copy / "blueprints")
    assert copied - original == set(PLACED.values())
    assert original - copied == set()
    changed = [name for name in sorted(original) if not filecmp.cmp(PACKAGE / name, copy / "blueprints" / name, False)]
    assert changed == []


def test_the_copy_runs_its_own_package_and_finds_the_new_blueprint(copy):
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import blueprints; from blueprints.architectures import "
            "specs; print(blueprints.__file__); print(*specs())",
        ],
        cwd=copy,
        env={**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    where, names = probe.stdout.splitlines()
    assert Path(where).resolve() == (copy / "blueprints" / "__init__.py").resolve()
    assert names.split() == sorted([*specs(), NAME])
    listed = aitrain(copy, "presets")
    assert listed.returncode == 0 and f"{PRESET}\t{NAME}\t" in listed.stdout
    # This checkout is untouched: no stub blueprint, no stub preset.
    assert NAME not in specs() and PRESET not in preset_names()


def test_the_new_blueprint_plans_from_the_existing_components(plan):
    assert plan["blueprint"] == NAME and plan["profile_name"] == PRESET and plan["outputs"]["blueprint"] == NAME
    components = {r["name"]: r["type"] for r in plan["resources"] if not r["custom"]}
    assert components == {
        f"{PRESET}-network": "aitrain:network:TrainingNetwork",
        f"{PRESET}-storage": "aitrain:storage:SharedStorage",
        f"{PRESET}-data": "aitrain:storage:DataBucket",
        f"{PRESET}-slurm": "aitrain:compute:GpuCluster",
        f"{PRESET}-slurm-controller": "aitrain:compute:GpuCluster",
    }
    sets = {
        r["parent"]: r["inputs"] for r in plan["resources"] if r["type"] == "alicloud:ecs/ecsInstanceSet:EcsInstanceSet"
    }
    assert (
        sets[f"{PRESET}-slurm"]["amount"] == 2 and sets[f"{PRESET}-slurm"]["instanceType"] == "ecs.gn7i-c32g1.8xlarge"
    )
    assert sets[f"{PRESET}-slurm-controller"]["amount"] == 1
    assert sets[f"{PRESET}-slurm-controller"]["instanceType"] == "ecs.g7.xlarge"
    summary = plan["summary"]
    assert summary["blueprint"] == NAME and summary["nodes"] == 2 and summary["controller"] == "1 × ecs.g7.xlarge"
    # The shared node boot came with the base: a rendered user data and the torchrun launcher.
    assert plan["outputs"]["launcher"] and summary["gpu_software"].startswith("NVIDIA driver")


def test_the_new_blueprint_is_priced(plan):
    catalog = load_catalog()
    hourly = {
        line["resource"]: line
        for line in plan["costs"]["lines"]
        if line["unit"] == "node-hour" and line["cny_per_hour"]
    }
    for unit, count, instance_type in (
        ("slurm", 2, "ecs.gn7i-c32g1.8xlarge"),
        ("slurm-controller", 1, "ecs.g7.xlarge"),
    ):
        line = hourly[f"{PRESET}-{unit}-nodes-0"]
        price = instance_price(catalog, instance_type, plan["summary"]["region"]).cny
        assert line["item"] == f"{count} × {instance_type}" and line["cny_per_hour"] == pytest.approx(count * price)
    assert plan["costs"]["totals"]["cny_per_hour"] >= sum(line["cny_per_hour"] for line in hourly.values())
    assert plan["summary"]["compute_price_basis"].endswith("compute nodes (the controller is its own cost line)")


def test_the_new_blueprint_passes_the_guardrails(plan):
    assert plan["findings"] and [f for f in plan["findings"] if f["level"] == "error"] == []
