"""A vendored CRD's openAPIV3Schema as a strict JSON Schema validator, shared by the tests of the manifests aitrain
writes (PyTorchJob, TrainJob, TrainingRuntime).

Strict the way the API server is with kubectl's --validate=strict: x-kubernetes-* keywords are left in (jsonschema
ignores unknown keywords) and what they mean is applied here: ``x-kubernetes-int-or-string`` becomes ``anyOf
[integer, string]`` where the CRD does not spell it, and every object with ``properties`` that neither preserves
unknown fields nor has ``additionalProperties`` gets ``additionalProperties: false`` (the API server prunes or,
strictly, rejects unknown fields), so a misspelt field fails here as it would on the cluster. CEL rules
(x-kubernetes-validations) are not run: tests that rely on one check it themselves.

A CRD's top-level ``metadata`` is ``type: object``: the manifest's name and namespace are checked elsewhere.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import jsonschema
import yaml


@functools.lru_cache(maxsize=None)
def _documents(path: Path) -> tuple[Any, ...]:
    """Every YAML document of a vendored file (a bundle holds many objects), parsed once per test session."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open(encoding="utf-8") as handle:
        return tuple(doc for doc in yaml.load_all(handle, Loader=loader) if doc)


def crd_schema(path: Path, kind: str, version: str) -> dict[str, Any]:
    """The strict JSON Schema of ``kind`` at ``version`` from the CustomResourceDefinition in the file at ``path``."""
    crds = [
        doc
        for doc in _documents(path)
        if doc.get("kind") == "CustomResourceDefinition" and doc["spec"]["names"]["kind"] == kind
    ]
    if len(crds) != 1:
        raise LookupError(f"{path}: {len(crds)} CustomResourceDefinitions of kind {kind}, expected 1")
    versions = [v for v in crds[0]["spec"]["versions"] if v["name"] == version]
    if len(versions) != 1:
        names = [v["name"] for v in crds[0]["spec"]["versions"]]
        raise LookupError(f"{path}: {kind} has no version {version} (it has {names})")
    schema: dict[str, Any] = copy.deepcopy(versions[0]["schema"]["openAPIV3Schema"])
    _make_strict(schema)
    return schema


@functools.lru_cache(maxsize=None)
def crd_validator(path: Path, kind: str, version: str) -> jsonschema.Draft4Validator:
    """A validator of manifests of ``kind``/``version`` against the vendored CRD at ``path`` (cached per argument)."""
    return jsonschema.Draft4Validator(crd_schema(path, kind, version))


def _make_strict(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("x-kubernetes-int-or-string") and "anyOf" not in node and "type" not in node:
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if (
            "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            _make_strict(value)
    elif isinstance(node, list):
        for value in node:
            _make_strict(value)
