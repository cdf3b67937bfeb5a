"""Every resource type is a known kind (AIT039): what aitrain has no record of it cannot price, count, diff, export or
guard, so a plan holding one fails closed instead of passing every rule by not seeing the resource."""

from __future__ import annotations

from typing import Iterator

from blueprints.kinds import is_new_module, kind_of, module_for
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan


def known_kinds(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT039: one error per unknown type, on its first resource, naming the token and the file its record goes in."""
    unknown: dict[str, list[str]] = {}
    for r in plan.resources:
        if r.custom and kind_of(r.type) is None:
            unknown.setdefault(r.type, []).append(r.name)
    for token, names in unknown.items():
        more = f" (and {len(names) - 1} more of its resources)" if len(names) > 1 else ""
        where = module_for(token)
        new = " (a new service: create the module; the registry finds it)"
        yield (
            names[0],
            f"{token} has no resource kind{more}: aitrain cannot price, count, diff, export or guard a type it has no"
            f" record of; add Kind(token={token!r}, …) to {where}{new if is_new_module(token) else ''}",
        )


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT039",
        "error",
        "every resource type is a known kind",
        known_kinds,
        rationale="a type without a record is priced, sized, diffed, exported and checked by no one: every other rule"
        " would pass by not seeing it (fail closed; blueprints/kinds/)",
        fix="add the type's Kind record (key properties, pricing, "
        "Terraform export, replacing inputs, roles) to the module"
        " of its service in blueprints/kinds/ (a new service: a new module, found by the registry)",
    ),
)
