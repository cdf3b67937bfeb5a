"""Kueue quota cuts in ``aitrain diff`` (blueprints.review.diff.quota): a team's ClusterQueue whose GPU quota shrinks.

Hand-made plan dicts first (fast, so most mutants of quota.py fail here), then real kubernetes-training plans: the
preset's teams llm and vision hold 32 GPUs each of an 8-node × 8-GPU pool, and one job is 4 nodes × 8 GPUs = 32 GPUs.

The diffs are built with an empty replacement table: quota cuts read the two plans alone, so these tests stay off
replacing_inputs.csv (whether a changed ClusterQueue is updated or replaced is not theirs to say); one test runs
``aitrain diff --format json`` itself, with the shipped table.
"""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.review.diff.compare import diff_plans
from blueprints.review.diff.quota import CLUSTER_QUEUE, QuotaCut, quota_cuts
from blueprints.review.diff.replacement import ReplacementTable
from blueprints.review.render.diff import render_diff, verdict
from blueprints.testing import offline_plan

GPU = "nvidia.com/gpu"
JOB = {"nodes_per_job": 4, "gpus_per_node": 8}  # one job: 32 GPUs
ABSENT = object()
LLM = "kubernetes-training-queue-clusterqueue-kubernetes-training-llm"
VISION = "kubernetes-training-queue-clusterqueue-kubernetes-training-vision"
NO_TABLE = ReplacementTable({}, {}, {})


# --- hand-made plan dicts ---------------------------------------------------------------------------------------------


def gpu(nominal, borrow=ABSENT):
    entry = {"name": GPU, "nominalQuota": nominal}
    if borrow is not ABSENT:
        entry["borrowingLimit"] = borrow
    return entry


def queue(name, *flavors, metadata_name=ABSENT, type_=CLUSTER_QUEUE):
    """A ClusterQueue resource named ``name`` with one resource group of the given flavors (each a resources list)."""
    inputs = {
        "metadata": {"name": f"cq-{name}" if metadata_name is ABSENT else metadata_name},
        "spec": {"resourceGroups": [{"flavors": [{"name": f"f{i}", "resources": r} for i, r in enumerate(flavors)]}]},
    }
    return {"type": type_, "name": name, "inputs": inputs}


def gpus(name, nominal, borrow=ABSENT):
    """A ClusterQueue with one flavor: CPU, then GPUs."""
    return queue(name, [{"name": "cpu", "nominalQuota": "64"}, gpu(nominal, borrow)])


def plan(*resources, summary=JOB):
    return {"summary": summary, "resources": list(resources)}


def cut_of(old, new, summary=JOB):
    """The one cut between two single-queue plans (queue ``a``)."""
    (cut,) = quota_cuts(plan(old), plan(new, summary=summary))
    return cut


def cuts(old, new, summary=JOB):
    return quota_cuts(plan(old), plan(new, summary=summary))


def test_a_quota_as_a_string_or_an_int_is_the_same_quota():
    assert cuts(gpus("a", "8"), gpus("a", 8)) == () and cuts(gpus("a", 8), gpus("a", "8")) == ()
    assert cut_of(gpus("a", "8"), gpus("a", 4)) == QuotaCut("a", "cq-a", 8, 4, None, 32)
    assert cut_of(gpus("a", 8), gpus("a", "4")) == QuotaCut("a", "cq-a", 8, 4, None, 32)


def test_an_equal_or_raised_quota_is_no_cut():
    assert cuts(gpus("a", "32"), gpus("a", "32")) == ()
    assert cuts(gpus("a", "16"), gpus("a", "32")) == ()


@pytest.mark.parametrize(
    ("quantity", "count"),
    [
        ("1k", 1000),  # aitrain writes 1000 GPUs so (kueue.decimal_quantity)
        ("2M", 2_000_000),
        ("1Ki", 1024),
        ("1e3", 1000),
        ("+12", 12),
        ("12.", 12),
        ("1500m", 1),  # whole devices: rounded down
        (".5k", 500),
        (12.0, 12),
    ],
)
def test_a_quota_is_read_as_a_kubernetes_quantity(quantity, count):
    assert cut_of(gpus("a", 10**7), gpus("a", quantity, borrow=quantity)).new_gpus == count
    assert cut_of(gpus("a", 10**7), gpus("a", quantity, borrow=quantity)).borrowing_limit == count


