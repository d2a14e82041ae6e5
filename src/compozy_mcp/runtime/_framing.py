"""ACP messages on an agent's stdio, one JSON object a line, with a bound on each line.

The ACP SDK's own stdio reader appends chunk after chunk until it meets a newline, so an agent
that writes without one grows this process without end (hundreds of MB a second). This is the
message-level transport the SDK's connection takes instead (``acp``'s ``Transport``): a line
longer than ``COMPOZY_AGENT_MAX_FRAME_BYTES`` is never buffered whole; the channel reports the
limit (:class:`~compozy_mcp.errors.LimitExceeded`, reason ``frame_too_large``), calls
``on_overflow`` (the runtime stops the agent) and ends the stream. What is not JSON (a banner
an agent prints on stdout) is skipped, and the last few such lines are kept for the failure
report.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.errors import LimitExceeded
from compozy_mcp.reasons import Reason

FRAME_LIMIT_SETTING = "COMPOZY_AGENT_MAX_FRAME_BYTES"
#: lines of stdout that were not ACP messages a failure report may quote, and how much of each
NOISE_LINES = 3
NOISE_CHARS = 200


class LineChannel:
    """One agent's stdio as a stream of JSON-RPC messages (``acp``'s ``Transport``)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_frame_bytes: int,
        on_overflow: Callable[[LimitExceeded], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max = max_frame_bytes
        self._on_overflow = on_overflow
        self._send_lock = asyncio.Lock()
        self._noise: deque[str] = deque(maxlen=NOISE_LINES)
        #: set once a line broke the limit; the stream ended there
        self.failure: LimitExceeded | None = None

    async def send(self, message: dict[str, Any]) -> None:
        data = jsonutil.dumps(message) + b"\n"
        async with self._send_lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._line()
            if line is None:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = jsonutil.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict):
                return message
            self._noise.append(line[:NOISE_CHARS].decode("utf-8", "replace"))

    def noise(self) -> list[str]:
        """The last lines of stdout that were not ACP messages."""
        return list(self._noise)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()

    async def _line(self) -> bytes | None:
        """The next line, newline included; ``None`` at the end of the stream or past the
        limit. At most ``max_frame_bytes`` (and the reader's own buffer) is ever held."""
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                part = await self._reader.readuntil(b"\n")
                done = True
            except asyncio.LimitOverrunError as exc:
                part = await self._reader.readexactly(exc.consumed)
                done = False
            except asyncio.IncompleteReadError as exc:  # the end: a last line with no newline
                part, done = exc.partial, True
                if not part and not parts:
                    return None
            except (ConnectionError, OSError):
                return None
            size += len(part)
            if size > self._max:
                self._overflow()
                return None
            parts.append(part)
            if done:
                return b"".join(parts)

    def _overflow(self) -> None:
        self.failure = LimitExceeded(
            f"wrote a line of more than {self._max} bytes on stdout and was stopped",
            limit="agent_max_frame_bytes",
            value=self._max,
            setting=FRAME_LIMIT_SETTING,
            reason=Reason.FRAME_TOO_LARGE,
        )
        if self._on_overflow is not None:
            self._on_overflow(self.failure)
