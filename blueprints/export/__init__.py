"""Exports of a Plan to other tools' formats (pure: reads a Plan, never Pulumi): Terraform JSON for now."""

from blueprints.export.names import TerraformNames, load_terraform_names, snake, tf_identifiers
from blueprints.export.terraform import (
    ExportError,
    NotExportable,
    kubernetes_objects,
    left_out,
    to_terraform,
    to_terraform_json,
)

__all__ = [
    "ExportError",
    "NotExportable",
    "kubernetes_objects",
    "left_out",
    "TerraformNames",
    "load_terraform_names",
    "snake",
    "tf_identifiers",
    "to_terraform",
    "to_terraform_json",
]
