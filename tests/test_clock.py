"""The clock: dates are YYYY-MM-DD matched whole, AITRAIN_TODAY wins over the system date."""

from __future__ import annotations

import datetime as dt

import pytest

from blueprints.core import clock
from blueprints.core.errors import UserInputError


@pytest.mark.parametrize("text", ["20261201", "2026-12-01\n", " 2026-12-01", "2026-W49-1", "2026-12-01T00:00"])
def test_only_whole_iso_dates_are_dates(text):
    with pytest.raises(ValueError):
        clock.iso_date(text)


def test_today_comes_from_the_environment_when_set():
    assert clock.today({"AITRAIN_TODAY": "2027-01-04"}) == dt.date(2027, 1, 4)
    assert clock.today({}) == dt.date.today()
    with pytest.raises(UserInputError, match="AITRAIN_TODAY = '2027-1-4': must be a date written YYYY-MM-DD"):
        clock.today({"AITRAIN_TODAY": "2027-1-4"})
