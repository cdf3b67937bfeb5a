"""The figures the advisor leans on hardest, pinned to their sources (docs/sources/alibaba-cloud-facts.md §6).

RDMA bandwidth and the GPU model of the RDMA A100 types decide multi-node estimates; these tests fail when a
cell is emptied, changed without its source, or an inferred model loses its marking in the output.
"""

from __future__ import annotations

import json

import pytest

from blueprints.catalog import load_catalog
from blueprints.catalog.pricing import price_cny
from blueprints.catalog.render import INFERRED, catalog_rows, render_catalog_markdown, render_catalog_table

S24 = "https://help.aliyun.com/document_detail/25378.html"
S26 = "https://www.aliyun.com/solution/tech-solution/nginx_ingress"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_ebmgn7ex_network_and_erdma_from_the_instance_family_page(catalog):
    it = catalog.instance_type("ecs.ebmgn7ex.32xlarge")
    assert (it.rdma, it.fabric_link) == ("erdma", "erdma")
    assert it.rdma_gbps == pytest.approx(160.0)
    assert it.network_gbps == pytest.approx(160.0)
    assert it.nvlink is True
    assert S24 in it.spec_source
    # The 160 needs two ERIs on different NIC indexes; the note keeps the 100 Gbit/s single-index case.
    assert "100 Gbit/s" in it.notes and "different NIC indexes" in it.notes


def test_rdma_bandwidths_of_the_multi_node_types(catalog):
    expected = {
        "ecs.sccgn7ex.32xlarge": ("roce", 800.0),
        "ecs.ebmgn8v.48xlarge": ("erdma", 160.0),
        "ecs.ebmgn7ex.32xlarge": ("erdma", 160.0),
        "ecs.ebmgn8is.32xlarge": ("erdma", 160.0),
        "ecs.ebmgn8ia.64xlarge": ("erdma", 160.0),
        "ecs.ebmgn7ix.32xlarge": ("erdma", 160.0),
        "ecs.ebmgn9g.64xlarge": ("erdma", 360.0),
        "ecs.ebmgn9ge.64xlarge": ("erdma", 360.0),
        "ecs.ebmgn9gc.64xlarge": ("erdma", 360.0),
    }
    for name, (kind, gbps) in expected.items():
        it = catalog.instance_type(name)
        assert it.rdma == kind and it.rdma_gbps == pytest.approx(gbps), name
    # Published for the family only, not per size: unknown, never guessed.
    for name in ("ecs.gn8v-8x.48xlarge", "ecs.gn8is-4x.16xlarge"):
        assert catalog.instance_type(name).rdma_gbps is None, name


def test_sccgn7ex_gpu_is_an_inferred_a100_80gb(catalog):
    it = catalog.instance_type("ecs.sccgn7ex.32xlarge")
    assert it.gpu_model == "A100-SXM4-80GB" and it.gpu_model_confidence == "inferred" and it.gpu_inferred
    assert it.notes.startswith("GPU model inferred")
    assert "312 TFLOPS TF32" in it.notes and "80 GB" in it.notes and "NVSwitch" in it.notes
    assert "A800" in it.notes  # the rival with the same peak and memory is named
    # The documented peak really is the A100's sparse TF32 (2 x dense) and the memory matches.
    gpu = catalog.gpus[it.gpu_model]
    assert 2 * (gpu.tf32_tflops or 0) == pytest.approx(312.0) and gpu.memory_gib == it.gpu_memory_gib == 80


def test_stated_models_stay_stated_and_unidentified_ones_empty(catalog):
    assert catalog.instance_type("ecs.gn7e-c16g1.32xlarge").gpu_model_confidence == "stated"
    assert not catalog.instance_type("ecs.gn7e-c16g1.32xlarge").gpu_inferred
    gn5 = catalog.instance_type("ecs.gn5-c8g1.14xlarge")  # "NVIDIA P100" without SXM2 or PCIe: no row matches
    assert gn5.gpu_model is None and gn5.gpu_model_confidence is None


def test_gn8v_and_ebmgn8v_carry_the_inferred_h20_class(catalog):
    rows = [it for it in catalog.instance_types.values() if it.family in ("gn8v", "ebmgn8v")]
    assert len(rows) == 9
    h20 = catalog.gpus["H20"]
    # The figures the inference rests on (S1): 96 GB HBM3, 4 TB/s, NVLink 900 GB/s, FP8.
    assert (h20.memory_gib, h20.memory_type, h20.memory_bandwidth_gb_s, h20.nvlink_gb_s) == (96, "HBM3", 4000, 900)
    assert h20.fp8_tflops is not None and h20.bf16_tflops == pytest.approx(148.0)
    for it in rows:
        assert (it.gpu_model, it.gpu_model_confidence, it.gpu_memory_gib) == ("H20", "inferred", 96), it.instance_type
        assert it.notes.startswith("GPU model inferred (class H20)"), it.instance_type
        # The figure that does not match is kept in sight, not dropped.
        assert "39.5" in it.notes and "44" in it.notes, it.instance_type


