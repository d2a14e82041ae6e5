"""Hooks for tests: an in-process recorder, a webhook served by a thread (no process, so unit
tests may use it), and hooks.yaml files."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from compozy_mcp.assembly import App

#: the spec's tool.post_call example, literally (the call id is the dispatcher's, checked by
#: shape in :func:`as_in_the_spec`)
SPEC_POST_CALL = {
    "event": "tool.post_call",
    "tool_id": "compozy__session_status",
    "tool_call_id": "call-31",
    "has_result_views": True,
    "tool_input": {"session_id": "sess-example"},
    "result_view": "compact",
    "tool_result": {
        "structured": {"session": {"id": "sess-example", "state": "active"}},
        "preview": "sess-example",
    },
}


def as_in_the_spec(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload cut to the spec example's fields: its session to id and state, its preview to
    the session id (ours goes on with the state), its call id (checked) to the example's."""
    cut = {key: payload[key] for key in SPEC_POST_CALL}
    session = cut["tool_result"]["structured"]["session"]
    cut["tool_result"] = {
        "structured": {"session": {"id": session["id"], "state": session["state"]}},
        "preview": cut["tool_result"]["preview"].split()[0],
    }
    assert re.fullmatch(r"call-[0-9a-f]{12}", cut["tool_call_id"]), cut["tool_call_id"]
    cut["tool_call_id"] = "call-31"
    return cut


class Recorder:
    """An in-process hook: records every payload, returns ``patches[event]`` (or nothing)."""

    def __init__(self, **patches: dict[str, Any] | None) -> None:
        self.events: list[dict[str, Any]] = []
        self.patches = {f"tool.{name}": patch for name, patch in patches.items()}

    async def __call__(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        self.events.append(payload)
        return self.patches.get(payload["event"])

    def of(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == f"tool.{event}"]


@dataclass(frozen=True, slots=True)
class Answer:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0


Respond = Callable[[str, dict[str, Any]], Answer]


@dataclass
class Webhook:
    """A webhook on 127.0.0.1: ``respond(path, payload)`` decides each answer."""

    url: str
    received: list[tuple[str, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    respond: Respond = lambda path, payload: Answer()

    def at(self, path: str) -> str:
        return f"{self.url}{path}"

    def payloads(self, path: str) -> list[dict[str, Any]]:
        return [payload for where, payload, _ in self.received if where == path]


def patch_answer(patch: dict[str, Any]) -> Answer:
    return Answer(body=json.dumps(patch).encode())


@contextmanager
def webhook() -> Iterator[Webhook]:
    hook = Webhook(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length) or b"null")
            hook.received.append((self.path, payload, dict(self.headers)))
            answer = hook.respond(self.path, payload)
            if answer.delay:
                time.sleep(answer.delay)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the hook's caller gave up (a timeout test)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hook.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def write_hooks(path: Path, *hooks: dict[str, Any]) -> Path:
    """A hooks.yaml at ``path`` (its directory is made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"hooks": list(hooks)}, sort_keys=False))
    return path


async def runs(app: App, **filters: Any) -> list[dict[str, Any]]:
    """The run log (full view), newest first, once this process's records are written."""
    await app.hooks.drain()
    result = await app.dispatcher.call(
        "compozy__hooks_runs", {**filters, "result_view": "full", "limit": 200}
    )
    found: list[dict[str, Any]] = result.structured["runs"]
    return found


async def create_hook(app: App, **definition: Any) -> dict[str, Any]:
    hook: dict[str, Any] = (
        await app.dispatcher.call("compozy__hooks_create", definition)
    ).structured["hook"]
    return hook