def test_a_thousand_gpus_written_1k_is_a_thousand_not_zero():
    """Before quantities were parsed, "1k" read as 0: 999 → 1000 was a cut to 0 and 1000 → 999 no cut at all."""
    assert cuts(gpus("a", "999"), gpus("a", "1k")) == ()
    assert cut_of(gpus("a", "1k"), gpus("a", "999")) == QuotaCut("a", "cq-a", 1000, 999, None, 32)


@pytest.mark.parametrize("odd", ["lots", "", None, True, [8], "8 GPUs", "1e"])
def test_a_quota_that_is_not_a_quantity_is_unknown_and_never_a_cut(odd):
    assert cuts(gpus("a", "32"), gpus("a", odd)) == ()
    assert cuts(gpus("a", odd), gpus("a", "0")) == ()


def test_a_queue_without_a_gpu_resource_has_no_gpu_quota_to_cut():
    cpu_only = queue("a", [{"name": "cpu", "nominalQuota": "64"}])
    assert cuts(gpus("a", "32"), cpu_only) == () and cuts(cpu_only, gpus("a", "0")) == ()
    no_spec = {"type": CLUSTER_QUEUE, "name": "a", "inputs": {"metadata": {"name": "cq-a"}}}
    assert cuts(gpus("a", "32"), no_spec) == () and cuts(no_spec, gpus("a", "0")) == ()
    ragged = {"type": CLUSTER_QUEUE, "name": "a", "inputs": {"spec": {"resourceGroups": [None, {"flavors": None}]}}}
    assert cuts(gpus("a", "32"), ragged) == ()
    holes = queue("a", [None, "cpu", {"name": "cpu"}], [gpu("4")])
    assert cut_of(gpus("a", "32"), holes).new_gpus == 4


def test_the_quota_and_the_borrowing_limit_are_summed_over_flavors():
    two = queue("a", [gpu("8", "2")], [{"name": "cpu", "nominalQuota": "1"}, gpu("4", "3")])
    assert (cut_of(gpus("a", "32"), two).new_gpus, cut_of(gpus("a", "32"), two).borrowing_limit) == (12, 5)


@pytest.mark.parametrize("unlimited", [ABSENT, None])
def test_one_flavor_without_a_borrowing_limit_lets_the_queue_borrow_without_limit(unlimited):
    """Kueue: a borrowingLimit unset or null is no limit (the ClusterQueue CRD), whatever the other flavor says."""
    mixed = queue("a", [gpu("8", "0")], [gpu("8", unlimited)])
    cut = cut_of(gpus("a", "32"), mixed)
    assert (cut.new_gpus, cut.borrowing_limit, cut.below_job) == (16, None, False)
    assert cut_of(gpus("a", "32"), gpus("a", "16", unlimited)).borrowing_limit is None


def test_only_cluster_queues_in_both_plans_count_matched_by_resource_name():
    cohort = gpus("c", "32") | {"type": "kubernetes:kueue.x-k8s.io/v1beta2:Cohort"}
    shrunk_cohort = gpus("c", "0") | {"type": "kubernetes:kueue.x-k8s.io/v1beta2:Cohort"}
    assert quota_cuts(plan(cohort), plan(shrunk_cohort)) == ()
    assert quota_cuts(plan(gpus("a", "32")), plan(gpus("b", "8"))) == ()  # renamed: a new queue, not a cut
    assert quota_cuts(plan(gpus("a", "32")), plan()) == () and quota_cuts(plan(), plan(gpus("a", "8"))) == ()
    odd = [None, "a", {"type": CLUSTER_QUEUE, "name": 7}, {"type": CLUSTER_QUEUE}]
    assert quota_cuts({"resources": odd + [gpus("a", "32")]}, {"resources": odd + [gpus("a", "8")]}) == (
        QuotaCut("a", "cq-a", 32, 8, None, None),
    )
    assert quota_cuts({}, {"resources": None}) == ()
    (one,) = quota_cuts(plan(gpus("a", "32"), gpus("b", "32")), plan(gpus("b", "16"), gpus("a", "32")))
    assert one.resource == "b"
    both = quota_cuts(plan(gpus("a", "32"), gpus("b", "32")), plan(gpus("b", "16"), gpus("a", "8")))
    assert [c.resource for c in both] == ["b", "a"]  # in the new plan's order


