"""Lingjun (PAI-Lingjun, eflo) in `aitrain recommend`: the what-if scaling figures against sizing's own model, the
region rule, the not-communication-heavy case, and a catalog without Lingjun types (output otherwise identical)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints.advisor import sizing
from blueprints.advisor.choice import estimate
from blueprints.advisor.job import Job, parse_job
from blueprints.advisor.lingjun import HEADING, lingjun_lines
from blueprints.advisor.options import Option
from blueprints.catalog import load_catalog
from blueprints.catalog.loader import CATALOG_DIR
from blueprints.cli.main import app

runner = CliRunner()
LLAMA2 = str(Path(__file__).resolve().parents[2] / "examples" / "llama2-70b.yaml")
LLAMA = {
    "name": "llama2-70b",
    "model_kind": "transformer",
    "params": 70e9,
    "tokens": 2e12,
    "precision": "bf16",
    "optimizer": "adamw",
    "runs_per_year": 1,
}
RESNET = {
    "name": "resnet50",
    "model_kind": "cnn",
    "params": 2.5e7,
    "forward_gflops": 7.6,
    "samples": 1281167,
    "epochs": 90,
    "precision": "fp16",
    "optimizer": "sgd_momentum",
}
GIVES = re.compile(r"the scaling model gives (\d\.\d\d) vs (\d\.\d\d) for (\d+) × (\S+) ")
FEWER = re.compile(r"i\.e\. up to (\d+\.\d)% fewer hours at the same GPU and MFU")


def job(fields: dict[str, Any], region: str) -> Job:
    return parse_job(dict(fields, region=region))


def option(the_job: Job, instance_type: str, nodes: int) -> Option:
    return estimate(the_job, load_catalog(), instance_type, nodes)[0]


def what_if(the_job: Job, chosen: Option) -> sizing.Scaling:
    """The model's own figure for the chosen option's GPUs over 800 Gbit/s RoCE per node (the chosen type's nodes)."""
    inst = load_catalog().instance_types[chosen.instance_type]
    return sizing.scaling_efficiency(
        nodes=math.ceil(chosen.gpus / inst.gpu_count),
        gpus_per_node=inst.gpu_count,
        nvlink=inst.nvlink,
        fabric_link="roce",
        rdma_gbps_per_node=800.0,
        network_gbps=800.0,
        comm=sizing.comm_class(the_job),
    )


def test_a_tcp_option_gets_the_models_rdma_figure_and_the_hours_it_saves() -> None:
    the_job = job(LLAMA, "cn-wulanchabu")
    chosen = option(the_job, "ecs.gn7-c13g1.26xlarge", 4)
    (line,) = lingjun_lines(the_job, load_catalog(), chosen)
    ours = what_if(the_job, chosen)
    assert ours.link == "rdma" and ours.gbps_per_gpu == pytest.approx(100.0)
    found = GIVES.search(line)
    assert found is not None, line
    assert float(found[1]) == pytest.approx(ours.efficiency, abs=0.005)
    assert float(found[2]) == pytest.approx(chosen.scaling_efficiency, abs=0.005)
    assert (found[3], found[4]) == ("4", "ecs.gn7-c13g1.26xlarge")
    assert ours.efficiency > chosen.scaling_efficiency + 0.03  # RDMA at 100 Gbit/s per GPU vs TCP at 3.75
    saved = FEWER.search(line)
    assert saved is not None, line
    assert float(saved[1]) == pytest.approx(100 * (1 - chosen.scaling_efficiency / ours.efficiency), abs=0.05)
    assert line.startswith("Lingjun efg1.nvga8n (sold on quote; seen in cn-wulanchabu-a (HPN zone A1)): ")
    assert "800 Gbit/s (stated for the cluster network, per node not stated)" in line
    assert "on 4 × 8-GPU nodes (GPUs per node and NVLink as the chosen type's: Lingjun's are not published)" in line
    assert "taking the 800 Gbit/s as each node's" in line
    assert "rdma 100 Gbit/s per GPU vs 0.91 over tcp 3.75 Gbit/s per GPU, an optimistic figure" in line
    assert "publishes neither the GPU model nor the GPU count nor a price for this type" in line
    assert line.endswith("so it is never chosen automatically; plan it with the lingjun-cluster blueprint.")


ERDMA = re.compile(
    r"against the fastest eRDMA of an ECS type with (\d+) GPUs \((\S+), rdma ([\d.]+) Gbit/s per GPU\) the same "
    r"GPUs scale at ([\d.]+) \(between nodes ([\d.]+)\)"
)


def test_the_line_weighs_lingjun_against_the_fastest_erdma_ecs_type_at_the_same_gpus() -> None:
    the_job = job(LLAMA, "cn-wulanchabu")
    catalog = load_catalog()
    chosen = option(the_job, "ecs.gn7-c13g1.26xlarge", 30)
    (line,) = lingjun_lines(the_job, catalog, chosen)
    found = ERDMA.search(line)
    assert found is not None, line
    # The eRDMA type with the most RDMA bandwidth per GPU among the catalog's 8-GPU eRDMA types.
    erdma = [
        t for t in catalog.instance_types.values() if t.fabric_link == "erdma" and t.rdma_gbps and t.gpu_count == 8
    ]
    best = max(erdma, key=lambda t: (t.rdma_gbps / t.gpu_count, t.instance_type))
    assert (found[1], found[2]) == ("8", best.instance_type)
    assert float(found[3]) == pytest.approx(best.rdma_gbps / 8)
    inst = catalog.instance_types[chosen.instance_type]
    theirs = sizing.scaling_efficiency(
        nodes=30,
        gpus_per_node=8,
        nvlink=inst.nvlink,
        fabric_link="erdma",
        rdma_gbps_per_node=best.rdma_gbps,
        network_gbps=best.network_gbps,
        comm=sizing.comm_class(the_job),
    )
    assert float(found[4]) == pytest.approx(theirs.efficiency, abs=0.005)
    assert float(found[5]) == pytest.approx(theirs.inter_node, abs=0.005)
    ours = what_if(the_job, chosen)
    saved = re.compile(r": up to ([\d.]+)% fewer hours at the same GPU and MFU").match(line[found.end() :])
    assert saved is not None, line
    assert float(saved[1]) == pytest.approx(100 * (1 - theirs.efficiency / ours.efficiency), abs=0.05)


def test_an_rdma_option_at_100_gbit_per_gpu_gains_nothing_in_the_model() -> None:
    the_job = job(LLAMA, "cn-wulanchabu")
    chosen = option(the_job, "ecs.sccgn7ex.32xlarge", 4)
    (line,) = lingjun_lines(the_job, load_catalog(), chosen)
    assert what_if(the_job, chosen).efficiency == pytest.approx(chosen.scaling_efficiency)
    # Against the chosen RoCE type nothing changes; against eRDMA (under 100 Gbit/s per GPU) Lingjun still gains.
    assert "i.e. the same hours at the same GPU and MFU; against the fastest eRDMA" in line


def test_types_with_the_same_published_facts_share_one_line_in_their_region() -> None:
    the_job = job(LLAMA, "cn-hangzhou")
    chosen = option(the_job, "ecs.gn7-c13g1.26xlarge", 4)
    (line,) = lingjun_lines(the_job, load_catalog(), chosen)
    assert line.startswith("Lingjun efg1.nvga1n, efg2.C48cA3sen (sold on quote; seen in cn-hangzhou-b (HPN zone B1))")
    assert "efg1.nvga8n" not in line
    assert "for these types" in line and "so they are never chosen automatically; plan them with" in line


def test_outside_their_regions_one_line_names_where_the_catalog_shows_them() -> None:
    the_job = job(LLAMA, "cn-shanghai")
    (line,) = lingjun_lines(the_job, load_catalog(), option(the_job, "ecs.gn7-c13g1.26xlarge", 4))
    assert line.startswith("Lingjun: none in cn-shanghai in the catalog, so none is weighed here; its sources show ")
    assert "efg1.nvga1n, efg2.C48cA3sen in cn-hangzhou and efg1.nvga8n in cn-wulanchabu" in line
    assert "scaling model" not in line and "%" not in line


def test_a_job_that_is_not_communication_heavy_is_told_the_fabric_barely_matters() -> None:
    the_job = job(RESNET, "cn-hangzhou")
    assert sizing.comm_class(the_job) == "light"
    chosen = option(the_job, "ecs.gn7-c13g1.13xlarge", 3)
    (line,) = lingjun_lines(the_job, load_catalog(), chosen)
    assert (
        "this job is not communication-heavy (2.5e+07 parameters, below comm_heavy_min_params 1e+08), "
        "so the fabric barely matters for it" in line
    )
    ours = what_if(the_job, chosen)
    found = GIVES.search(line)
    assert found is not None, line
    assert float(found[1]) == pytest.approx(ours.efficiency, abs=0.005)
    assert float(found[2]) == pytest.approx(chosen.scaling_efficiency, abs=0.005)
    assert 0 < ours.efficiency - chosen.scaling_efficiency < 0.03
    assert "on 3 × 4-GPU nodes" in line and "rdma 200 Gbit/s per GPU" in line


def test_one_node_and_no_choice_give_no_figure_to_weigh() -> None:
    the_job = job(LLAMA, "cn-hangzhou")
    (line,) = lingjun_lines(the_job, load_catalog(), option(the_job, "ecs.gn7-c13g1.26xlarge", 1))
    assert "the chosen option runs on one node (8 GPUs), so no traffic crosses a fabric" in line
    assert "the fabric does not matter at this size" in line and "fewer hours" not in line
    (line,) = lingjun_lines(the_job, load_catalog(), None)
    assert "no ECS option was chosen, so there is no GPU count to weigh its fabric at" in line


@pytest.fixture
def no_lingjun(tmp_path: Path) -> Path:
    """A copy of the shipped catalog whose lingjun_node_types.csv holds only its header line."""
    copy = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    csv = copy / "lingjun_node_types.csv"
    csv.write_text(csv.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    return copy


def _recommend(*args: str, catalog: Path | None = None) -> str:
    env = {"AITRAIN_CATALOG_DIR": str(catalog) if catalog else ""}
    result = runner.invoke(app, ["recommend", LLAMA2, "--region", "cn-hangzhou", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def _without_section(text: str, heading: str) -> str:
    """``text`` without ``heading``, the blank line before it and its lines (up to the next blank line)."""
    lines = text.split("\n")
    start = lines.index(heading)
    end = lines.index("", start)
    assert any(line.lstrip().startswith("- Lingjun") for line in lines[start:end]), "the section has no lines"
    return "\n".join(lines[: start - 1] + lines[end:])


def test_without_lingjun_types_the_section_is_absent_and_the_rest_identical(no_lingjun: Path) -> None:
    assert load_catalog(no_lingjun).lingjun == {}
    table, empty_table = _recommend(), _recommend(catalog=no_lingjun)
    assert HEADING in table and "Lingjun" not in empty_table
    assert table.index("Considered (best option") < table.index(HEADING) < table.index("Why not chosen:")
    assert _without_section(table, HEADING) == empty_table
    doc, empty_doc = (json.loads(_recommend("--format", "json", catalog=c)) for c in (None, no_lingjun))
    assert empty_doc.pop("lingjun") == [] and len(doc.pop("lingjun")) == 1
    assert doc == empty_doc


def _edited_catalog(tmp_path: Path, **cells: str) -> Any:
    """The shipped catalog with efg1.nvga8n's row edited (``column=value``), loaded."""
    import csv as csv_module

    copy = tmp_path / "edited"
    shutil.copytree(CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "lingjun_node_types.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv_module.DictReader(handle))
    for row in rows:
        if row["machine_type"] == "efg1.nvga8n":
            row.update(cells)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv_module.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return load_catalog(copy)


def test_a_type_of_unstated_bandwidth_gets_no_figure(tmp_path: Path) -> None:
    catalog = _edited_catalog(tmp_path, fabric_gbps="")
    the_job = job(LLAMA, "cn-wulanchabu")
    (line,) = lingjun_lines(the_job, catalog, option(the_job, "ecs.gn7-c13g1.26xlarge", 4))
    assert "RDMA (RoCE) of unstated bandwidth — with no stated bandwidth the scaling model has no figure" in line
    assert "%" not in line


def test_a_slower_stated_fabric_says_more_hours_and_a_stated_gpu_count_is_used(tmp_path: Path) -> None:
    # 80 Gbit/s stated per node over 8 GPUs (10 per GPU) is below sccgn7ex's RoCE 100 per GPU: Lingjun would be slower.
    catalog = _edited_catalog(tmp_path, fabric_gbps="80", fabric_scope="node", gpu_count="8")
    the_job = job(LLAMA, "cn-wulanchabu")
    chosen = option(the_job, "ecs.sccgn7ex.32xlarge", 4)
    (line,) = lingjun_lines(the_job, catalog, chosen)
    assert "on 4 × 8-GPU nodes (stated)" in line and "taking the" not in line
    assert re.search(r"i\.e\. (\d+\.\d)% more hours at the same GPU and MFU", line), line
    assert catalog.lingjun["efg1.nvga8n"].gpu_count == 8


def test_without_an_erdma_type_of_that_many_gpus_the_line_says_so(tmp_path: Path) -> None:
    # The 4-GPU eRDMA type with a stated bandwidth is ebmgn8ia; with its rdma_gbps blank no 4-GPU type qualifies.
    the_job = job(RESNET, "cn-hangzhou")
    chosen = option(the_job, "ecs.gn7-c13g1.13xlarge", 3)  # 4 GPUs per node
    (line,) = lingjun_lines(the_job, load_catalog(), chosen)
    assert (
        "against the fastest eRDMA of an ECS type with 4 GPUs (ecs.ebmgn8ia.64xlarge, rdma 40 Gbit/s per GPU)" in line
    )
    copy = tmp_path / "no-4-gpu-erdma"
    shutil.copytree(CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    types = copy / "instance_types.csv"
    text = types.read_text(encoding="utf-8")
    row = next(r for r in text.splitlines() if r.startswith("ecs.ebmgn8ia.64xlarge,"))
    types.write_text(text.replace(row, row.replace(",erdma,160,", ",erdma,,", 1)), encoding="utf-8")
    (line,) = lingjun_lines(the_job, load_catalog(copy), chosen)
    assert "no eRDMA ECS type of 4 GPUs per node to weigh it against" in line


def test_the_erdma_comparison_uses_the_same_nodes_as_lingjuns_what_if(tmp_path: Path) -> None:
    # A stated 16 GPUs per Lingjun node: its what-if runs 32 GPUs on 2 nodes, so eRDMA is weighed at 16 GPUs per node
    # too (none in the catalog), never at the chosen type's 8.
    catalog = _edited_catalog(tmp_path, gpu_count="16")
    the_job = job(LLAMA, "cn-wulanchabu")
    (line,) = lingjun_lines(the_job, catalog, option(the_job, "ecs.gn7-c13g1.26xlarge", 4))
    assert "on 2 × 16-GPU nodes (stated)" in line
    assert "no eRDMA ECS type of 16 GPUs per node to weigh it against" in line
