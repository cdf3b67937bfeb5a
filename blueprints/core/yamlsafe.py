"""The one YAML reader for user input: values keep the meaning people wrote, and size, depth and aliases are bounded.

Every user YAML (stack files, presets, job files, ``--set`` values) goes through ``load`` or ``load_scalar``:

- ``19:00`` stays the string ``"19:00"`` (no YAML 1.1 base-60 integers or floats) and ``2027-01-04`` stays the
  string ``"2027-01-04"`` (no implicit or explicit timestamps); ints, floats, bools and null resolve as usual.
- Only JSON-like values are built: mappings with string keys, lists, strings, numbers, bools, null. Tags such as
  ``!!set``, ``!!binary`` or ``!!timestamp`` are refused.
- A key written twice in one mapping (``nodes: 4`` then ``nodes: 40``) is refused, naming both lines: PyYAML
  would keep the last silently.
- Input is bounded: text length, nesting depth, integer length, alias references, the size of the document with
  every alias expanded, and recursive aliases (``&a [*a]``). A "billion laughs" fails in milliseconds.

Every violation raises ``UserInputError`` naming the source, the line and what is allowed (exit 2, no traceback).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from blueprints.core.errors import MISSING, Problem, UserInputError

MAX_TEXT_CHARS = 1_000_000
MAX_DEPTH = 32
MAX_INT_DIGITS = 100
MAX_ALIASES = 100
MAX_NODES = 100_000  # counted with every alias expanded, so shared subtrees cannot multiply past it

# YAML 1.1 as PyYAML's SafeLoader reads it, minus base-60 (``[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+``).
_INT = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$")
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
# Replaced (int, float) or dropped (timestamp; "value" would make a bare "=" unreadable) implicit resolvers.
_REPLACED_TAGS = {
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:value",
}
_SURROGATE = re.compile("[\ud800-\udfff]")
_ALLOWED_TEXT = "YAML mappings with string keys, lists, strings, numbers, true/false and null"


class _Violation(Exception):
    """A bound was crossed; carries the node (for its line) and the message."""

    def __init__(self, node: Node | None, message: str, mark: Any = None):
        super().__init__(message)
        self.mark = mark if mark is not None else (node.start_mark if node is not None else None)
        self.message = message


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader that keeps times and dates as strings and refuses oversized, deep, recursive or exotic input."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED_TAGS]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        """Count alias references and nesting depth while the node graph is built."""
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _Violation(
                    None,
                    f"more than {MAX_ALIASES} alias references (*name); at "
                    f"most {MAX_ALIASES} are allowed, or write the values out",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Violation(
                    None,
                    f"nested deeper than {MAX_DEPTH} levels; at most {MAX_DEPTH} are allowed",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: ScalarNode) -> int:
        """An int of at most ``MAX_INT_DIGITS`` digits (Python refuses longer strings with a bare ValueError)."""
        digits = sum(ch.isalnum() for ch in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise _Violation(node, f"integer has {digits} digits; at most {MAX_INT_DIGITS} are allowed")
        if ":" in str(node.value):  # an explicit !!int 1:30 would be base 60
            raise _Violation(node, "base-60 integers (1:30) are not read as numbers; quote the value")
        return super().construct_yaml_int(node)

    def construct_yaml_str(self, node: ScalarNode) -> str:
        """A string that is valid Unicode (a ``"\\udc80"`` escape would crash every writer later)."""
        value = self.construct_scalar(node)
        if _SURROGATE.search(value):
            raise _Violation(
                node, "text contains a lone surrogate escape (\\ud800-\\udfff); only valid Unicode text is allowed"
            )
        return value

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping whose keys are all strings (``{a: 1}: x`` or
        ``1: x`` is refused, not a TypeError), each written once."""
        if isinstance(node, MappingNode):
            _refuse_duplicate_keys(node)
            self.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                hint = f'quote it: "{key_node.value}"' if isinstance(key_node, ScalarNode) else "use a plain text key"
                raise _Violation(key_node, f"mapping key {_describe(key)} is not a string; keys must be text ({hint})")
            out[key] = self.construct_object(value_node, deep=deep)
        return out

    def construct_refused(self, node: Node) -> Any:
        """Any tag outside the JSON-like set."""
        raise _Violation(node, f"tag {node.tag!r} is not accepted; allowed: {_ALLOWED_TEXT}")


