"""Any plan fits one GitHub comment: the Markdown plan summarises in steps (cloud-init, folded rows, first rows
only) and says so at the top; a plan that fits is never summarised."""

from __future__ import annotations

import base64
import re

from markdown_it import MarkdownIt

from blueprints.review.plan import Plan, PlannedResource
from blueprints.review.render import render_markdown
from blueprints.review.render.fit import COMMENT_BUDGET, GITHUB_COMMENT_LIMIT

PARSER = MarkdownIt("commonmark").enable("table")
CLOUD_INIT = "#cloud-config\nhostname: {}\nruncmd:\n" + "  - echo step\n" * 40
ERDMA_256 = {
    "compute.instance_type": "ecs.ebmgn7ex.32xlarge",
    "compute.nodes": 256,
    "compute.scratch_gib": 3072,
    "network.admin_cidr": "203.0.113.0/24",
    "access.login_node": True,
    "access.key_pair_name": "ops",
}


def synthetic_plan(n: int = 5000, components: int = 1, types: int = 1) -> Plan:
    """``n`` per-node instances with cloud-init, spread over ``components`` components and ``types`` types."""
    resources: list[PlannedResource] = [
        PlannedResource(f"aitrain:compute:GpuCluster{c}", f"comp-{c}", None, False, {}) for c in range(components)
    ]
    for i in range(n):
        token = "alicloud:ecs/instance:Instance" if types == 1 else f"alicloud:ecs/kind{i % types}:Kind{i % types}"
        inputs = {
            "instanceType": "ecs.ebmgn7ex.32xlarge",
            "availabilityZone": "cn-shanghai-a",
            "userData": base64.b64encode(CLOUD_INIT.format(i).encode()).decode(),
        }  # one text per node
        resources.append(PlannedResource(token, f"node-{i:05d}", f"comp-{i % components}", True, inputs))
    return Plan("fixed-cluster", "cn-shanghai", "synthetic", {"nodes": n}, (), tuple(resources))


def notice(markdown: str) -> str:
    match = re.search(
        r"^\*\*Summarised to fit one GitHub comment:\*\* (.*)\. Run "
        r"`aitrain plan --format json` for every resource and input\.$",
        markdown,
        re.M,
    )
    assert match, "a summarised plan must say so at the top"
    return match.group(1)


def test_presets_fit_without_summarising(medical_plan, autoscaling_plan):
    for plan in (medical_plan, autoscaling_plan):
        markdown = render_markdown(plan)
        assert len(markdown) < COMMENT_BUDGET and "Summarised" not in markdown and "cloud-init of" in markdown


def test_5000_per_node_instances_fold_into_one_row():
    plan = synthetic_plan()
    markdown = render_markdown(plan)
    assert len(markdown) <= COMMENT_BUDGET < GITHUB_COMMENT_LIMIT
    said = notice(markdown)
    assert "the cloud-init of 5000 resources is not shown" in said and "4997 resource rows are folded" in said
    assert "| &nbsp;&nbsp;… and 4997 more `ecs.Instance` | `ecs.Instance` | | |" in markdown
    assert "```yaml" not in markdown
    assert markdown.count("`node-0") == 3  # the first three rows are kept as they are
    assert "5000 × ecs.Instance" in markdown  # the diagram groups them too


def test_5000_distinct_groups_keep_the_first_rows_and_say_how_many_more():
    plan = synthetic_plan(4000, components=1000, types=7)  # 5,000 resources; no type repeats under one parent
    assert len(plan.resources) == 5000
    markdown = render_markdown(plan)
    assert len(markdown) <= COMMENT_BUDGET
    said = notice(markdown)
    shown = int(re.search(r"only the first (\d+) resource rows are shown \((\d+) more\)", said).group(1))  # type: ignore[union-attr]
    more = int(re.search(r"\((\d+) more\)", said).group(1))  # type: ignore[union-attr]
    assert shown + more == len(plan.resources) and shown > 50
    assert f"| … and {more} more rows | | | |" in markdown
    tree = [t for t in PARSER.parse(markdown) if t.type == "tr_open"]
    assert len(tree) > shown  # rows still parse as table rows
    assert markdown.count("\n```") % 2 == 0  # every fence opened is closed
    assert len(markdown) > COMMENT_BUDGET - 2_000  # it keeps as much as fits, not a token few


def test_only_what_does_not_fit_is_summarised():
    small = render_markdown(synthetic_plan(40))
    assert "Summarised" not in small and small.count("```yaml") == 40
    medium = render_markdown(synthetic_plan(200))  # too much cloud-init, but 200 rows fit once it is left out
    assert notice(medium) == "the cloud-init of 200 resources is not shown" and medium.count("`node-") == 200


def test_the_largest_preset_at_256_erdma_nodes_fits():
    from blueprints.testing import offline_plan

    plan = offline_plan("medical-imaging", overrides=ERDMA_256)
    # 256 nodes' unpriced items are named once each, with the count (768 entries would fill the comment).
    assert "medical-imaging-cluster-node-000 and 255 more: 1 × ecs.ebmgn7ex.32xlarge" in plan.costs["totals"]["unknown"]
    assert len(plan.costs["totals"]["unknown"]) < 12
    markdown = render_markdown(plan)
    assert len(markdown) <= COMMENT_BUDGET
    # Its nodes share one cloud-init: shown once, and there is room for it once the rows are folded.
    # 257: the AIT027 warning line (the preset's HTTPS to any address) takes the room of one more row.
    assert (
        notice(markdown)
        == '257 resource rows are folded into "… and N more" rows; 767 cost lines are folded into summed rows'
    )
    assert (
        markdown.count("```yaml") == 1
        and "<code>medical-imaging-cluster-node-000</code> and 255 more with the same text" in markdown
    )
    assert "| &nbsp;&nbsp;… and 253 more `ecs.Instance` | `ecs.Instance` | | |" in markdown
    assert "256 × ecs.Instance" in markdown


def test_a_huge_summary_is_cut_at_whole_lines():
    plan = Plan("fixed-cluster", "cn-shanghai", "p", {f"k{i}": "x" * 200 for i in range(600)}, (), ())
    markdown = render_markdown(plan)
    assert len(markdown) <= COMMENT_BUDGET
    assert re.search(r"_… \d+ more lines are not shown \(one GitHub comment holds 65,536 characters\)", markdown)


def test_fit_blocks_keeps_every_block_that_fits_and_counts_the_rest():
    from blueprints.review.render.fit import fit_blocks

    def omitted(n: int) -> str:
        return f"[{n} left out]"

    assert fit_blocks("H|", ["a", "b", "c"], "|T", omitted, limit=100) == "H|abc|T"  # all fit: no note
    assert fit_blocks("H|", ["aaaa", "bbbb", "cccc"], "|T", omitted, limit=24) == "H|aaaabbbb[1 left out]|T"
