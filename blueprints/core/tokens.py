"""Pulumi type tokens and references as a plan records them: the short type a plan shows, the names a value cites.

Pure, and below everything that reads a plan (the kinds, the review), so each can use them without the other.
"""

from __future__ import annotations

import json
import re
from typing import Any

# How the offline plan writes a value known only after deployment: ``${name.attribute}`` (preview.reference).
_REFERENCE_RE = re.compile(r"\$\{([^.}]+)\.")


def referenced_names(value: Any) -> list[str]:
    """The logical names a plan input refers to (``${name.attr}``,
    anywhere inside ``value``), in order of appearance."""
    return _REFERENCE_RE.findall(json.dumps(value, sort_keys=True, default=str))


def short_type(token: str) -> str:
    """An engine type token as the plan shows it: ``alicloud:vpc/network:Network`` → ``vpc.Network``; other tokens
    (components, providers) unchanged. Plan dicts from JSON use this too."""
    if token.startswith("alicloud:") and "/" in token:
        module = token.split(":")[1].split("/")[0]
        return f"{module}.{token.rsplit(':', 1)[1]}"
    return token
