"""Cell parsers of the catalog's CSV files: each turns one cell's text into its value or raises ``CellError`` with
what is allowed (``schema.read_rows`` adds the file, line and column)."""

from __future__ import annotations

import re
from typing import Callable

# Sources state dates to different precision (a year for a 2020 example, a month for "as of
# 2023.06"); we keep what the source says rather than inventing a day.
_DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


class _CellError(ValueError):
    """A cell that does not parse; the reader adds file, line and column."""


# Versions and pip index URLs reach every node's boot script (run as root), so a catalog copy (AITRAIN_CATALOG_DIR)
# may hold only dotted numbers and https URLs from these hosts; README.md "gpu_software.csv" says why each is allowed.
_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}$")
INDEX_URL_HOSTS = ("download.pytorch.org", "mirrors.aliyun.com")
_INDEX_URL_RE = re.compile(r"^https://([a-z0-9.-]+)(/[A-Za-z0-9._~/%+-]*)?$")


def _text(raw: str) -> str:
    if not raw:
        raise _CellError("must not be empty")
    return raw


def _opt_text(raw: str) -> str | None:
    return raw or None


def _int_pos_or_zero(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise _CellError("must be a whole number") from None
    if value < 0:
        raise _CellError("must be >= 0")
    return value


def _int_pos(raw: str) -> int:
    value = _int_pos_or_zero(raw)
    if value == 0:
        raise _CellError("must be > 0")
    return value


def _opt_float(raw: str) -> float | None:
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise _CellError("must be a number or empty (unknown)") from None
    if value != value or value < 0:  # NaN or negative
        raise _CellError("must be a number >= 0")
    return value


def _float_pos(raw: str) -> float:
    value = _opt_float(_text(raw))
    assert value is not None
    if value <= 0:
        raise _CellError("must be > 0")
    return value


def _opt_bool(raw: str) -> bool | None:
    if not raw:
        return None
    if raw in ("true", "false"):
        return raw == "true"
    raise _CellError("must be true, false or empty (unknown)")


def _opt_choice(choices: tuple[str, ...]) -> Callable[[str], str | None]:
    def parse(raw: str) -> str | None:
        if not raw:
            return None
        if raw not in choices:
            raise _CellError(f"must be one of {', '.join(choices)} or empty")
        return raw

    return parse


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in choices:
            raise _CellError(f"must be one of {', '.join(choices)}")
        return raw

    return parse


def _version(raw: str) -> str:
    if not _VERSION_RE.match(_text(raw)):
        raise _CellError("must be a dotted version number of 1 to 4 parts, digits only, e.g. 550.127.08")
    return raw


def _opt_version(raw: str) -> str | None:
    return _version(raw) if raw else None


_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_FINGERPRINT_RE = re.compile(r"^[0-9A-F]{40}$")


def _sha256_list(raw: str) -> tuple[str, ...]:
    digests = tuple(raw.split())
    if not all(_SHA256_RE.match(d) for d in digests):
        raise _CellError(
            "must be sha256 digests (64 lower-case hex digits) separated by spaces, or empty (not checked)"
        )
    return digests


def _opt_fingerprint(raw: str) -> str | None:
    if raw and not _FINGERPRINT_RE.match(raw):
        raise _CellError("must be an OpenPGP fingerprint of 40 upper-case hex digits without spaces, or empty")
    return raw or None


def _opt_index_url(raw: str) -> str | None:
    if not raw:
        return None
    match = _INDEX_URL_RE.match(raw)
    if not match or match.group(1) not in INDEX_URL_HOSTS:
        raise _CellError(
            f"must be an https:// URL on one of the hosts {', '.join(INDEX_URL_HOSTS)}, "
            "path of letters, digits and ._~/%+- only (no port, user, query or spaces)"
        )
    return raw


def _date(raw: str) -> str:
    if not _DATE_RE.match(_text(raw)):
        raise _CellError("must be a date YYYY-MM-DD (or YYYY-MM / YYYY when the source is no finer)")
    return raw


def _opt_date(raw: str) -> str | None:
    return _date(raw) if raw else None


def _list(raw: str) -> tuple[str, ...]:
    items = tuple(part.strip() for part in raw.split(";")) if raw else ()
    if any(not item for item in items):
        raise _CellError("must be a ';'-separated list without empty items")
    return items


def _steps(raw: str) -> tuple[tuple[float, float], ...]:
    if not raw:
        return ()
    steps = []
    for part in raw.split(";"):
        bound, sep, mb_s = part.partition(":")
        try:
            if not sep:
                raise ValueError
            steps.append((float(bound), float(mb_s)))
        except ValueError:
            raise _CellError(f"step {part!r} must look like <capacity_gib>:<mb_s>") from None
    if [b for b, _ in steps] != sorted({b for b, _ in steps}):
        raise _CellError("step capacities must be strictly increasing")
    return tuple(steps)
