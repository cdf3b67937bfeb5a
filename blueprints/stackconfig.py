"""Where a profile comes from: a preset, then a Pulumi stack config file, then ``--set`` overrides, validated once."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from blueprints.errors import Problem, UserInputError, did_you_mean, join_allowed
from blueprints.profile import ProfileModel, _all_known_fields, parse_profile

PRESET_DIR = Path(__file__).parent / "presets"
NAMESPACE = "aitrain"
PRESET_KEY = f"{NAMESPACE}:preset"
PROFILE_KEY = f"{NAMESPACE}:profile"

# Paths that `--set` documents as the public contract; any other known leaf path works too.
CONTRACT_PATHS = (
    "region",
    "compute.instance_type",
    "compute.nodes",
    "compute.min_nodes",
    "compute.max_nodes",
    "storage.kind",
    "storage.capacity_gib",
    "network.vpc_cidr",
    "network.admin_cidr",
)


def preset_names() -> list[str]:
    """Names of the bundled presets."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def load_preset(name: str) -> dict[str, Any]:
    """The raw profile dict of a bundled preset."""
    path = PRESET_DIR / f"{name}.yaml"
    if not path.is_file():
        names = preset_names()
        raise UserInputError("unknown preset", [Problem("preset", name, f"no such preset; available: {join_allowed(names)}", did_you_mean(name, names))])
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def read_stack_config(path: Path) -> tuple[str | None, dict[str, Any]]:
    """``(preset, profile)`` from a ``Pulumi.<stack>.yaml`` — the same keys ``pulumi up`` reads."""
    from blueprints.errors import read_text_file

    text = read_text_file(path, "stack config")
    try:
        document = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise UserInputError("invalid stack config", [Problem(str(path), "(file)", f"is not valid YAML{where}: {getattr(exc, 'problem', exc)}")]) from None
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise UserInputError("invalid stack config", [Problem(f"{path}: config", config, f"a stack config needs a 'config:' mapping with '{PRESET_KEY}' and/or '{PROFILE_KEY}'")])
    return stack_config_values(config, source=str(path))


def stack_config_values(config: dict[str, Any], *, source: str) -> tuple[str | None, dict[str, Any]]:
    """Pick the aitrain keys out of a Pulumi config mapping; reject unknown ``aitrain:`` keys."""
    problems = []
    ours = {k: v for k, v in config.items() if k.startswith(f"{NAMESPACE}:")}
    for key in ours:
        if key not in (PRESET_KEY, PROFILE_KEY):
            problems.append(Problem(f"config.{key}", ours[key], f"unknown key; allowed: '{PRESET_KEY}', '{PROFILE_KEY}'", did_you_mean(key, (PRESET_KEY, PROFILE_KEY))))
    preset = ours.get(PRESET_KEY)
    profile = ours.get(PROFILE_KEY) or {}
    if preset is not None and not isinstance(preset, str):
        problems.append(Problem(f"config.{PRESET_KEY}", preset, "must be a preset name (a string)"))
    if not isinstance(profile, dict):
        problems.append(Problem(f"config.{PROFILE_KEY}", profile, "must be a mapping (a structured profile object)"))
    if preset is None and not profile and not problems:
        problems.append(Problem("config", "(none)", f"set '{PRESET_KEY}' (e.g. medical-imaging) or a structured '{PROFILE_KEY}'"))
    if problems:
        raise UserInputError(f"invalid stack config {source}", problems)
    return preset, profile


def parse_overrides(assignments: list[str]) -> list[tuple[str, Any]]:
    """``["compute.nodes=16"]`` → ``[("compute.nodes", 16)]``; values are read as YAML scalars."""
    leaves = _leaf_paths()
    problems: list[Problem] = []
    out = []
    for text in assignments:
        path, sep, raw = text.partition("=")
        path = path.strip()
        if not sep or not path:
            problems.append(Problem("--set", text, "must be PATH=VALUE, e.g. compute.nodes=16"))
            continue
        if path not in leaves:
            hint = did_you_mean(path, leaves)
            problems.append(Problem(f"--set {path}", raw, f"unknown profile path; common ones: {', '.join(CONTRACT_PATHS)}", hint))
            continue
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        out.append((path, value))
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
    """A copy of ``data`` with the dotted ``path`` set to ``value``."""
    head, _, rest = path.partition(".")
    out = dict(data)
    if rest:
        inner = out.get(head)
        out[head] = set_path(inner if isinstance(inner, dict) else {}, rest, value)
    else:
        out[head] = value
    return out


def build_profile_dict(preset: str | None = None, stack_profile: dict[str, Any] | None = None, overrides: list[tuple[str, Any]] = ()) -> dict[str, Any]:
    """Merge preset → stack config profile → overrides (later wins), before validation."""
    data: dict[str, Any] = load_preset(preset) if preset else {}
    if stack_profile:
        data = merge(data, stack_profile)
    for path, value in overrides:
        data = set_path(data, path, value)
    return data


def resolve_profile(preset: str | None = None, stack_profile: dict[str, Any] | None = None, overrides: list[tuple[str, Any]] = ()) -> tuple[dict[str, Any], ProfileModel]:
    """The merged raw dict and the validated profile (validated once, after merging)."""
    if not preset and not stack_profile:
        raise UserInputError("no profile given", [Problem("preset", None, f"name a preset ({join_allowed(preset_names())}) or give --stack-config")])
    data = build_profile_dict(preset, stack_profile, overrides)
    return data, parse_profile(data)


def render_stack_config(profile: dict[str, Any], preset: str | None = None) -> str:
    """YAML text of a ``Pulumi.<stack>.yaml`` that ``pulumi up`` and ``aitrain plan --stack-config`` accept."""
    config: dict[str, Any] = {}
    if preset:
        config[PRESET_KEY] = preset
    if profile:
        config[PROFILE_KEY] = profile
    header = "# Written by aitrain. `pulumi up` reads the aitrain:* keys; `aitrain plan --stack-config FILE` previews them offline.\n"
    return header + yaml.safe_dump({"config": config}, sort_keys=False, allow_unicode=True)


def _leaf_paths() -> list[str]:
    fields = _all_known_fields()
    parents = set(fields)
    leaves = []
    for parent, keys in fields.items():
        for key in keys:
            path = f"{parent}.{key}" if parent else key
            if path not in parents:
                leaves.append(path)
    return sorted(leaves)
