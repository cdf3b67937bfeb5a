"""Encoded inputs shown as text: base64 user data decoded, JSON-string policies pretty-printed, then a unified diff.

A reviewer cannot read two base64 blobs; ``difflib`` over the decoded text shows exactly which lines of cloud-init
or which statements of a policy change. Pure: no Pulumi.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from blueprints.core import userdata

# Inputs holding base64 (cloud-init) and inputs holding a JSON document as a string (RAM and OSS policies).
BASE64_INPUTS = frozenset({"userData"})
JSON_STRING_INPUTS = frozenset({"policyDocument", "policy", "assumeRolePolicyDocument"})


def decoded(key: str, value: Any) -> str | None:
    """The readable text of an encoded input value, or None when ``key`` is not encoded or the value does not decode."""
    if not isinstance(value, str):
        return None
    if key in BASE64_INPUTS:
        return userdata.decode(value)
    if key in JSON_STRING_INPUTS:
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return None
        # A security-group rule's ``policy`` is "accept"/"drop": only documents are pretty-printed.
        if isinstance(parsed, (dict, list)):
            return json.dumps(parsed, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return None


def text_diff(key: str, old: Any, new: Any, name: str = "") -> str | None:
    """A unified diff of the decoded old and new text of an encoded input; None when neither side decodes.

    A missing side is empty text (an input added or removed). Lines never end in ``\\r``.
    """
    before, after = decoded(key, old), decoded(key, new)
    if before is None and after is None:
        return None
    label = f"{name}.{key}" if name else key
    lines = difflib.unified_diff(
        _lines(before if before is not None else _raw(old)),
        _lines(after if after is not None else _raw(new)),
        fromfile=f"old/{label}",
        tofile=f"new/{label}",
        lineterm="",
        n=2,
    )
    return "\n".join(lines) + "\n"


def _raw(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
