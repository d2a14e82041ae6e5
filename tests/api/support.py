"""Helpers for the daemon tests: a scratch data directory, the daemon as a subprocess, the
``compozy`` CLI as a user runs it, and checking responses against the OpenAPI document.

Imported by tests in ``tests/api``, ``tests/host`` and ``tests/cli`` (``tests`` is on the path).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from tests.clirun import run_cli

COMPOZY = Path(sys.executable).parent / "compozy"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 20.0
LISTENING = re.compile(r"listening on (\S+)")


#: the TLS context of a test's client of a daemon on plain HTTP or its socket: it never speaks
#: TLS, and httpx2's default context reads the system's CA bundle (20-40 ms of CPU a client)
PLAIN_HTTP = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@dataclass(frozen=True, slots=True)
class Home:
    """A scratch data directory and the environment every command runs in."""

    path: Path
    env: dict[str, str]

    @classmethod
    def make(cls, root: Path) -> Home:
        (root / "workspace").mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
        env["COMPOZY_HOME"] = str(root / "home")
        env["COMPOZY_WORKSPACE"] = str(root / "workspace")
        # managed sessions of these tests are not held for approval (tests/approvals are)
        env["COMPOZY_PERMISSION_MODE"] = "bypass"
        return cls(root / "home", env)

    def with_env(self, **extra: str) -> Home:
        return Home(self.path, {**self.env, **extra})


def compozy(home: Home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``compozy ARGS`` in this process (:func:`tests.clirun.run_cli`), in ``home``'s env."""
    return run_cli(*args, env=home.env, stdin=stdin)