for _tag, _regexp, _first in (
    ("tag:yaml.org,2002:int", _INT, list("-+0123456789")),
    ("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789.")),
):
    BoundedLoader.add_implicit_resolver(_tag, _regexp, _first)
BoundedLoader.add_constructor("tag:yaml.org,2002:str", BoundedLoader.construct_yaml_str)
BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
BoundedLoader.add_constructor("tag:yaml.org,2002:map", BoundedLoader.construct_yaml_map)  # type: ignore[type-var]
for _tag in ("set", "omap", "pairs", "binary", "timestamp"):
    BoundedLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", BoundedLoader.construct_refused)
BoundedLoader.add_constructor(None, BoundedLoader.construct_refused)


def load(text: str, source: str) -> Any:
    """Parse one YAML document from the user; ``UserInputError`` (naming ``source``) for bad or oversized input."""
    if len(text) > MAX_TEXT_CHARS:
        raise _error(source, None, f"is {len(text):,} characters long; at most {MAX_TEXT_CHARS:,} are allowed")
    try:
        # The reader refuses control characters while it is constructed, so construction is inside the try.
        loader = BoundedLoader(text)
    except yaml.YAMLError as exc:
        raise _error(source, None, f"is not valid YAML: {' '.join(str(exc).split())}") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node)
        return loader.construct_document(node)
    except _Violation as exc:
        raise _error(source, exc.mark, exc.message) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise _error(source, mark, f"is not valid YAML: {problem}") from None
    except RecursionError:  # belt and braces: the depth bound should make this unreachable
        raise _error(source, None, f"nested too deeply; at most {MAX_DEPTH} levels are allowed") from None
    finally:
        loader.dispose()


def load_scalar(text: str, source: str) -> Any:
    """A ``--set`` value read as YAML (``16`` → 16, ``19:00`` → "19:00", ``[a, b]`` → a list, empty → None).

    Text that is not valid YAML is kept as the string it is; the bounds of ``load`` still apply.
    """
    if not text.strip():
        return None
    try:
        return load(text, source)
    except UserInputError as exc:
        if any("is not valid YAML" in p.message for p in exc.problems):
            return text
        raise


def _refuse_duplicate_keys(node: MappingNode) -> None:
    """A key written twice in one mapping (``nodes: 4`` … ``nodes: 40``) is refused, naming both lines.

    PyYAML keeps the last value silently. Checked before merge keys are expanded, so ``<<: *base`` followed by a key
    of ``base`` is still an override on purpose, not a duplicate.
    """
    seen: dict[str, Node] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
            continue  # merge keys (<<) and non-string keys (refused later with their own message)
        first = seen.setdefault(key_node.value, value_node)
        if first is not value_node:
            raise _Violation(
                key_node,
                f"key {key_node.value!r} is written twice in one mapping: "
                f"{_entry(key_node.value, first)} on line {first.start_mark.line + 1}"
                f", then {_entry(key_node.value, value_node)} on line "
                f"{key_node.start_mark.line + 1}; YAML would keep only the last silently"
                " — keep the one you mean and delete the other",
            )


def _entry(key: str, value: Node) -> str:
    if isinstance(value, ScalarNode) and len(str(value.value)) <= 40:
        return f"'{key}: {value.value}'"
    return f"'{key}'"


def _check_graph(root: Node) -> None:
    """Refuse recursive aliases and documents that exceed ``MAX_NODES`` once aliases are expanded."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise _Violation(
                node, "an alias refers to a node that contains it (recursive structure); write the values out"
            )
        active.add(key)
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        active.discard(key)
        if total > MAX_NODES:
            raise _Violation(
                node,
                f"expands to more than {MAX_NODES:,} values with aliases expanded; at most {MAX_NODES:,} are allowed",
            )
        sizes[key] = total
        return total

    size(root)


def _error(source: str, mark: Any, message: str) -> UserInputError:
    where = f"{source}, line {mark.line + 1}, column {mark.column + 1}" if mark is not None else source
    return UserInputError(f"cannot read {source}", [Problem(where, MISSING, message)])


def _describe(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return f"of type {type(value).__name__}"
    return f"{value!r} ({type(value).__name__})"
