"""The CLI's logging: one handler on stderr, at ``--log-level`` (default warning, debug with
``COMPOZY_DEBUG=1``), as text (``compozy: warning: ...``) or, with ``--log-format json``, one
JSON object a line (what a log collector reads). A record's ``extra`` fields (a daemon's
request log: method, path, status, duration) are kept in the JSON form."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TextIO

from compozy_mcp import jsonutil

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
#: attributes every LogRecord has; anything else on a record came from ``extra``
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class TextFormatter(logging.Formatter):
    """``compozy: warning: ...``; tracebacks only with ``COMPOZY_DEBUG=1``."""

    def __init__(self, debug: bool) -> None:
        super().__init__("compozy: %(levelname)s: %(message)s")
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        # a copy: other handlers (a test's log capture) see the record as it was logged
        shown = logging.makeLogRecord(record.__dict__)
        shown.levelname = record.levelname.lower()
        if not self.debug:
            shown.exc_info = None
            shown.exc_text = None
        return super().format(shown)


class JsonFormatter(logging.Formatter):
    """One JSON object a record: time, level, logger, message, and the record's extras."""

    def __init__(self, debug: bool) -> None:
        super().__init__()
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                plain = isinstance(value, str | int | float | bool) or value is None
                line[key] = value if plain else str(value)
        if self.debug and record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return jsonutil.dumps_text(line)


def _benign_socket_race(record: logging.LogRecord) -> bool:
    """Whether ``record`` is asyncio reporting anyio's close-while-readable race on a Unix
    socket: closing a stream wakes its pending read, and the selector wakes it a second time
    in the same turn of the loop (``InvalidStateError`` in ``Future.set_result``). Nothing is
    lost; it is logged at debug, never as an error a user reads on stderr."""
    exc = record.exc_info[1] if record.exc_info else None
    asyncio = sys.modules.get("asyncio")  # not imported here: most commands never load it
    return (
        asyncio is not None
        and record.name == "asyncio"
        and isinstance(exc, asyncio.InvalidStateError)
        and record.getMessage().startswith("Exception in callback Future.set_result(")
    )


def _demote_benign(record: logging.LogRecord) -> bool:
    if _benign_socket_race(record):
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)
    return True


class Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The CLI's one log handler: on whatever ``sys.stderr`` is when a record is written."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.addFilter(_demote_benign)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def configure_logging(env: Mapping[str, str], *, level: str | None, form: str) -> None:
    debug = env.get("COMPOZY_DEBUG") == "1"
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, Handler)), None)
    if handler is None:
        handler = Handler(sys.stderr)
        root.addHandler(handler)
    handler.setFormatter(JsonFormatter(debug) if form == "json" else TextFormatter(debug))
    default = logging.DEBUG if debug else logging.WARNING
    chosen = LEVELS[level] if level else default
    root.setLevel(chosen)
    # stderr shows the chosen level even when MCP clients that follow the log (logfeed) have
    # the compozy_mcp loggers pass lower ones
    handler.setLevel(chosen)
