"""One reading of the stack config for `pulumi up` and `aitrain plan`: preset → ``aitrain:profile`` → ``--set``.

`pulumi up` hands the program its config as strings (objects JSON-encoded); ``aitrain plan --stack-config``
turns the stack file into exactly that form (``engine_config``) and runs the same program on it, so both
paths see every ``aitrain:*`` key through ``read_settings`` and fail the same way on a mistake.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Mapping

import yaml

from blueprints.core import yamlsafe
from blueprints.core.errors import Problem, UserInputError, did_you_mean, join_allowed, read_text_file
from blueprints.profile import paths as profile_paths
from blueprints.profile.model import ProfileBase
from blueprints.profile.parse import parse_profile

if TYPE_CHECKING:
    from blueprints.catalog import Catalog

PRESET_DIR = Path(__file__).parents[1] / "presets"
NAMESPACE = "aitrain"
PRESET_KEY = f"{NAMESPACE}:preset"
PROFILE_KEY = f"{NAMESPACE}:profile"
KNOWN_KEYS = (PRESET_KEY, PROFILE_KEY)

# Paths that `--set` documents as the public contract; any other known leaf path works too.
CONTRACT_PATHS = (
    "region",
    "compute.instance_type",
    "compute.nodes",
    "compute.min_nodes",
    "compute.max_nodes",
    "storage.kind",
    "storage.capacity_gib",
    "storage.zone",
    "network.vpc_cidr",
    "network.admin_cidr",
)


@dataclass(frozen=True)
class StackSettings:
    """The ``aitrain:*`` keys of one stack config, decoded."""

    preset: str | None
    profile: dict[str, Any]


def preset_names() -> list[str]:
    """Names of the bundled presets."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def load_preset(name: str) -> dict[str, Any]:
    """The raw profile dict of a bundled preset."""
    names = preset_names()
    if name not in names:
        raise UserInputError(
            "unknown preset",
            [Problem("preset", name, f"no such preset; available: {join_allowed(names)}", did_you_mean(name, names))],
        )
    data = yamlsafe.load((PRESET_DIR / f"{name}.yaml").read_text(encoding="utf-8"), f"preset {name}")
    assert isinstance(data, dict), f"preset {name} is not a mapping"
    return data


def engine_value(value: Any) -> str:
    """A config value as the Pulumi engine hands it to a program: strings as they are, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def engine_config(path: Path) -> dict[str, str]:
    """Every config key of a ``Pulumi.<stack>.yaml``, in the form `pulumi up` gives the program.

    A Pulumi secret (``{secure: v1:…}``) inside an ``aitrain:*`` key is refused (``secret_problems``); secrets of
    other namespaces (``alicloud:secretKey``) are passed on encrypted, as aitrain never reads them.
    """
    document = yamlsafe.load(read_text_file(path, "stack config"), f"stack config {path}")
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise UserInputError(
            "invalid stack config",
            [
                Problem(
                    f"{path}: config",
                    config,
                    f"a stack config needs a 'config:' mapping with '{PRESET_KEY}' and/or '{PROFILE_KEY}'",
                )
            ],
        )
    problems = [
        p
        for key, value in config.items()
        if _canonical_key(str(key)).startswith(f"{NAMESPACE}:")
        for p in secret_problems(str(key), value)
    ]
    if problems:
        raise UserInputError(f"invalid stack config {path}", problems)
    return {str(key): engine_value(value) for key, value in config.items()}


def secret_problems(key: str, value: Any, segments: tuple[profile_paths.Segment, ...] = ()) -> list[Problem]:
    """One problem per Pulumi secret in ``value``: a mapping
    whose only key is ``secure`` (Pulumi reserves that form)."""
    if isinstance(value, dict) and list(value) == ["secure"] and isinstance(value["secure"], str):
        cipher = value["secure"]
        return [
            _secret_problem(
                profile_paths.format_path((key, *segments)), f"secure: {cipher[:12]}{'…' if len(cipher) > 12 else ''}"
            )
        ]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in secret_problems(key, v, (*segments, str(k)))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secret_problems(key, v, (*segments, i))]
    return []


def _secret_problem(where: str, shown: Any) -> Problem:
    """Why a secret in aitrain's settings is refused, and the command that stores the value in plain text."""
    if where in KNOWN_KEYS or ("." not in where and "[" not in where):
        hint = f"set it again without --secret: `pulumi config set {where} <value>`"
        if where == PROFILE_KEY:
            hint += f", or field by field: `pulumi config set --path '{where}.compute.nodes' 4`"
    else:
        hint = f"set it again without --secret: `pulumi config set --path '{where}' <value>`"
    return Problem(
        f"config.{where}",
        shown,
        "is a Pulumi secret (`pulumi config set --secret`). aitrain's "
        "settings hold no secrets: each value goes in plain text into"
        " resource arguments, tags and the plan; and the offline plan "
        "cannot decrypt it (only `pulumi up` can), so it would not"
        " show what `pulumi up` builds. So the plan and `pulumi up` both refuse it",
        hint,
    )


