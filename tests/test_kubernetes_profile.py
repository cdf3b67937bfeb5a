"""The kubernetes-pool profile: bad input gives one clear message naming the field (exit 2), never a traceback."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from blueprints.catalog import CATALOG_DIR, CATALOG_DIR_ENV
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.testing import offline_plan

runner = CliRunner()
PRESET = "kubernetes-training"


def plan_with(*settings: str):
    args = ["plan", PRESET]
    for setting in settings:
        args += ["--set", setting]
    return runner.invoke(app, args)


def refused(*settings: str) -> str:
    result = plan_with(*settings)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


def test_min_above_max_names_the_field():
    out = refused("compute.min_nodes=5", "compute.max_nodes=2")
    assert "compute.min_nodes = 5: is greater than max_nodes (2)" in out


def test_a_job_larger_than_the_pool_names_the_field():
    out = refused("compute.nodes_per_job=9")
    assert "compute.nodes_per_job = 9: is greater than max_nodes (8)" in out


def test_unknown_version_lists_the_catalogs_versions():
    out = refused("kubernetes.version=1.30.1")
    assert "kubernetes.version = '1.30.1': is not a version ACK offers in the catalog" in out
    assert "'1.35.1-aliyun.1', '1.35.2-aliyun.1', '1.35.7-aliyun.1', '1.36.1-aliyun.1'" in out


def test_empty_version_takes_the_catalogs_default():
    result = runner.invoke(app, ["plan", PRESET, "--set", "kubernetes.version=", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"kubernetes_version": "1.36.1-aliyun.1"' in result.output


def test_install_pytorch_is_refused_either_way():
    for value in ("true", "false"):
        out = refused(f"compute.install_pytorch={value}")
        assert "compute.install_pytorch" in out and "PyTorch comes from each job's container image" in out


def test_off_hours_is_refused():
    out = refused("cost.off_hours.enabled=true")
    assert "cost.off_hours.enabled = True" in out and "cluster autoscaler removes idle GPU nodes" in out


@pytest.mark.parametrize(
    "setting, field, words",
    [
        (
            "kubernetes.pod_cidr=172.20.0.0/16",
            "kubernetes.pod_cidr",
            "does not apply: the cluster runs Terway (for NetworkPolicy)",
        ),
        ("kubernetes.addons=[{name: flannel}]", "kubernetes.addons", "Flannel enforces no NetworkPolicy"),
        ("kubernetes.service_cidr=10.40.0.0/24", "kubernetes.service_cidr", "overlaps network.vpc_cidr"),
        ("kubernetes.service_cidr=8.8.0.0/16", "kubernetes.service_cidr", "not a private range"),
        ("kubernetes.public_api_endpoint=true", "kubernetes.public_api_endpoint", "needs network.admin_cidr"),
        (
            "kubernetes.system_instance_type=ecs.gn7i-c8g1.2xlarge",
            "kubernetes.system_instance_type",
            "is not a CPU instance type",
        ),
        ("kubernetes.cluster_spec=ack.pro.medium", "kubernetes.cluster_spec", "ack.pro.small"),
        ("kubernetes.image_type=Windows", "kubernetes.image_type", "AliyunLinux3"),
        ("kubernetes.namespace=kube-system", "kubernetes.namespace", "not starting with 'kube-'"),
        ("kubernetes.nvidia_driver_version=latest", "kubernetes.nvidia_driver_version", "like 550.144.03"),
        ("kubernetes.audit_log_project=Audit_Logs", "kubernetes.audit_log_project", "SLS project name"),
        ("compute.max_nodes=1001", "compute.max_nodes", "less than or equal to 1000"),
    ],
)
def test_bad_kubernetes_settings_name_their_field(setting, field, words):
    out = refused(setting)
    assert f"  - {field}" in out and words in out


def addon_problems(addons):
    with pytest.raises(UserInputError) as caught:
        offline_plan(PRESET, profile={"kubernetes": {"addons": addons}})
    return [(p.path, p.message) for p in caught.value.problems]


def test_addon_pins_are_checked():
    ((path, message),) = addon_problems([{"name": "csi-plugin", "config": "not json"}])
    assert path == "kubernetes.addons[0].config" and message.startswith("must be a JSON object")
    ((path, message),) = addon_problems([{"name": "csi-plugin", "config": "[1]"}])
    assert path == "kubernetes.addons[0].config" and message == "must be a JSON object, e.g. '{}'"
    ((path, message),) = addon_problems([{"name": "csi-plugin"}, {"name": "csi-plugin"}])
    assert path == "kubernetes.addons" and "names ['csi-plugin'] more than once" in message
    ((path, message),) = addon_problems([{"name": "CSI plugin"}])
    assert path == "kubernetes.addons[0].name" and "lowercase letters, digits and hyphens" in message


def test_the_pool_must_fit_the_vswitch():
    out = refused("network.vpc_cidr=10.40.0.0/24", "compute.max_nodes=300")
    assert "vSwitch" in out and "302 nodes" in out


def test_a_family_ack_does_not_list_is_refused_with_the_supported_types(tmp_path, monkeypatch):
    data = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, data)
    families = data / "kubernetes_gpu_families.csv"
    families.write_text(
        "".join(line for line in families.read_text().splitlines(keepends=True) if not line.startswith("ebmgn7ex,"))
    )
    monkeypatch.setenv(CATALOG_DIR_ENV, str(data))
    out = refused()
    assert (
        "compute.instance_type = 'ecs.ebmgn7ex.32xlarge': is of family "
        "ebmgn7ex, which ACK does not list as a GPU node-pool family" in out
    )
    assert "'ecs.gn7e-c16g1.32xlarge'" in out and "'ecs.ebmgn7ex.32xlarge'" not in out.split("allowed:")[1]
