"""Profile paths as ``pulumi config set --path`` writes them:
``compute.nodes``, ``tags.owner``, ``guardrails.skip[0].rule``.

A path is dotted names, ``[N]`` list indexes and ``["a.b"]`` quoted keys (a key holding dots), the syntax of
Pulumi's property paths. ``set_path`` follows Pulumi's ``config.Map.Set``: missing maps and lists are created on the
way, ``[N]`` replaces entry N or, with N equal to the list's length, appends one; a larger N is an error. So
``aitrain plan --set P=V`` and ``pulumi config set --path 'aitrain:profile.P' V`` store the same profile.

``check_path`` says whether any blueprint's profile model has the path: a map field (``tags``) takes any key below
it, a list field (``guardrails.skip``) takes an index, and a model takes its field names.
"""

from __future__ import annotations

import copy
import difflib
import re
import types
from typing import Annotated, Any, Iterable, Mapping, Union, get_args, get_origin

from pydantic import BaseModel

from blueprints.core.errors import join_allowed

Segment = str | int

_BRACKET = re.compile(r"""\[(?:(?P<index>\d+)|"(?P<key>[^"]*)")\]""")
_NAME = re.compile(r"""[^.\[\]"]+""")
_SYNTAX = (
    'write names joined by dots, [N] for a list entry and ["a.b"] for a key with dots, e.g. guardrails.skip[0].rule'
)


class PathError(ValueError):
    """A path that cannot be read, or that no profile has; ``str()`` is the whole explanation.

    ``unknown_name`` is set when a name is not a field at all (a list of common paths then helps the reader).
    """

    def __init__(self, message: str, *, unknown_name: bool = False, hint: str | None = None):
        super().__init__(message)
        self.unknown_name = unknown_name
        self.hint = hint


def parse_path(text: str) -> tuple[Segment, ...]:
    """``'guardrails.skip[0].rule'`` → ``("guardrails", "skip", 0, "rule")``; ``PathError`` for a malformed path."""
    segments: list[Segment] = []
    pos = 0
    while pos < len(text):
        if text[pos] == "[" and segments:
            match = _BRACKET.match(text, pos)
            if match is None:
                raise PathError(f"cannot read the path at character {pos + 1}; {_SYNTAX}")
            segments.append(int(match.group("index")) if match.group("index") is not None else match.group("key"))
        else:
            if segments:
                if text[pos] != ".":
                    raise PathError(f"cannot read the path at character {pos + 1}; {_SYNTAX}")
                pos += 1
            match = _NAME.match(text, pos)
            if match is None:
                raise PathError(f"cannot read the path at character {pos + 1}; {_SYNTAX}")
            segments.append(match.group())
        pos = match.end()
    if not segments:
        raise PathError(f"is empty; {_SYNTAX}")
    return tuple(segments)


def format_path(segments: Iterable[Segment]) -> str:
    """The inverse of ``parse_path``: ``guardrails.skip[0].rule``, ``tags["cost.center"]``."""
    out = ""
    for segment in segments:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif "." in segment or "[" in segment:
            out += f'["{segment}"]'
        else:
            out += f".{segment}" if out else segment
    return out


def check_path(segments: tuple[Segment, ...], models: Mapping[str, type[BaseModel]]) -> None:
    """Raise ``PathError`` (with the way to set it) unless some blueprint's profile has this path."""
    current: list[Any] = list(models.values())
    for depth, segment in enumerate(segments):
        nxt = [child for annotation in current for child in _children(annotation, segment)]
        if not nxt:
            raise _why_not(current, segments, depth)
        current = nxt