def read_settings(config: Mapping[str, Any], *, source: str, secret_keys: Collection[str] = ()) -> StackSettings:
    """Decode the ``aitrain:*`` keys of an engine-form config; reject unknown or mis-nested ones.

    ``pulumi config set aitrain:profile.compute.nodes 4`` (without ``--path``) makes a key literally named
    ``aitrain:profile.compute.nodes``; it is an error here, with the command that sets it properly.
    ``secret_keys`` are the keys the engine marks secret (`pulumi up` decrypts them first): one of ours is refused,
    as ``engine_config`` refuses the encrypted value in a file.
    """
    problems = []
    ours: dict[str, Any] = {}
    for raw_key, value in config.items():
        key = _canonical_key(str(raw_key))
        if not key.startswith(f"{NAMESPACE}:"):
            continue
        if raw_key in secret_keys:
            problems.append(_secret_problem(key, "(secret)"))
            continue
        if key in KNOWN_KEYS:
            ours[key] = value
            continue
        nested = next((k for k in KNOWN_KEYS if key.startswith((k + ".", k + ":", k + "["))), None)
        if nested:
            path = key[len(nested) + 1 :]
            problems.append(
                Problem(
                    f"config.{key}",
                    value,
                    f"is a key named with a dot, not a path into '{nested}'",
                    f"run `pulumi config rm '{key}'` and `pulumi config set --path '{nested}.{path}' <value>`",
                )
            )
        else:
            problems.append(
                Problem(
                    f"config.{key}",
                    value,
                    f"unknown key; allowed: {join_allowed(KNOWN_KEYS)}",
                    did_you_mean(key, KNOWN_KEYS),
                )
            )
    preset = ours.get(PRESET_KEY)
    profile = _decode_object(ours.get(PROFILE_KEY), problems)
    if preset is not None and not isinstance(preset, str):
        problems.append(Problem(f"config.{PRESET_KEY}", preset, "must be a preset name (a string)"))
    if preset is None and not profile and not problems:
        problems.append(
            Problem("config", "(none)", f"set '{PRESET_KEY}' (e.g. medical-imaging) or a structured '{PROFILE_KEY}'")
        )
    if problems:
        raise UserInputError(f"invalid stack config {source}", problems)
    return StackSettings(preset, profile)


def with_cli_inputs(config: dict[str, str], preset: str | None, overrides: list[tuple[str, Any]]) -> dict[str, str]:
    """The engine-form config with a preset argument and ``--set`` overrides folded in, as `pulumi config set` would."""
    out = dict(config)
    stack_preset = out.get(PRESET_KEY)
    if preset is not None:
        if stack_preset is not None and stack_preset != preset:
            raise UserInputError(
                "conflicting presets",
                [
                    Problem(
                        "preset",
                        preset,
                        f"the stack config sets '{PRESET_KEY}: {stack_preset}'; "
                        "drop the argument or change the stack file",
                    )
                ],
            )
        out[PRESET_KEY] = preset
    if overrides:
        problems: list[Problem] = []
        profile = _decode_object(out.get(PROFILE_KEY), problems)
        if problems:
            raise UserInputError("invalid stack config", problems)
        for path, value in overrides:
            profile = set_path(profile, path, value)
        out[PROFILE_KEY] = engine_value(profile)
    return out


def resolve(
    settings: StackSettings, models: Mapping[str, type[ProfileBase]], *, catalog: "Catalog", today: dt.date
) -> tuple[dict[str, Any], ProfileBase]:
    """Merge preset → profile (later wins) and validate once: the raw dict and the profile."""
    data: dict[str, Any] = load_preset(settings.preset) if settings.preset else {}
    if settings.profile:
        preset = data
        data = merge(data, settings.profile)
        if settings.preset:
            _drop_stale_preset_claims(settings.preset, preset, settings.profile, data)
    return data, parse_profile(data, models=models, catalog=catalog, today=today)


# What a preset's description speaks of: its blueprint, compute and kind of storage. Overriding them makes it untrue.
_DESCRIBED = ("blueprint", "compute", "storage.kind")


def _drop_stale_preset_claims(name: str, preset: dict[str, Any], profile: dict[str, Any], data: dict[str, Any]) -> None:
    """What the preset states about its own compute — its description, the hours one run takes on its nodes — is
    replaced or dropped in ``data`` once the stack config changes that compute (and does not restate them)."""
    if "description" not in profile:
        data["description"] = described_after_overrides(name, preset, data)
    run_hours_given = isinstance(profile.get("cost"), dict) and "run_hours" in profile["cost"]
    if (
        not run_hours_given
        and _at(preset, "cost.run_hours") is not None
        and _changed_leaves(_at(preset, "compute"), _at(data, "compute"), "compute")
    ):
        del data["cost"]["run_hours"]


