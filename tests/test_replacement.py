"""The replacement table: every custom type of every preset plan is covered, rows are sourced, bad rows are refused."""

from __future__ import annotations

import pytest

from blueprints.core.errors import UserInputError
from blueprints.profile.stackconfig import preset_names
from blueprints.review.diff.replacement import load_replacement_table, replacement_table
from blueprints.testing import offline_plan

VARIANTS = [(name, {}) for name in preset_names()] + [
    ("medical-imaging", {"compute.instance_type": "ecs.ebmgn8v.48xlarge"})
]


@pytest.mark.parametrize(
    "preset, overrides", VARIANTS, ids=[f"{n}{'-' + next(iter(o.values())) if o else ''}" for n, o in VARIANTS]
)
def test_every_custom_type_of_every_preset_plan_is_in_the_table(preset, overrides):
    plan = offline_plan(preset, overrides=overrides)
    table = replacement_table()
    missing = {r.short_type for r in plan.resources if r.custom and table.forcing(r.short_type) is None}
    assert missing == set()


def test_rows_carry_the_provider_docs_source():
    table = replacement_table()
    assert table.forcing("ecs.EcsInstanceSet") >= {"amount", "instanceType", "imageId", "zoneId", "vswitchId"}
    assert "tags" not in table.forcing("ecs.EcsInstanceSet")
    assert table.forcing("ess.ScheduledTask") == frozenset()  # known: nothing replaces it
    assert table.forcing("alicloud.Unknown") is None
    source = table.sources[("ecs.EcsInstanceSet", "amount")]
    assert source.startswith(
        "aliyun/terraform-provider-alicloud@81c43b6727a09e9da37b3d88818c3ba5fa17fa14:website/docs/r/ecs_instance_set.html.markdown#L"
    )
    assert table.forces("pulumi:providers:alicloud", "region")
    assert (
        table.downtime["ecs.EcsInstanceSet"]
        .describe({"amount": 12})
        .startswith("the batch's 12 GPU nodes down ~10–20 min")
    )


def test_nested_inputs_match_their_parent():
    table = replacement_table()
    assert table.forces("ecs.EcsInstanceSet", "dataDisks") and table.forces("ecs.Instance", "dataDisks.category")
    assert not table.forces("ecs.Instance", "tags.team")


def _write(tmp_path, replacing, downtime="type,takes_down,unavailable_for,source\n"):
    (tmp_path / "replacing_inputs.csv").write_text(replacing)
    (tmp_path / "delete_first_downtime.csv").write_text(downtime)
    return tmp_path


HEADER = "type,input,terraform_argument,source,marks\n"


@pytest.mark.parametrize(
    "body, message",
    [
        ("EcsInstanceSet,amount,a,s,m\n", "line 2: type = 'EcsInstanceSet': must be a plan short type"),
        (
            "ecs.EcsInstanceSet,instance_type,a,s,m\n",
            "line 2: input = 'instance_type': must be an engine (camelCase) input name",
        ),
        ("ecs.EcsInstanceSet,amount,a,,m\n", "line 2: source = '': must cite where the ForceNew mark comes from"),
        (
            "ecs.EcsInstanceSet,amount,a,s,m\necs.EcsInstanceSet,amount,a,s,m\n",
            "line 3: input = 'amount': duplicates an earlier row for ecs.EcsInstanceSet",
        ),
        ("ecs.EcsInstanceSet,amount,a\n", "line 2 = '(short row)': must have exactly 5 columns"),
    ],
)
def test_a_bad_row_is_refused_naming_file_line_and_value(tmp_path, body, message):
    with pytest.raises(UserInputError) as err:
        load_replacement_table(_write(tmp_path, HEADER + body))
    assert message in err.value.render()


def test_a_bad_header_is_refused(tmp_path):
    with pytest.raises(UserInputError, match="header .*must be type,input,terraform_argument,source,marks"):
        load_replacement_table(_write(tmp_path, "type,input\n"))


@pytest.mark.parametrize(
    "downtime, message",
    [
        (
            "EcsInstanceSet,nodes,10 min,s\n",
            "delete_first_downtime.csv: line 2: type = 'EcsInstanceSet': must be a plan short type",
        ),
        ("ecs.EcsInstanceSet,nodes,,s\n", "delete_first_downtime.csv: line 2 = "),
    ],
)
def test_a_bad_downtime_row_is_refused(tmp_path, downtime, message):
    with pytest.raises(UserInputError) as err:
        load_replacement_table(_write(tmp_path, HEADER, "type,takes_down,unavailable_for,source\n" + downtime))
    assert message in err.value.render()
    if "line 2 = " in message:
        assert "takes_down, unavailable_for and source are all required" in err.value.render()


def test_a_missing_file_is_refused_not_a_traceback(tmp_path):
    (tmp_path / "replacing_inputs.csv").write_text(HEADER)
    with pytest.raises(
        UserInputError, match=r"delete_first_downtime.csv = None: cannot be read \(No such file or directory\)"
    ):
        load_replacement_table(tmp_path)