def test_blackwell_families_carry_alibabas_own_figures_under_an_inferred_name(catalog):
    for name, model, memory, ram in (
        ("ecs.ebmgn9g.64xlarge", "RTX-PRO-5000-Blackwell-48GB", 48, 2304),
        ("ecs.ebmgn9ge.64xlarge", "RTX-PRO-5000-Blackwell-72GB", 72, 2304),
        ("ecs.ebmgn9gc.64xlarge", "RTX-PRO-5000-Blackwell-72GB", 72, 1536),
    ):
        it = catalog.instance_type(name)
        assert (it.vcpus, it.memory_gib, it.gpu_count, it.gpu_memory_gib) == (256, ram, 8, memory), name
        assert (it.gpu_model, it.gpu_model_confidence, it.nvlink) == (model, "inferred", False), name
        assert (it.network_gbps, it.rdma, it.rdma_gbps, it.rdma_nics) == (360, "erdma", 360, 2), name
        assert it.notes.startswith("GPU model inferred") and "invitational preview" in it.notes, name
        gpu = catalog.gpus[model]
        assert (gpu.memory_gib, gpu.memory_bandwidth_gb_s, gpu.nvlink_gb_s) == (memory, 1344, 0)
        assert (gpu.tf32_tflops, gpu.bf16_tflops, gpu.fp8_tflops) == pytest.approx((126.0, 266.0, 533.0))
        assert "gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1" in gpu.source


def test_new_l20_and_a10_bare_metal_families(catalog):
    expected = {
        # vcpus, memory, model, GPUs, network, eRDMA Gbit/s, eRDMA NICs per instance type
        "ecs.ebmgn8is.32xlarge": (128, 1024, "L20", 8, 160, 160, 2),
        "ecs.ebmgn8ia.64xlarge": (256, 1536, "L20", 4, 160, 160, None),
        "ecs.ebmgn7ix.32xlarge": (128, 512, "A10", 8, 160, 160, None),
    }
    for name, figures in expected.items():
        it = catalog.instance_type(name)
        got = (it.vcpus, it.memory_gib, it.gpu_model, it.gpu_count, it.network_gbps, it.rdma_gbps, it.rdma_nics)
        assert got == figures, name
        assert (it.rdma, it.gpu_model_confidence, it.nvlink) == ("erdma", "stated", False), name


def test_every_gn7s_size_of_the_family_page(catalog):
    sizes = {it.instance_type: (it.vcpus, it.memory_gib, it.gpu_count) for it in catalog.instance_types.values()}
    gn7s = {name: figures for name, figures in sizes.items() if name.startswith("ecs.gn7s-")}
    assert gn7s == {
        "ecs.gn7s-c8g1.2xlarge": (8, 60, 1),
        "ecs.gn7s-c16g1.4xlarge": (16, 120, 1),
        "ecs.gn7s-c32g1.8xlarge": (32, 250, 1),
        "ecs.gn7s-c32g1.16xlarge": (64, 500, 2),
        "ecs.gn7s-c32g1.32xlarge": (128, 1000, 4),
        "ecs.gn7s-c48g1.12xlarge": (48, 380, 1),
        "ecs.gn7s-c56g1.14xlarge": (56, 440, 1),
    }


def test_erdma_nic_counts_from_the_pai_page(catalog):
    pai = (
        "https://www.alibabacloud.com/help/en/pai/user-guide/erdma-distributed-training-with-high-performance-networks"
    )
    expected = {
        "ecs.ebmgn8v.48xlarge": 2,
        "ecs.ebmgn8is.32xlarge": 2,
        "ecs.gn8is.2xlarge": 1,
        "ecs.gn8is.4xlarge": 1,
        "ecs.gn8is-2x.8xlarge": 1,
        "ecs.gn8is-4x.16xlarge": 1,
    }
    for name, nics in expected.items():
        it = catalog.instance_type(name)
        assert it.rdma_nics == nics and pai in it.spec_source, name
    # PAI does not list gn8is-8x; ebmgn7ex's two ERIs come from its own family page (S24).
    assert catalog.instance_type("ecs.gn8is-8x.32xlarge").rdma_nics is None
    assert catalog.instance_type("ecs.ebmgn7ex.32xlarge").rdma_nics == 2


