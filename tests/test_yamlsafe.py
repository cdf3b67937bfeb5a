"""The user-YAML loader keeps times and dates as written and turns every oversized or hostile document into exit 2."""

from __future__ import annotations

import time

import pytest

from blueprints.core.errors import UserInputError
from blueprints.core.yamlsafe import MAX_DEPTH, load, load_scalar


def _error(text: str, source: str = "Pulumi.dev.yaml") -> str:
    with pytest.raises(UserInputError) as info:
        load(text, source)
    assert info.value.exit_code == 2
    message = info.value.render()
    assert source in message
    return message


def test_times_and_dates_stay_strings():
    data = load(
        "work_end: 19:00\nwork_start: 08:30\nstart_date: "
        "2027-01-04\nstamp: 2001-12-14t21:59:43.10-05:00\nlong: 1:30:00",
        "f",
    )
    assert data == {
        "work_end": "19:00",
        "work_start": "08:30",
        "start_date": "2027-01-04",
        "stamp": "2001-12-14t21:59:43.10-05:00",
        "long": "1:30:00",
    }


def test_other_scalars_still_resolve():
    data = load(
        "i: 12\nneg: -3\nhex: 0x1f\nf: 1.5\nexp: 1.0e+3\nb: true\nn: ~\ns: medical\ncidr: 10.0.0.0/16\neq: =", "f"
    )
    assert data == {
        "i": 12,
        "neg": -3,
        "hex": 31,
        "f": 1.5,
        "exp": 1000.0,
        "b": True,
        "n": None,
        "s": "medical",
        "cidr": "10.0.0.0/16",
        "eq": "=",
    }
    assert type(data["i"]) is int and type(data["b"]) is bool


def test_billion_laughs_fails_fast():
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    started = time.perf_counter()
    message = _error("\n".join(lines))
    assert time.perf_counter() - started < 1.0
    assert "aliases expanded" in message and "100,000" in message


def test_many_alias_references_are_refused():
    text = "a: &a x\nb: [" + ", ".join(["*a"] * 101) + "]"
    assert "more than 100 alias references" in _error(text)


def test_deep_nesting_is_refused_with_the_limit():
    message = _error("x: " + "[" * 5000 + "]" * 5000)
    assert f"nested deeper than {MAX_DEPTH} levels" in message and "line 1" in message
    # 32 levels are fine: the bound is where it says.
    assert load("[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1), "f") is not None


def test_huge_integer_is_refused_not_a_value_error():
    assert "integer has 5000 digits; at most 100 are allowed" in _error("capacity_gib: " + "9" * 5000)
    assert load("n: " + "9" * 100, "f") == {"n": int("9" * 100)}


def test_recursive_anchor_is_refused():
    assert "recursive" in _error("&a [*a]")
    assert "recursive" in _error("a: &x {b: *x}")


def test_shared_anchor_without_recursion_is_fine():
    assert load("base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\ne: *b", "f") == {
        "base": {"x": 1},
        "d": {"x": 1, "y": 2},
        "e": {"x": 1},
    }


@pytest.mark.parametrize(
    ("text", "shown"),
    [("{a: 1}: x", "of type dict"), ("[x]: y", "of type list"), ("1: x", "1 (int)"), ("yes: x", "True (bool)")],
)
def test_non_string_keys_are_refused(text, shown):
    message = _error(text)
    assert f"mapping key {shown} is not a string" in message


@pytest.mark.parametrize(
    "text", ["!!set {a, b}", "!!binary aGVsbG8=", "!!timestamp 2027-01-04", "!!python/object:os.system x", "!custom x"]
)
def test_exotic_tags_are_refused(text):
    assert "is not accepted" in _error(text)


def test_invalid_yaml_names_line_and_column():
    assert "line 2, column 4" in _error("a: 1\nb: ]\n")


def test_oversized_text_is_refused():
    assert "characters long" in _error("x" * 1_000_001)


def test_load_scalar_for_set_values():
    assert load_scalar("19:00", "--set cost.off_hours.work_end") == "19:00"
    assert load_scalar("2027-01-04", "--set cost.off_hours.start_date") == "2027-01-04"
    assert load_scalar("16", "--set compute.nodes") == 16
    assert load_scalar("[cn-shanghai-a, cn-shanghai-b]", "--set network.zones") == ["cn-shanghai-a", "cn-shanghai-b"]
    assert load_scalar("", "--set x") is None
    assert load_scalar("[unclosed", "--set x") == "[unclosed"  # not YAML: kept as the text given
    with pytest.raises(UserInputError, match="recursive"):
        load_scalar("&a [*a]", "--set blueprint")
    with pytest.raises(UserInputError, match="nested deeper"):
        load_scalar("[" * 40 + "]" * 40, "--set storage.capacity_gib")
    with pytest.raises(UserInputError, match="--set compute.nodes"):
        load_scalar("1" * 5000, "--set compute.nodes")


def test_lone_surrogate_escape_is_refused():
    assert "lone surrogate" in _error('description: "a\\udc80b"')
    assert load('d: "caf\\u00e9"', "f") == {"d": "café"}


# The CLI boundary (cli_support): parser errors from user input exit 2; other exceptions stay bugs.


def _command(exc: BaseException):
    import typer

    from blueprints.cli.support import reports_user_errors

    @reports_user_errors
    def command() -> None:
        raise exc

    return command, typer


@pytest.mark.parametrize(
    "make",
    [
        lambda: __import__("yaml").safe_load("a: ["),
        lambda: __import__("json").loads("{"),
        lambda: b"\xff".decode("utf-8"),
    ],
)
def test_parser_errors_from_input_exit_2(make, capsys):
    try:
        make()
    except Exception as exc:
        command, typer = _command(exc)
    with pytest.raises(typer.Exit) as info:
        command()
    assert info.value.exit_code == 2
    assert capsys.readouterr().err.startswith("error: invalid input (1 problem):\n  - (input): cannot be parsed: ")


def test_other_exceptions_are_not_swallowed():
    command, _ = _command(KeyError("bug"))
    with pytest.raises(KeyError):
        command()


def test_reading_turns_shape_errors_into_exit_2():
    from blueprints.cli.support import reading

    with pytest.raises(UserInputError) as info, reading("new.json", "a plan from `aitrain plan --format json`"):
        {"resources": 5}["resources"][0]
    message = info.value.render()
    assert "new.json" in message and "unexpected shape (TypeError" in message and "expected a plan from" in message
