"""`aitrain schema profile|job|stack`: JSON Schema from the models that accepts the shipped files and rejects bad ones,
never stricter than aitrain itself; and shell completion is on."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from blueprints.advisor.job import parse_job
from blueprints.architectures import parse, profile_models
from blueprints.catalog import load_catalog
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.core.yamlsafe import load
from blueprints.profile.stackconfig import load_preset, preset_names

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
CATALOG = load_catalog()
TODAY = dt.date(2026, 11, 30)


def schema(*args: str) -> jsonschema.Draft202012Validator:
    result = runner.invoke(app, ["schema", *args])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


def errors(validator: jsonschema.Draft202012Validator, data: object) -> list[str]:
    """Every error, with the reasons under an anyOf/oneOf (where a number-or-text field says why neither fits)."""

    def flat(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
        return [error, *(e for sub in error.context or () for e in flat(sub))]

    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for top in validator.iter_errors(data) for e in flat(top)
    ]


def read(path: Path) -> object:
    return load(path.read_text(), str(path))  # as aitrain reads it (YAML 1.1: `1.2e9` is text)


@pytest.mark.parametrize("preset", preset_names())
def test_the_profile_schema_accepts_every_preset_and_only_its_blueprint(preset):
    data = load_preset(preset)
    assert errors(schema("profile"), data) == []
    for blueprint in profile_models():
        assert bool(errors(schema("profile", "--blueprint", blueprint), data)) is (blueprint != data["blueprint"])


def test_the_job_schema_accepts_every_example_job():
    validator = schema("job")
    jobs = [p for p in sorted((ROOT / "examples").glob("*.yaml"))]
    assert len(jobs) >= 5
    for path in jobs:
        assert errors(validator, read(path)) == [], path


def test_the_stack_schema_accepts_the_committed_stack_files():
    validator = schema("stack")
    stacks = [*sorted((ROOT / "examples" / "stacks").glob("Pulumi.*.yaml")), ROOT / "Pulumi.example.yaml"]
    for path in stacks:
        assert errors(validator, read(path)) == [], path


def _medical(**changes: object) -> dict:
    data = copy.deepcopy(load_preset("medical-imaging"))
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        cursor = data
        for key in parents:
            cursor = cursor.setdefault(key, {})
        cursor[leaf] = value
    return data


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"compute__nodes": -1}, "-1 is less than the minimum of 0"),
        ({"compute__nodez": 3}, "'nodez' was unexpected"),
        ({"storage__kind": "s3"}, "'s3' is not one of"),
        ({"blueprint": "fixed-clustr"}, "is not valid under any of the given schemas"),
        ({"tags": {"owner": 7}}, "7 is not of type 'string'"),
        ({"guardrails": {"skip": [{"rule": "AIT008"}]}}, "'reason' is a required property"),
        ({"compute__nodes": {"secure": "v1:abc"}}, "is not valid under any of the given schemas"),
    ],
)
def test_the_profile_schema_rejects_what_aitrain_rejects(changes, expected):
    bad = _medical(**changes)
    found = errors(
        schema("profile", "--blueprint", "fixed-cluster") if "blueprint" not in changes else schema("profile"), bad
    )
    assert any(expected in e for e in found), found
    with pytest.raises(UserInputError):  # never stricter than aitrain: aitrain refuses it too
        parse(bad, catalog=CATALOG, today=TODAY)


def test_numbers_written_as_text_are_accepted_as_aitrain_accepts_them():
    data = _medical(compute__nodes="8", storage__capacity_gib="32768")
    assert errors(schema("profile"), data) == []
    assert parse(data, catalog=CATALOG, today=TODAY).compute.nodes == 8
    assert errors(schema("profile"), _medical(compute__nodes="eight"))


def test_the_job_schema_rejects_a_bad_job():
    validator = schema("job")
    good = read(ROOT / "examples" / "tier-pool.yaml")
    assert isinstance(good, dict)
    for bad, expected in [
        ({**good, "params": "many"}, "'many' does not match"),
        ({**good, "precison": "bf16"}, "'precison' was unexpected"),
        ({**good, "max_nodes": 0}, "0 is less than the minimum of 1"),
    ]:
        assert any(expected in e for e in errors(validator, bad)), errors(validator, bad)
        with pytest.raises(UserInputError):
            parse_job(bad)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"aitrain:presets": "medical-imaging"}, "config.aitrain:presets"),
        ({"aitrain:preset": "medical-imagin"}, "'medical-imagin' is not one of"),
        (
            {"aitrain:preset": "medical-imaging", "aitrain:profile": {"compute": {"nodes": -1}}},
            "config.aitrain:profile",
        ),
        (
            {"aitrain:preset": "medical-imaging", "aitrain:profile": {"tags": {"owner": {"secure": "v1:abc"}}}},
            "config.aitrain:profile",
        ),
    ],
)
def test_the_stack_schema_rejects_bad_aitrain_keys_and_leaves_others_alone(config, expected):
    validator = schema("stack")
    found = errors(validator, {"config": config})
    assert any(expected in e for e in found), found
    assert (
        errors(
            validator,
            {
                "encryptionsalt": "v1:x",
                "config": {
                    "alicloud:secretKey": {"secure": "v1:x"},
                    "aitrain:preset": "medical-imaging",
                    "aitrain:profile": {"compute": {"nodes": 2}},
                },
            },
        )
        == []
    )


def test_schema_options_are_checked():
    result = runner.invoke(app, ["schema", "profile", "--blueprint", "fixed-clustr"])
    assert result.exit_code == 2 and "did you mean 'fixed-cluster'?" in result.stderr
    result = runner.invoke(app, ["schema", "job", "--blueprint", "fixed-cluster"])
    assert result.exit_code == 2 and "applies to `aitrain schema profile` only" in result.stderr


def test_schema_writes_a_file(tmp_path):
    out = tmp_path / "profile.schema.json"
    result = runner.invoke(app, ["schema", "profile", "--out", str(out)])
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(out.read_text())["title"].startswith("aitrain profile (any blueprint")


def test_shell_completion_is_offered():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "--install-completion" in result.stdout and "--show-completion" in result.stdout
    script = runner.invoke(app, ["--show-completion", "bash"])
    assert script.exit_code == 0 and "_aitrain_completion" in script.stdout and "complete " in script.stdout
