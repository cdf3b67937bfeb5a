"""A Plan as Terraform JSON (``main.tf.json``): the same resources and inputs, under the names the bridged
Terraform provider (aliyun/alicloud) uses, so a Terraform team can read or apply it and scanners can check it.

Rules: components are not resources (skipped); the Pulumi provider becomes the ``provider "alicloud"`` block; every
input keeps its value, its name mapped by ``names.TypeNames.field``; a Pulumi object that is a single nested block in
Terraform becomes a one-element list, lists of objects stay block lists, other objects (tags) stay maps;
``${name.attr}`` (known after deployment) becomes ``${<tf_type>.<identifier>.<attr>}``; ``protect`` becomes
``lifecycle.prevent_destroy``, ``ignore_changes`` ``lifecycle.ignore_changes``, ``depends_on`` ``depends_on``.
Not carried over, since Terraform has no equivalent per resource: ``retain_on_delete`` and
``delete_before_replace`` (Terraform replaces destroy-first by default; Pulumi creates first).
Kubernetes objects are refused; ``cloud_only`` writes the rest and names what it left out (never a silent drop).
How a type is written is its kind's ``terraform`` (``blueprints.kinds``); a type with no kind, or one the export does
not map, is refused by name.
"""

from __future__ import annotations

import json
import re
from typing import Any

from blueprints.export.names import (
    TerraformNames,
    TypeNames,
    load_terraform_names,
    snake,
    tf_identifier,
    tf_identifiers,
)
from blueprints.kinds import Role, Terraform, kind_of, module_for
from blueprints.review.plan import Plan, PlannedResource

# The plan's marker for a value known only after deployment (blueprints.engine.preview.reference).
_REFERENCE = re.compile(r"\$\{([^.}]+)\.([^}]+)\}")
# The Terraform provider the bridge wraps (registry address); the metadata's
# commit pins aliyun/terraform-provider-alicloud v1.285.0 in provider/go.mod,
# so that is the lowest version whose schema these names were taken from.
PROVIDER_SOURCE = "aliyun/alicloud"
PROVIDER_VERSION = ">= 1.285.0"


class ExportError(Exception):
    """The plan holds something the export cannot express (an unmapped type, a dangling reference)."""


class NotExportable(ExportError):
    """The plan is of a kind the export refuses on purpose (Kubernetes objects): the user's request, not a bug."""


def _treatment(token: str) -> Terraform:
    """How the export writes a type: its kind's decision; a type with no kind is not mapped (refused by name)."""
    kind = kind_of(token)
    return kind.terraform if kind is not None else Terraform.UNMAPPED


def _kubernetes(token: str) -> bool:
    return _treatment(token) is Terraform.KUBERNETES


def kubernetes_objects(plan: Plan) -> list[PlannedResource]:
    """The plan's Kubernetes objects and their provider (what ``cloud_only`` leaves out), sorted by type and name."""
    return sorted((r for r in plan.resources if r.custom and _kubernetes(r.type)), key=lambda r: (r.type, r.name))


def left_out(objects: list[PlannedResource]) -> str:
    """One line naming what a cloud-only export left out: ``N Kubernetes objects left out: <type> (count), …``."""
    counts: dict[str, int] = {}
    providers: dict[str, int] = {}
    for r in objects:
        kind = kind_of(r.type)
        into = providers if kind is not None and kind.has(Role.PROVIDER) else counts
        into[r.type] = into.get(r.type, 0) + 1
    kinds = ", ".join(f"{token} ({n})" if n > 1 else token for token, n in sorted(counts.items()))
    tail = "".join(f", and {n} {token}" for token, n in sorted(providers.items()))
    count = sum(counts.values())
    return f"{count} Kubernetes object{'' if count == 1 else 's'} left out: {kinds}{tail}"


def _refuse_kubernetes(resources: list[PlannedResource]) -> None:
    """Kubernetes objects are refused, not half-exported: they would need the hashicorp/kubernetes provider pointed at a
    cluster that exists only after apply, with its own schema (metadata/spec blocks) that names.py does not map."""
    kinds = sorted({r.type for r in resources if _kubernetes(r.type)})
    if kinds:
        raise NotExportable(
            f"the plan holds Kubernetes objects ({', '.join(kinds)}), "
            "which the Terraform export does not write: it maps"
            " alicloud resources only, and a Terraform file without the volumes, the queues and the job engine"
            " would not be this stack; pass --cloud-only to write the alicloud resources alone (the Kubernetes"
            " objects are left out and named in the file and the output; deploy them with Pulumi), or deploy the"
            " stack with Pulumi"
        )


