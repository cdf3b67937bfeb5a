"""Reading a profile: validate a plain dict against the model its ``blueprint`` names, resolve article aliases,
and explain every problem (path, value, what is allowed, which blueprint takes a key)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Mapping

from pydantic import BaseModel, ValidationError

from blueprints.core.errors import (
    MISSING,
    Problem,
    UserInputError,
    did_you_mean,
    join_allowed,
    problems_from_validation_error,
)
from blueprints.profile.context import ProfileContext
from blueprints.profile.model import ESS_MAX_SIZE, ProfileBase

if TYPE_CHECKING:
    from blueprints.catalog import Alias, Catalog, InstanceType


def known_fields(
    model: type[BaseModel], prefix: str = "", out: dict[str, tuple[str, ...]] | None = None
) -> dict[str, tuple[str, ...]]:
    """Map each dotted parent path to the keys allowed there (for "did you mean" on unknown keys)."""
    out = {} if out is None else out
    keys = set(out.get(prefix, ()))
    for field_name, field in model.model_fields.items():
        keys.add(field_name)
        annotation = field.annotation
        for candidate in getattr(annotation, "__args__", (annotation,)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                known_fields(candidate, f"{prefix}.{field_name}" if prefix else field_name, out)
    out[prefix] = tuple(sorted(keys))
    return out


def leaf_paths(models: Mapping[str, type[ProfileBase]]) -> dict[str, tuple[str, ...]]:
    """Every settable dotted path of any blueprint's profile → the blueprints that take it."""
    owners: dict[str, set[str]] = {}
    for blueprint, model in models.items():
        fields = known_fields(model)
        for parent, keys in fields.items():
            for key in keys:
                path = f"{parent}.{key}" if parent else key
                if path not in fields:
                    owners.setdefault(path, set()).add(blueprint)
    return {path: tuple(sorted(names)) for path, names in sorted(owners.items())}


def parse_profile(
    data: Any,
    *,
    models: Mapping[str, type[ProfileBase]],
    catalog: "Catalog",
    today: dt.date,
    source: str = "profile",
) -> ProfileBase:
    """Validate a plain dict into the profile of the blueprint it names, resolving aliases.

    Raises ``UserInputError`` listing every problem (path, value, what is allowed).
    """
    if not isinstance(data, dict):
        raise UserInputError(f"invalid {source}", [Problem("", data, "a profile must be a mapping of keys to values")])
    blueprint = data.get("blueprint")
    names = tuple(models)
    if not isinstance(blueprint, str) or blueprint not in models:
        hint = did_you_mean(blueprint, names) if isinstance(blueprint, str) else None
        message = "required field is missing" if blueprint is None else "unknown blueprint"
        raise UserInputError(
            f"invalid {source}",
            [
                Problem(
                    "blueprint",
                    blueprint if blueprint is not None else MISSING,
                    f"{message}; allowed: {join_allowed(names)}",
                    hint,
                )
            ],
        )
    model = models[blueprint]
    problems: list[Problem] = []
    compute = data.get("compute")
    note = None
    # A compute section whose nodes come from another table than instance_types.csv (Lingjun machine types) checks its
    # own type; the article's aliases resolve to ECS types only.
    ecs_nodes = getattr(model.model_fields["compute"].annotation, "node_catalog", "instance_types") == "instance_types"
    if ecs_nodes and isinstance(compute, dict) and isinstance(compute.get("instance_type"), str):
        compute, note, problem = _resolve_instance_type(compute, model, catalog)
        if problem:
            problems.append(problem)
        data = {**data, "compute": compute}
    context = ProfileContext(catalog, today)
    try:
        profile = model.model_validate(data, context=context)
    except ValidationError as exc:
        problems += _with_owner_hints(
            problems_from_validation_error(exc, known_fields=known_fields(model)), blueprint, models
        )
        raise UserInputError(f"invalid {source}", _dedupe(problems)) from None
    if problems:
        raise UserInputError(f"invalid {source}", problems)
    profile._alias_note = note
    profile._region_zones = catalog.zones(profile.region)
    return profile


def resolve_gpu_type(
    name: str, path: str, catalog: "Catalog"
) -> tuple["InstanceType | None", "Alias | None", Problem | None]:
    """``(instance, alias, None)`` for a real GPU type or an article alias; ``(None, None, problem)`` otherwise.

    The problem names ``path``, the value, and the closest real types and aliases.
    """
    try:
        instance, alias = catalog.resolve(name)
    except KeyError:
        suggestions = catalog.suggest(name)
        hint = (
            f"did you mean {' or '.join(repr(s) for s in suggestions)}?"
            if suggestions
            else "run 'aitrain catalog' to list real types"
        )
        return None, None, Problem(path, name, "not a real Alibaba Cloud ECS instance type in the catalog", hint)
    if not instance.is_gpu:
        return (
            None,
            None,
            Problem(path, name, "is a CPU-only type; training needs a GPU type (run 'aitrain catalog --min-gpus 1')"),
        )
    return instance, alias, None


def _resolve_instance_type(
    compute: dict[str, Any], model: type[ProfileBase], catalog: "Catalog"
) -> tuple[dict[str, Any], str | None, Problem | None]:
    """Replace an article alias by its real type (scaling the blueprint's node counts); reject unknown types."""
    name = compute["instance_type"]
    instance, alias, problem = resolve_gpu_type(name, "compute.instance_type", catalog)
    if problem is not None or instance is None:
        return compute, None, problem
    if alias is None:
        return compute, None, None
    scaled = dict(compute, instance_type=instance.instance_type)
    counts = []
    for key in model.alias_count_fields:
        value = scaled.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= ESS_MAX_SIZE:
            scaled[key] = value * alias.nodes
            counts.append(f"{key} {compute[key]} × {name} = {scaled[key]} × {instance.instance_type}")
    note = alias.sentence + (f" Counts are in article units: {'; '.join(counts)}." if counts else "")
    return scaled, note, None


def _with_owner_hints(
    problems: list[Problem], blueprint: str, models: Mapping[str, type[ProfileBase]]
) -> list[Problem]:
    """An unknown key that another blueprint takes gets a message naming that blueprint."""
    owners = leaf_paths(models)
    out = []
    for p in problems:
        takers = [b for b in owners.get(p.path, ()) if b != blueprint]
        if p.message.startswith("unknown key") and takers:
            mine = known_fields(models[blueprint]).get(p.path.rsplit(".", 1)[0] if "." in p.path else "", ())
            p = Problem(
                p.path,
                p.value,
                f"is a key of {'blueprint' if len(takers) == 1 else 'blueprints'} {join_allowed(takers)}, not of "
                f"'{blueprint}'; '{blueprint}' takes here: {join_allowed(mine, limit=30)}",
                f"set blueprint: {' or '.join(takers)} to use it",
            )
        out.append(p)
    return out


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        key = (p.path, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out
