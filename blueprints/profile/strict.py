"""The base of every profile model: strict, frozen, unknown keys rejected, numbers written as text accepted."""

from __future__ import annotations

import ipaddress
import re
from typing import Any, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

_INT_TEXT_RE = re.compile(r"[+-]?\d{1,18}")
_FLOAT_TEXT_RE = re.compile(r"[+-]?(\d{1,18}(\.\d{0,18})?|\.\d{1,18})")


class Strict(BaseModel):
    """Base of every profile model: unknown keys rejected, no type coercion but numbers written as text and lists for
    tuples, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    @field_validator("*", mode="before")
    @classmethod
    def _as_yaml_writes_it(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:
            return value
        # Text that is not UTF-8 (os.fsdecode gives bytes a terminal could not decode as lone surrogates) cannot be
        # written to a plan or a stack file: refuse it here, the one place every profile string passes.
        bad = _surrogate(value)
        if bad is not None:
            raise ValueError(
                f"holds {bad!r}, which is not UTF-8 text (undecodable "
                "bytes from the command line or a file); use UTF-8 text"
            )
        annotation = cls.model_fields[info.field_name].annotation
        # YAML and JSON give a list where a frozen model keeps a tuple; strict mode alone would refuse it.
        if isinstance(value, list) and get_origin(annotation) is tuple:
            return tuple(value)
        # `pulumi config set --path` stores "72.5" as text unless told `--type float`; a number keeps its meaning.
        if not isinstance(value, str):
            return value
        kinds = set(getattr(annotation, "__args__", (annotation,)))
        text = value.strip()
        if int in kinds and _INT_TEXT_RE.fullmatch(text):
            return int(text)
        if float in kinds and _FLOAT_TEXT_RE.fullmatch(text):
            return float(text)
        return value


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string, or in the strings of a list, tuple or mapping (keys too), or None."""
    if isinstance(value, str):
        found = _SURROGATE_RE.search(value)
        return found.group() if found else None
    items: list[Any] = (
        list(value)
        if isinstance(value, (list, tuple))
        else [*value, *value.values()]
        if isinstance(value, dict)
        else []
    )
    return next((bad for bad in map(_surrogate, items) if bad is not None), None)


def parse_cidr(value: str, example: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """``value`` as a network (host bits must be zero), or a ValueError that shows ``example``."""
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not a valid CIDR ({exc}); write it like {example}") from None


def parse_ipv4_cidr(value: str, example: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """``parse_cidr``, refusing IPv6: security-group rules take a source or destination in ``cidrIp`` (IPv4 only)."""
    net = parse_cidr(value, example)
    if net.version != 4:
        raise ValueError(f"{value} must be an IPv4 CIDR; the security group rule's cidrIp takes IPv4 only")
    return net


# Free text a plan shows (descriptions, reasons): one line, so it can never forge a line of the plan.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
DESCRIPTION_MAX_LENGTH = 300


def check_one_line(value: str, limit: int = DESCRIPTION_MAX_LENGTH) -> str:
    """Free text shown in plans: one line, no control characters, at most ``limit`` characters."""
    if CONTROL_RE.search(value):
        raise ValueError("must be one line of text without control characters (no newlines, tabs or escape sequences)")
    if len(value) > limit:
        raise ValueError(f"is {len(value)} characters long; at most {limit} are allowed")
    return value
