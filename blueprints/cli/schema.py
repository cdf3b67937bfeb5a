"""CLI: ``aitrain schema profile|job|stack`` prints the JSON Schema of a file aitrain reads, from its pydantic models.

Editors validate and complete YAML with it (yaml-language-server: ``# yaml-language-server: $schema=FILE``). The schema
accepts what aitrain reads: where a model takes a number written as text (``"8"``, which ``pulumi config set --path``
may store, or ``1.2e9``, which YAML 1.1 reads as text), so does the schema. Checks it cannot express (a CIDR is a
network, an instance type is in the catalog, a skip names a real rule) are left to ``aitrain plan``: the schema is
never stricter than aitrain, only sometimes looser.
"""

from __future__ import annotations

import copy
import enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from blueprints.cli.support import emit, reports_user_errors

DIALECT = "https://json-schema.org/draft/2020-12/schema"
# The text forms blueprints.profile.strict.Strict turns into numbers (an int field: int text; a float field: either).
_PROFILE_TEXT = {"integer": r"^\s*[+-]?\d{1,18}\s*$", "number": r"^\s*[+-]?(\d{1,18}(\.\d{0,18})?|\.\d{1,18})\s*$"}
# What the job's number fields take as text: Python's float() after dropping "_" (1.2e9, 1_000).
_JOB_TEXT = r"^\s*[+-]?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?\s*$"


class SchemaKind(str, enum.Enum):
    """Which file the schema describes."""

    profile = "profile"
    job = "job"
    stack = "stack"


def profile_schema(blueprint: str | None = None) -> dict[str, Any]:
    """One blueprint's profile, or any blueprint's (``oneOf``, told apart by the ``blueprint`` key)."""
    from pydantic.json_schema import models_json_schema

    from blueprints.architectures import profile_models
    from blueprints.core.errors import Problem, UserInputError, did_you_mean, join_allowed

    models = profile_models()
    if blueprint is not None and blueprint not in models:
        raise UserInputError(
            "unknown blueprint",
            [Problem("--blueprint", blueprint, f"allowed: {join_allowed(models)}", did_you_mean(blueprint, models))],
        )
    chosen = [models[blueprint]] if blueprint else list(models.values())
    refs, top = models_json_schema([(m, "validation") for m in chosen])
    defs = _numbers_as_text(top.get("$defs", {}), _PROFILE_TEXT)
    title = (
        f"aitrain profile ({blueprint})" if blueprint else "aitrain profile (any blueprint: " + ", ".join(models) + ")"
    )
    body: dict[str, Any] = (
        dict(refs[(chosen[0], "validation")]) if blueprint else {"oneOf": [refs[(m, "validation")] for m in chosen]}
    )
    return {"$schema": DIALECT, "title": title, **body, "$defs": defs}


def job_schema() -> dict[str, Any]:
    """A job file (``aitrain recommend JOB.yaml``), from the advisor's ``Job`` model."""
    from blueprints.advisor.job import Job

    schema = Job.model_json_schema(mode="validation")
    wrapped = _numbers_as_text({"Job": schema}, {"integer": _JOB_TEXT, "number": _JOB_TEXT})["Job"]
    return {"$schema": DIALECT, **wrapped, "title": "aitrain job"}


def stack_schema() -> dict[str, Any]:
    """A ``Pulumi.<stack>.yaml``: ``aitrain:preset`` names a bundled preset; ``aitrain:profile`` is merged over it.

    The profile in a stack file may leave out what its preset gives, so no mapping in it is required to be complete
    (entries of a list are: a list replaces the preset's whole). Other namespaces' keys are not checked.
    """
    from blueprints.profile.stackconfig import PRESET_KEY, PROFILE_KEY, preset_names

    full = profile_schema()
    partial = _optional_mappings(full)
    ours = r"^aitrain:(?!(config:)?(preset|profile)$)"
    config = {
        "type": "object",
        "properties": {
            PRESET_KEY: {"enum": preset_names(), "description": "A bundled preset (`aitrain presets`)."},
            PROFILE_KEY: {
                "description": "Profile fields merged over the preset (later wins).",
                "anyOf": partial["oneOf"],
            },
        },
        "patternProperties": {
            ours: {"not": {}, "description": f"unknown aitrain key; allowed: {PRESET_KEY}, {PROFILE_KEY}"}
        },
    }
    return {
        "$schema": DIALECT,
        "title": "aitrain stack config (Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {"config": config},
        "$defs": partial["$defs"],
    }


def _numbers_as_text(defs: dict[str, Any], patterns: dict[str, str]) -> dict[str, Any]:
    """Each model property of type integer/number also takes the text form the model converts."""
    out = copy.deepcopy(defs)
    for model in out.values():
        for name, prop in model.get("properties", {}).items():
            model["properties"][name] = _with_text(prop, patterns)
    return out


def _with_text(prop: dict[str, Any], patterns: dict[str, str]) -> dict[str, Any]:
    if prop.get("type") in patterns:
        kind = prop["type"]
        keep = {k: v for k, v in prop.items() if k in ("title", "description", "default")}
        number = {k: v for k, v in prop.items() if k not in keep}
        return {**keep, "anyOf": [number, {"type": "string", "pattern": patterns[kind]}]}
    if "anyOf" in prop:
        return {**prop, "anyOf": [_with_text(p, patterns) for p in prop["anyOf"]]}
    return prop


def _optional_mappings(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy in which the models reached through mappings (not list entries) require nothing."""
    out = copy.deepcopy(schema)
    defs = out["$defs"]
    todo = [ref["$ref"].rsplit("/", 1)[1] for ref in out["oneOf"]]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        defs[name].pop("required", None)
        for prop in defs[name].get("properties", {}).values():
            for option in [prop, *prop.get("anyOf", [])]:
                if "$ref" in option:  # a nested mapping; refs under "items" (list entries) stay complete
                    todo.append(option["$ref"].rsplit("/", 1)[1])
    return out


def schema(
    kind: Annotated[
        SchemaKind,
        typer.Argument(
            help=(
                "profile: a profile (a preset, or aitrain:profile without a preset); job: a job file for `aitrain "
                "recommend`; stack: a Pulumi.<stack>.yaml."
            )
        ),
    ],
    blueprint: Annotated[
        Optional[str],
        typer.Option(
            "--blueprint",
            help=(
                "With `profile`: only this blueprint's profile (a name that is not a blueprint lists those there "
                "are). Default: any blueprint, chosen by its `blueprint` key."
            ),
        ),
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option("--out", help="Write the schema to this file instead of standard output.")
    ] = None,
) -> None:
    """Print the JSON Schema (draft 2020-12) of a profile, job or stack file, for editors that validate YAML.

    Point yaml-language-server at it with a first line `# yaml-language-server: $schema=aitrain-profile.json`.
    """
    import json

    from blueprints.core.errors import Problem, UserInputError

    if blueprint is not None and kind is not SchemaKind.profile:
        raise UserInputError(
            "conflicting options",
            [Problem("--blueprint", blueprint, f"applies to `aitrain schema profile` only, not `{kind.value}`")],
        )
    document = (
        profile_schema(blueprint)
        if kind is SchemaKind.profile
        else job_schema()
        if kind is SchemaKind.job
        else stack_schema()
    )
    emit(json.dumps(document, indent=2, ensure_ascii=False), out)


def register(app: typer.Typer) -> None:
    """Add ``schema`` to the app."""
    app.command("schema")(reports_user_errors(schema))
