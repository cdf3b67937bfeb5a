"""The health gate's judgement: node answers (recorded DescribeInvocationResults shapes), thresholds with their
sources, pairwise narrowing, and the three report formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprints.catalog import load_catalog
from blueprints.health.gate import health_gate_output
from blueprints.health.narrowing import plan_pairs, suspects
from blueprints.health.report import HealthReport, as_json, render
from blueprints.health.suites import expectations
from blueprints.health.thresholds import bus_bandwidth, fabric_rules, threshold_for
from blueprints.health.verdict import judge_allreduce, judge_node
from blueprints.launch.runs import parse_invocation

CATALOG = load_catalog()
ERDMA = CATALOG.instance_types["ecs.ebmgn7ex.32xlarge"]
EXP = expectations(CATALOG, ERDMA)
DATA = Path(__file__).parent / "data" / "health"


def answered(name: str):
    finished, results = parse_invocation((DATA / f"describe-{name}.json").read_text())
    assert finished and len(results) == 1
    return judge_node(results[0].instance_id, results[0].output, EXP, "quick", results[0].exit_code)


def test_healthy_node_passes_every_check():
    v = answered("healthy")
    assert v.healthy and v.reasons == []
    assert {r.name: r.status for r in v.results} == {
        "gpu_count": "pass", "gpu_model": "pass", "driver": "pass", "cuda": "pass", "torch_nccl": "pass",
        "ecc": "pass", "retired_pages": "pass", "xid": "pass", "nvlink": "pass", "rdma": "pass", "shared": "pass",
        "scratch": "skip", "metrics_agent": "pass",
    }  # fmt: skip
    assert v.host == "node-healthy" and v.ip == "10.20.0.11"
    assert next(r.detail for r in v.results if r.name == "torch_nccl") == "2.5.1, NCCL 2.21.5"


def test_ecc_errors_fail_the_node_naming_the_gpu():
    v = answered("ecc")
    assert not v.healthy
    assert v.reasons == ["ecc: GPU 3 2 uncorrected (volatile); GPU 3 5 uncorrected (aggregate)"]


def test_xid_79_fails_the_node_as_fallen_off_the_bus_and_the_gpu_count_too():
    v = answered("xid79")
    assert "xid: XID 79 (GPU has fallen off the bus) x1" in v.reasons
    assert any(r.startswith("gpu_count: 7 GPUs visible, 8 expected") for r in v.reasons)


def test_other_xid_codes_only_warn():
    facts_line = (DATA / "describe-healthy.json").read_text().replace('\\"xid\\":\\"\\"', '\\"xid\\":\\"13x2\\"')
    _, results = parse_invocation(facts_line)
    v = judge_node("i-x0001", results[0].output, EXP)
    assert v.healthy and any(r.status == "warn" and "13 x2" in r.detail for r in v.results)


@pytest.mark.parametrize(
    ("seen", "status"),
    [
        ("not running (boot: failed (see /var/log/aitrain-cloudmonitor.log))", "warn"),
        ("not installed by the boot", "skip"),
    ],
)
def test_a_dead_metrics_agent_warns_and_a_node_without_one_skips(seen, status):
    """The pool's scale-in alarm reads the agent's metric: a node whose agent died trains, but the gate says so."""
    text = (
        (DATA / "describe-healthy.json")
        .read_text()
        .replace('\\"metrics_agent\\":\\"running\\"', f'\\"metrics_agent\\":\\"{seen}\\"')
    )
    _, results = parse_invocation(text)
    v = judge_node("i-x0001", results[0].output, EXP)
    (agent,) = [r for r in v.results if r.name == "metrics_agent"]
    expected = seen if status == "warn" else "this node's boot installs no CloudMonitor agent"
    assert v.healthy and (agent.status, agent.detail) == (status, expected)


def test_wrong_gpu_count_fails():
    v = answered("gpu_count")
    assert v.reasons == ["gpu_count: 4 GPUs visible, 8 expected (" + ";".join(["NVIDIA A100-SXM4-80GB"] * 4) + ")"]


def test_no_check_line_is_a_failure_quoting_the_answer():
    v = judge_node("i-x0001", "sh: 1: nvidia-smi: Permission denied\n", EXP, exit_code=126)
    assert v.reasons == ["answer: no AITRAIN-CHECK line (exit 126; sh: 1: nvidia-smi: Permission denied)"]
    assert not judge_node("i-x0001", 'AITRAIN-CHECK {"aitrain_check":"v0","facts":{}}', EXP).healthy


def test_thresholds_per_fabric_come_from_the_catalog_with_their_source():
    erdma = threshold_for(ERDMA, "erdma")
    assert erdma.expected_busbw_gbps == ERDMA.rdma_gbps == 160
    assert erdma.threshold_gbps == 160 * fabric_rules()["erdma"].pass_fraction
    assert "rdma_gbps 160 Gbit/s of ecs.ebmgn7ex.32xlarge" in erdma.source and "nccl-tests" in erdma.source
    roce = threshold_for(CATALOG.instance_types["ecs.sccgn7ex.32xlarge"], "roce")
    assert roce.expected_busbw_gbps == 800
    tcp_type = CATALOG.instance_types["ecs.gn7i-c8g1.2xlarge"]
    tcp = threshold_for(tcp_type, "tcp")
    assert tcp.expected_busbw_gbps == tcp_type.network_gbps and tcp.threshold_gbps == tcp_type.network_gbps * 0.5
    unknown = threshold_for(CATALOG.instance_types["ecs.gn8v-8x.48xlarge"], "erdma")  # rdma_gbps not published
    assert unknown.threshold_gbps is None and unknown.source.startswith("unknown: the catalog gives no rdma_gbps")
    assert set(fabric_rules()) == {"erdma", "roce", "tcp"}


def test_bus_bandwidth_is_nccl_tests_definition():
    assert bus_bandwidth(10.0, 2) == 10.0
    assert bus_bandwidth(10.0, 8) == 17.5
    assert bus_bandwidth(10.0, 1) == 0.0


def ar_output(busbw: float, correct: bool = True) -> str:
    data = {"aitrain_allreduce": "v1", "busbw_gbps": busbw, "algbw_gbps": busbw / 1.5, "world_size": 32,
            "correct": correct}  # fmt: skip
    return "torchrun noise\nAITRAIN-ALLREDUCE " + json.dumps(data) + "\n"


def test_allreduce_verdict_against_the_threshold_and_unknown_without_one():
    t = threshold_for(ERDMA, "erdma")
    nodes = ["i-a001", "i-b002"]
    assert judge_allreduce(t, nodes, ["", ar_output(140.0)]).status == "pass"
    slow = judge_allreduce(t, nodes, [ar_output(20.0), ""])
    assert slow.status == "fail" and "is below the threshold 128 Gbit/s" in slow.detail
    assert judge_allreduce(t, nodes, [ar_output(200.0, correct=False)]).status == "fail"
    assert judge_allreduce(t, nodes, ["", ""]).detail == "no node printed a result"
    none = threshold_for(CATALOG.instance_types["ecs.gn8v-8x.48xlarge"], "erdma")
    unknown = judge_allreduce(none, nodes, [ar_output(20.0)])
    assert unknown.status == "unknown" and "measured and reported without a pass/fail" in unknown.detail


@given(st.integers(min_value=3, max_value=40), st.data())
def test_one_slow_node_is_exactly_the_suspect(n, data):
    nodes = [f"i-n{k:04d}" for k in range(n)]
    bad = data.draw(st.sampled_from(nodes))
    rounds = plan_pairs(nodes)
    for round_ in rounds:  # a round's pairs are disjoint, so they run at once
        members = [x for pair in round_ for x in pair]
        assert len(members) == len(set(members))
    tested = [pair for round_ in rounds for pair in round_]
    assert all(sum(x in pair for pair in tested) == 2 for x in nodes)  # each node with two partners
    found = suspects({pair: bad in pair for pair in tested})
    assert found.suspects == (bad,)


@given(st.integers(min_value=3, max_value=30), st.data())
def test_every_slow_node_is_named_and_a_named_healthy_node_has_only_slow_partners(n, data):
    nodes = [f"i-n{k:04d}" for k in range(n)]
    bad = set(data.draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=n, unique=True)))
    tested = [pair for round_ in plan_pairs(nodes) for pair in round_]
    found = set(suspects({pair: bool(bad & set(pair)) for pair in tested}).suspects)
    assert bad <= found
    for node in found - bad:
        assert all(bad & set(p) for p in tested if node in p)


def test_two_nodes_cannot_be_told_apart_and_fast_pairs_name_nobody():
    assert plan_pairs(["a", "b"]) == [[("a", "b")]] and plan_pairs(["a"]) == []
    two = suspects({("a", "b"): True})
    assert two.suspects == ("a", "b") and "cannot tell" in two.reason
    assert suspects({("a", "b"): False, ("b", "c"): False}).suspects == ()


def report(*names: str, allreduce=None) -> HealthReport:
    return HealthReport("medical-imaging", "fixed-cluster", ERDMA.instance_type, "quick",
                        tuple(answered(n) for n in names), allreduce)  # fmt: skip


def test_reports_name_the_failing_node_and_print_the_threshold_with_its_source():
    t = threshold_for(ERDMA, "erdma")
    r = report("healthy", "xid79", allreduce=judge_allreduce(t, ["i-uf6nodehealthy"], [ar_output(150.0)]))
    assert not r.healthy and [n.node for n in r.unhealthy_nodes] == ["i-uf6nodexid79"]
    text = render(r, "text")
    assert "UNHEALTHY" in text and "i-uf6nodexid79 (node-xid79): FAIL" in text
    assert "    - xid: XID 79 (GPU has fallen off the bus) x1" in text
    assert f"threshold: 128 Gbit/s busbw (erdma, expected 160) - {t.source}" in text
    assert "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md" in text
    doc = json.loads(render(r, "json"))
    assert doc["aitrain_check"] == "v1" and doc["healthy"] is False
    assert doc["unhealthy_nodes"] == ["i-uf6nodexid79"]
    assert doc["allreduce"]["threshold_gbps"] == 128 and doc["allreduce"]["source"] == t.source
    md = render(r, "markdown")
    assert "| `i-uf6nodexid79` | node-xid79 | **fail** |" in md and "**unhealthy**" in md
    assert report("healthy").healthy and as_json(report("healthy"))["unhealthy_nodes"] == []


def test_slow_pair_suspects_are_unhealthy_in_the_report():
    t = threshold_for(ERDMA, "erdma")
    ar = judge_allreduce(t, ["i-uf6nodehealthy"], [ar_output(10.0)])
    import dataclasses

    ar = dataclasses.replace(ar, suspects=("i-uf6nodehealthy",), pairs=(("i-uf6nodehealthy", "i-x", 10.0),))
    r = report("healthy", allreduce=ar)
    assert [n.node for n in r.unhealthy_nodes] == ["i-uf6nodehealthy"]
    assert "allreduce: every pair test with this node was slow" in render(r, "text")


@pytest.mark.parametrize("engine", ["torchrun", "kubernetes"])
def test_health_gate_output_is_json_plain_with_suite_and_sourced_threshold(engine):
    out = health_gate_output(CATALOG, ERDMA, "erdma", engine)
    assert json.loads(json.dumps(out)) == out
    assert out["suite"][:2] == ["gpu_count", "gpu_model"] and "rdma" in out["suite"] and out["suite"][-1] == "allreduce"
    assert out["allreduce"] == threshold_for(ERDMA, "erdma").as_output()
    assert out["command"].startswith("aitrain check") == (engine == "torchrun")