def compozy_process(
    home: Home, *args: str, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``compozy ARGS`` as its own process: for commands that serve (and their start-up)."""
    return subprocess.run(
        [str(COMPOZY), *args],
        env=home.env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def children(pid: int) -> set[int]:
    """Every live process whose parent is ``pid`` (a daemon's agents)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ")"
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


@contextmanager
def short_dir() -> Iterator[Path]:
    """A directory with a short path: a Unix socket path is limited to ~107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="cz-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@dataclass
class Daemon:
    """``compozy serve`` running as a subprocess; ``url`` is its TCP address, ``socket`` its
    Unix socket (either may be ``None`` when not served)."""

    process: subprocess.Popen[str]
    url: str | None
    socket: Path | None
    stderr_lines: list[str] = field(default_factory=list)

    def client(self, **kw: Any) -> httpx2.Client:
        assert self.url is not None
        return httpx2.Client(
            base_url=self.url, trust_env=False, timeout=30, verify=PLAIN_HTTP, **kw
        )

    def socket_client(self, **kw: Any) -> httpx2.Client:
        assert self.socket is not None
        transport = httpx2.HTTPTransport(uds=str(self.socket), verify=PLAIN_HTTP)
        return httpx2.Client(
            base_url="http://localhost", transport=transport, trust_env=False, timeout=30, **kw
        )

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` and wait for the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)


def _drain(stream: Any, lines: list[str], seen: threading.Condition) -> None:
    for line in iter(stream.readline, ""):
        with seen:
            lines.append(line)
            seen.notify_all()
    with seen:
        lines.append("")  # EOF marker
        seen.notify_all()


@contextmanager
def running_daemon(
    home: Home, *args: str, listeners: int = 2, ready_headers: dict[str, str] | None = None
) -> Iterator[Daemon]:
    """Start ``compozy serve ARGS``, wait until it serves (polling, with a deadline), stop it
    with SIGTERM afterwards; the process never outlives the block."""
    process = subprocess.Popen(
        [str(COMPOZY), "serve", *args],
        env=home.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    seen = threading.Condition()
    reader = threading.Thread(target=_drain, args=(process.stderr, lines, seen), daemon=True)
    reader.start()
    try:
        addresses = _wait_listening(process, lines, seen, listeners)
        url = next((a for a in addresses if a.startswith("http")), None)
        sock = next((Path(a[5:]) for a in addresses if a.startswith("unix:")), None)
        daemon = Daemon(process, url, sock, lines)
        _wait_ready(daemon, ready_headers or {})
        yield daemon
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=5)
        if process.stderr is not None:
            process.stderr.close()


def _wait_listening(
    process: subprocess.Popen[str], lines: list[str], seen: threading.Condition, count: int
) -> list[str]:
    deadline = time.monotonic() + START_TIMEOUT
    with seen:
        while True:
            found = [m.group(1) for line in lines if (m := LISTENING.search(line))]
            if len(found) >= count:
                return found
            if "" in lines or process.poll() is not None:
                raise AssertionError(f"compozy serve exited early: {''.join(lines)}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"compozy serve did not start: {''.join(lines)}")
            seen.wait(left)


def _wait_ready(daemon: Daemon, headers: dict[str, str]) -> None:
    """Poll the liveness route until it answers (the app's lifespan has started). Not the
    OpenAPI document: its first request builds it (~45 ms of the daemon's CPU) and sends its
    280 KB, for every daemon a test starts."""
    make = daemon.client if daemon.url else daemon.socket_client
    deadline = time.monotonic() + START_TIMEOUT
    with make() as client:
        while True:
            try:
                if client.get("/healthz", headers=headers).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline or daemon.process.poll() is not None:
                raise AssertionError(f"compozy serve is not answering: {daemon.stderr}")
            time.sleep(0.05)


# --- the OpenAPI document as a contract -----------------------------------------------------


class Contract:
    """Validates responses against the OpenAPI document's schemas for their operation."""

    URI = "urn:compozy:openapi"

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        self.registry: Registry[Any] = Registry().with_resource(self.URI, resource)

    def validator(self, pointer: str) -> Draft202012Validator:
        return Draft202012Validator({"$ref": f"{self.URI}#{pointer}"}, registry=self.registry)

    def documented(self, template: str, path: dict[str, str]) -> str:
        """The documented path of a request: its template, or (each native tool's invoke is
        documented on its own) the tool's invoke path; an unknown tool answers as any does."""
        if template in self.document["paths"]:
            return template
        concrete = template.format(**path)
        if concrete in self.document["paths"]:
            return concrete
        return "/api/tools/compozy__session_status/invoke"

    def response_schema_pointer(self, method: str, template: str, status: int) -> str:
        operation = self.document["paths"][template][method.lower()]
        responses = operation["responses"]
        assert str(status) in responses, f"{method} {template} answered an undocumented {status}"
        response = responses[str(status)]
        if "$ref" in response:
            name = response["$ref"].rsplit("/", 1)[-1]
            return f"/components/responses/{name}/content/application~1json/schema"
        escaped = template.replace("~", "~0").replace("/", "~1")
        return (
            f"/paths/{escaped}/{method.lower()}/responses/{status}/content/application~1json/schema"
        )

    def check(self, method: str, template: str, response: httpx2.Response) -> Any:
        """The response's JSON, after checking it against the documented schema."""
        body = response.json()
        pointer = self.response_schema_pointer(method, template, response.status_code)
        errors = sorted(self.validator(pointer).iter_errors(body), key=str)
        assert not errors, f"{method} {template} {response.status_code}: {errors[0]}"
        return body


class ContractClient:
    """An httpx2 client whose every answer is checked against the OpenAPI document.

    ``request("GET", "/api/sessions/{session_id}", session_id="x")`` fills the template.
    """

    def __init__(self, client: httpx2.Client, contract: Contract) -> None:
        self.http = client
        self.contract = contract
        self.seen: set[tuple[str, str, int]] = set()

    def request(
        self,
        method: str,
        template: str,
        *,
        expect: int | Sequence[int] | None = None,
        params: dict[str, Any] | None = None,
        json: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        **path: str,
    ) -> tuple[int, Any]:
        from urllib.parse import quote

        url = template.format(**{k: quote(v, safe="") for k, v in path.items()})
        response = self.http.request(
            method, url, params=params, json=json, content=content, headers=headers
        )
        body = self.contract.check(method, self.contract.documented(template, path), response)
        self.seen.add((method, template, response.status_code))
        if expect is not None:
            wanted = [expect] if isinstance(expect, int) else list(expect)
            assert response.status_code in wanted, (response.status_code, body)
        return response.status_code, body

    def get(self, template: str, **kw: Any) -> tuple[int, Any]:
        return self.request("GET", template, **kw)

    def post(self, template: str, **kw: Any) -> tuple[int, Any]:
        return self.request("POST", template, **kw)

    def delete(self, template: str, **kw: Any) -> tuple[int, Any]:
        return self.request("DELETE", template, **kw)
