"""The diff as terminal text and as GitHub-Flavored Markdown, parsed with markdown-it-py; the CLI's exit codes."""

from __future__ import annotations

import base64
import copy
import json

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.core import userdata
from blueprints.review.diff.compare import diff_plans, empty_plan
from blueprints.review.render.diff import render_diff
from blueprints.review.render.fit import COMMENT_BUDGET
from blueprints.testing import offline_plan

NODES = "medical-imaging-cluster-nodes-0"
TEMPLATE = "medical-imaging-cluster-template"
FS = "medical-imaging-storage-fs"
PARSER = MarkdownIt("commonmark").enable("table")


def as_dict(plan):
    return json.loads(plan.to_json())


def tables(tokens):
    """Each table as a list of rows, each row a list of cell texts (inline content)."""
    out, rows, row, in_cell = [], [], [], False
    for t in tokens:
        if t.type == "table_open":
            rows = []
        elif t.type == "tr_open":
            row = []
        elif t.type in ("td_open", "th_open"):
            in_cell = True
        elif t.type == "inline" and in_cell:
            row.append(t.content)
            in_cell = False
        elif t.type == "tr_close":
            rows.append(row)
        elif t.type == "table_close":
            out.append(rows)
    return out


def changes_table(text):
    tokens = PARSER.parse(text)
    (table,) = [t for t in tables(tokens) if t[0] == ["Action", "Resource", "Type", "What changes and why"]]
    return table[1:], tokens


@pytest.fixture(scope="module")
def medical():
    return as_dict(offline_plan("medical-imaging"))


def test_nodes_12_to_16_renders_one_row_and_a_details_block(medical):
    diff = diff_plans(medical, as_dict(offline_plan("medical-imaging", overrides={"compute.nodes": 16})))
    text = render_diff(diff, markdown=True)
    rows, tokens = changes_table(text)
    assert rows == [
        [
            "replace-delete-first",
            f"`{NODES}`",
            "`ecs.EcsInstanceSet`",
            "amount 12 → 16 forces replacement; delete-first: the batch's 12 GPU nodes down \\~10–20 min: the new "
            "nodes boot, install the GPU driver and CUDA, and reboot once",
        ]
    ]
    assert "**Verdict:** 1 replace-delete-first; 0 data risks" in text
    assert [t.info for t in tokens if t.type == "fence"] == ["mermaid"]
    assert text.count("<details>") == text.count("</details>") == 1
    # 4 more nodes at 277.93 CNY/h × 730 h; their disks are unpriced, so the change is marked incomplete.
    assert f"| `{NODES}` | ¥2,434,667 + unknown | ¥3,246,222 + unknown | +¥811,556, incomplete |" in text


def test_storage_kind_change_renders_refused_and_the_risk(medical):
    nas = as_dict(
        offline_plan("medical-imaging", overrides={"storage.kind": "nas", "storage.throughput_tier": "Performance"})
    )
    diff = diff_plans(medical, nas)
    text = render_diff(diff, markdown=True)
    rows, tokens = changes_table(text)
    assert len(rows) == len(diff.changes)
    by_name = {row[1].strip("`"): row for row in rows}
    assert by_name[FS][0] == "refused" and "protected: \\`pulumi up\\` refuses to replace" in by_name[FS][3]
    # One row per resource, its name alone in the Resource cell (nothing merged into another row).
    assert sorted(by_name) == sorted(c.name for c in diff.changes)
    assert all(row[1] == f"`{name}`" and row[2].count("`") == 2 for name, row in by_name.items())
    risks = [t.content for t in tokens if t.type == "inline" and "would be replaced while protected" in t.content]
    # Inline source keeps the escapes (md_text): the backticks show as written, not as code.
    assert risks == [
        f"{FS}: would be replaced while protected: \\`pulumi up\\` will refuse until it is unprotected on purpose"
    ]
    # The user data of the template (mount command) is a decoded diff, inside its details block.
    diffs = [t for t in tokens if t.type == "fence" and t.info == "diff"]
    assert len(diffs) == 1 and diffs[0].content.startswith(
        f"--- old/{TEMPLATE}.userData\n+++ new/{TEMPLATE}.userData\n"
    )
    # A template's new user data reaches new nodes only: the reviewer is told running nodes keep theirs.
    assert (
        by_name[TEMPLATE][0] == "update" and "running nodes keep the user data they booted with" in by_name[TEMPLATE][3]
    )


