"""The clock a run plans against: today's date, from ``--today`` / ``AITRAIN_TODAY`` or the system, passed in."""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import Mapping

from blueprints.core.errors import Problem, UserInputError

TODAY_ENV = "AITRAIN_TODAY"


_ISO_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def iso_date(text: str) -> dt.date:
    """``YYYY-MM-DD`` matched whole (no ``20261201``, no trailing newline); ``ValueError`` otherwise."""
    if not _ISO_DATE_RE.fullmatch(text):
        raise ValueError(f"{text!r} is not written YYYY-MM-DD")
    return dt.date.fromisoformat(text)


def parse_today(text: str, source: str) -> dt.date:
    """A ``YYYY-MM-DD`` date given by the user (``--today`` or ``AITRAIN_TODAY``)."""
    try:
        return iso_date(text)
    except ValueError:
        raise UserInputError(
            "invalid date", [Problem(source, text, "must be a date written YYYY-MM-DD, e.g. 2026-12-01")]
        ) from None


def today(environ: Mapping[str, str] | None = None) -> dt.date:
    """``AITRAIN_TODAY`` when set (so plans stay byte-deterministic), else the system's local date."""
    env = os.environ if environ is None else environ
    text = env.get(TODAY_ENV)
    return parse_today(text, TODAY_ENV) if text else dt.date.today()
