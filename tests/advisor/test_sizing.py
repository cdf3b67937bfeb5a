"""Table-driven tests of the sizing formulas, with the hand arithmetic in comments."""

from __future__ import annotations

import csv
import dataclasses
import math
import re

import pytest

from blueprints.advisor import cost, sizing
from blueprints.advisor.data import DATA_DIR, mfu_rows
from blueprints.advisor.job import parse_job


def job(**kw):
    base = {"model_kind": "transformer", "params": 1e9, "tokens": 1e11}
    base.update(kw)
    return parse_job(base)


@pytest.mark.parametrize(
    "fields, expected",
    [
        # 6 · N · D = 6 × 1e9 × 1e11
        ({"model_kind": "transformer", "params": 1e9, "tokens": 1e11}, 6e20),
        # Llama-2-70B: 6 × 70e9 × 2e12 = 8.4e23 (training-performance.md §4)
        ({"model_kind": "transformer", "params": 70e9, "tokens": 2e12}, 8.4e23),
        # ResNet-50 ImageNet 90 epochs: 3 × 7.6e9 × 1,281,167 × 90 = 2.6289e18
        (
            {"model_kind": "cnn", "params": 25e6, "forward_gflops": 7.6, "samples": 1281167, "epochs": 90},
            3 * 7.6e9 * 1281167 * 90,
        ),
        # other: 3 × 0.1e9 × 2e9 × 10 = 6e18
        ({"model_kind": "other", "params": 5e7, "forward_gflops": 0.1, "samples": 2e9, "epochs": 10}, 6e18),
    ],
)
def test_training_flops(fields, expected):
    assert sizing.training_flops(parse_job(fields)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "gpu, kind, precision, tuned, typical, conservative",
    [
        # Megatron-LM 530B 54.2% MFU (Korthikanti et al. 2022); Llama-2-70B 8.4e23/(1,720,320 h × 3600)/312e12; BLOOM
        # 3.87e23/(1,082,990 h × 3600)/312e12
        ("A100-SXM4-80GB", "transformer", "bf16", 0.542, 0.435, 0.318),
        ("A800-SXM4-80GB", "transformer", "fp16", 0.542, 0.435, 0.318),  # A800 = A100 math (§1)
        ("A100-SXM4-40GB", "transformer", "tf32", 0.591, 0.474, 0.347),  # × 2505/4591 × 312/156
        ("V100-SXM2-16GB", "transformer", "fp16", 0.514, 0.413, 0.302),  # × (1746/125)/(4591/312)
        ("H100-SXM5-80GB", "transformer", "bf16", 0.43, 0.405, 0.38),  # Llama 3 405B 38–43%
        (
            "A100-SXM4-80GB",
            "cnn",
            "bf16",
            0.244,
            0.238,
            0.152,
        ),  # DLE MXNet 26,674 img/s; MLPerf v2.0 3,260.2/GPU; DLE PyTorch 16,621
        (
            "V100-SXM2-32GB",
            "cnn",
            "fp16",
            0.253,
            0.244,
            0.190,
        ),  # MLPerf v0.7 1,384.6/GPU; DLE MXNet 10,723; DLE PyTorch 8,322
        ("V100-SXM2-32GB", "cnn", "fp32", 0.545, 0.518, 0.518),
        ("A30", "cnn", "fp16", 0.220, 0.216, 0.172),  # MLPerf 1,589.6 / 1,561.3 / 1,247.2 img/s/GPU ÷ 165
        ("L40S", "cnn", "bf16", 0.138, 0.116, 0.103),  # MLPerf 2,191.0 / 1,841.4 / 1,637.9 img/s/GPU ÷ 362
        ("H100-SXM5-80GB", "cnn", "fp16", 0.159, 0.159, 0.159),  # MLPerf v3.1 6,909.2 img/s/GPU ÷ 989, the only anchor
        (
            "H100-SXM5-80GB",
            "transformer",
            "fp8",
            0.407,
            0.358,
            0.173,
        ),  # MLPerf GPT-3 767.43 / 674.45 tok/s/GPU; DeepSeek-V3
        (
            "A30",
            "transformer",
            "bf16",
            0.412,
            0.298,
            0.163,
        ),  # A100 levels × MLPerf BERT per-peak ratios 0.760 / 0.685 / 0.512
    ],
)
def test_default_mfu_range(gpu, kind, precision, tuned, typical, conservative):
    found = sizing.default_mfu(gpu, kind, precision)
    assert found is not None
    assert (found.tuned.mfu, found.typical.mfu, found.conservative.mfu) == pytest.approx(
        (tuned, typical, conservative), abs=1e-9
    )


