"""The cloud's capacity and quota errors explained: the table's rows and sources, the loader's refusals, one paragraph
per code, the codes found in a failed `pulumi up`, `aitrain explain-error`, and docs/capacity-errors.md."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.preflight import explain as ex

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
ROWS = ex.load_capacity_errors()
WHERE = "for node group gpu in cn-shanghai-b"
ALTERNATIVE = "ecs.gn7i-c32g1.8xlarge in cn-shanghai-l"

# The codes the table must hold (each verified in the API reference its row cites).
REQUIRED = {
    "Zone.NotOnSale": "zone",
    "OperationDenied.NoStock": "stock",
    "InvalidResourceType.NotSupported": "type",
    "OperationDenied": "stock",
    "QuotaExceed.ElasticQuota": "quota",
    "QuotaExceed.AfterpayInstance": "quota",
    "InvalidSpotPriceLimit.LowerThanPublicPrice": "spot",
    "Invalid.PrivatePoolOptions.NoStock": "reservation",
    "LackResource": "reservation",
    "QuotaExceeded.ScalingInstance": "quota",
}

# A failed `pulumi up`, as pulumi-alicloud prints terraform-provider-alicloud's errors: the provider wraps the SDK's
# error as "[ERROR] <file>:<line>: Resource <type> <Action> Failed!!! [SDK alibaba-cloud-sdk-go ERROR]:" (its
# errors.go, DefaultErrorMsg) with the [ERROR] in red; the tea SDK prints "SDKError: StatusCode / Code / Message /
# Data" (node-0), the older alibaba-cloud-sdk-go "SDK.ServerError / ErrorCode / Recommend / RequestId / Message"
# (node-1), whose Recommend URL repeats the code before the message.
PULUMI_UP = """\
Updating (dev)

     Type                       Name          Status                  Info
     pulumi:pulumi:Stack        aitrain-dev   **failed**              1 error
 +   ├─ alicloud:ecs:Instance   node-0        **creating failed**     1 error
 +   └─ alicloud:ecs:Instance   node-1        **creating failed**     1 error

