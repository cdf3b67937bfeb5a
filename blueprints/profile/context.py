"""What profile validation reads from the world — the catalog and today's date — passed in, never global."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ValidationInfo

if TYPE_CHECKING:
    from blueprints.catalog import Catalog


@dataclass(frozen=True)
class ProfileContext:
    """What validation reads from the world: the catalog and today's date (both passed in)."""

    catalog: "Catalog"
    today: dt.date


def context_of(info: ValidationInfo) -> ProfileContext:
    """The ``ProfileContext`` a validator runs with (``parse_profile`` always passes one)."""
    context = info.context
    if not isinstance(context, ProfileContext):
        raise TypeError("profiles are validated through parse_profile(..., catalog=, today=), which passes the context")
    return context
