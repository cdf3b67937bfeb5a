"""Bad job input through the CLI: exit 2, one message naming
the field, what it is and an allowed example; no traceback."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from blueprints.cli.advisor import register

app = typer.Typer()
register(app)
runner = CliRunner()
LLM = ["--model-kind", "transformer", "--params", "1e9", "--tokens", "1e10"]
CNN = ["--model-kind", "cnn", "--params", "2.5e7", "--forward-gflops", "7.6", "--samples", "1.28e6"]


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["recommend", "--model-kind", "transformer", "--params", "1e9", "--tokens", "0"],
            "tokens = 0.0: must be greater than 0: tokens is the training "
            "tokens per run, count (transformer only); e.g. tokens: 2e12",
        ),
        (
            ["recommend", *CNN[:-1], "0"],
            "samples = 0.0: must be greater than 0: samples is the samples "
            "per epoch, count (cnn / other only); e.g. samples: 1.28e6",
        ),
        (
            ["recommend", *LLM, "--deadline-days", "0"],
            "deadline_days = 0.0: must be greater than 0: deadline_days is the "
            "longest acceptable wall-clock time per run, days; e.g. deadline_days: 7",
        ),
        (
            ["recommend", *LLM, "--region", "cn-shangai"],
            "region = 'cn-shangai': unknown region: region is the Alibaba "
            "Cloud region ID, e.g. cn-shanghai; the catalog knows",
        ),
        (
            ["estimate", "--instance-type", "ecs.gn7i-c16g1.4xlarge", *LLM],
            "mfu: A10 has no published transformer mixed precision MFU "
            "anchor (data/mfu.csv), so the time cannot be estimated; "
            "give a measured fraction 0 < mfu ≤ 1, e.g. --mfu 0.3 or mfu: 0.3 in the job file",
        ),
        (
            ["estimate", "--instance-type", "ecs.gn7e-c16g1.32xlarge", *LLM, "--mfu", "1.5"],
            "mfu = 1.5: must be less than or equal to 1: mfu is the measured model FLOPs utilisation (fraction)",
        ),
    ],
)
def test_bad_input_exits_2_with_one_clear_message(args, expected):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.count("  - ") == 1  # one problem, one line


def test_region_typo_gets_did_you_mean():
    result = runner.invoke(app, ["recommend", *LLM, "--region", "cn-shangai"])
    assert "did you mean 'cn-shanghai'?" in result.output


def test_estimate_with_a_measured_mfu_works_where_no_anchor_exists():
    result = runner.invoke(app, ["estimate", "--instance-type", "ecs.gn7i-c16g1.4xlarge", *LLM, "--mfu", "0.3"])
    assert result.exit_code == 0, result.output
    assert "0.300 (from the job)" in result.output
