"""Stack files and flags mean one thing: duplicate keys, Pulumi secrets, repeated options and --set paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from blueprints.architectures import profile_models
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.core.yamlsafe import load
from blueprints.profile.paths import PathError, check_path, format_path, parse_path, set_path
from blueprints.profile.stackconfig import PROFILE_KEY, engine_config, parse_overrides, read_settings, with_cli_inputs

runner = CliRunner()
MODELS = profile_models()
ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str):
    return runner.invoke(app, list(args))


def write(tmp_path: Path, text: str, name: str = "Pulumi.dev.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- duplicate keys ---------------------------------------------------------------------------------------------


def test_a_duplicate_key_names_both_lines():
    with pytest.raises(UserInputError) as info:
        load("config:\n  aitrain:profile:\n    compute:\n      nodes: 4\n      nodes: 40\n", "Pulumi.dev.yaml")
    (problem,) = info.value.problems
    assert problem.path == "Pulumi.dev.yaml, line 5, column 7"
    assert (
        "key 'nodes' is written twice in one mapping: 'nodes: 4' on line 4, then 'nodes: 40' on line 5"
        in problem.message
    )


@pytest.mark.parametrize(
    "text",
    [
        'a: 1\n"a": 2\n',  # quoted and plain spell the same key
        "top: {x: 1, x: 2}\n",  # flow style
        "list:\n  - rule: AIT008\n    rule: AIT031\n",  # inside a list entry
    ],
)
def test_every_spelling_of_a_duplicate_is_refused(text):
    with pytest.raises(UserInputError, match="is written twice in one mapping"):
        load(text, "f")


def test_a_merge_key_override_is_not_a_duplicate():
    assert load("base: &b {nodes: 4, kind: nas}\nmine:\n  <<: *b\n  nodes: 40\n", "f")["mine"] == {
        "nodes": 40,
        "kind": "nas",
    }
    assert load("a: {x: 1}\nb: {x: 1}\n", "f") == {"a": {"x": 1}, "b": {"x": 1}}  # the same key in two mappings


def test_plan_refuses_a_stack_file_with_a_duplicate_key(tmp_path):
    stack = write(
        tmp_path,
        "config:\n  aitrain:preset: medical-imaging\n  "
        "aitrain:profile:\n    compute:\n      nodes: 4\n      nodes: 40\n",
    )
    result = invoke("plan", "--stack-config", str(stack))
    assert result.exit_code == 2 and result.stdout == ""
    assert (
        "line 6, column 7: key 'nodes' is written twice in one "
        "mapping: 'nodes: 4' on line 5, then 'nodes: 40' on line 6" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_a_job_file_with_a_duplicate_key_is_refused(tmp_path):
    job = (ROOT / "examples" / "medical-imaging.yaml").read_text()
    first = next(line for line in job.splitlines() if line and not line.startswith((" ", "#")) and ":" in line)
    result = invoke("recommend", str(write(tmp_path, job + first + "\n", "job.yaml")))
    assert result.exit_code == 2 and f"key '{first.split(':')[0]}' is written twice" in result.stderr


def test_the_shipped_presets_and_examples_have_no_duplicate_key():
    for path in [*(ROOT / "blueprints" / "presets").glob("*.yaml"), *(ROOT / "examples").rglob("*.yaml")]:
        load(path.read_text(), str(path))


# --- Pulumi secrets ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile_yaml", "where"),
    [
        ("  aitrain:profile:\n    secure: v1:AAAAbbbbCCCCdddd\n", "config.aitrain:profile"),
        (
            "  aitrain:profile:\n    compute:\n      nodes:\n        secure: v1:AAAA\n",
            "config.aitrain:profile.compute.nodes",
        ),
        (
            "  aitrain:profile:\n    guardrails:\n      skip:\n        - "
            "rule: AIT031\n          reason:\n            secure: v1:AAAA\n",
            "config.aitrain:profile.guardrails.skip[0].reason",
        ),
    ],
)
def test_a_secret_in_the_aitrain_profile_is_refused_with_what_it_is(tmp_path, profile_yaml, where):
    stack = write(tmp_path, "encryptionsalt: v1:salt=\nconfig:\n  aitrain:preset: medical-imaging\n" + profile_yaml)
    result = invoke("plan", "--stack-config", str(stack))
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{where} = 'secure: v1:AAAA" in result.stderr
    assert (
        "is a Pulumi secret (`pulumi config set --secret`)" in result.stderr
        and "the offline plan cannot decrypt it" in result.stderr
    )
    assert "did you mean 'security'" not in result.stderr and "Input should be" not in result.stderr
    assert "without --secret" in result.stderr


def test_secrets_of_other_namespaces_are_ignored_as_before(tmp_path):
    stack = write(
        tmp_path,
        "config:\n  alicloud:secretKey:\n    secure: v1:Zm9v\n  other:thing:\n    "
        "nested:\n      secure: v1:q\n  aitrain:preset: medical-imaging\n",
    )
    result = invoke("plan", "--stack-config", str(stack), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["profile_name"] == "medical-imaging"


def test_pulumi_up_refuses_a_key_the_engine_marks_secret():
    """Under `pulumi up` the engine decrypts the value and lists
    the key as secret: the program refuses it the same way."""
    with pytest.raises(UserInputError) as info:
        read_settings(
            {"aitrain:preset": "medical-imaging", PROFILE_KEY: '{"tags": {"owner": "alice"}}'},
            source="(pulumi config)",
            secret_keys={PROFILE_KEY},
        )
    (problem,) = info.value.problems
    assert problem.path == "config.aitrain:profile" and "is a Pulumi secret" in problem.message
    assert (
        read_settings(
            {"aitrain:preset": "medical-imaging", "alicloud:secretKey": "x"},
            source="t",
            secret_keys={"alicloud:secretKey"},
        ).preset
        == "medical-imaging"
    )


def test_the_program_passes_the_engines_secret_keys(monkeypatch):
    import pulumi

    from blueprints.engine.preview import record
    from blueprints.engine.program import run

    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", json.dumps([PROFILE_KEY]))
    config = {"aitrain:preset": "medical-imaging", PROFILE_KEY: '{"tags": {"owner": "alice"}}'}
    with pytest.raises(pulumi.RunError, match=r"config\.aitrain:profile = '\(secret\)': is a Pulumi secret"):
        record(run, config, zones=["cn-shanghai-a"], image_id=None)


def test_engine_config_keeps_refusing_secrets_only_inside_aitrain_keys(tmp_path):
    stack = write(tmp_path, "config:\n  aws:secret:\n    secure: v1:x\n  aitrain:preset: medical-imaging\n")
    assert engine_config(stack)["aitrain:preset"] == "medical-imaging"


# --- one option, one value --------------------------------------------------------------------------------------


def _commands_taking(option: str) -> list[list[str]]:
    found: list[list[str]] = []

    def walk(command, prefix):
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*prefix, name])
        elif any(option in getattr(p, "opts", ()) for p in command.params):
            found.append(prefix)

    walk(get_command(app), [])
    return found


def test_the_commands_that_take_a_stack_config_are_found():
    assert {" ".join(c) for c in _commands_taking("--stack-config")} >= {
        "plan",
        "preflight",
        "park",
        "policy config",
        "export terraform",
    }


@pytest.mark.parametrize("command", _commands_taking("--stack-config"), ids=" ".join)
def test_two_stack_configs_are_an_error_naming_both(command, tmp_path):
    a, b = write(tmp_path, "config: {}\n", "Pulumi.a.yaml"), write(tmp_path, "config: {}\n", "Pulumi.b.yaml")
    result = invoke(*command, "--stack-config", str(a), f"--stack-config={b}")
    assert result.exit_code == 2, result.output
    assert f"--stack-config: is given 2 times ('{a}', then '{b}')" in result.stderr and "give it once" in result.stderr
    assert "Traceback" not in result.stderr


def test_repeatable_options_and_flags_still_repeat():
    result = invoke(
        "plan", "medical-imaging", "--set", "compute.nodes=2", "--set", "tags.owner=alice", "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["summary"]["nodes"] == 2


def test_any_single_value_option_given_twice_is_refused():
    result = invoke("plan", "medical-imaging", "--format", "json", "--format", "table")
    assert result.exit_code == 2 and "--format: is given 2 times ('json', then 'table')" in result.stderr


# --- --set paths, as `pulumi config set --path` writes them --------------------------------------------------------


def _plan(*assignments: str, stack: Path | None = None) -> dict:
    args = (
        ["plan", "medical-imaging", "--format", "json"]
        if stack is None
        else ["plan", "--stack-config", str(stack), "--format", "json"]
    )
    for a in assignments:
        args += ["--set", a]
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_set_a_tag_is_what_the_stack_file_holds(tmp_path):
    by_flag = _plan("tags.owner=alice", 'tags["cost.center"]=ml-42')
    # `pulumi config set --path 'aitrain:profile.tags.owner' alice` stores exactly this mapping.
    stack = write(
        tmp_path,
        "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    "
        "tags:\n      owner: alice\n      cost.center: ml-42\n",
    )
    assert by_flag == _plan(stack=stack)
    vpc = next(r for r in by_flag["resources"] if r["type"] == "alicloud:vpc/network:Network")
    assert vpc["inputs"]["tags"]["owner"] == "alice" and vpc["inputs"]["tags"]["cost.center"] == "ml-42"


def test_set_a_guardrail_skip_by_index_or_as_a_yaml_list(tmp_path):
    by_index = _plan("guardrails.skip[0].rule=AIT031", "guardrails.skip[0].reason=tags come from the org policy")
    as_list = _plan("guardrails.skip=[{rule: AIT031, reason: tags come from the org policy}]")
    stack = write(
        tmp_path,
        "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    guardrails:\n      skip:\n        - rule: "
        "AIT031\n          reason: tags come from the org policy\n",
    )
    assert by_index == as_list == _plan(stack=stack)
    assert [(s["rule"], s["reason"]) for s in by_index["skipped"]] == [("AIT031", "tags come from the org policy")]


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        (
            "guardrails.skip.rule=AIT031",
            "guardrails.skip is a list: set one entry by its index, "
            "guardrails.skip[0].rule=… and guardrails.skip[0].reason=…",
        ),
        (
            "guardrails.skip[1].rule=AIT031",
            "guardrails.skip[1] is past the end of guardrails.skip, which has 0 entries; use [0] to add one",
        ),
        ("guardrails.skip=AIT031", "is a list of {rule: AIT0NN, reason: why}"),
        ("tags.owner.name=alice", "tags.owner is a single value, so it has no key 'name'"),
        ("compute.nodes[0]=3", "compute.nodes is not a list"),
        ("compute..nodes=3", "cannot read the path at character 9"),
    ],
)
def test_set_paths_that_cannot_be_set_say_how(assignment, message):
    result = invoke("plan", "medical-imaging", "--set", assignment)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_set_path_follows_pulumi_config_set_path():
    """Pulumi's config.Map.Set: maps and lists are created on the way, [len] appends, beyond len is refused."""
    assert set_path({}, "guardrails.skip[0].rule", "AIT008") == {"guardrails": {"skip": [{"rule": "AIT008"}]}}
    two = set_path({"guardrails": {"skip": [{"rule": "A"}]}}, "guardrails.skip[1].rule", "B")
    assert two == {"guardrails": {"skip": [{"rule": "A"}, {"rule": "B"}]}}
    assert set_path(two, "guardrails.skip[0].rule", "C")["guardrails"]["skip"][0] == {"rule": "C"}
    assert set_path({"tags": {"team": "x"}}, "tags.owner", "alice") == {"tags": {"team": "x", "owner": "alice"}}
    with pytest.raises(PathError, match="past the end"):
        set_path({}, "guardrails.skip[2].rule", "B")
    with pytest.raises(PathError, match="holds the single value 4, not a mapping"):
        set_path({"compute": 4}, "compute.nodes", 3)


@pytest.mark.parametrize(
    "text",
    [
        "compute.nodes",
        "tags.owner",
        'tags["cost.center"]',
        "guardrails.skip[0].reason",
        "security.egress.allow[2].cidr",
    ],
)
def test_paths_read_and_write_back(text):
    assert format_path(parse_path(text)) == text
    check_path(parse_path(text), MODELS)


def test_overrides_fold_into_the_profile_as_pulumi_would_store_them():
    overrides = parse_overrides(
        ["tags.owner=alice", "guardrails.skip[0].rule=AIT031", "guardrails.skip[0].reason=r"], MODELS
    )
    config = with_cli_inputs({"aitrain:preset": "medical-imaging"}, None, overrides)
    assert json.loads(config[PROFILE_KEY]) == {
        "guardrails": {"skip": [{"reason": "r", "rule": "AIT031"}]},
        "tags": {"owner": "alice"},
    }
