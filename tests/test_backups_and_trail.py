"""Backups that exist and an audit trail that outlives a stack: AIT016 on an unapplied snapshot policy, retention cuts
and the trail's deletion as diff data risks, the trail protected, retained and named per stack."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.review import guardrails
from blueprints.review.diff.compare import diff_plans
from blueprints.testing import offline_plan

MED, AUTO = "medical-imaging", "autoscaling-training"
SLS_ARN = "acs:log:cn-shanghai:1234567890:project/audit-logs"
TRAIL = {"security.actiontrail": {"sls_project_arn": SLS_ARN}}


def as_dict(plan):
    return json.loads(plan.to_json())


def edited(plan, name, path, value):
    """A deep copy of plan dict ``plan`` with ``inputs[path...]`` of resource ``name`` set to ``value``."""
    data = copy.deepcopy(plan)
    (resource,) = [r for r in data["resources"] if r["name"] == name]
    node = resource["inputs"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


@pytest.fixture(scope="module")
def med():
    return as_dict(offline_plan(MED))


@pytest.fixture(scope="module")
def auto():
    return as_dict(offline_plan(AUTO))


@pytest.fixture(scope="module")
def with_trail():
    return offline_plan(MED, overrides=TRAIL)


# ---- item 5: AIT016 holds only when something applies the policy ----


def test_an_extreme_nas_policy_nothing_applies_is_an_ait016_warning():
    plan = offline_plan(MED)
    assert plan.find("nas.AutoSnapshotPolicy")  # the policy is there, so AIT016 used to report "holds"
    [finding] = [f for f in guardrails.check(plan) if f.rule == "AIT016"]
    assert (finding.level, finding.resource) == ("warning", f"{MED}-storage-fs")
    assert "nothing in the plan applies it to this file system" in finding.message
    assert "aliyun nas ApplyAutoSnapshotPolicy" in finding.message and "DescribeAutoSnapshotPolicies" in finding.message
    assert not [
        f
        for f in guardrails.check(plan, skip=[guardrails.Skip("AIT016", "applied with ApplyAutoSnapshotPolicy")])
        if f.rule == "AIT016"
    ]


def test_a_general_purpose_recycle_bin_still_holds():
    assert not [f for f in guardrails.check(offline_plan(AUTO)) if f.rule == "AIT016"]


# ---- item 5: cutting a recovery window is a data risk ----


@pytest.mark.parametrize(
    "preset, name, path, days, label",
    [
        (
            MED,
            f"{MED}-data-bucket",
            ("lifecycleRules", 0, "noncurrentVersionExpirations", 0, "days"),
            1,
            "noncurrent object versions (lifecycle rule checkpoint-noncurrent-versions) cut from 30 days to 1 day",
        ),
        (
            MED,
            f"{MED}-storage-snapshots",
            ("retentionDays",),
            1,
            "auto-snapshot retention (retentionDays) cut from 7 days to 1 day",
        ),
        (
            AUTO,
            f"{AUTO}-storage-fs",
            ("recycleBin", "reservedDays"),
            1,
            "recycle bin (recycleBin.reservedDays) cut from 7 days to 1 day",
        ),
        (
            AUTO,
            f"{AUTO}-storage-fs",
            ("recycleBin", "status"),
            "Disable",
            "recycle bin (recycleBin.reservedDays) cut from 7 days to off",
        ),
    ],
)
def test_cutting_a_recovery_window_below_a_week_is_a_data_risk(med, auto, preset, name, path, days, label):
    old = med if preset == MED else auto
    diff = diff_plans(old, edited(old, name, path, days))
    [risk] = diff.risks
    assert risk.startswith(f"{name}: {label} (below the 7-day floor)")
    assert diff.fails_on("data-risk")


@pytest.mark.parametrize(
    "name, path, days",
    [
        (
            f"{MED}-data-bucket",
            ("lifecycleRules", 0, "noncurrentVersionExpirations", 0, "days"),
            10,
        ),  # shorter, above the floor
        (f"{MED}-data-bucket", ("lifecycleRules", 0, "noncurrentVersionExpirations", 0, "days"), 90),  # longer
        (f"{MED}-storage-snapshots", ("retentionDays",), -1),  # for ever
    ],
)
def test_a_window_kept_at_a_week_or_more_is_no_risk(med, name, path, days):
    assert diff_plans(med, edited(med, name, path, days)).risks == []


def test_snapshot_retention_for_ever_cut_to_a_day_is_a_risk(med):
    forever = edited(med, f"{MED}-storage-snapshots", ("retentionDays",), -1)
    [risk] = diff_plans(forever, edited(med, f"{MED}-storage-snapshots", ("retentionDays",), 1)).risks
    assert "cut from for ever to 1 day" in risk


def test_aitrain_diff_fails_on_a_one_day_retention(med, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(med))
    new.write_text(
        json.dumps(
            edited(med, f"{MED}-data-bucket", ("lifecycleRules", 0, "noncurrentVersionExpirations", 0, "days"), 1)
        )
    )
    result = CliRunner().invoke(app, ["diff", str(old), str(new), "--fail-on", "data-risk"], terminal_width=300)
    assert result.exit_code == 1, result.output
    assert "cut from 30 days to 1 day" in result.output


# ---- item 6: the audit trail ----


def test_the_trail_is_protected_retained_and_named_per_stack(with_trail):
    (trail,) = with_trail.find("actiontrail.Trail")
    assert trail.protect and trail.retain_on_delete
    assert trail.inputs["trailName"] == f"{MED}-audit"
    other = offline_plan(MED, overrides={**TRAIL, "name": "team-b"})
    assert other.find("actiontrail.Trail")[0].inputs["trailName"] == "team-b-audit"  # two stacks, two names
    named = offline_plan(MED, overrides={"security.actiontrail": {"sls_project_arn": SLS_ARN, "name": "org-trail"}})
    assert named.find("actiontrail.Trail")[0].inputs["trailName"] == "org-trail"
    assert not [f for f in guardrails.check(with_trail) if f.rule == "AIT004"]


def test_an_unprotected_trail_is_an_ait004_error(with_trail):
    bare = dataclasses.replace(
        with_trail,
        resources=tuple(
            dataclasses.replace(r, protect=False, retain_on_delete=False) if r.short_type == "actiontrail.Trail" else r
            for r in with_trail.resources
        ),
    )
    assert ("AIT004", "error", f"{MED}-audit-trail") in {(f.rule, f.level, f.resource) for f in guardrails.check(bare)}


def test_removing_the_trail_setting_is_a_data_risk(with_trail, tmp_path):
    """Protected: `pulumi up` refuses (a risk); an unprotected trail of an older plan: deleted, and the diff says so."""
    old, new = as_dict(with_trail), as_dict(offline_plan(MED))
    diff = diff_plans(old, new)
    [change] = [c for c in diff.changes if c.type.endswith(":Trail")]
    assert change.action == "refused" and change.risks
    assert diff.fails_on("data-risk")
    unprotected = copy.deepcopy(old)
    for r in unprotected["resources"]:
        if r["type"].endswith(":Trail"):
            r["protect"] = r["retain_on_delete"] = False
    [change] = [c for c in diff_plans(unprotected, new).changes if c.type.endswith(":Trail")]
    assert change.action == "delete"
    assert change.risks == (
        "removed without retain_on_delete: the account's ActionTrail trail "
        "would be deleted: API calls in every region stop being recorded",
    )
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(unprotected))
    b.write_text(json.dumps(new))
    assert CliRunner().invoke(app, ["diff", str(a), str(b), "--fail-on", "data-risk"]).exit_code == 1


def test_renaming_the_trail_is_a_replacement_with_a_risk(with_trail):
    old = as_dict(with_trail)
    [change] = [
        c
        for c in diff_plans(old, edited(old, f"{MED}-audit-trail", ("trailName",), "renamed-trail")).changes
        if c.type.endswith(":Trail")
    ]
    assert change.action == "refused" and change.replacing == ("trailName",)
    assert any("ActionTrail trail would be deleted" in r for r in change.risks)