def test_the_queue_is_named_by_its_kubernetes_name_else_its_resource_name():
    assert cut_of(gpus("a", "32"), queue("a", [gpu("8")], metadata_name="team-a")).queue == "team-a"
    assert cut_of(gpus("a", "32"), queue("a", [gpu("8")], metadata_name=None)).queue == "a"
    bare = {"type": CLUSTER_QUEUE, "name": "a", "inputs": {"spec": gpus("a", "8")["inputs"]["spec"]}}
    assert cut_of(gpus("a", "32"), bare).queue == "a"


@pytest.mark.parametrize(
    "summary",
    [
        None,
        {},
        {"nodes_per_job": 4},
        {"gpus_per_node": 8},
        {"nodes_per_job": True, "gpus_per_node": 8},  # a bool is not a number
        {"nodes_per_job": 4, "gpus_per_node": True},
        {"nodes_per_job": 4.0, "gpus_per_node": 8},
        {"nodes_per_job": 4, "gpus_per_node": 8.0},
        {"nodes_per_job": "4", "gpus_per_node": 8},
        {"nodes_per_job": 0, "gpus_per_node": 8},
        {"nodes_per_job": -4, "gpus_per_node": -8},
        {"nodes_per_job": 4, "gpus_per_node": 0},
        {"nodes_per_job": 4, "gpus_per_node": -8},
    ],
)
def test_without_a_job_size_in_the_summary_the_cut_is_plain(summary):
    cut = cut_of(gpus("a", "32"), gpus("a", "8", "0"), summary=summary)
    assert cut == QuotaCut("a", "cq-a", 32, 8, 0, None)
    assert cut.below_job is False
    assert cut.message() == "ClusterQueue cq-a: GPU quota cut from 32 to 8"


def test_the_job_size_is_the_new_plans():
    (cut,) = quota_cuts(plan(gpus("a", "32"), summary=None), plan(gpus("a", "16"), summary={**JOB, "nodes_per_job": 1}))
    assert (cut.job_gpus, cut.below_job, cut.message()) == (8, False, "ClusterQueue cq-a: GPU quota cut from 32 to 16")
    assert cut_of(gpus("a", "32"), gpus("a", "16"), summary={"nodes_per_job": 3, "gpus_per_node": 2}).job_gpus == 6


def test_below_job_is_the_new_quota_plus_the_borrowing_limit_below_one_job():
    def below(new, limit, job=32):
        return QuotaCut("r", "q", 64, new, limit, job).below_job

    assert below(16, 8) is True and below(0, 31) is True and below(31, 0) is True
    assert below(16, 16) is False and below(32, 0) is False and below(40, 0) is False  # 32 fits one job
    assert below(16, None) is False and below(0, None) is False  # borrows without limit: the pool holds a job
    assert below(16, 0, None) is False and below(16, None, None) is False


def test_the_messages_say_what_the_cut_does_to_one_job():
    head = "ClusterQueue q: GPU quota cut from 64 to 16"
    assert QuotaCut("r", "q", 64, 16, 8, 32).message() == (
        f"{head}, below one job of the stack's size (32 GPUs) even with what it may borrow (up to 8 more): such a job "
        "from this team is never admitted again, and one running now counts as borrowing, so another team reclaiming "
        "its quota may preempt it"
    )
    assert QuotaCut("r", "q", 64, 16, 16, 32).message() == (
        f"{head}, below one job of the stack's size (32 GPUs): such a job runs only on borrowed GPUs (it may borrow "
        "up to 16 more), and another team reclaiming its quota may preempt it"
    )
    assert QuotaCut("r", "q", 64, 16, None, 32).message() == (
        f"{head}, below one job of the stack's size (32 GPUs): such a job runs only on borrowed GPUs (it may borrow "
        "without limit), and another team reclaiming its quota may preempt it"
    )
    assert QuotaCut("r", "q", 64, 16, 0, 16).message() == head  # still holds one job of 16
    assert QuotaCut("r", "q", 64, 16, None, 8).message() == head
    assert QuotaCut("r", "q", 64, 16, 0, None).message() == head


# --- real kubernetes-training plans -----------------------------------------------------------------------------------


def teams(llm, vision=32, **llm_fields):
    listed = [{"name": "llm", "gpus": llm, **llm_fields}] if llm is not None else []
    return listed + ([{"name": "vision", "gpus": vision}] if vision is not None else [])


