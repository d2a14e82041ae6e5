"""The HTTP side of the fake model APIs: a threaded server on 127.0.0.1 (port 0: one the OS
picks), a log of every request it received, and Server-Sent Events written as they are made.

A fake is an :class:`Api` (routes a request to a response); :class:`FakeModel` serves one in a
thread of this process, or ``python -m tests.fakes.fake_<api> --port N`` as a process of its own
(its log on stdout, a JSON line per request)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    raw_bytes: int


@dataclass
class Response:
    status: int = 200
    #: a JSON body, or (``events``) a stream of ``(event name, data)`` pairs
    json_body: Any = None
    events: Iterator[tuple[str | None, Any]] | None = None
    delay: float = 0.0


class Api(Protocol):
    name: str

    def handle(self, request: Request) -> Response: ...


@dataclass
class Log:
    """Every request a fake received, in order."""

    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def snapshot(self) -> list[Request]:
        with self.lock:
            return list(self.requests)


def _handler(api: Api, log: Log) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            data = self.rfile.read(length) if length else b""
            try:
                body = json.loads(data) if data else None
            except ValueError:
                body = data.decode("utf-8", "replace")
            request = Request(
                self.command,
                parts.path,
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                len(data),
            )
            log.add(request)
            response = api.handle(request)
            if response.events is None:
                encoded = (
                    b"" if response.json_body is None else json.dumps(response.json_body).encode()
                )
                self.send_response(response.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(encoded)
                return
            self.send_response(response.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for name, event in response.events:
                    frame = f"event: {name}\n" if name else ""
                    frame += f"data: {json.dumps(event)}\n\n"
                    self.wfile.write(frame.encode())
                    self.wfile.flush()
                    if response.delay:
                        time.sleep(response.delay)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (a cancelled turn)

        do_GET = do_POST = do_HEAD = _serve

    return Handler


class FakeModel:
    """A fake model API served in a thread; ``url`` once started, ``log`` of what it got."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.log = Log()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api, self.log))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def bodies(self, path_part: str = "") -> list[Any]:
        return [r.body for r in self.log.snapshot() if path_part in r.path]


def serve_main(api: Api, argv: list[str] | None = None) -> int:
    """``python -m tests.fakes.fake_<api> [--port N]``: serve until stopped, a line per
    request on stdout."""
    parser = argparse.ArgumentParser(prog=f"fake_{api.name}")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    log = Log()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(api, log))
    print(f"fake_{api.name} listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run tests.fakes.fake_anthropic, fake_openai or fake_gemini")