@pytest.mark.parametrize(
    "gpu, kind, precision",
    [
        ("A10", "transformer", "bf16"),
        ("L20", "other", "fp16"),
        (None, "cnn", "fp32"),
        ("T4", "cnn", "fp16"),
        ("A100-SXM4-80GB", "other", "bf16"),
        # Issue 22's new classes: no published training measurement (training-performance.md §8.5), so no row.
        ("H20", "transformer", "bf16"),
        ("H20", "transformer", "fp8"),
        ("H20", "cnn", "fp16"),
        ("L20", "transformer", "bf16"),
        ("L20", "cnn", "fp16"),
        ("RTX-PRO-5000-Blackwell-72GB", "transformer", "bf16"),
        ("RTX-PRO-5000-Blackwell-48GB", "cnn", "fp16"),
    ],
)
def test_no_anchor_means_no_default(gpu, kind, precision):
    # No '*' fallback rows any more: a GPU class nobody measured has no MFU.
    assert sizing.default_mfu(gpu, kind, precision) is None


def _derived_mfu_rows() -> list[dict[str, str]]:
    with (DATA_DIR / "mfu.csv").open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["confidence"] == "derived"]


def _evaluate(arithmetic: str) -> float:
    """The value of a derivation's arithmetic as written in mfu.csv (``x`` for ×, GFLOP/TFLOPS as powers of ten)."""
    expr = arithmetic.replace(" GFLOP", "e9").replace(" TFLOPS", "e12").replace(" img/s", "").replace(" x ", " * ")
    if not re.fullmatch(r"[0-9.e*/() +-]+", expr):
        raise AssertionError(f"unexpected derivation syntax: {arithmetic!r}")
    return float(eval(expr, {"__builtins__": {}}))  # only digits and operators reach here


def test_mfu_derivations_match_their_arithmetic():
    """Every derived row of mfu.csv equals the arithmetic written
    in its derivation column (to the 3 decimals stored)."""
    rows = _derived_mfu_rows()
    assert len(rows) >= 40
    for row in rows:
        arithmetic = row["derivation"].split(":", 1)[0]
        assert _evaluate(arithmetic) == pytest.approx(float(row["mfu"]), abs=5e-4), row


def test_mfu_levels_are_ordered_and_complete():
    """Each (class, kind, precision) has exactly one tuned, typical
    and conservative row, tuned ≥ typical ≥ conservative."""
    groups: dict[tuple[str, str, str], dict[str, float]] = {}
    with (DATA_DIR / "mfu.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            levels = groups.setdefault((row["gpu_class"], row["model_kind"], row["precision_group"]), {})
            assert row["level"] not in levels, row
            levels[row["level"]] = float(row["mfu"])
            assert row["source"] and row["derivation"], row
    assert groups
    for key, levels in groups.items():
        assert set(levels) == {"tuned", "typical", "conservative"}, key
        assert levels["tuned"] >= levels["typical"] >= levels["conservative"] > 0, key


def test_normalised_levels_stay_ordered():
    """Dividing out each anchor's own scaling keeps tuned ≥ typical
    ≥ conservative on one node (anchors differ in scale)."""
    for row in mfu_rows():
        if row.level != "typical":
            continue
        found = sizing.default_mfu(
            row.gpu_class, row.model_kind, {"mixed": "bf16"}.get(row.precision_group, row.precision_group)
        )
        assert found is not None
        tuned, typical, conservative = (sizing.node_mfu(r) for r in found.levels())
        assert tuned >= typical >= conservative > 0, (row.gpu_class, row.model_kind, row.precision_group)
        assert tuned <= 1, row


def test_mfu_derivation_evaluator_reads_the_units():
    assert _evaluate("3 x 7.6 GFLOP x (16621 / 8) img/s / 312 TFLOPS") == pytest.approx(3 * 7.6e9 * 16621 / 8 / 312e12)
    with pytest.raises(AssertionError):
        _evaluate("__import__('os')")


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        # one NVLink node: 1.0 by definition (the MFU anchors were measured on NVLink nodes)
        (
            dict(
                nodes=1,
                gpus_per_node=8,
                nvlink=True,
                fabric_link="tcp",
                rdma_gbps_per_node=None,
                network_gbps=64,
                comm="heavy",
            ),
            1.0,
        ),
        # 2 nodes, TCP, heavy: loss = 0.32 / log2(128) = 0.045714; 1 − 0.045714 × 1 = 0.954286
        (
            dict(
                nodes=2,
                gpus_per_node=8,
                nvlink=True,
                fabric_link="tcp",
                rdma_gbps_per_node=None,
                network_gbps=64,
                comm="heavy",
            ),
            1 - 0.32 / 7,
        ),
        # 32 nodes, TCP, light (Goyal): 1 − (0.10 / 5) × 5 = 0.90
        (
            dict(
                nodes=32,
                gpus_per_node=8,
                nvlink=True,
                fabric_link="tcp",
                rdma_gbps_per_node=None,
                network_gbps=50,
                comm="light",
            ),
            0.90,
        ),
        # RoCE 800 Gbit/s per node = 100 per GPU → DLE BERT row: 1 − (1 − 0.9416)/5 × log2(32) = 0.9416
        (
            dict(
                nodes=32,
                gpus_per_node=8,
                nvlink=True,
                fabric_link="roce",
                rdma_gbps_per_node=800,
                network_gbps=64,
                comm="heavy",
            ),
            0.9416,
        ),
        # eRDMA with unknown bandwidth and unknown VPC bandwidth → slowest rdma heavy row: 1 − 0.045714 × 2 = 0.908571
        (
            dict(
                nodes=4,
                gpus_per_node=8,
                nvlink=True,
                fabric_link="erdma",
                rdma_gbps_per_node=None,
                network_gbps=None,
                comm="heavy",
            ),
            1 - 2 * 0.32 / 7,
        ),
        # 4 GPUs on PCIe, one node: pcie row 1 − (0.0584/5) × log2(4) = 0.97664
        (
            dict(
                nodes=1,
                gpus_per_node=4,
                nvlink=False,
                fabric_link="tcp",
                rdma_gbps_per_node=None,
                network_gbps=64,
                comm="heavy",
            ),
            1 - (1 - 0.9416) / 5 * 2,
        ),
    ],
)
def test_scaling_efficiency(kwargs, expected):
    assert sizing.scaling_efficiency(**kwargs).efficiency == pytest.approx(expected, rel=1e-9)