def set_path(data: dict[str, Any], path: str | tuple[Segment, ...], value: Any) -> dict[str, Any]:
    """A copy of ``data`` with ``path`` set to ``value``, as ``pulumi config set --path`` would store it."""
    segments = parse_path(path) if isinstance(path, str) else path
    root: dict[str, Any] = copy.deepcopy(data)
    cursor: Any = root
    for depth, (segment, following) in enumerate(zip(segments, segments[1:] + (None,), strict=True)):
        where = format_path(segments[: depth + 1])
        if following is None:
            _put(cursor, segment, value, where)
            break
        child = _get(cursor, segment, where)
        if child is None:
            child = [] if isinstance(following, int) else {}
            _put(cursor, segment, child, where)
        elif isinstance(following, int) and not isinstance(child, list):
            raise PathError(f"{where} holds {_kind(child)}, not a list, so it has no entry [{following}]")
        elif isinstance(following, str) and not isinstance(child, dict):
            raise PathError(f"{where} holds {_kind(child)}, not a mapping, so it has no key '{following}'")
        cursor = child
    return root


def _get(container: Any, segment: Segment, where: str) -> Any:
    if isinstance(container, list):
        assert isinstance(segment, int)
        _check_index(container, segment, where)
        return container[segment] if segment < len(container) else None
    return container.get(segment)


def _put(container: Any, segment: Segment, value: Any, where: str) -> None:
    if isinstance(container, list):
        assert isinstance(segment, int)
        _check_index(container, segment, where)
        if segment == len(container):
            container.append(value)
        else:
            container[segment] = value
    else:
        container[segment] = value


def _check_index(items: list[Any], index: int, where: str) -> None:
    if index > len(items):
        parent = where.rsplit("[", 1)[0]
        raise PathError(
            f"{where} is past the end of {parent}, which has {len(items)} entr{'y' if len(items) == 1 else 'ies'}; use "
            f"[{len(items)}] to add one (pulumi config set --path refuses it the same way)"
        )


def _alternatives(annotation: Any) -> list[Any]:
    """The types a field may hold: ``X | None`` and ``Union[...]`` split, ``Annotated[X, ...]`` unwrapped."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in get_args(annotation) for t in _alternatives(arg)]
    return [annotation]


def _children(annotation: Any, segment: Segment) -> list[Any]:
    out = []
    for kind in _alternatives(annotation):
        origin = get_origin(kind)
        if isinstance(segment, int):
            if origin in (tuple, list):
                out.append(get_args(kind)[0])
        elif isinstance(kind, type) and issubclass(kind, BaseModel):
            if segment in kind.model_fields:
                out.append(kind.model_fields[segment].annotation)
        elif origin is dict:
            out.append(get_args(kind)[1])
    return out


def _why_not(current: list[Any], segments: tuple[Segment, ...], depth: int) -> PathError:
    """Why ``segments[depth]`` does not fit below ``segments[:depth]``, and how to write what was meant."""
    parent = format_path(segments[:depth]) or "the profile"
    segment = segments[depth]
    kinds = [k for a in current for k in _alternatives(a)]
    lists = [k for k in kinds if get_origin(k) in (tuple, list)]
    fields = sorted(
        {name for k in kinds if isinstance(k, type) and issubclass(k, BaseModel) for name in k.model_fields}
    )
    if isinstance(segment, str) and lists:
        example = _list_example(lists[0], segments[:depth])
        return PathError(
            f"{parent} is a list: set one entry by its index, {example}, as `pulumi config set --path` does, or the "
            f"whole list as YAML, {format_path(segments[:depth])}='[…]'"
        )
    if isinstance(segment, int):
        return PathError(f"{parent} is not a list, so it has no entry [{segment}]")
    if fields:
        close = difflib.get_close_matches(segment, fields, n=1, cutoff=0.6)
        hint = f"did you mean '{format_path(segments[:depth] + (close[0],))}'?" if close else None
        return PathError(
            f"{parent} has no key '{segment}'; it takes {join_allowed(fields, limit=30)}", unknown_name=True, hint=hint
        )
    return PathError(f"{parent} is a single value, so it has no key '{segment}'; set {parent}=VALUE")


def _list_example(kind: Any, prefix: tuple[Segment, ...]) -> str:
    item = get_args(kind)[0] if get_args(kind) else None
    base = format_path(prefix + (0,))
    if isinstance(item, type) and issubclass(item, BaseModel):
        return " and ".join(f"{base}.{name}=…" for name in item.model_fields)
    return f"{base}=…"


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"the single value {value!r}"