@pytest.fixture(scope="module")
def plans():
    """The preset's plan dict per queues.teams (and other overrides), each built once."""
    built: dict[str, dict] = {}

    def get(team_list, **overrides):
        key = json.dumps([team_list, overrides], sort_keys=True)
        if key not in built:
            profile = offline_plan("kubernetes-training", overrides={"queues.teams": team_list, **overrides})
            built[key] = json.loads(profile.to_json())
        return built[key]

    return get


def diff(old, new):
    return diff_plans(old, new, NO_TABLE)


def section(text, heading):
    """The lines of one section of a rendered diff: from its heading to the next blank line (or the end)."""
    return text.split(f"\n\n{heading}\n", 1)[1].split("\n\n", 1)[0].removesuffix("\n").split("\n")


RUNS_ON_BORROWED = (
    "ClusterQueue kubernetes-training-llm: GPU quota cut from 32 to 16, below one job of the stack's size (32 GPUs): "
    "such a job runs only on borrowed GPUs (it may borrow without limit), and another team reclaiming its quota may "
    "preempt it"
)
NEVER_ADMITTED = (
    "ClusterQueue kubernetes-training-llm: GPU quota cut from 32 to 16, below one job of the stack's size (32 GPUs) "
    "even with what it may borrow (up to 8 more): such a job from this team is never admitted again, and one running "
    "now counts as borrowing, so another team reclaiming its quota may preempt it"
)


def test_the_preset_against_itself_has_no_quota_cut(plans):
    base = plans(teams(32))
    assert quota_cuts(base, base) == ()
    assert quota_cuts(base, plans(teams(32, borrow_gpus=32))) == ()  # a borrowing limit is not a quota cut
    d = diff(base, base)
    assert d.quota_cuts == () and d.to_dict()["quota_cuts"] == []
    assert "quota" not in render_diff(d) and "quota" not in render_diff(d, markdown=True)


def test_llm_cut_to_16_with_unlimited_borrowing_runs_only_on_borrowed_gpus(plans):
    base, cut = plans(teams(32)), plans(teams(16))
    d = diff(base, cut)
    assert d.quota_cuts == (QuotaCut(LLM, "kubernetes-training-llm", 32, 16, None, 32),)
    assert d.quota_cuts[0].below_job is False and d.quota_cuts[0].message() == RUNS_ON_BORROWED
    assert d.to_dict()["quota_cuts"] == [
        {
            "resource": LLM,
            "queue": "kubernetes-training-llm",
            "old_gpus": 32,
            "new_gpus": 16,
            "borrowing_limit": None,
            "job_gpus": 32,
            "below_job": False,
            "message": RUNS_ON_BORROWED,
        }
    ]
    assert verdict(d).endswith("; 1 queue quota cut")
    text = render_diff(d)
    assert f"\n{verdict(d)}\n" in text
    assert section(text, "Queue quota cuts:") == [f"- {RUNS_ON_BORROWED}"]
    markdown = render_diff(d, markdown=True)
    assert f"**Verdict:** {verdict(d)}\n" in markdown
    assert section(markdown, "### Queue quota cuts\n") == [f"- {RUNS_ON_BORROWED}"]