def test_scaling_flags_bandwidth_bound_links():
    notes = sizing.scaling_efficiency(
        nodes=4, gpus_per_node=8, nvlink=True, fabric_link="tcp", rdma_gbps_per_node=None, network_gbps=64, comm="heavy"
    ).notes
    assert any("8 Gbit/s per GPU is below the 100 Gbit/s" in n for n in notes)


def test_training_hours():
    # 6e20 FLOPs ÷ (8 × 312e12 × 0.40 × 1.0) = 600,961.5 s = 166.934 h
    assert sizing.training_hours(6e20, 8, 312, 0.40, 1.0) == pytest.approx(166.93376, rel=1e-6)


@pytest.mark.parametrize(
    "precision, optimizer, expected",
    [
        ("bf16", "adamw", 16),
        ("fp16", "adam", 16),
        ("fp32", "adam", 16),
        ("bf16", "sgd_momentum", 12),
        ("fp32", "sgd", 8),
        ("tf32", "sgd_momentum", 12),
        ("fp8", "adam", 16),
    ],
)
def test_bytes_per_param(precision, optimizer, expected):
    assert sizing.bytes_per_param(precision, optimizer) == expected


def test_model_state_sharded_and_not():
    # 70e9 × 16 B = 1.12e12 B = 1,043.1 GiB; sharded over 64 GPUs → 16.30 GiB each
    j = job(params=70e9, tokens=2e12)
    assert sizing.model_state_gib_per_gpu(j, 64) == pytest.approx(70e9 * 16 / 2**30 / 64)
    unsharded = job(params=70e9, tokens=2e12, sharding=False)
    assert sizing.model_state_gib_per_gpu(unsharded, 64) == pytest.approx(70e9 * 16 / 2**30)


def test_data_rates():
    # 100 TB × 1 epoch over 10 h = 1e14 B / 36,000 s = 2,777.8 MB/s; 100 TB/day = 1e14 / 86,400 = 1,157.4 MB/s
    j = job(dataset_tb=100, ingest_tb_per_day=100)
    assert sizing.read_rate_mb_s(j, 10) == pytest.approx(2777.777, rel=1e-5)
    assert sizing.ingest_rate_mb_s(j) == pytest.approx(1157.407, rel=1e-5)
    assert sizing.read_rate_mb_s(job(), 10) is None


@pytest.mark.parametrize(
    "model, cls",
    [
        ("A100-SXM4-80GB", "A100"),
        ("A800-PCIe-80GB", "A100"),
        ("H800-SXM5-80GB", "H100"),
        ("A10", "A10"),
        ("L40S", "L40S"),
        (None, None),
        ("mystery", None),
    ],
)
def test_gpu_class(model, cls):
    assert sizing.gpu_class(model) == cls


def test_cost_functions():
    # 3 nodes × ¥240/h × 60 h = ¥43,200; × 4 runs = ¥172,800; always on 3 × 240 × 8,760 = ¥6,307,200
    assert cost.cost_cny_per_run(240, 3, 60) == pytest.approx(43200)
    assert cost.cost_cny_per_year(43200, 4) == pytest.approx(172800)
    assert cost.always_on_cny_per_year(240, 3) == pytest.approx(6307200)
    assert cost.cost_cny_per_run(None, 3, 60) is None


