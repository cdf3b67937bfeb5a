"""Regenerate blueprints/data/terraform_names.json from pulumi-alicloud's bridge metadata (a tool, not runtime).

Usage: python scan/terraform_names.py BRIDGE_METADATA_JSON COMMIT > blueprints/data/terraform_names.json

The metadata file is provider/cmd/pulumi-resource-alicloud/bridge-metadata.json of github.com/pulumi/pulumi-alicloud.
Only the resource types whose kind says the export writes them (``terraform=Terraform.MAPPED`` in blueprints/kinds/)
are kept, and per type only what the default rule (camelCase → snake_case, lists of objects → blocks) gets wrong:
renamed fields (``lifecycleRules`` → ``lifecycle_rule``) and single nested blocks (``systemDisk``: an object in
Pulumi, a one-element block in Terraform).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from blueprints.kinds import KINDS, Terraform

# The tokens whose kind says the export writes them (blueprints/kinds/: terraform=Terraform.MAPPED), the
# kubernetes-pool ones included: the export writes its cloud side.
TOKENS = tuple(sorted(token for token, kind in KINDS.items() if kind.terraform is Terraform.MAPPED))


def snake(name: str) -> str:
    """The default rule: ``vswitchId`` → ``vswitch_id`` (must match blueprints.export.names.snake)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _pascal(tf_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in tf_name.split("_"))


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else word


def _camel(tf_name: str) -> str:
    head, *rest = tf_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _collect(
    token: str,
    module: str,
    type_name: str,
    renamed: dict[str, dict[str, str]],
    fields: dict[str, Any],
    path: str,
    out: dict[str, Any],
) -> None:
    """Renames and single blocks of one (nested) type at ``path``, then of its nested block types.

    ``renamedProperties`` is keyed by type token (nested types are ``<Resource><Field>``, the field singular);
    ``auto-aliasing`` lists only list-typed fields, with ``maxItemsOne`` and their element's fields.
    """
    props = renamed.get(token, {})
    by_tf = {tf: pulumi for pulumi, tf in props.items()}
    for pulumi_name, tf_name in props.items():
        if snake(pulumi_name) != tf_name:
            out["renames"][path + pulumi_name] = tf_name
    for tf_name, info in fields.items():
        pulumi_name = by_tf.get(tf_name, _camel(tf_name))
        if info.get("maxItemsOne"):
            out["single_blocks"].append(path + pulumi_name)
        candidates = [type_name + _pascal(tf_name), type_name + _pascal(_singular(tf_name))]
        nested = next((c for c in candidates if f"alicloud:{module}/{c}:{c}" in renamed), candidates[0])
        _collect(
            f"alicloud:{module}/{nested}:{nested}",
            module,
            nested,
            renamed,
            info.get("elem", {}).get("fields", {}),
            f"{path}{pulumi_name}.",
            out,
        )


def build(metadata: dict[str, Any], commit: str) -> dict[str, Any]:
    """The data file's content: source, then per token the Terraform type, renames and single blocks."""
    # auto-aliasing names every resource's Terraform type (``current`` = the Pulumi token); renames.resources
    # omits some (the oss.Bucket* sub-resources), so it is only the fallback.
    tf_types = dict(metadata["renames"]["resources"])
    tf_types.update(
        {entry["current"]: tf for tf, entry in metadata["auto-aliasing"]["resources"].items() if "current" in entry}
    )
    renamed = metadata["renames"]["renamedProperties"]
    aliasing = metadata["auto-aliasing"]["resources"]
    resources: dict[str, Any] = {}
    for token in TOKENS:
        tf_type = tf_types[token]
        module, type_name = token.split(":")[1].split("/")[0], token.rsplit(":", 1)[1]
        out: dict[str, Any] = {"renames": {}, "single_blocks": []}
        _collect(token, module, type_name, renamed, aliasing.get(tf_type, {}).get("fields", {}), "", out)
        resources[token] = {
            "type": tf_type,
            "renames": dict(sorted(out["renames"].items())),
            "single_blocks": sorted(set(out["single_blocks"])),
        }
    return {
        "source": {
            "repository": "https://github.com/pulumi/pulumi-alicloud",
            "commit": commit,
            "path": "provider/cmd/pulumi-resource-alicloud/bridge-metadata.json",
            "keys": (
                "auto-aliasing.resources[].current, renames.resources, renames.renamedProperties, "
                "auto-aliasing.resources[].fields (maxItemsOne)"
            ),
        },
        "resources": resources,
    }


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        data = build(json.load(handle), sys.argv[2])
    sys.stdout.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