def test_user_data_change_is_a_fenced_diff_not_base64(medical):
    template = next(r for r in medical["resources"] if r["name"] == TEMPLATE)
    text = userdata.decode(template["inputs"]["userData"]) or ""
    new = copy.deepcopy(medical)
    blob = userdata.encode(text.replace("#cloud-config\n", "#cloud-config\n# ```\n", 1))
    next(r for r in new["resources"] if r["name"] == TEMPLATE)["inputs"]["userData"] = blob
    md = render_diff(diff_plans(medical, new), markdown=True)
    (fence,) = [t for t in PARSER.parse(md) if t.type == "fence" and t.info == "diff"]
    assert "+# ```" in fence.content.splitlines()  # the backticks inside did not close the fence
    assert blob[:40] not in md
    assert "userData changed (decoded diff below)" in md


def test_cost_table_has_a_total_with_percent(medical):
    old, new = copy.deepcopy(medical), copy.deepcopy(medical)
    old["costs"] = {
        "lines": [{"resource": NODES, "cny_per_month": 2_434_667.0}],
        "totals": {"cny_per_month": 2_434_667.0, "complete": True},
    }
    new["costs"] = {
        "lines": [{"resource": NODES, "cny_per_month": 3_246_222.67}],
        "totals": {"cny_per_month": 3_246_222.67, "complete": True},
    }
    (table,) = [
        t for t in tables(PARSER.parse(render_diff(diff_plans(old, new), markdown=True))) if t[0][0] == "Resource"
    ]
    assert table[1:] == [
        [f"`{NODES}`", "¥2,434,667", "¥3,246,223", "+¥811,556"],
        ["**Total**", "¥2,434,667", "¥3,246,223", "+¥811,556 (+33.3 %)"],
    ]


def synthetic(n):
    """Two plans of ``n`` resources each where every resource changes (a launch template's user data)."""

    def plan(version):
        resources = [
            {
                "type": "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate",
                "name": f"t-{i:05d}",
                "provider": "p",
                "inputs": {
                    "userData": base64.b64encode(f"#cloud-config\n# v{version}\n".encode()).decode(),
                    "imageId": f"img-{version}",
                },
            }
            for i in range(n)
        ]
        return {
            "schema": "aitrain.plan/v2",
            "region": "cn-shanghai",
            "summary": {},
            "resources": resources,
            "costs": {},
        }

    return plan(1), plan(2)


def test_a_5000_resource_diff_fits_one_comment_and_says_what_it_left_out():
    diff = diff_plans(*synthetic(5000))
    text = render_diff(diff, markdown=True)
    assert len(text) <= COMMENT_BUDGET
    rows, tokens = changes_table(text)
    assert 100 < len(rows) < 5000
    assert (
        f"{5000 - len(rows):,} more changed resources not shown: run `aitrain diff OLD NEW --format json` to see all."
        in text
    )
    assert "more detail blocks not shown" in text
    assert text.count("<details>") == text.count("</details>")
    assert all(t.type != "fence" or t.info in ("diff", "mermaid") for t in tokens)
    assert text.rstrip().endswith("```")  # the diagram's fence closes the comment


