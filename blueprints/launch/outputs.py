"""Typed values out of saved stack outputs (``pulumi stack output --json``), each problem located by its key.

The outputs file is input a user saves and may edit, so every value that reaches a command line is checked here:
paths are plain absolute paths, node addresses private ones.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from blueprints.core.errors import MISSING, Problem

SECRET_PLACEHOLDER = "[secret]"
# An absolute path of plain segments: no spaces or shell characters, no '.' or '..' segment (a segment never starts
# with a dot), no '//', no trailing '/', not '/' itself.
SAFE_PATH = re.compile(r"(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)+")
SAFE_PATH_ALLOWED = (
    "an absolute path such as {} (segments of letters, digits, "
    "'.', '_', '-' not starting with '.'; no '..', '//' or spaces)"
)
# Private IPv4 space: RFC 1918 and the shared address space of RFC 6598 (Alibaba VPCs may use 100.64.0.0/10).
PRIVATE_NETWORKS = tuple(
    ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
)

__all__ = ["PRIVATE_NETWORKS", "SAFE_PATH", "SAFE_PATH_ALLOWED", "SECRET_PLACEHOLDER", "OutputsReader"]


class OutputsReader:
    """Reads typed values out of stack outputs, adding a Problem for each missing, secret or malformed one."""

    def __init__(self, data: dict[str, Any], source: str, problems: list[Problem]):
        self.data, self.source, self.problems = data, source, problems

    def _raw(self, key: str, required: bool = True) -> Any:
        if key not in self.data:
            if required:
                self.problems.append(
                    Problem(
                        f"{self.source}: {key}",
                        MISSING,
                        "missing from the outputs; re-run `pulumi up` with "
                        "this aitrain version, then save the outputs again",
                    )
                )
            return None
        value = self.data[key]
        if value == SECRET_PLACEHOLDER or (isinstance(value, list) and SECRET_PLACEHOLDER in value):
            self.problems.append(
                Problem(
                    f"{self.source}: {key}",
                    value,
                    "is shown as a secret; save the outputs with `pulumi stack output --json --show-secrets`",
                )
            )
            return None
        return value

    def _wrong(self, key: str, value: Any, allowed: str) -> None:
        self.problems.append(Problem(f"{self.source}: {key}", value, f"must be {allowed}"))

    def text(self, key: str, pattern: re.Pattern[str], allowed: str, *, required: bool = True) -> str | None:
        """A string matching ``pattern`` (None, with a problem, otherwise)."""
        value = self._raw(key, required)
        if value is None:
            return None
        if not isinstance(value, str) or not pattern.fullmatch(value):
            self._wrong(key, value, allowed)
            return None
        return value

    def ip(self, key: str, *, required: bool) -> str | None:
        value = self._raw(key, required)
        if value is None:
            return None
        if not _is_ipv4(value):
            self.problems.append(Problem(f"{self.source}: {key}", value, "must be an IPv4 address"))
            return None
        return str(value)

    def text_list(self, key: str, pattern: re.Pattern[str], allowed: str) -> tuple[str, ...] | None:
        value = self._raw(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and pattern.fullmatch(v) for v in value):
            self.problems.append(Problem(f"{self.source}: {key}", value, f"must be a list of {allowed}"))
            return None
        return tuple(value)

    def ip_list(self, key: str) -> tuple[str, ...] | None:
        """Private IPv4 addresses only (RFC 1918 or 100.64.0.0/10): commands go to these nodes over the VPC."""
        value = self._raw(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(_is_ipv4(v) for v in value):
            self.problems.append(Problem(f"{self.source}: {key}", value, "must be a list of IPv4 addresses"))
            return None
        public = [v for v in value if not any(ipaddress.IPv4Address(v) in net for net in PRIVATE_NETWORKS)]
        if public:
            self.problems.append(
                Problem(
                    f"{self.source}: {key}",
                    value,
                    f"holds {', '.join(public)}, not a private address; node addresses must be in "
                    f"{', '.join(str(n) for n in PRIVATE_NETWORKS)} (the "
                    "stack's VPC): check the outputs file is this stack's",
                )
            )
            return None
        return tuple(value)

    def count(self, key: str) -> int | None:
        value = self._raw(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.problems.append(Problem(f"{self.source}: {key}", value, "must be a whole number of nodes, 0 or more"))
            return None
        return value


def _is_ipv4(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True
