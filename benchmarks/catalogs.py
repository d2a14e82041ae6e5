"""The apps the catalog benchmarks measure: compozy-mcp's native tools alone, or with upstream
compozy's catalog served through the proxy by a test MCP server (:mod:`.fixture_server`)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from benchmarks.fixture_server import ENTRY_POINT, SERVER
from compozy_mcp.assembly import App, open_app
from compozy_mcp.config import Settings
from compozy_mcp.store import SQLiteStore
from compozy_mcp.upstream.config import Scope, ServerDefinition, Transport
from compozy_mcp.upstream.supervisor import Upstreams

FIXTURE_SERVER = ServerDefinition(
    SERVER, Transport.EXTENSION, Scope.EXTENSION, entry_point=ENTRY_POINT
)


@contextlib.contextmanager
def bench_app() -> Iterator[App]:
    """An app on an empty in-memory store: the catalog does not depend on data."""
    with tempfile.TemporaryDirectory(prefix="compozy-bench-") as home:
        settings = Settings(home=Path(home), default_workspace_path=Path(home))
        with open_app(settings, store=SQLiteStore.memory()) as app:
            yield app


@contextlib.asynccontextmanager
async def with_fixture(app: App) -> AsyncIterator[Upstreams]:
    """``app`` with the fixture server connected (in-process) and its tools in the catalog."""
    upstreams = Upstreams([FIXTURE_SERVER], home=app.settings.home, env={}, publish_status=False)
    app.catalog.attach(upstreams)
    async with upstreams.running():
        [status] = upstreams.statuses()
        if status.state != "ready":
            raise RuntimeError(f"the fixture server did not start: {status.last_error}")
        yield upstreams
