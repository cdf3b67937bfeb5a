"""Writing aitrain keys into an existing Pulumi stack file keeps every other byte, or refuses."""

from __future__ import annotations

import pytest

from blueprints.core.errors import UserInputError
from blueprints.core.yamlsafe import load
from blueprints.profile.stackfile import merge_stack_text, write_stack_file

HEAD = """# Production stack for the imaging team.
encryptionsalt: v1:ZW5jcnlwdGlvbnNhbHQ=:v1:AAAAAAAAAAAAAAAA:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB==
config:
  # region is fixed by the data-residency review
  alicloud:region: cn-shanghai
"""
SECRET = """  db:password:
    secure: v1:AAABAGNvbmZpZ3NlY3JldA==:v1:c2VjcmV0dmFsdWU=
"""
TAIL = """
  other:list:
    - a
    - b  # trailing comment
  "quoted:key": 'x'

# a footer comment
"""
OLD_OURS = """  aitrain:preset: medical-imaging
  aitrain:profile:
    name: old
    compute:
      nodes: 2
"""
NEW = {"aitrain:profile": {"name": "med", "compute": {"instance_type": "ecs.gn7e-c16g1.32xlarge", "nodes": 4}}}
NEW_TEXT = """  aitrain:profile:
    name: med
    compute:
      instance_type: ecs.gn7e-c16g1.32xlarge
      nodes: 4
"""


def test_merge_adds_our_keys_and_keeps_every_other_byte():
    existing = HEAD + SECRET + TAIL
    merged, action = merge_stack_text(existing, NEW)
    assert action == "merged"
    # Everything that was there is still there, byte for byte and in order; only our entry is new.
    assert merged == HEAD + SECRET + TAIL.replace("  \"quoted:key\": 'x'\n", "  \"quoted:key\": 'x'\n" + NEW_TEXT)
    document = load(merged, "merged")
    assert document["encryptionsalt"].startswith("v1:ZW5j")
    assert document["config"]["db:password"] == {"secure": "v1:AAABAGNvbmZpZ3NlY3JldA==:v1:c2VjcmV0dmFsdWU="}
    assert document["config"]["aitrain:profile"] == NEW["aitrain:profile"]


def test_different_aitrain_keys_are_refused_without_force():
    existing = HEAD + OLD_OURS + SECRET + TAIL
    with pytest.raises(UserInputError) as info:
        merge_stack_text(existing, NEW, source="Pulumi.prod.yaml")
    message = info.value.render()
    assert "config.aitrain:profile" in message and "already set to a different value" in message
    assert "config.aitrain:preset" in message and "would be removed" in message
    assert "--force" in message


def test_force_replaces_only_the_aitrain_entries_in_place():
    existing = HEAD + OLD_OURS + SECRET + TAIL
    merged, action = merge_stack_text(existing, NEW, force=True)
    assert action == "replaced"
    assert merged == HEAD + NEW_TEXT + SECRET + TAIL


def test_same_values_leave_the_file_untouched(tmp_path):
    target = tmp_path / "Pulumi.dev.yaml"
    existing = HEAD + NEW_TEXT + SECRET + TAIL
    target.write_text(existing)
    before = target.stat().st_mtime_ns
    assert write_stack_file(target, "config:\n" + NEW_TEXT) == "unchanged"
    assert target.read_text() == existing and target.stat().st_mtime_ns == before


def test_file_without_config_gets_one_appended():
    merged, action = merge_stack_text("encryptionsalt: v1:abc\n", NEW)
    assert action == "merged" and merged == "encryptionsalt: v1:abc\nconfig:\n" + NEW_TEXT


@pytest.mark.parametrize(
    ("existing", "reason"),
    [("config: {a: 1}\n", "flow style"), ("- a\n- b\n", "not a YAML mapping"), ("config: [\n", "not valid YAML")],
)
def test_uneditable_files_are_refused_even_with_force(tmp_path, existing, reason):
    target = tmp_path / "Pulumi.dev.yaml"
    target.write_text(existing)
    with pytest.raises(UserInputError, match=reason):
        write_stack_file(target, "config:\n" + NEW_TEXT, force=True)
    assert target.read_text() == existing


def test_new_file_is_written_whole(tmp_path):
    target = tmp_path / "Pulumi.dev.yaml"
    assert write_stack_file(target, "# header\nconfig:\n" + NEW_TEXT) == "created"
    assert target.read_text() == "# header\nconfig:\n" + NEW_TEXT
    assert [p.name for p in tmp_path.iterdir()] == ["Pulumi.dev.yaml"]  # no temporary file left behind


# Atomic output (`emit` / `write_atomic` in cli_support): a failure never truncates an existing target.


def test_failed_plan_leaves_an_existing_out_file_intact(tmp_path):
    from typer.testing import CliRunner

    from blueprints.cli.main import app

    out = tmp_path / "plan.md"
    out.write_text("previous plan\n")
    result = CliRunner().invoke(
        app, ["plan", "medical-imaging", "--set", "compute.nodes=-1", "--format", "markdown", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert out.read_text() == "previous plan\n"


def test_a_crash_while_writing_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from blueprints.cli import support as cli_support
    from blueprints.core import files

    out = tmp_path / "plan.json"
    out.write_text("old\n")

    def broken_replace(_src, _dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(UserInputError, match="No space left on device"):
        cli_support.emit("new text", out)
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_unencodable_text_never_truncates(tmp_path):
    from blueprints.cli.support import emit

    out = tmp_path / "plan.md"
    out.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        emit("bad \udc80 text", out)
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["plan.md"]


def test_emit_replaces_atomically_and_keeps_the_mode(tmp_path):
    from blueprints.cli.support import emit

    out = tmp_path / "plan.json"
    out.write_text("old\n")
    out.chmod(0o640)
    emit("new", out)
    assert out.read_text() == "new\n" and (out.stat().st_mode & 0o777) == 0o640


def test_emit_to_a_missing_directory_is_a_user_error(tmp_path):
    from blueprints.cli.support import emit

    with pytest.raises(UserInputError, match="--out"):
        emit("x", tmp_path / "missing" / "plan.json")