Diagnostics:
  alicloud:ecs:Instance (node-0):
    error: 1 error occurred:
    \t* \x1b[31m[ERROR]\x1b[0m terraform-provider-alicloud/alicloud/resource_alicloud_instance.go:1276: \
Resource alicloud_instance RunInstances Failed!!! [SDK alibaba-cloud-sdk-go ERROR]:
    SDKError:
       StatusCode: 403
       Code: OperationDenied.NoStock
       Message: code: 403, The requested resource is sold out in the specified zone; try other types of resources \
or other regions and zones. request id: 6E2C1B7A-3F7D-5A8E-9C41-2B0E4D1F8A36
       Data: {"Code":"OperationDenied.NoStock","HostId":"ecs.cn-shanghai.aliyuncs.com","Message":"The requested \
resource is sold out in the specified zone; try other types of resources or other regions and zones.",\
"Recommend":"https://api.aliyun.com/troubleshoot?q=OperationDenied.NoStock&product=Ecs"}

  alicloud:ecs:Instance (node-1):
    error: 1 error occurred:
    \t* [ERROR] terraform-provider-alicloud/alicloud/resource_alicloud_instance.go:1276: Resource alicloud_instance \
RunInstances Failed!!! [SDK alibaba-cloud-sdk-go ERROR]:
    SDK.ServerError
    ErrorCode: QuotaExceed.ElasticQuota
    Recommend: https://api.aliyun.com/troubleshoot?q=QuotaExceed.ElasticQuota&product=Ecs
    RequestId: 81EF1E7D-0D15-5CAF-B602-3487FAFA88D5
    Message: The number of vCPUs assigned to the ECS instances has exceeded the quota in the zone.

  pulumi:pulumi:Stack (aitrain-dev):
    error: update failed
"""


# --- the table ---------------------------------------------------------------------------------------------------


def test_the_shipped_table_holds_every_required_code_with_its_kind_and_a_dated_source():
    missing = sorted(set(REQUIRED) - set(ROWS))
    assert not missing, f"capacity_errors.csv lacks {missing}"
    for code, short in REQUIRED.items():
        row = ROWS[code]
        assert row.short == short, code
        assert row.source.startswith(("https://", "AlibabaCloudDocs/", "alibabacloud-go/")), row.source
        assert ex._valid_date(row.source_date), row.source_date
    assert {row.short for row in ROWS.values()} == set(ex.SHORT), "every kind of shortage has at least one code"
    assert {row.service for row in ROWS.values()} == {"ecs", "ess"}


def test_the_table_is_shipped_as_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["blueprints"]
    for name in ("capacity_errors.csv", "README.md"):
        relative = f"preflight/data/{name}"
        assert (ROOT / "blueprints" / relative).is_file()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), f"no package-data glob ships blueprints/{relative}"


GOOD = "OperationDenied.NoStock,ecs,stock,Sold out.,Try another zone.,https://example.com/runinstances,2021-06-15"


@pytest.mark.parametrize(
    ("bad", "column", "says"),
    [
        ("Zone.NotOnSale,ecs,zone,Closed.,Choose another zone.,,2021-06-15", "source", "empty"),
        ("Zone.NotOnSale,ecs,zone,Closed.,Choose another zone.,https://example.com/z,", "source_date", "empty"),
        ("Zone.NotOnSale,ecs,closed,Closed.,Choose another zone.,https://example.com/z,2021-06", "short", "'closed'"),
        ("Zone.NotOnSale,vpc,zone,Closed.,Choose another zone.,https://example.com/z,2021-06", "service", "'vpc'"),
        (
            "Zone.NotOnSale,ecs,zone,Closed.,Choose another zone.,https://example.com/z,2021-13-01",
            "source_date",
            "date",
        ),
        ("Zone.NotOnSale,ecs,zone,Closed.,Choose another zone.,the RunInstances page,2021-06", "source", "neither"),
        ("Zone NotOnSale,ecs,zone,Closed.,Choose another zone.,https://example.com/z,2021-06", "code", "not an error"),
        ("Zone.NotOnSale,ecs,zone,,Choose another zone.,https://example.com/z,2021-06", "meaning", "empty"),
        ("OperationDenied.NoStock,ecs,stock,Again.,Again.,https://example.com/x,2021-06", "code", "repeats line 2"),
    ],
    ids=[
        "no-source",
        "no-date",
        "unknown-short",
        "unknown-service",
        "bad-date",
        "bad-source",
        "bad-code",
        "no-meaning",
        "duplicate",
    ],
)
def test_a_bad_row_is_refused_naming_its_line_and_column(tmp_path, bad, column, says):
    path = tmp_path / "capacity_errors.csv"
    path.write_text(",".join(ex.COLUMNS) + "\n" + GOOD + "\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"capacity_errors.csv line 3, column '{column}': .*{says}"):
        ex.load_capacity_errors(path)


def test_a_good_temporary_table_loads_and_a_wrong_header_is_refused(tmp_path):
    path = tmp_path / "capacity_errors.csv"
    path.write_text(",".join(ex.COLUMNS) + "\n" + GOOD + "\n", encoding="utf-8")
    assert list(ex.load_capacity_errors(path)) == ["OperationDenied.NoStock"]
    path.write_text("code,service,what\n" + GOOD + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="capacity_errors.csv line 1: columns"):
        ex.load_capacity_errors(path)


# --- one paragraph per code --------------------------------------------------------------------------------------


def _one_row_per_kind() -> list[str]:
    first: dict[str, str] = {}
    for code, row in ROWS.items():
        first.setdefault(row.short, code)
    return [first[short] for short in ex.SHORT]


@pytest.mark.parametrize("code", _one_row_per_kind())
@pytest.mark.parametrize("alternative", [None, ALTERNATIVE], ids=["no-alternative", "alternative"])
def test_each_kind_gives_one_line_with_what_ran_out_where_the_code_and_the_next_step(code, alternative):
    row = ROWS[code]
    text = ex.explain(code, "Some message\nfrom the cloud.", where=WHERE, alternative=alternative)
    assert "\n" not in text
    assert text.startswith(f"{ex.SHORT[row.short]} {WHERE}: {row.meaning.rstrip('.')} ({code}: Some message from")
    assert row.action in text
    if alternative:
        assert f"Next in capacity.fallbacks: {ALTERNATIVE}; run `aitrain preflight --choose --stack-config" in text
    elif row.short in ("stock", "zone", "type", "spot"):
        assert text.endswith("or `aitrain zones --write` to see which zones offer the type.")
    if row.short == "quota":
        # The next step itself speaks of the quota, whatever the row's action says.
        assert ("once Quota Center grants more" if alternative else "`aitrain preflight` to see each quota") in text
    if row.short == "reservation":
        assert ("size" in text and "term" in text) if alternative is None else "(its size)" in text


def test_the_sdk_noise_around_the_message_is_dropped():
    text = ex.explain(
        "OperationDenied.NoStock",
        "code: 403, The requested resource is sold out in the specified zone. request id: 6E2C1B7A-3F7D",
        where="in this deployment",
    )
    assert "(OperationDenied.NoStock: The requested resource is sold out in the specified zone)." in text
    assert "request id" not in text and "403" not in text


def test_an_unknown_code_gets_a_generic_paragraph_and_nothing_raises():
    text = ex.explain("InvalidVSwitchId.NotFound", "The vSwitch\ndoes not exist.", where=WHERE, alternative=ALTERNATIVE)
    assert text.startswith(f"aitrain does not know the error code InvalidVSwitchId.NotFound {WHERE}:")
    assert "(InvalidVSwitchId.NotFound: The vSwitch does not exist)" in text and "\n" not in text
    assert ex.explain("", "", where="").startswith("aitrain does not know the error code (no code) in this deployment")


# --- codes in a failed `pulumi up` -------------------------------------------------------------------------------


def test_the_codes_of_a_failed_pulumi_up_in_order_each_once_with_their_messages():
    assert ex.codes_in(PULUMI_UP) == ["OperationDenied.NoStock", "QuotaExceed.ElasticQuota"]
    found = dict(ex.found_in(PULUMI_UP))
    assert found["OperationDenied.NoStock"].startswith("code: 403, The requested resource is sold out")
    # The Recommend URL repeats the code first: the message is still the Message line below it.
    assert found["QuotaExceed.ElasticQuota"] == (
        "The number of vCPUs assigned to the ECS instances has exceeded the quota in the zone."
    )


def test_whole_codes_only():
    assert "OperationDenied" in ROWS and "OperationDenied.NoStock" in ROWS
    assert "OperationDenied" not in ex.codes_in(PULUMI_UP)
    assert ex.codes_in("Code: OperationDenied.Unknown; ErrorCode: XOperationDenied, Zone.NotOnSaleSoon") == []
    # The older provider's one-line form, the code at a sentence's end, and two codes on one line.
    old = "Aliyun API Error: Status Code: 403 Code: OperationDenied Message: The resource is out of usage."
    assert ex.found_in(old) == [("OperationDenied", "The resource is out of usage.")]
    assert ex.codes_in("It failed with Zone.NotOnSale. Then LackResource, then Zone.NotOnSale.") == [
        "Zone.NotOnSale",
        "LackResource",
    ]


# --- aitrain explain-error ---------------------------------------------------------------------------------------


def test_cli_explains_each_code_of_a_log_file(tmp_path):
    log = tmp_path / "up.log"
    log.write_text(PULUMI_UP, encoding="utf-8")
    result = runner.invoke(app, ["explain-error", str(log), "--where", WHERE, "--alternative", ALTERNATIVE])
    assert result.exit_code == 0, result.output
    paragraphs = [p for p in result.stdout.split("\n\n") if p.strip()]
    assert [p.split(":", 1)[0] for p in paragraphs] == [f"Out of stock {WHERE}", f"Out of quota {WHERE}"]
    assert all("\n" not in p.strip() and ALTERNATIVE in p for p in paragraphs)
    assert "(OperationDenied.NoStock: The requested resource is sold out in the specified zone;" in paragraphs[0]


@pytest.mark.parametrize("args", [["explain-error"], ["explain-error", "-"]], ids=["no-argument", "dash"])
def test_cli_reads_standard_input(args):
    result = runner.invoke(app, args, input="ErrorCode: Zone.NotOnSale\nMessage: The specified zone is closed.\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Not sold in the zone in this deployment: ")
    assert "(Zone.NotOnSale: The specified zone is closed)" in result.stdout


def test_cli_exits_1_when_no_known_code_is_found():
    result = runner.invoke(app, ["explain-error"], input="error: update failed\nInvalidVSwitchId.NotFound\n")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip().startswith("no capacity or quota error code that aitrain knows was found")
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_exits_2_for_a_missing_file(tmp_path):
    result = runner.invoke(app, ["explain-error", str(tmp_path / "nope.log")])
    assert result.exit_code == 2
    assert "cannot read the log" in result.stderr and "file does not exist" in result.stderr
    assert "Traceback" not in result.output


# --- docs/capacity-errors.md -------------------------------------------------------------------------------------


def test_the_errors_document_is_current_and_lists_every_code():
    doc = (ROOT / "docs" / "capacity-errors.md").read_text(encoding="utf-8")
    assert doc == ex.errors_document(), "docs/capacity-errors.md is stale: write errors_document() to it"
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    assert [line.split("`")[1] for line in rows] == list(ROWS)
    assert "`aitrain preflight`" in doc and "`aitrain explain-error`" in doc
