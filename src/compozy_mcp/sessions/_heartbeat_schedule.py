"""When a heartbeat wakes its session: every ``interval_seconds``, or at the moments of a
5-field cron expression (UTC), except during its quiet hours.

Cron expressions are evaluated by ``cronsim`` (the evaluator Healthchecks runs on): day-of-month
and day-of-week together, ``L``, ``#`` and the month and weekday names are the parts a hand-made
parser gets wrong.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from cronsim import CronSim, CronSimError

from compozy_mcp.clock import parse_timestamp

CRON_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
CRON_HINT = "must be a 5-field cron expression (minute hour day-of-month month day-of-week)"


def cron_problem(expression: str) -> str | None:
    """Why ``expression`` is not a 5-field cron expression, or ``None`` when it is one."""
    if len(expression.split()) != len(CRON_FIELDS):
        return f"{CRON_HINT}; got {len(expression.split())} fields"
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as error:
        return f"{CRON_HINT}: {str(error).lower()}"
    return None


def next_wake(moment: datetime, interval_seconds: int, cron: str | None) -> datetime:
    """The first wake after ``moment``: the next cron match, else ``moment`` + the interval."""
    if cron is None:
        return moment + timedelta(seconds=interval_seconds)
    return next(CronSim(cron, moment))


def _minutes(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def in_quiet_hours(quiet_hours: str | None, moment: str) -> bool:
    """Whether ``moment`` falls in ``HH:MM-HH:MM`` (UTC; may wrap past midnight)."""
    if not quiet_hours:
        return False
    start, end = (_minutes(part) for part in quiet_hours.split("-"))
    at = parse_timestamp(moment)
    now = at.hour * 60 + at.minute
    return start <= now < end if start <= end else now >= start or now < end