def to_terraform(plan: Plan, names: TerraformNames | None = None, *, cloud_only: bool = False) -> dict[str, Any]:
    """The Terraform JSON document of ``plan`` (a dict; ``to_terraform_json`` gives the text).

    A plan with Kubernetes objects is refused (NotExportable) unless ``cloud_only``: then every ``alicloud:*``
    resource is written, the Kubernetes objects and their provider are not, and the document's comment names them.
    """
    names = names or load_terraform_names()
    skipped = kubernetes_objects(plan) if cloud_only else []
    custom = [r for r in plan.resources if r.custom and not (cloud_only and _kubernetes(r.type))]
    providers = [r for r in custom if _treatment(r.type) is Terraform.PROVIDER]
    managed = [r for r in custom if _treatment(r.type) is not Terraform.PROVIDER]
    _refuse_kubernetes(managed)
    unknown = sorted(
        {r.type for r in managed if _treatment(r.type) is not Terraform.MAPPED or names.of(r.type) is None}
    )
    if unknown:
        files = ", ".join(sorted({module_for(token) for token in unknown}))
        raise ExportError(
            f"no Terraform mapping for resource type(s) {', '.join(unknown)}: give each a kind with"
            f" terraform=Terraform.MAPPED ({files}), then regenerate blueprints/data/terraform_names.json from"
            " pulumi-alicloud's bridge metadata (scan/terraform_names.py)"
        )
    try:
        idents = tf_identifiers([r.name for r in custom])
    except ValueError as exc:
        raise ExportError(str(exc)) from None
    by_name: dict[str, TypeNames] = {}
    for r in managed:
        if r.name in by_name:
            raise ExportError(f"two resources share the logical name {r.name!r}; a reference to it would be ambiguous")
        by_name[r.name] = _names(names, r)
    context = _Context(by_name, idents, {r.name for r in skipped})
    aliased = len(providers) > 1
    resource_blocks: dict[str, dict[str, Any]] = {}
    for r in managed:
        type_names = by_name[r.name]
        body = context.object(type_names, r.inputs, "", r.name)
        lifecycle: dict[str, Any] = {}
        if r.protect:
            lifecycle["prevent_destroy"] = True
        if r.ignore_changes:
            lifecycle["ignore_changes"] = [_attribute_path(type_names, path) for path in r.ignore_changes]
        if lifecycle:
            body["lifecycle"] = lifecycle
        if r.depends_on:
            body["depends_on"] = [context.address(dep, r.name) for dep in r.depends_on]
        if aliased and r.provider:
            body["provider"] = f"alicloud.{idents[r.provider]}"
        resource_blocks.setdefault(type_names.tf_type, {})[idents[r.name]] = body
    provider_blocks = [_provider_block(p, idents[p.name] if aliased else None) for p in providers] or [
        {"region": plan.region}
    ]
    comment = (
        "Generated by `aitrain export terraform` from the offline "
        f"plan of {plan.profile_name} (blueprint {plan.blueprint}); "
        f"names from pulumi-alicloud bridge metadata @ {names.source.get('commit', '?')[:12]}. Regenerate, do not edit."
    )
    if skipped:
        comment += (
            f" Cloud side only (--cloud-only): {left_out(skipped)}; they are deployed by Pulumi, not by this file."
        )
    document: dict[str, Any] = {
        "//": comment,
        "terraform": {"required_providers": {"alicloud": {"source": PROVIDER_SOURCE, "version": PROVIDER_VERSION}}},
        "provider": {"alicloud": provider_blocks},
        "resource": resource_blocks,
    }
    outputs = {
        tf_identifier(snake(key)): {"value": context.value(None, value, "", f"output {key}")}
        for key, value in plan.outputs.items()
    }
    if outputs:
        document["output"] = outputs
    if context.data:
        document["data"] = {tf_type: dict(sorted(blocks.items())) for tf_type, blocks in sorted(context.data.items())}
    return document


def to_terraform_json(plan: Plan, names: TerraformNames | None = None, *, cloud_only: bool = False) -> str:
    """Deterministic Terraform JSON text: sorted keys, two-space indent, one trailing newline."""
    return (
        json.dumps(to_terraform(plan, names, cloud_only=cloud_only), indent=2, sort_keys=True, ensure_ascii=False)
        + "\n"
    )


def _names(names: TerraformNames, resource: PlannedResource) -> TypeNames:
    return names.types[resource.type]  # every managed type was checked to be mapped before


def _provider_block(provider: PlannedResource, alias: str | None) -> dict[str, Any]:
    block = {snake(key): value for key, value in sorted(provider.inputs.items()) if not key.startswith("__")}
    if alias:
        block["alias"] = alias
    return block