def test_every_inferred_row_explains_itself(catalog):
    inferred = {it.instance_type for it in catalog.instance_types.values() if it.gpu_inferred}
    families = {catalog.instance_types[name].family for name in inferred}
    assert families == {"sccgn7ex", "gn8v", "ebmgn8v", "ebmgn9g", "ebmgn9ge", "ebmgn9gc"}
    assert all(catalog.instance_types[name].notes.startswith("GPU model inferred") for name in inferred)


def test_catalog_output_marks_an_inferred_model(catalog):
    rows = catalog_rows(catalog, gpu="A100", min_gpus=8)
    text = render_catalog_table(rows)
    line = next(ln for ln in text.splitlines() if ln.startswith("ecs.sccgn7ex.32xlarge"))
    assert f"A100-SXM4-80GB{INFERRED}" in line
    stated = next(ln for ln in text.splitlines() if ln.startswith("ecs.gn7e-c16g1.32xlarge"))
    assert "A100-SXM4-80GB" in stated and INFERRED not in stated
    assert f"A100-SXM4-80GB{INFERRED}" in render_catalog_markdown(rows)
    by_name = {r["instance_type"]: r for r in json.loads(json.dumps(rows))}
    assert by_name["ecs.sccgn7ex.32xlarge"]["gpu_model_confidence"] == "inferred"
    assert by_name["ecs.sccgn7ex.32xlarge"]["gpu_model"] == "A100-SXM4-80GB"  # JSON keeps the bare key
    assert by_name["ecs.gn7e-c16g1.32xlarge"]["gpu_model_confidence"] == "stated"


def test_l20_peaks_are_alibabas_figures(catalog):
    l20 = catalog.gpus["L20"]
    assert (l20.fp32_tflops, l20.bf16_tflops, l20.fp8_tflops) == pytest.approx((59.3, 119.0, 237.0))
    assert l20.memory_gib == 48 and l20.memory_bandwidth_gb_s == 864 and l20.nvlink_gb_s == 0
    assert S24 in l20.source


def test_cny_prices_from_alibaba_pages(catalog):
    oss = price_cny(catalog, "oss", "Standard", "cn-shanghai")
    assert (oss.cny, oss.status, oss.date) == (pytest.approx(0.12 * 2**30 / 1e9, rel=1e-5), "list", "2026-02-05")
    nat = price_cny(catalog, "nat_instance", None, "cn-hangzhou")
    assert (nat.cny, nat.status) == (pytest.approx(0.195), "list") and S26 in nat.source
    cu = price_cny(catalog, "nat_cu", None, "cn-hangzhou")
    assert (cu.cny, cu.unit) == (pytest.approx(0.195), "CU-hour")
    eip = price_cny(catalog, "eip_config", None, "cn-hangzhou")
    assert (eip.cny, eip.status) == (pytest.approx(0.02), "list")
    # Other mainland regions keep the official USD figure, converted through the cited rate.
    shanghai = price_cny(catalog, "nat_instance", None, "cn-shanghai")
    assert shanghai.status == "converted" and shanghai.cny == pytest.approx(0.034 * 7.1918)
    # Figures quoted for Hangzhou only are not spread to other regions: the '*' row says unknown there.
    assert price_cny(catalog, "nat_cu", None, "cn-beijing").cny is None
    assert price_cny(catalog, "eip_config", None, "cn-beijing").status == "unknown"


def test_t4_and_a30_rows_from_the_family_tables(catalog):
    # Network baselines the S2-only rows lacked, from S1's gn6i table and S24's ebmgn6i table; no ERI listed.
    expected = {
        "ecs.gn6i-c8g1.2xlarge": 5.0,
        "ecs.gn6i-c16g1.4xlarge": 6.0,
        "ecs.gn6i-c24g1.6xlarge": 7.5,
        "ecs.gn6i-c40g1.10xlarge": 10.0,
        "ecs.gn6i-c24g1.12xlarge": 15.0,
        "ecs.ebmgn6i.24xlarge": 30.0,
    }
    for name, gbps in expected.items():
        it = catalog.instance_type(name)
        assert it.network_gbps == pytest.approx(gbps) and it.rdma == "none" and it.fabric_link == "tcp", name
    a30 = catalog.instance_type("ecs.gn7s-c32g1.32xlarge")
    assert a30.rdma == "none" and a30.nvlink is None  # the bridge is not documented, so unknown
