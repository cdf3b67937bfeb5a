"""The catalog's ACK tables: shipped facts, and every check of ``blueprints/catalog/kubernetes.py`` on a broken copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from blueprints.catalog import CATALOG_DIR, CatalogError, load_catalog


@pytest.fixture
def data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(CATALOG_DIR, target)
    return target


def message(directory: Path) -> str:
    with pytest.raises(CatalogError) as info:
        load_catalog(directory)
    return info.value.message


def replace_line(directory: Path, file: str, starts: str, new: str) -> None:
    path = directory / file
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    (index,) = [i for i, line in enumerate(lines) if line.startswith(starts)]
    lines[index] = new + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def test_shipped_versions_have_one_default_the_newest():
    ack = load_catalog().kubernetes
    assert ack.default_version == "1.36.1-aliyun.1"
    assert set(ack.version_names) == {"1.36.1-aliyun.1", "1.35.7-aliyun.1", "1.35.2-aliyun.1", "1.35.1-aliyun.1"}
    assert all(v.end_of_support >= "2027" for v in ack.versions)


def test_every_gpu_family_of_the_catalog_is_one_ack_lists():
    catalog = load_catalog()
    families = {it.family for it in catalog.instance_types.values() if it.is_gpu}
    assert families <= {f.family for f in catalog.kubernetes.gpu_families}
    named = {f.family for f in catalog.kubernetes.gpu_families if f.listed_as == f.family}
    assert named == {"gn8v", "ebmgn8v", "ebmgn7ex", "ebmgn7e", "ebmgn7i", "ebmgn8is"}
    assert not catalog.kubernetes.supports_family("gn7i-vws")


def test_default_addons_add_the_erdma_controller_only_for_erdma():
    ack = load_catalog().kubernetes
    plain = [a.name for a in ack.default_addons(erdma=False)]
    # The node problem detector and lifecycle controller run the node pools' auto repair (management.auto_repair).
    assert plain == [
        "terway-eniip",
        "csi-plugin",
        "csi-provisioner",
        "logtail-ds",
        "ack-node-problem-detector",
        "node-lifecycle-controller",
        # Managed Service for Prometheus: collects ACK's GPU exporter metrics (catalog/data/metrics.csv).
        "arms-prometheus",
    ]
    assert [a.name for a in ack.default_addons(erdma=True)] == [
        *plain[:-1],
        "ack-erdma-controller",
        "arms-prometheus",
    ]
    assert all(a.version == "" for a in ack.addons)
    (erdma,) = [a for a in ack.addons if a.name == "ack-erdma-controller"]
    assert erdma.config == '{"agent":{"preferDriver":"ofed","allocateAllDevices":true}}' and erdma.when == "erdma"


def test_a_repeated_addon_is_refused(data):
    path = data / "kubernetes_addons.csv"
    path.write_text(
        path.read_text(encoding="utf-8") + "csi-plugin,,,always,https://example.com/a,2026-11-30,\n", encoding="utf-8"
    )
    assert "kubernetes_addons.csv line 10, column 'name': duplicate 'csi-plugin' (first on line 3)" in message(data)


def test_two_defaults_are_refused(data):
    replace_line(
        data,
        "kubernetes_versions.csv",
        "1.35.1-aliyun.1,",
        "1.35.1-aliyun.1,1.35,2026-02,2027-02-28,true,https://example.com/v,2026-10-06",
    )
    assert message(data) == "kubernetes_versions.csv: exactly one row must have is_default true (found 2)"


def test_a_version_outside_its_minor_is_refused(data):
    replace_line(
        data,
        "kubernetes_versions.csv",
        "1.35.1-aliyun.1,",
        "1.34.1-aliyun.1,1.35,2026-02,2027-02-28,false,https://example.com/v,2026-10-06",
    )
    assert "kubernetes_versions.csv line 5, column 'minor': '1.35' is not the minor of '1.34.1-aliyun.1'" in message(
        data
    )


def test_a_repeated_version_is_refused(data):
    replace_line(
        data,
        "kubernetes_versions.csv",
        "1.35.1-aliyun.1,",
        "1.35.2-aliyun.1,1.35,2026-02,2027-02-28,false,https://example.com/v,2026-10-06",
    )
    assert "kubernetes_versions.csv line 5, column 'version': duplicate '1.35.2-aliyun.1'" in message(data)


def test_is_default_must_be_a_boolean(data):
    replace_line(
        data,
        "kubernetes_versions.csv",
        "1.35.1-aliyun.1,",
        "1.35.1-aliyun.1,1.35,2026-02,2027-02-28,yes,https://example.com/v,2026-10-06",
    )
    assert "column 'is_default': must be true or false" in message(data)


def test_addon_config_must_be_a_json_object(data):
    replace_line(
        data,
        "kubernetes_addons.csv",
        "terway-eniip,",
        "terway-eniip,,not-json,always,https://example.com/a,2026-11-30,",
    )
    assert "kubernetes_addons.csv line 2, column 'config': must be a JSON object or empty" in message(data)
    replace_line(
        data, "kubernetes_addons.csv", "terway-eniip,", "terway-eniip,,[1],always,https://example.com/a,2026-11-30,"
    )
    assert "kubernetes_addons.csv line 2, column 'config': must be a JSON object or empty (got '[1]')" in message(data)


def test_addon_when_is_a_known_condition(data):
    replace_line(
        data, "kubernetes_addons.csv", "terway-eniip,", "terway-eniip,,,sometimes,https://example.com/a,2026-11-30,"
    )
    assert "column 'when': must be one of always, erdma" in message(data)


def test_a_repeated_family_is_refused(data):
    path = data / "kubernetes_gpu_families.csv"
    path.write_text(path.read_text(encoding="utf-8") + "gn5,gn5,https://example.com/f,2026-11-30,\n", encoding="utf-8")
    assert "kubernetes_gpu_families.csv line" in message(data) and "duplicate 'gn5'" in message(data)


def test_a_missing_table_is_named(data):
    (data / "kubernetes_addons.csv").unlink()
    assert message(data).startswith("kubernetes_addons.csv: catalog file missing at")
