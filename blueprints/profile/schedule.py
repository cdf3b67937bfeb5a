"""The off-hours schedule of a profile: working hours, time zone and a first day inside ESS's 90-day window."""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from pydantic import Field, ValidationInfo, field_validator, model_validator

from blueprints.core.clock import iso_date
from blueprints.core.errors import did_you_mean
from blueprints.core.layout import ESS_LAUNCH_WINDOW_DAYS, off_hours_tasks
from blueprints.profile.context import context_of
from blueprints.profile.strict import Strict

_HHMM_RE = re.compile(r"([01]\d|2[0-3]):[0-5]\d")

# ESS scheduled tasks: the first run at most 90 days after the task is created
# (pulumi_alicloud.ess.ScheduledTask docstring, from terraform-provider-alicloud ess_scheduled_task docs).
# The earliest start is tomorrow, so the first launch time is never in the past whatever the time zone.
OFF_HOURS_EARLIEST_DAYS = 1
OFF_HOURS_LATEST_DAYS = 89


class OffHours(Strict):
    """Scale the pool to zero outside working hours."""

    enabled: bool = Field(default=False, description="Scale to zero outside working hours.")
    timezone: str = Field(default="Asia/Shanghai", description="IANA time zone of the working hours.")
    work_start: str = Field(default="09:00", description="Start of the working day, HH:MM local time.")
    work_end: str = Field(default="19:00", description="End of the working day, HH:MM local time.")
    weekdays_only: bool = Field(default=True, description="Work on Monday–Friday only (otherwise every day).")
    start_date: str | None = Field(
        default=None,
        description=(
            "First day (YYYY-MM-DD) the schedule runs: tomorrow to 89 days ahead (ESS's 90-day window). Empty: "
            "tomorrow, by the run's clock; pin it so re-deploys keep the schedule. ESS repeats it until 364 days after "
            "the deploy that creates it (its 365-day limit); each deploy renews it."
        ),
    )

    @field_validator("timezone")
    @classmethod
    def _tz(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            hint = did_you_mean(value, sorted(zoneinfo.available_timezones()))
            raise ValueError(
                "unknown time zone; give an IANA name such as 'Asia/Shanghai'" + (f"; {hint}" if hint else "")
            ) from None
        return value

    @field_validator("work_start", "work_end")
    @classmethod
    def _hhmm(cls, value: str) -> str:
        if not _HHMM_RE.fullmatch(value):
            raise ValueError("must be HH:MM on a 24-hour clock, e.g. '09:00'")
        return value

    @field_validator("start_date")
    @classmethod
    def _date(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        try:
            day = iso_date(value)
        except ValueError:
            raise ValueError("must be a date written YYYY-MM-DD, e.g. '2026-12-01'") from None
        earliest, latest = off_hours_window(context_of(info).today)
        if not earliest <= day <= latest:
            raise ValueError(
                f"must be from {earliest.isoformat()} to {latest.isoformat()}: "
                "ESS runs a scheduled task at most 90 days after it is "
                "created and never in the past (today is "
                f"{context_of(info).today.isoformat()}); leave it empty to start tomorrow"
            )
        return value

    @model_validator(mode="after")
    def _order(self) -> "OffHours":
        if self.work_start >= self.work_end:
            raise ValueError(f"work_start ({self.work_start}) must be before work_end ({self.work_end})")
        return self

    @model_validator(mode="after")
    def _first_run_within_ess_window(self, info: ValidationInfo) -> "OffHours":
        # start_date ≤ today + 89 leaves a day for time zones ahead of UTC only: at UTC-11, 23:59 local on the
        # last allowed day is 10:59 UTC the next day, past ESS's 90 days. Check the UTC launch times themselves.
        if not self.enabled or self.start_date is None:
            return self
        today = context_of(info).today
        limit = dt.datetime.combine(today + dt.timedelta(days=ESS_LAUNCH_WINDOW_DAYS), dt.time(), dt.timezone.utc)

        def late(day: dt.date) -> list[str]:
            tasks = off_hours_tasks(
                day, self.timezone, self.work_start, self.work_end, self.weekdays_only, created=today
            )
            return [
                t.launch_time
                for t in tasks
                if dt.datetime.strptime(t.launch_time, "%Y-%m-%dT%H:%MZ").replace(tzinfo=dt.timezone.utc) > limit
            ]

        first = dt.date.fromisoformat(self.start_date)
        too_late = late(first)
        if too_late:
            latest = next(d for d in (first - dt.timedelta(days=n) for n in range(1, 4)) if not late(d))
            raise ValueError(
                f"start_date {self.start_date} in {self.timezone} first runs at "
                f"{', '.join(too_late)} (UTC), more than {ESS_LAUNCH_WINDOW_DAYS} days "
                f"after today ({today.isoformat()}), which ESS refuses; give a start_date up to {latest.isoformat()}"
            )
        return self

    def first_day(self, today: dt.date) -> dt.date:
        """The day the schedule starts: ``start_date``, or tomorrow by the given clock."""
        return (
            dt.date.fromisoformat(self.start_date)
            if self.start_date
            else today + dt.timedelta(days=OFF_HOURS_EARLIEST_DAYS)
        )


def off_hours_window(today: dt.date) -> tuple[dt.date, dt.date]:
    """The first and last allowed ``start_date`` for a deployment made ``today``."""
    return today + dt.timedelta(days=OFF_HOURS_EARLIEST_DAYS), today + dt.timedelta(days=OFF_HOURS_LATEST_DAYS)
