"""Issue 22 item 6: the NCCL table and the eRDMA MTU come from data files with a source per value, and a node's MTU is
8500 only where its instance really has jumbo frames on (ECS: a wrong MTU causes data consistency issues)."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.bootstrap import fabric as f
from blueprints.catalog import load_catalog
from blueprints.core import userdata
from blueprints.health.suites import expectations
from blueprints.health.verdict import _RULES
from blueprints.testing import offline_plan

PAI_ERDMA = (
    "https://www.alibabacloud.com/help/en/pai/user-guide/erdma-distributed-training-with-high-performance-networks"
)
ERDMA_FIXED = {"compute.instance_type": "ecs.ebmgn7ex.32xlarge", "compute.nodes": 2, "compute.scratch_gib": 3072}
ERDMA_POOL = {"compute.instance_type": "ecs.gn8is-2x.8xlarge", "compute.scratch_gib": 768, "compute.erdma_pool": True}
SKIP_AIT008 = {"guardrails": {"skip": [{"rule": "AIT008", "reason": "eRDMA needs the ERI scaling configuration"}]}}


def nccl_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def boot_files(text: str) -> dict[str, str]:
    return {item["path"]: item.get("content", "") for item in yaml.safe_load(text)["write_files"]}


def boot_spec(fabric: b.Fabric) -> b.BootSpec:
    return b.BootSpec(
        cluster="c",
        region="cn-wulanchabu",
        gpus_per_node=8,
        storage_kind="nas",
        mount_source="x.nas.aliyuncs.com:/",
        mount_options="vers=3",
        nfs_package="nfs-common",
        gpu=b.GpuSoftware("driver_image", None, None, None, fabric_manager=False),
        fabric=fabric,
        scratch_gib=0,
        scratch_local_nvme=False,
        bucket="bucket-1",
        role_name="role",
    )


def test_every_nccl_variable_has_a_source_and_erdma_has_what_pai_documents():
    table = f.nccl_table()
    assert set(table) == {"erdma", "roce", "tcp"} and all(v.source for vs in table.values() for v in vs)
    erdma = {v.name: v for v in table["erdma"]}
    for name, value in {
        "NCCL_IB_HCA": "erdma",
        "NCCL_IB_GID_INDEX": "1",
        "NCCL_IB_QPS_PER_CONNECTION": "8",
        "NCCL_MIN_NCHANNELS": "16",
    }.items():
        assert erdma[name].value == value and PAI_ERDMA in erdma[name].source
    assert "third-party" not in erdma["NCCL_IB_HCA"].note.lower()
    assert f.link_facts()["erdma"].min_nccl_version == "2.19" and PAI_ERDMA in f.link_facts()["erdma"].source


@pytest.mark.parametrize("link", ["erdma", "roce", "tcp"])
def test_the_rendered_nccl_env_carries_every_variable_of_the_table(link):
    text = boot_files(b.render_user_data(boot_spec(b.Fabric(link))))["/etc/aitrain/nccl.env"]
    assert nccl_lines(text) == {v.name: v.value for v in f.nccl_table()[link]} == b.nccl_env(link)
    assert "nccl_env.csv" in text  # where each value's source is


@pytest.mark.parametrize("link", ["erdma", "roce", "tcp"])
def test_every_kubernetes_pod_carries_every_variable_of_the_table(link):
    from test_launch_kubernetes import RUN, job_for, llama, run_env

    job = job_for(llama(fabric=link))
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        (container,) = replica["template"]["spec"]["containers"]
        env = {e["name"]: e["value"] for e in container["env"]}
        assert {k: v for k, v in env.items() if k.startswith("NCCL_")} == {
            v.name: v.value for v in f.nccl_table()[link]
        }
        assert env == {**b.nccl_env(link), **run_env(RUN)}


def test_the_mtu_is_1400_unless_the_family_documents_jumbo_frames_and_the_nodes_can_turn_them_on():
    unknown = f.erdma_mtu("ebmgn7ex", None)
    assert (unknown.jumbo_frames, unknown.mtu) == (False, 1400)
    assert "jumbo_frames.csv says unknown for ebmgn7ex" in unknown.reason
    assert f.erdma_mtu("no-such-family", None).reason.endswith(
        "jumbo_frames.csv has no row for no-such-family (no Alibaba page found lists it as jumbo-frame capable)"
    )
    documented = f.erdma_mtu("g8i", None)  # the ECS jumbo-frame pages list g8i
    assert (documented.jumbo_frames, documented.mtu) == (
        True,
        8500,
    ) and "ecs.Instance enable_jumbo_frame" in documented.reason
    blocked = f.erdma_mtu("g8i", "the nodes are ESS")
    assert (blocked.jumbo_frames, blocked.mtu) == (False, 1400) and blocked.reason.endswith("but the nodes are ESS")


def test_the_boot_mtu_follows_the_jumbo_state_and_other_links_set_none():
    assert b.Fabric("erdma").mtu == 1400 and b.Fabric("erdma", jumbo_frames=True).mtu == 8500
    on = boot_files(b.render_user_data(boot_spec(b.Fabric("erdma", jumbo_frames=True, mtu_reason="MTU 8500, on"))))
    assert "mtu 8500" in on[b.NODE_SCRIPT_PATH] and "MTU 8500, on" in on["/etc/aitrain/nccl.env"]
    off = boot_files(b.render_user_data(boot_spec(b.Fabric("erdma"))))[b.NODE_SCRIPT_PATH]
    assert "mtu 1400" in off and "mtu 8500" not in off
    with pytest.raises(ValueError, match="Fabric.jumbo_frames: True is not allowed on tcp"):
        b.render_user_data(boot_spec(b.Fabric("tcp", jumbo_frames=True)))


def _instance_mtus(plan) -> list[tuple[object, int]]:
    out = []
    for instance in plan.find("ecs.Instance"):
        text = userdata.decode(instance.inputs["userData"]) or ""
        (mtu,) = set(re.findall(r"ip link set dev \"\$n\" mtu (\d+)", text))
        out.append((instance.inputs.get("enableJumboFrame"), int(mtu)))
    return out


def test_a_fixed_erdma_cluster_pins_jumbo_frames_off_and_boots_at_1400_saying_why():
    plan = offline_plan("medical-imaging", overrides=ERDMA_FIXED)
    assert _instance_mtus(plan) == [(False, 1400), (False, 1400)]
    assert "MTU 1400, jumbo frames off: jumbo_frames.csv says unknown for ebmgn7ex" in plan.summary["fabric"]


def test_a_fixed_erdma_cluster_on_a_jumbo_family_turns_them_on_and_boots_at_8500(monkeypatch):
    table = dict(f.jumbo_families())
    table["ebmgn7ex"] = f.JumboSupport("ebmgn7ex", "yes", "a test source", "2026-12-02", "")
    monkeypatch.setattr(f, "jumbo_families", lambda: table)
    plan = offline_plan("medical-imaging", overrides=ERDMA_FIXED)
    assert _instance_mtus(plan) == [(True, 8500), (True, 8500)]
    assert "MTU 8500, jumbo frames on (ecs.Instance enable_jumbo_frame" in plan.summary["fabric"]


def test_an_erdma_pool_cannot_turn_jumbo_frames_on_so_it_boots_at_1400_saying_why(monkeypatch):
    table = dict(f.jumbo_families())
    table["gn8is"] = f.JumboSupport("gn8is", "yes", "a test source", "2026-12-02", "")
    monkeypatch.setattr(f, "jumbo_families", lambda: table)
    plan = offline_plan("autoscaling-training", profile=SKIP_AIT008, overrides=ERDMA_POOL)
    (config,) = plan.find("ess.ScalingConfiguration")
    assert 'ip link set dev "$n" mtu 1400' in (userdata.decode(config.inputs["userData"]) or "")
    assert (
        "gn8is supports jumbo frames but an ESS pool launches its nodes from an ess.ScalingConfiguration"
        in (plan.summary["fabric"])
    )


def test_the_health_gate_fails_an_erdma_node_whose_nccl_is_older_than_pai_requires():
    catalog = load_catalog()
    exp = expectations(catalog, catalog.instance_type("ecs.ebmgn7ex.32xlarge"), "erdma")
    rule = _RULES["torch_nccl"]
    pin = exp.pytorch_version
    assert rule({"torch": f"{pin};2.21.5"}, exp) == ("pass", f"{pin}, NCCL 2.21.5")
    verdict, detail = rule({"torch": f"{pin};2.18.1"}, exp)
    assert verdict == "fail" and "below NCCL 2.19, the oldest erdma supports" in detail
    tcp = expectations(catalog, catalog.instance_type("ecs.ebmgn7ex.32xlarge"), "tcp")
    assert rule({"torch": f"{pin};2.18.1"}, tcp)[0] == "pass"  # no floor documented for sockets


@pytest.mark.parametrize(
    ("name", "column", "cell", "message"),
    [
        ("nccl_env.csv", "source", "", "nccl_env.csv row 2, column source: '' is not allowed"),
        ("nccl_env.csv", "link", "ib", "nccl_env.csv row 2, column link: 'ib' is not allowed; use erdma, roce, tcp"),
        ("nccl_env.csv", "name", "IB_HCA", "nccl_env.csv row 2, column name: 'IB_HCA' is not allowed"),
        ("jumbo_frames.csv", "jumbo_frames", "maybe", "jumbo_frames.csv row 2, column jumbo_frames: 'maybe'"),
        ("jumbo_frames.csv", "source", "", "jumbo_frames.csv row 2, column source: '' is not allowed"),
        ("fabric_links.csv", "mtu_without_jumbo", "big", "fabric_links.csv row 2, column mtu_without_jumbo: 'big'"),
        ("fabric_links.csv", "min_nccl_version", "new", "fabric_links.csv row 2, column min_nccl_version: 'new'"),
    ],
)
def test_a_malformed_data_file_names_its_file_row_and_column(tmp_path, monkeypatch, name, column, cell, message):
    copy = tmp_path / name
    shutil.copy(Path(f.DATA_DIR) / name, copy)
    with copy.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[0][column] = cell
    with copy.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    constant = {"nccl_env.csv": "NCCL_ENV_CSV", "jumbo_frames.csv": "JUMBO_FRAMES_CSV"}.get(name, "FABRIC_LINKS_CSV")
    monkeypatch.setattr(f, constant, copy)
    loader = {"nccl_env.csv": f.nccl_table, "jumbo_frames.csv": f.jumbo_families}.get(name, f.link_facts)
    loader.cache_clear()
    try:
        with pytest.raises(f.FabricDataError, match=re.escape(message)):
            loader()
    finally:
        monkeypatch.undo()
        loader.cache_clear()


def test_an_ess_pool_refuses_nodes_whose_boot_assumes_jumbo_frames(monkeypatch):
    from blueprints.architectures.autoscaling_pool.spec import AutoscalingPoolSpec

    table = dict(f.jumbo_families())
    table["gn8is"] = f.JumboSupport("gn8is", "yes", "a test source", "2026-12-02", "")
    monkeypatch.setattr(f, "jumbo_families", lambda: table)
    monkeypatch.setattr(AutoscalingPoolSpec, "jumbo_frame_blocker", None)  # a spec that forgot ESS cannot set them
    with pytest.raises(Exception, match=re.escape("jumbo frames (MTU 8500) cannot be set on ESS nodes")):
        offline_plan("autoscaling-training", profile=SKIP_AIT008, overrides=ERDMA_POOL)
