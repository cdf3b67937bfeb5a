"""The resource-kind registry: one record per Pulumi type token (``blueprints.kinds.model.Kind``), declared by cloud
service, one module each. Every consumer (costing, preflight, the offline mocks, the Terraform export, the diff, the
diagram, the plan table, the guardrails) reads what a type means here; a custom resource whose type has no record is
an error finding in every plan (AIT039), naming the module to add it to (``module_for``).

Pure: no Pulumi.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Mapping

from blueprints.kinds.model import (
    Free,
    Kind,
    KindError,
    NoKeyProperties,
    Priced,
    ReplacingInputs,
    Role,
    Terraform,
    Unpriced,
)

# The record type itself, not a service.
_NOT_A_SERVICE = frozenset({"model"})


def _service_modules() -> tuple[ModuleType, ...]:
    """Every module of this package but ``model``, by name: one per cloud service (``SERVICES``: the token modules it
    declares, ``KINDS``: its records). Found, not listed, so a new service is its own file and nothing else."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg and m.name not in _NOT_A_SERVICE)
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


MODULES: tuple[ModuleType, ...] = _service_modules()
PACKAGE_DIR = "blueprints/kinds"


def _registry(modules: tuple[ModuleType, ...]) -> dict[str, Kind]:
    """Every module's records by token; a token or short type declared twice is refused."""
    kinds: dict[str, Kind] = {}
    short: dict[str, str] = {}
    for module in modules:
        for kind in module.KINDS:
            if kind.token in kinds:
                raise KindError(f"kind {kind.token} is declared twice (the second in {module.__name__})")
            if short.setdefault(kind.short_type, kind.token) != kind.token:
                raise KindError(
                    f"kinds {short[kind.short_type]} and {kind.token} share the short type {kind.short_type}"
                )
            kinds[kind.token] = kind
    return kinds


KINDS: Mapping[str, Kind] = _registry(MODULES)
_BY_SHORT_TYPE: Mapping[str, Kind] = {kind.short_type: kind for kind in KINDS.values()}


def kind_of(token: str) -> Kind | None:
    """The record of a Pulumi type token (``alicloud:ecs/instance:Instance``), or None when aitrain has none."""
    return KINDS.get(token)


def kind_of_short_type(short: str) -> Kind | None:
    """The record of a plan short type (``ecs.Instance``; Kubernetes and provider tokens whole), or None."""
    return _BY_SHORT_TYPE.get(short)


def has_role(token: str, role: Role) -> bool:
    """Whether the type of ``token`` is a kind that plays ``role`` (an unknown type plays none)."""
    kind = KINDS.get(token)
    return kind is not None and role in kind.roles


def with_role(role: Role) -> tuple[Kind, ...]:
    """The kinds that play ``role``, in registry order."""
    return tuple(kind for kind in KINDS.values() if role in kind.roles)


def service_of(token: str) -> str:
    """The service a token belongs to: ``ecs`` for ``alicloud:ecs/…``, ``kubernetes`` for ``kubernetes:…``,
    ``providers`` for ``pulumi:…``; another package's name for anything else."""
    package, _, rest = token.partition(":")
    if package == "pulumi":
        return "providers"
    if package == "alicloud":
        return rest.split("/", 1)[0].split(":", 1)[0] or package
    return package


def _module_of(token: str) -> ModuleType | None:
    service = service_of(token)
    return next((m for m in MODULES if service in m.SERVICES), None)


def is_new_module(token: str) -> bool:
    """Whether a token's service has no module yet (its first record means a new module)."""
    return _module_of(token) is None


def module_for(token: str) -> str:
    """The file a token's record belongs in: its service's module, or a new one named after the service
    (``blueprints/kinds/eflo.py`` for ``alicloud:eflo/node:Node``)."""
    module = _module_of(token)
    name = module.__name__.rsplit(".", 1)[1] if module is not None else service_of(token).replace("-", "_")
    return f"{PACKAGE_DIR}/{name}.py"


__all__ = [
    "KINDS",
    "MODULES",
    "Free",
    "Kind",
    "KindError",
    "NoKeyProperties",
    "Priced",
    "ReplacingInputs",
    "Role",
    "Terraform",
    "Unpriced",
    "has_role",
    "is_new_module",
    "kind_of",
    "kind_of_short_type",
    "module_for",
    "service_of",
    "with_role",
]
