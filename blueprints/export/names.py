"""Names in the Terraform form of a plan: Pulumi token → Terraform type, Pulumi field → Terraform attribute, and
logical resource names → Terraform identifiers.

The mapping is data (``blueprints/data/terraform_names.json``, from pulumi-alicloud's bridge metadata; see
``blueprints/data/README.md``). It lists only what the bridge's default rule gets wrong, so a field absent from it
is ``snake(camelCase)``, which is how the bridge derives every other Pulumi name from the Terraform one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Mapping

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")
# Terraform identifiers: a letter or underscore, then letters, digits, underscores and dashes
# (https://developer.hashicorp.com/terraform/language/syntax/configuration#identifiers).
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def snake(name: str) -> str:
    """The bridge's default field rule, reversed: ``vswitchId`` → ``vswitch_id``, ``ipv6CidrIp`` → ``ipv6_cidr_ip``."""
    return _UPPER.sub("_", name).lower()


@dataclass(frozen=True)
class TypeNames:
    """One resource type: its Terraform type, renamed fields (dotted Pulumi path → Terraform name) and the
    dotted paths of single nested blocks (an object in Pulumi, a one-element block list in Terraform)."""

    tf_type: str
    renames: Mapping[str, str]
    single_blocks: frozenset[str]

    def field(self, path: str, key: str) -> str:
        """The Terraform name of field ``key`` at dotted Pulumi ``path`` ('' at the top level)."""
        return self.renames.get(f"{path}{key}", snake(key))


@dataclass(frozen=True)
class TerraformNames:
    """The whole mapping, with the source it was taken from (repository, commit, path)."""

    source: Mapping[str, str]
    types: Mapping[str, TypeNames]

    def of(self, token: str) -> TypeNames | None:
        """The names of a Pulumi type token, or None when aitrain has no mapping for it."""
        return self.types.get(token)


def parse_terraform_names(data: Mapping[str, Any]) -> TerraformNames:
    """Build the mapping from the data file's JSON content."""
    types = {
        token: TypeNames(entry["type"], dict(entry.get("renames", {})), frozenset(entry.get("single_blocks", ())))
        for token, entry in data["resources"].items()
    }
    return TerraformNames(dict(data["source"]), types)


@lru_cache(maxsize=1)
def load_terraform_names() -> TerraformNames:
    """The bundled mapping (``blueprints/data/terraform_names.json``)."""
    text = resources.files("blueprints").joinpath("data/terraform_names.json").read_text(encoding="utf-8")
    return parse_terraform_names(json.loads(text))


def tf_identifier(name: str) -> str:
    """A Terraform identifier for a logical name: unchanged when already valid; otherwise every other character
    becomes ``_`` (with an ``r_`` prefix when it does not start with a letter or ``_``) and a hash of the original
    name is appended, so two names that sanitise alike never collide and the result never depends on other names."""
    if _IDENTIFIER.match(name):
        return name
    cleaned = _NOT_ALLOWED.sub("_", name)
    if not re.match(r"[A-Za-z_]", cleaned):
        cleaned = "r_" + cleaned
    return f"{cleaned}_{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def tf_identifiers(names: Iterable[str]) -> dict[str, str]:
    """Identifiers for many logical names; raises ValueError if two distinct names would share one."""
    result: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name in names:
        ident = tf_identifier(name)
        if seen.setdefault(ident, name) != name:
            raise ValueError(
                f"logical names {seen[ident]!r} and {name!r} both become the Terraform identifier {ident!r}"
            )
        result[name] = ident
    return result