def test_terminal_text_is_one_table_and_plain(medical):
    diff = diff_plans(medical, as_dict(offline_plan("medical-imaging", overrides={"compute.nodes": 16})))
    text = render_diff(diff)
    assert text.splitlines()[:6] == [
        "aitrain plan diff",
        "",
        "nodes: 12 → 16",
        "gpus: 96 → 128",
        "all_or_nothing: yes: one RunInstances call for all 12 nodes (ecs.EcsInstanceSet without MinAmount: short "
        "stock star… → yes: one RunInstances call for all 16 nodes (ecs.EcsInstanceSet without MinAmount: short stock "
        "star…",
        "compute_cny_per_hour: 3335.16 → 4446.88",
    ]
    assert "1 replace-delete-first; 0 data risks" in text
    assert any(
        line.startswith(f"replace-delete-first  {NODES}  ecs.EcsInstanceSet  amount 12 → 16 forces replacement")
        for line in text.splitlines()
    )


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(
    "change, fail_on, code",
    [
        ("none", "any", 0),
        ("tags", "any", 1),
        ("tags", "replace", 0),
        ("nodes", "replace", 1),
        ("nodes", "data-risk", 0),
        ("unprotect", "data-risk", 1),
    ],
)
def test_fail_on_exit_codes(tmp_path, medical, change, fail_on, code):
    new = copy.deepcopy(medical)
    for r in new["resources"]:
        if change == "tags" and r["name"] == "medical-imaging-network-vpc":
            r["inputs"]["tags"] = {"team": "x"}
        if change == "nodes" and r["name"] == NODES:
            r["inputs"]["amount"] = 16
        if change == "unprotect" and r["name"] == FS:
            r["protect"] = False
    out = tmp_path / "diff.md"
    result = CliRunner().invoke(
        app,
        [
            "diff",
            str(write(tmp_path, "a.json", medical)),
            str(write(tmp_path, "b.json", new)),
            "--fail-on",
            fail_on,
            "--format",
            "markdown",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == code, result.output
    assert out.read_text().startswith("## aitrain plan diff")  # written before exiting 1


def test_bad_fail_on_and_schema_mismatch_exit_2(tmp_path, medical):
    a = write(tmp_path, "a.json", medical)
    result = CliRunner().invoke(app, ["diff", str(a), str(a), "--fail-on", "everything"])
    assert result.exit_code == 2 and "everything" in result.output
    v1 = write(tmp_path, "v1.json", {**medical, "schema": "aitrain.plan/v1"})
    result = CliRunner().invoke(app, ["diff", str(v1), str(a)])
    assert result.exit_code == 2
    assert "old plan is aitrain.plan/v1, new is aitrain.plan/v2: plan both with the same aitrain" in result.stderr
    assert "Traceback" not in result.output


def test_missing_as_empty_shows_a_new_stack_as_all_create(tmp_path, medical):
    new = write(tmp_path, "new.json", medical)
    missing = tmp_path / "absent.json"
    result = CliRunner().invoke(app, ["diff", str(missing), str(new), "--missing-as-empty", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {c["action"] for c in data["changes"]} == {"create"} and data["counts"]["create"] == len(
        medical["resources"]
    )
    without = CliRunner().invoke(app, ["diff", str(missing), str(new)])
    assert without.exit_code == 2 and str(missing) in without.stderr
    removed = CliRunner().invoke(app, ["diff", str(new), str(missing), "--missing-as-empty", "--fail-on", "data-risk"])
    assert removed.exit_code == 1 and "refused" in removed.stdout
    both = CliRunner().invoke(app, ["diff", str(missing), str(missing), "--missing-as-empty"])
    assert both.exit_code == 2 and "neither plan file exists" in both.stderr


def test_empty_plan_against_itself_is_no_change():
    assert render_diff(diff_plans(empty_plan(), empty_plan()), markdown=True) == "## aitrain plan diff\n\nNo changes.\n"


@pytest.fixture(scope="module")
def storage_kind_diff(medical):
    return diff_plans(
        medical,
        as_dict(
            offline_plan("medical-imaging", overrides={"storage.kind": "nas", "storage.throughput_tier": "Performance"})
        ),
    )


def test_terminal_text_shows_risks_decoded_user_data_and_the_cost_change(storage_kind_diff):
    text = render_diff(storage_kind_diff)
    lines = text.splitlines()
    # The data risks, one per line, under their heading: a terminal reviewer sees them as the PR comment does.
    risks = lines[lines.index("Data-safety risks:") + 1 :]
    risks = risks[: risks.index("")] if "" in risks else risks  # the guardrail changes follow after a blank line
    assert risks == [f"- {r}" for r in storage_kind_diff.risks] and len(risks) == 2
    # NAS (standard) cannot take a customer key, so the Extreme NAS's AIT019 info is resolved, and says so.
    assert lines[-1].startswith(
        "- resolved info: [AIT019] medical-imaging-storage-fs: Extreme NAS is encrypted with a service-managed key"
    )
    assert (
        f"{TEMPLATE} userData (decoded):" in lines
        and "-      AITRAIN_STORAGE_KIND=extreme_nas" in lines
        and "+      AITRAIN_STORAGE_KIND=nas" in lines
    )
    assert (
        lines[lines.index("Cost: ¥2,505,544 → ¥2,434,845 per month (−¥70,698 (−2.8 %), incomplete)") + 1]
        == f"  {FS}: ¥70,698 → unknown (unknown)"
    )


def test_markdown_has_the_summary_table_each_inputs_table_and_says_when_nothing_is_at_risk(medical, storage_kind_diff):
    text = render_diff(storage_kind_diff, markdown=True)
    found = tables(PARSER.parse(text))
    summary = next(t for t in found if t[0] == ["Field", "Before", "After"])
    assert ["storage_kind", "`extreme_nas`", "`nas`"] in summary
    # The file system's own details: both replacing inputs, old and new, in one table.
    fs_inputs = next(
        t
        for t in found
        if t[0] == ["Input", "Before", "After"] and ["`storageType`", "`standard`", "`Performance`"] in t
    )
    assert ["`fileSystemType`", "`extreme`", "`standard`"] in fs_inputs
    nodes = render_diff(
        diff_plans(medical, as_dict(offline_plan("medical-imaging", overrides={"compute.nodes": 16}))), markdown=True
    )
    assert "### Data risks\n\nNone.\n" in nodes and "### Data risks\n\nNone." not in text


def test_why_says_new_and_removed_resources():
    from blueprints.review.render.diff import why

    created = diff_plans(
        empty_plan(),
        {
            "schema": "aitrain.plan/v2",
            "summary": {},
            "resources": [{"type": "alicloud:vpc/switch:Switch", "name": "vsw", "inputs": {}}],
        },
    )
    assert why(created.changes[0]) == ["new resource"]
    removed = diff_plans(
        {
            "schema": "aitrain.plan/v2",
            "summary": {},
            "resources": [{"type": "alicloud:vpc/switch:Switch", "name": "vsw", "inputs": {}}],
        },
        empty_plan(),
    )
    assert why(removed.changes[0]) == ["removed from the plan"]


def test_a_summary_only_change_has_no_changes_table_and_a_diagram_too_big_is_named(medical, monkeypatch):
    import blueprints.review.render.diff as render

    relabelled = copy.deepcopy(medical)
    relabelled["summary"]["profile_note"] = "changed"
    text = render_diff(diff_plans(medical, relabelled), markdown=True)
    assert "### Summary" in text and "### Changes" not in text and "### Diagram" in text
    monkeypatch.setattr(render, "_DIAGRAM_BUDGET", 10)
    small = render_diff(diff_plans(medical, relabelled), markdown=True)
    assert "does not fit in one comment: see `aitrain plan --format markdown`" in small and "```mermaid" not in small


def test_why_names_a_carried_replacement_and_a_changed_safety_option(medical, storage_kind_diff):
    from blueprints.review.render.diff import why

    mount = next(c for c in storage_kind_diff.changes if c.name == "medical-imaging-storage-mount-target")
    assert why(mount) == [
        "fileSystemId references medical-imaging-storage-fs, which is replaced: a new ID forces replacement"
    ]
    unprotected = copy.deepcopy(medical)
    next(r for r in unprotected["resources"] if r["name"] == FS)["protect"] = False
    (change,) = diff_plans(medical, unprotected).changes
    assert why(change) == ["protect true → false"]
