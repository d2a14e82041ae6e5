"""What each running proxy (or daemon) reports about its upstream servers, for
``compozy mcp list``: one small JSON file per process under ``$COMPOZY_HOME/run/mcp/``,
replaced atomically whenever a server changes state and removed when the process stops. A file
whose process is gone is ignored (and removed by the next process that starts on the home).

Each process connects its own servers (a stdio server is one child process per proxy), so the
list shows every process's view of every server.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.private_paths import private_dirs
from compozy_mcp.schemas import COUNT, INTEGER, NUMBER, STRING, array, enum, obj

RUN_DIR = Path("run") / "mcp"


class State(StrEnum):
    #: connecting, handshaking, reading the first listing
    STARTING = "starting"
    #: connected; its tools are served
    READY = "ready"
    #: the last attempt failed or the connection was lost; the next attempt waits for backoff
    DOWN = "down"
    #: the process serving it is shutting down
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class ServerStatus:
    name: str
    state: State
    tools: int = 0
    #: why the server last failed, in our words (no exception text, no absolute paths)
    last_error: str | None = None
    #: connections made after the first
    restarts: int = 0
    #: when the server entered ``state`` (UTC, ISO 8601)
    since: str | None = None
    #: seconds until the next attempt, while ``down``
    retry_in: float | None = None

    def payload(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["state"] = self.state.value
        return out


@dataclass(frozen=True, slots=True)
class Report:
    """One process's statuses."""

    pid: int
    #: ``proxy`` or ``daemon``
    kind: str
    servers: tuple[ServerStatus, ...]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class StatusBoard:
    """The reports of the processes serving one ``$COMPOZY_HOME``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.directory = home / RUN_DIR

    def _file(self, pid: int) -> Path:
        return self.directory / f"{pid}.json"

    def publish(self, report: Report) -> None:
        """Replace this process's report (blocking: a small file write)."""
        private_dirs(self.home, RUN_DIR)
        body = {
            "pid": report.pid,
            "kind": report.kind,
            "servers": [status.payload() for status in report.servers],
        }
        fd, tmp = tempfile.mkstemp(prefix=".status-", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(jsonutil.dumps(body))
            os.replace(tmp, self._file(report.pid))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def withdraw(self, pid: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._file(pid).unlink()

    def sweep(self) -> None:
        """Remove the reports of processes that are gone."""
        for path, pid in self._files():
            if not _alive(pid):
                with contextlib.suppress(OSError):
                    path.unlink()

    def _files(self) -> Iterator[tuple[Path, int]]:
        if not self.directory.is_dir():
            return
        for path in sorted(self.directory.glob("*.json")):
            if path.stem.isdigit():
                yield path, int(path.stem)

    def reports(self) -> list[Report]:
        """The reports of live processes, oldest pid first; unreadable ones are skipped."""
        out: list[Report] = []
        for path, pid in self._files():
            if not _alive(pid):
                continue
            try:
                body = jsonutil.loads(path.read_bytes())
                servers = tuple(_status(item) for item in body["servers"])
                out.append(Report(pid, str(body["kind"]), servers))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # replaced or removed while read; the next list sees it
        return out


def _status(item: dict[str, Any]) -> ServerStatus:
    return ServerStatus(
        name=str(item["name"]),
        state=State(item["state"]),
        tools=int(item.get("tools", 0)),
        last_error=item.get("last_error"),
        restarts=int(item.get("restarts", 0)),
        since=item.get("since"),
        retry_in=item.get("retry_in"),
    )


def by_server(reports: Sequence[Report]) -> dict[str, list[dict[str, Any]]]:
    """Each server's connections, as ``compozy mcp list`` shows them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for report in reports:
        for status in report.servers:
            entry = {"pid": report.pid, "kind": report.kind, **status.payload()}
            del entry["name"]
            out.setdefault(status.name, []).append(entry)
    return out


#: one process's view of one server (``connections[]`` of a listing row)
CONNECTION_SCHEMA = obj(
    {
        "pid": INTEGER,
        "kind": enum("proxy", "daemon"),
        "state": enum(*(state.value for state in State)),
        "tools": COUNT,
        "restarts": COUNT,
    },
    {"last_error": STRING, "since": STRING, "retry_in": NUMBER},
    order=("pid", "kind", "state", "tools", "last_error", "restarts", "since", "retry_in"),
)
#: a server of ``compozy mcp list`` / ``GET /api/mcp/servers``
SERVER_ROW_SCHEMA = obj(
    {
        "name": STRING,
        "scope": enum("user", "workspace", "extension"),
        "transport": enum("stdio", "http", "extension"),
        "target": STRING,
        "connections": array(CONNECTION_SCHEMA),
    }
)
SERVER_LIST_SCHEMA = obj({"servers": array(SERVER_ROW_SCHEMA)})
