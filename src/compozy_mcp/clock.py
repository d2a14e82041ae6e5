"""Time: one clock interface so that tests can pin "now", and the one timestamp format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC).replace(microsecond=0)


class FixedClock:
    """A clock that only moves when told to (tests, benchmarks, seeded generators)."""

    def __init__(self, start: datetime) -> None:
        self._now = start.astimezone(UTC).replace(microsecond=0)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with a ``Z`` suffix and second precision: ``2026-11-10T14:02:11Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