def test_an_anchor_is_normalised_with_its_own_models_communication_class():
    """Llama 2 (250 nodes at 200 Gbit/s per GPU) is normalised with the heavy ≥ 100 Gbit/s row, whatever job is
    estimated; BLOOM-176B (48 nodes, 50 Gbit/s per GPU) is marked not fabric-bound, so its 50 Gbit/s does not put it
    in the bandwidth-bound row (1 − 0.32/7 × log2(48) = 0.745 would need 64% on one node, above any A100 figure)."""
    rows = {
        r.level: r
        for r in mfu_rows()
        if (r.gpu_class, r.model_kind, r.precision_group) == ("A100", "transformer", "mixed")
    }
    llama2, bloom = rows["typical"], rows["conservative"]
    assert (llama2.anchor_nodes, llama2.anchor_gbps_per_gpu, llama2.anchor_fabric_bound) == (250, 200, True)
    assert sizing.node_mfu(llama2) == pytest.approx(0.435 / (1 - 0.0584 / 5 * math.log2(250)))
    assert (bloom.anchor_nodes, bloom.anchor_gbps_per_gpu, bloom.anchor_comm) == (48, 50, "heavy")
    assert bloom.anchor_fabric_bound is False
    assert sizing.node_mfu(bloom) == pytest.approx(bloom.mfu / (1 - 0.0584 / 5 * math.log2(48)))
    # Had the fabric been the limit, the bandwidth-bound row would apply: the flag is what moves it.
    bound = dataclasses.replace(bloom, anchor_fabric_bound=True)
    assert sizing.node_mfu(bound) == pytest.approx(bloom.mfu / (1 - 0.32 / 7 * math.log2(48)))
    resnet = next(r for r in mfu_rows() if (r.gpu_class, r.model_kind, r.level) == ("A100", "cnn", "typical"))
    assert resnet.anchor_comm == "light"
    assert {r.anchor_comm for r in mfu_rows() if r.model_kind == "transformer"} == {"heavy"}


def test_unknown_bandwidths_are_said_and_use_the_slowest_rows():
    erdma = sizing.scaling_efficiency(
        nodes=4,
        gpus_per_node=8,
        nvlink=True,
        fabric_link="erdma",
        rdma_gbps_per_node=None,
        network_gbps=800,
        comm="heavy",
    )
    assert "erdma bandwidth not published: the VPC bandwidth is used as the RDMA bandwidth" in erdma.notes
    assert erdma.gbps_per_gpu == 100 and erdma.link == "rdma"
    unknown = sizing.scaling_efficiency(
        nodes=4,
        gpus_per_node=8,
        nvlink=True,
        fabric_link="tcp",
        rdma_gbps_per_node=None,
        network_gbps=None,
        comm="light",
    )
    assert "network bandwidth unknown: the slowest scaling anchor is used" in unknown.notes
    assert unknown.efficiency == pytest.approx(1 - 0.10 / 5 * 2)  # tcp light: Goyal 0.90 at 32 nodes
    known = sizing.scaling_efficiency(
        nodes=4, gpus_per_node=8, nvlink=True, fabric_link="roce", rdma_gbps_per_node=800, network_gbps=64, comm="heavy"
    )
    assert not any("not published" in n or "unknown" in n for n in known.notes)


def test_a_class_with_an_incomplete_range_is_a_data_error(monkeypatch):
    rows = tuple(
        r
        for r in mfu_rows()
        if not (
            r.gpu_class == "A100"
            and r.model_kind == "cnn"
            and r.precision_group == "mixed"
            and r.level == "conservative"
        )
    )
    monkeypatch.setattr(sizing, "mfu_rows", lambda: rows)
    with pytest.raises(LookupError, match="data/mfu.csv: A100 cnn/mixed lacks the conservative row"):
        sizing.default_mfu("A100-SXM4-80GB", "cnn", "bf16")


@pytest.mark.parametrize(
    "gpu, cls",
    [
        ("H20", "H20"),
        ("H200", "H200"),
        ("L20", "L20"),
        ("H800-SXM5-80GB", "H100"),
        ("RTX-PRO-5000-Blackwell-72GB", "RTX-PRO-5000"),
        ("NVIDIA RTX PRO 6000 Blackwell", "RTX-PRO-6000"),
        ("GB200", "B200"),
        ("B300", "B300"),
        ("Unknown-GPU", None),
    ],
)
def test_gpu_class_names_the_new_classes(gpu, cls):
    assert sizing.gpu_class(gpu) == cls