def described_after_overrides(name: str, preset: dict[str, Any], merged: dict[str, Any]) -> str:
    """The preset's description while its blueprint and compute stand; else one saying what changed, so the first
    line of a plan (and of its PR comment) never claims the preset's 12 nodes for a 2-node stack."""
    changes = [
        f"{path} {old} → {new}"
        for path in _DESCRIBED
        for path, old, new in _changed_leaves(_at(preset, path), _at(merged, path), path)
    ]
    if not changes:
        return str(preset.get("description") or "")
    shown = "; ".join(changes[:3]) + (f"; and {len(changes) - 3} more" if len(changes) > 3 else "")
    return f"The {name} preset with {shown} (its own description no longer applies)."


def _at(data: Any, path: str) -> Any:
    """The value at a dotted path of a profile dict, or None."""
    for key in path.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _changed_leaves(old: Any, new: Any, path: str) -> list[tuple[str, Any, Any]]:
    """(dotted path, old, new) for each leaf at or under ``path`` whose value differs."""
    if isinstance(old, dict) or isinstance(new, dict):
        a, b = (old if isinstance(old, dict) else {}), (new if isinstance(new, dict) else {})
        return [
            change
            for key in dict.fromkeys([*a, *b])
            for change in _changed_leaves(a.get(key), b.get(key), f"{path}.{key}")
        ]
    return [] if old == new else [(path, "unset" if old is None else old, "unset" if new is None else new)]


def parse_overrides(assignments: list[str], models: Mapping[str, type[ProfileBase]]) -> list[tuple[str, Any]]:
    """``["compute.nodes=16"]`` → ``[("compute.nodes", 16)]``; values
    are read by the bounded YAML loader (``19:00`` stays text).

    Paths are written as for ``pulumi config set --path``: ``tags.owner=alice``, ``guardrails.skip[0].rule=AIT008``.
    """
    problems: list[Problem] = []
    out = []
    for text in assignments:
        path, sep, raw = text.partition("=")
        path = path.strip()
        if not sep or not path:
            problems.append(Problem("--set", text, "must be PATH=VALUE, e.g. compute.nodes=16"))
            continue
        try:
            segments = profile_paths.parse_path(path)
            profile_paths.check_path(segments, models)
        except profile_paths.PathError as exc:
            common = f"; common ones: {', '.join(CONTRACT_PATHS)}" if exc.unknown_name else ""
            problems.append(Problem(f"--set {path}", raw, f"unknown profile path: {exc}{common}", exc.hint))
            continue
        out.append((profile_paths.format_path(segments), yamlsafe.load_scalar(raw, f"--set {path}")))
    if problems:
        raise UserInputError("invalid --set override", problems)
    return out


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep merge: mappings merge key by key, everything else in ``override`` replaces."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def set_path(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``data`` with ``path`` (``compute.nodes``,
    ``guardrails.skip[0].rule``) set, as ``pulumi config set --path`` would."""
    try:
        return profile_paths.set_path(data, path, value)
    except profile_paths.PathError as exc:
        raise UserInputError("invalid --set override", [Problem(f"--set {path}", value, str(exc))]) from None


def render_stack_config(profile: dict[str, Any], preset: str | None = None) -> str:
    """YAML text of a ``Pulumi.<stack>.yaml`` that ``pulumi up`` and ``aitrain plan --stack-config`` accept."""
    config: dict[str, Any] = {}
    if preset:
        config[PRESET_KEY] = preset
    if profile:
        config[PROFILE_KEY] = profile
    header = (
        "# Written by aitrain. `pulumi up` reads the aitrain:* keys; "
        "`aitrain plan --stack-config FILE` previews them offline.\n"
    )
    return header + yaml.safe_dump({"config": config}, sort_keys=False, allow_unicode=True)


def _canonical_key(key: str) -> str:
    """``aitrain:config:profile`` (the engine's older spelling) → ``aitrain:profile``."""
    namespace, sep, rest = key.partition(":")
    if sep and rest.startswith("config:"):
        return f"{namespace}:{rest[len('config:') :]}"
    return key


def _decode_object(value: Any, problems: list[Problem]) -> dict[str, Any]:
    """A structured config value: the engine passes it as JSON text, a YAML file as a mapping."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            problems.append(
                Problem(
                    f"config.{PROFILE_KEY}",
                    value,
                    "must be a mapping (a structured profile object); set fields with `pulumi config set --path`",
                )
            )
            return {}
    if not isinstance(value, dict):
        problems.append(Problem(f"config.{PROFILE_KEY}", value, "must be a mapping (a structured profile object)"))
        return {}
    return value