def test_aitrain_diff_json_carries_the_quota_cuts(plans, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(plans(teams(32))))
    new.write_text(json.dumps(plans(teams(16))))
    result = CliRunner().invoke(app, ["diff", str(old), str(new), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["quota_cuts"] == [
        {
            "resource": LLM,
            "queue": "kubernetes-training-llm",
            "old_gpus": 32,
            "new_gpus": 16,
            "borrowing_limit": None,
            "job_gpus": 32,
            "below_job": False,
            "message": RUNS_ON_BORROWED,
        }
    ]
    text = CliRunner().invoke(app, ["diff", str(old), str(new)])
    assert text.exit_code == 0, text.output
    assert "; 1 queue quota cut\n" in text.stdout and f"\n\nQueue quota cuts:\n- {RUNS_ON_BORROWED}\n" in text.stdout


def test_llm_cut_to_16_with_16_to_borrow_still_holds_one_job(plans):
    (cut,) = quota_cuts(plans(teams(32)), plans(teams(16, borrow_gpus=16)))
    assert (cut.borrowing_limit, cut.below_job) == (16, False)
    assert "(it may borrow up to 16 more)" in cut.message()


def test_llm_cut_to_16_with_8_to_borrow_is_below_one_job(plans):
    """16 + 8 < 32. The profile refuses borrow_gpus 8 for 16 GPUs (queues.check_queues), so this new plan is the
    accepted borrow_gpus 16 plan with its limit edited to 8: a plan made elsewhere, or by hand."""
    with pytest.raises(UserInputError, match=r"queues\.teams\[0\]\.borrow_gpus = 8"):
        plans(teams(16, borrow_gpus=8))
    new = copy.deepcopy(plans(teams(16, borrow_gpus=16)))
    (llm,) = [r for r in new["resources"] if r["name"] == LLM]
    (entry,) = [q for q in llm["inputs"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"] if q["name"] == GPU]
    assert entry["borrowingLimit"] == "16"
    entry["borrowingLimit"] = "8"
    d = diff(plans(teams(32)), new)
    assert d.quota_cuts == (QuotaCut(LLM, "kubernetes-training-llm", 32, 16, 8, 32),)
    assert d.quota_cuts[0].below_job is True and d.quota_cuts[0].message() == NEVER_ADMITTED
    (entry,) = d.to_dict()["quota_cuts"]
    assert (entry["old_gpus"], entry["new_gpus"], entry["below_job"], entry["message"]) == (
        32,
        16,
        True,
        NEVER_ADMITTED,
    )
    assert verdict(d).endswith("; 1 queue quota cut (1 below one job)")
    assert section(render_diff(d), "Queue quota cuts:") == [f"- {NEVER_ADMITTED}"]
    assert section(render_diff(d, markdown=True), "### Queue quota cuts\n") == [f"- {NEVER_ADMITTED}"]


def test_a_raised_quota_is_no_cut(plans):
    assert quota_cuts(plans(teams(16)), plans(teams(32))) == ()
    d = diff(plans(teams(16, borrow_gpus=16)), plans(teams(32)))
    assert d.quota_cuts == () and "queue quota" not in verdict(d)


def test_a_team_removed_or_added_is_no_cut_for_it(plans):
    both, llm_only = plans(teams(32)), plans(teams(32, vision=None))
    assert [r["name"] for r in both["resources"] if r["type"] == CLUSTER_QUEUE] == [LLM, VISION]
    assert [r["name"] for r in llm_only["resources"] if r["type"] == CLUSTER_QUEUE] == [LLM]
    assert quota_cuts(both, llm_only) == () and quota_cuts(llm_only, both) == ()
    (cut,) = quota_cuts(llm_only, plans(teams(16)))  # vision added while llm is cut: only llm's cut
    assert (cut.resource, cut.old_gpus, cut.new_gpus) == (LLM, 32, 16)


def test_two_cuts_in_a_large_pool_with_quotas_written_1k(plans):
    """1000 GPUs is "1k" in the ClusterQueue (kueue.decimal_quantity); vision may borrow "1k" too."""
    big = plans(teams(1000), **{"compute.max_nodes": 250})
    smaller = plans(
        [{"name": "llm", "gpus": 999}, {"name": "vision", "gpus": 16, "borrow_gpus": 1000}],
        **{"compute.max_nodes": 250},
    )
    assert json.dumps(big).count('"nominalQuota": "1k"') == 1 and '"borrowingLimit": "1k"' in json.dumps(smaller)
    assert quota_cuts(smaller, big) == ()  # 999 → 1k is a raise
    d = diff(big, smaller)
    assert [(c.queue, c.old_gpus, c.new_gpus, c.borrowing_limit, c.below_job) for c in d.quota_cuts] == [
        ("kubernetes-training-llm", 1000, 999, None, False),
        ("kubernetes-training-vision", 32, 16, 1000, False),
    ]
    vision = (
        "ClusterQueue kubernetes-training-vision: GPU quota cut from 32 to 16, below one job of the stack's size "
        "(32 GPUs): such a job runs only on borrowed GPUs (it may borrow up to 1000 more), and another team reclaiming "
        "its quota may preempt it"
    )
    lines = ["- ClusterQueue kubernetes-training-llm: GPU quota cut from 1000 to 999", f"- {vision}"]
    assert verdict(d).endswith("; 2 queue quota cuts")
    assert section(render_diff(d), "Queue quota cuts:") == lines
    assert section(render_diff(d, markdown=True), "### Queue quota cuts\n") == lines
    assert [(e["old_gpus"], e["new_gpus"], e["below_job"]) for e in d.to_dict()["quota_cuts"]] == [
        (1000, 999, False),
        (32, 16, False),
    ]