def _attribute_path(type_names: TypeNames, path: str) -> str:
    """A Pulumi ignore_changes path (``tags``, ``systemDisk.encrypted``, ``dataDisks[0].size``) in Terraform form."""
    parts = []
    prefix = ""
    for segment in path.split("."):
        key, _, index = segment.partition("[")
        parts.append(type_names.field(prefix, key) + (f"[{index}" if index else ""))
        prefix += key + "."
    return ".".join(parts)


# Data sources the offline plan answers with a reference (``${caller.accountId}``, engine/preview.py): the Terraform
# data source and attribute each stands for (terraform-provider-alicloud ``alicloud_caller_identity.account_id``).
DATA_SOURCES = {"caller": ("alicloud_caller_identity", "current", {"accountId": "account_id"})}


class _Context:
    """Converts values of one plan; knows every resource's Terraform type and identifier for references."""

    def __init__(self, by_name: dict[str, TypeNames], idents: dict[str, str], left_out: set[str]):
        self.by_name = by_name
        self.idents = idents
        self.left_out = left_out
        # The data sources the converted values read (``data`` blocks of the document).
        self.data: dict[str, dict[str, Any]] = {}

    def address(self, name: str, where: str) -> str:
        """``<tf_type>.<identifier>`` of a logical name; a name that is not a resource here is an error."""
        if name in self.left_out:
            raise ExportError(
                f"{where} refers to {name!r}, a Kubernetes object the "
                "cloud-only export leaves out; the cloud side cannot stand alone"
            )
        if name not in self.by_name:
            raise ExportError(f"{where} refers to {name!r}, which is not a resource of this plan")
        return f"{self.by_name[name].tf_type}.{self.idents[name]}"

    def object(self, type_names: TypeNames, inputs: dict[str, Any], path: str, where: str) -> dict[str, Any]:
        """A resource's (or nested block's) inputs under Terraform names, keys sorted."""
        return {
            type_names.field(path, key): self.value(type_names, value, f"{path}{key}", where)
            for key, value in sorted(inputs.items())
        }

    def value(self, type_names: TypeNames | None, value: Any, path: str, where: str) -> Any:
        """One input value; ``path`` is its dotted Pulumi path inside the resource (list indices dropped)."""
        if type_names is not None and path in type_names.single_blocks and not isinstance(value, (dict, list)):
            # A MaxItems-1 list of scalars the bridge flattens (ecs.ElasticityAssurance instanceType): a scalar in
            # Pulumi, a one-element list in Terraform.
            return [self.value(None, value, path, where)]
        if isinstance(value, str):
            return self._string(value, where)
        if isinstance(value, list):
            # A list of objects is a Terraform block list (``dataDisks``): each element a block of nested fields.
            return [
                self.object(type_names, item, path + ".", where)
                if type_names and isinstance(item, dict)
                else self.value(type_names, item, path, where)
                for item in value
            ]
        if isinstance(value, dict):
            if type_names is None:
                return {key: self.value(None, item, path, where) for key, item in sorted(value.items())}
            if path in type_names.single_blocks:
                return [self.object(type_names, value, path + ".", where)]
            # Not a block: a map attribute (tags), whose keys are data and stay as they are.
            return {key: self.value(type_names, item, path, where) for key, item in sorted(value.items())}
        return value

    def _string(self, text: str, where: str) -> str:
        """References converted; everything else escaped, since Terraform reads ``${`` and ``%{`` in any string as
        interpolation or a template directive (a literal ``${HOME}`` in a script must be written ``$${HOME}``)."""
        parts: list[str] = []
        last = 0
        for match in _REFERENCE.finditer(text):
            parts += [_escape(text[last : match.start()]), self._reference(match, where)]
            last = match.end()
        parts.append(_escape(text[last:]))
        return "".join(parts)

    def _reference(self, match: re.Match[str], where: str) -> str:
        name, attribute = match.group(1), match.group(2)
        if name in DATA_SOURCES and name not in self.by_name and attribute in DATA_SOURCES[name][2]:
            tf_type, ident, fields = DATA_SOURCES[name]
            self.data.setdefault(tf_type, {})[ident] = {}
            return "${data." + f"{tf_type}.{ident}.{fields[attribute]}" + "}"
        address = self.address(name, where)
        target = self.by_name[name]
        return "${" + address + "." + ".".join(target.field("", part) for part in attribute.split(".")) + "}"


def _escape(literal: str) -> str:
    """A literal string as Terraform must see it
    (https://developer.hashicorp.com/terraform/language/expressions/strings#escape-sequences-1)."""
    return literal.replace("${", "$${").replace("%{", "%%{")
