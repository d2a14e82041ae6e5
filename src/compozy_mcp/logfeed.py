"""The daemon's log lines, for whoever follows them: MCP clients that set a log level receive
them as ``notifications/message`` (:mod:`compozy_mcp.proxy.logging`).

Every record of the ``compozy_mcp`` loggers is a line: the daemon's own (upstream servers that
reconnect, hooks that fail, ...) and a session's (its agent's stderr, logged with
``extra={"session_id": ...}``). A follower names the lowest level it wants and whose lines it may
read: the operator every line, a managed session only its own. Nothing here knows MCP; a
follower's ``deliver`` must not block (it schedules the sending).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

#: the MCP (RFC 5424) levels, lowest first
LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: the Python level each MCP level stands for (what the loggers must let through)
PYTHON_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}
#: the logger every line comes from
ROOT: Final = "compozy_mcp"


def mcp_level(levelno: int) -> str:
    """The MCP level of a Python record's level."""
    found = "debug"
    for name in LEVELS:
        if levelno >= PYTHON_LEVELS[name]:
            found = name
    return found


@dataclass(frozen=True, slots=True)
class LogLine:
    level: str
    logger: str
    message: str
    #: the session the line is about (its agent's stderr); ``None``: the daemon's own
    session_id: str | None = None


Deliver = Callable[[LogLine], None]


@dataclass(slots=True)
class _Follower:
    deliver: Deliver
    level: str
    #: ``None``: every line (the operator); else only the lines of this session
    session_id: str | None

    def wants(self, line: LogLine) -> bool:
        if LEVELS.index(line.level) < LEVELS.index(self.level):
            return False
        return self.session_id is None or line.session_id == self.session_id


class LogFeed(logging.Handler):
    """A handler on the ``compozy_mcp`` logger that hands each line to its followers."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._followers: dict[object, _Follower] = {}
        self._saved_level: int | None = None

    def follow(self, key: object, deliver: Deliver, level: str, session_id: str | None) -> None:
        """Start (or change) following: lines at ``level`` and above go to ``deliver``."""
        if level not in LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        self._followers[key] = _Follower(deliver, level, session_id)
        self._let_through()

    def unfollow(self, key: object) -> None:
        self._followers.pop(key, None)
        self._let_through()

    def following(self, key: object) -> str | None:
        follower = self._followers.get(key)
        return follower.level if follower is not None else None

    def _let_through(self) -> None:
        """The ``compozy_mcp`` logger passes the lowest level a follower wants (and its own
        level again when none is left), so that a follower of ``info`` gets info lines."""
        logger = logging.getLogger(ROOT)
        if not self._followers:
            logger.removeHandler(self)
            if self._saved_level is not None:
                logger.setLevel(self._saved_level)
                self._saved_level = None
            return
        if self not in logger.handlers:
            logger.addHandler(self)
        if self._saved_level is None:
            self._saved_level = logger.level
        lowest = min(PYTHON_LEVELS[f.level] for f in self._followers.values())
        logger.setLevel(min(lowest, self._saved_level or logging.WARNING))

    def emit(self, record: logging.LogRecord) -> None:
        if not self._followers:
            return
        session = getattr(record, "session_id", None)
        line = LogLine(
            mcp_level(record.levelno),
            record.name,
            record.getMessage(),
            session if isinstance(session, str) else None,
        )
        for follower in list(self._followers.values()):
            if follower.wants(line):
                try:
                    follower.deliver(line)
                except Exception:  # a follower that went away never stops the others
                    continue


#: the one feed of this process
FEED: Final = LogFeed()
