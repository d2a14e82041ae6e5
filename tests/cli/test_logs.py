"""The CLI's log handler: what reaches stderr, and what asyncio reports of anyio's benign
close-while-readable race on a Unix socket (it made `compozy proxy --socket` print an error
line before its first line, now and then, under load)."""

from __future__ import annotations

import asyncio
import io
import logging

import pytest

from compozy_mcp.cli._logs import Handler, TextFormatter


def _record(message: str, exc: BaseException) -> logging.LogRecord:
    return logging.LogRecord(
        "asyncio", logging.ERROR, __file__, 1, message, None, (type(exc), exc, None)
    )


def test_the_set_result_race_on_a_closed_socket_is_not_an_error_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    handler = Handler(stream)
    handler.setFormatter(TextFormatter(debug=False))
    handler.handle(
        _record("Exception in callback Future.set_result(None)", asyncio.InvalidStateError())
    )
    assert stream.getvalue() == ""


def test_any_other_asyncio_error_is_still_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    handler = Handler(stream)
    handler.setFormatter(TextFormatter(debug=False))
    handler.handle(_record("Task exception was never retrieved", RuntimeError("boom")))
    handler.handle(_record("Exception in callback Future.set_result(None)", RuntimeError("x")))
    printed = stream.getvalue().splitlines()
    assert printed == [
        "compozy: error: Task exception was never retrieved",
        "compozy: error: Exception in callback Future.set_result(None)",
    ]
