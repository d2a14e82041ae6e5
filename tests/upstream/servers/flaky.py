"""An extension whose server cannot be made the first ``failures`` times (set by a test), then
is the ``notes`` server under the name ``flaky``: a server that fails to start, then recovers."""

from __future__ import annotations

from typing import Any

from mcp.server import Server
from tests.upstream.servers import notes

state = {"failures": 0, "attempts": 0}


def build() -> Server[Any]:
    state["attempts"] += 1
    if state["failures"] > 0:
        state["failures"] -= 1
        raise RuntimeError("not ready yet")
    return notes.build("flaky")
