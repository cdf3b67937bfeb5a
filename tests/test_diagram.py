"""The Mermaid diagram of a plan: every custom resource group appears, the text is well-formed (ids, edges, quoting),
names cannot break it, marks colour changed groups, and thousands of resources stay a small drawing."""

from __future__ import annotations

import re
from typing import Any

import pytest

from blueprints.core.tokens import short_type
from blueprints.review.render.diagram import MAX_NODES, label, mermaid_flowchart

NODE_RE = re.compile(r'^(?P<id>[A-Za-z0-9_]+)\["(?P<label>[^"]*)"\]$')
SUBGRAPH_RE = re.compile(r'^subgraph (?P<id>[A-Za-z0-9_]+)\["(?P<label>[^"]*)"\]$')
EDGE_RE = re.compile(r"^(?P<a>[A-Za-z0-9_]+) --> (?P<b>[A-Za-z0-9_]+)$")
CLASSDEF_RE = re.compile(r"^classDef (create|update|replace|refused|delete) [a-z:#0-9,\- ]+$")
CLASS_RE = re.compile(r"^class (?P<ids>[A-Za-z0-9_,]+) (?P<cls>create|update|replace|refused|delete)$")


def parse(text: str) -> dict[str, Any]:
    """Check every line against the small Mermaid subset the diagram uses; return nodes, subgraphs, edges, classes."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD" and text.endswith("\n")
    nodes: dict[str, str] = {}
    subgraphs: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    classes: dict[str, str] = {}
    defined_classes: set[str] = set()
    depth = 0
    for raw in lines[1:]:
        line = raw.strip()
        if m := NODE_RE.match(line):
            assert m["id"] not in nodes and m["id"] not in subgraphs, f"duplicate id {m['id']}"
            nodes[m["id"]] = m["label"]
        elif m := SUBGRAPH_RE.match(line):
            assert depth == 0 and m["id"] not in nodes and m["id"] not in subgraphs
            subgraphs[m["id"]] = m["label"]
            depth += 1
        elif line == "end":
            assert depth == 1
            depth -= 1
        elif m := EDGE_RE.match(line):
            edges.append((m["a"], m["b"]))
        elif m := CLASSDEF_RE.match(line):
            defined_classes.add(m.group(1))
        elif m := CLASS_RE.match(line):
            for node in m["ids"].split(","):
                classes[node] = m["cls"]
        else:
            pytest.fail(f"not a line of the diagram's Mermaid subset: {raw!r}")
    assert depth == 0, "an unclosed subgraph"
    for a, b in edges:
        assert a in nodes and b in nodes, f"edge between undefined ids: {a} --> {b}"
    assert set(classes.values()) <= defined_classes and set(classes) <= set(nodes)
    for text_ in list(nodes.values()) + list(subgraphs.values()):
        stripped = text_.replace("<br/>", "")
        assert "<" not in stripped and ">" not in stripped and "`" not in stripped
    return {"nodes": nodes, "subgraphs": subgraphs, "edges": edges, "classes": classes}


def _resources(plan) -> list[dict[str, Any]]:
    return plan.to_dict()["resources"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("fixture", ["medical_plan", "autoscaling_plan"])
def test_every_custom_resource_group_appears_once(fixture, request):
    plan = request.getfixturevalue(fixture)
    diagram = parse(mermaid_flowchart(_resources(plan), plan.region))
    labels = list(diagram["nodes"].values())
    for kind, count in plan.count_by_type().items():
        shown = [
            lbl
            for lbl in labels
            if lbl.split("<br/>")[0] in (kind, f"{count} × {kind}") or lbl.split("<br/>")[0].endswith(f" × {kind}")
        ]
        assert shown, f"{kind} is missing from the diagram"
    for component in (r for r in plan.resources if not r.custom):
        assert f"{component.type}<br/>{component.name}" in diagram["subgraphs"].values()


def _id_of(diagram: dict[str, Any], kind: str) -> list[str]:
    return [node for node, lbl in diagram["nodes"].items() if lbl.split("<br/>")[0].split(" × ")[-1] == kind]


def test_the_path_region_vpc_vswitch_compute_storage(medical_plan):
    diagram = parse(mermaid_flowchart(_resources(medical_plan), medical_plan.region))
    edges = set(diagram["edges"])
    (vpc,), (vsw,), (nodes,) = (
        _id_of(diagram, "vpc.Network"),
        _id_of(diagram, "vpc.Switch"),
        _id_of(diagram, "ecs.EcsInstanceSet"),
    )
    (mount,), (fs,), (bucket,) = (
        _id_of(diagram, "nas.MountTarget"),
        _id_of(diagram, "nas.FileSystem"),
        _id_of(diagram, "oss.Bucket"),
    )
    (nat,), (eip,) = _id_of(diagram, "vpc.NatGateway"), _id_of(diagram, "ecs.EipAddress")
    assert {
        ("region", vpc),
        (vpc, vsw),
        (vsw, nodes),
        (nodes, mount),
        (mount, fs),
        (nodes, bucket),
        (vsw, nat),
        (nat, eip),
    } <= edges
    assert diagram["nodes"]["region"] == "region cn-shanghai"
    assert "12 nodes<br/>cn-shanghai-a" in diagram["nodes"][nodes]


def test_the_pool_hangs_off_one_vswitch_per_zone(autoscaling_plan):
    diagram = parse(mermaid_flowchart(_resources(autoscaling_plan), autoscaling_plan.region))
    switches = _id_of(diagram, "vpc.Switch")
    (group,) = _id_of(diagram, "ess.ScalingGroup")
    assert len(switches) == 3 and all((s, group) in diagram["edges"] for s in switches)
    assert [diagram["nodes"][s].rsplit("<br/>", 1)[1] for s in switches] == [
        "cn-shanghai-a",
        "cn-shanghai-b",
        "cn-shanghai-c",
    ]


def test_login_node_is_drawn_but_does_not_mount_storage():
    from blueprints.testing import offline_plan
    from tests.test_golden import ERDMA_LOGIN

    plan = offline_plan("medical-imaging", overrides=ERDMA_LOGIN)
    diagram = parse(mermaid_flowchart(_resources(plan), plan.region))
    instances = _id_of(diagram, "ecs.Instance")
    login = next(i for i in instances if "login" in diagram["nodes"][i])
    nodes = next(i for i in instances if diagram["nodes"][i].startswith("2 × ecs.Instance"))
    (mount,) = _id_of(diagram, "nas.MountTarget")
    assert (nodes, mount) in diagram["edges"] and (login, mount) not in diagram["edges"]


def test_deterministic(medical_plan):
    resources = _resources(medical_plan)
    assert mermaid_flowchart(resources, "cn-shanghai") == mermaid_flowchart(list(resources), "cn-shanghai")


HOSTILE = 'x"] --> evil["pwn`<script>` #quot; end\nsubgraph'


def test_hostile_names_cannot_break_the_diagram():
    resources = [
        {"type": "aitrain:compute:GpuCluster", "name": "end", "parent": None, "custom": False, "inputs": {}},
        {
            "type": "alicloud:ecs/instance:Instance",
            "name": HOSTILE,
            "parent": "end",
            "custom": True,
            "inputs": {"availabilityZone": 'z"]'},
        },
        {"type": 'alicloud:vpc/network:Net"]work', "name": "vpc", "parent": None, "custom": True, "inputs": {}},
    ]
    text = mermaid_flowchart(resources, 'cn"]\nshanghai')
    diagram = parse(text)  # every line still parses: no forged node, edge or subgraph
    assert len(diagram["nodes"]) == 3 and len(diagram["subgraphs"]) == 1
    assert "#quot;" in text and "#lt;script#gt;" in text and "#35;quot;" in text and "#96;" in text
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", node) for node in diagram["nodes"])
    assert label('a"b<c>#d`') == "a#quot;b#lt;c#gt;#35;d#96;"


def test_marks_colour_the_worst_action_of_a_group(medical_plan):
    resources = _resources(medical_plan)
    marks = {
        "medical-imaging-cluster-nodes-0": "replace-delete-first",
        "medical-imaging-data-acl": "update",
        "medical-imaging-network-sg": "create",
        "medical-imaging-storage-fs": "refused",
        "medical-imaging-network-nat-eip": "delete",
    }
    diagram = parse(mermaid_flowchart(resources, medical_plan.region, marks))
    by_kind = {
        kind: diagram["classes"].get(_id_of(diagram, kind)[0])
        for kind in (
            "ecs.EcsInstanceSet",
            "oss.BucketAcl",
            "ecs.SecurityGroup",
            "nas.FileSystem",
            "ecs.EipAddress",
            "vpc.Network",
        )
    }
    assert by_kind == {
        "ecs.EcsInstanceSet": "replace",
        "oss.BucketAcl": "update",
        "ecs.SecurityGroup": "create",
        "nas.FileSystem": "refused",
        "ecs.EipAddress": "delete",
        "vpc.Network": None,
    }
    # A group with an update and a replace among its members is drawn as a replace.
    two = [r for r in resources if short_type(r["type"]) != "ecs.SecurityGroupRule"] + [
        {
            "type": "alicloud:ecs/securityGroupRule:SecurityGroupRule",
            "name": f"rule-{i}",
            "parent": "medical-imaging-network",
            "custom": True,
            "inputs": {},
        }
        for i in range(2)
    ]
    diagram = parse(mermaid_flowchart(two, "cn-shanghai", {"rule-0": "update", "rule-1": "replace"}))
    assert diagram["classes"][_id_of(diagram, "ecs.SecurityGroupRule")[0]] == "replace"
    assert "classDef" not in mermaid_flowchart(resources, "cn-shanghai")


def test_thousands_of_resources_stay_a_small_drawing():
    resources: list[dict[str, Any]] = [
        {"type": "aitrain:compute:GpuCluster", "name": f"c{c}", "parent": None, "custom": False, "inputs": {}}
        for c in range(1000)
    ]
    resources += [
        {
            "type": f"alicloud:ecs/kind{i % 7}:Kind{i % 7}",
            "name": f"r{i}",
            "parent": f"c{i % 1000}",
            "custom": True,
            "inputs": {},
        }
        for i in range(4000)
    ]
    text = mermaid_flowchart(resources, "cn-shanghai")
    diagram = parse(text)
    assert len(diagram["nodes"]) <= MAX_NODES + 1 and len(text) < 5_000
    assert {lbl.split(" × ")[1] for lbl in diagram["nodes"].values() if " × " in lbl} == {
        f"ecs.Kind{k}" for k in range(7)
    }
    per_node = [
        {
            "type": "alicloud:ecs/instance:Instance",
            "name": f"n{i}",
            "parent": None,
            "custom": True,
            "inputs": {"availabilityZone": "z"},
        }
        for i in range(5000)
    ]
    assert parse(mermaid_flowchart(per_node, "r"))["nodes"]["g_ecs_Instance_z"] == "5000 × ecs.Instance<br/>z"


def test_too_many_types_are_truncated_and_said():
    resources = [
        {"type": f"alicloud:m/k{i}:K{i}", "name": f"r{i}", "parent": None, "custom": True, "inputs": {}}
        for i in range(200)
    ]
    diagram = parse(mermaid_flowchart(resources, "r"))
    assert len(diagram["nodes"]) == MAX_NODES + 1  # the region, MAX_NODES - 1 groups and the "more" node
    assert diagram["nodes"]["more"] == f"… and {200 - MAX_NODES + 1} more resources in {200 - MAX_NODES + 1} groups"
