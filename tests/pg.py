"""A PostgreSQL server for the ``postgres`` tier: started once per test process, a fresh
database for each test that asks for ``postgres_url``.

The server is the one the ``pgserver`` package bundles (PostgreSQL 16, a dev dependency, so a
fresh machine needs nothing else), or else the machine's own (``initdb`` and ``pg_ctl`` on the
PATH or under /usr/lib/postgresql). PostgreSQL refuses to run as root: as root (CI) it runs as
a system user made for it (:data:`SERVER_USER`). It listens on a Unix socket in its own
directory only, never on TCP, and is stopped (and its files removed) when the tests end.

A test gets the tier from the fixture: a test that uses ``postgres_url`` (or
``postgres_server``) is marked ``postgres`` at collection. When no server can be started the
tests are skipped, and the reason says why.

Benchmarks start one the same way (:func:`started`), with the durable settings.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest

from compozy_mcp.store import SQLiteStore, Store

#: the system user the server runs as when the tests run as root
SERVER_USER = "compozy-pg"
#: how long initdb, a start or a stop may take
_TIMEOUT = 120
#: settings for tests: nothing is kept across a crash, so nothing is flushed to the disk
FAST = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
_COMMON = ("-c", "max_connections=300", "-c", "listen_addresses=")


def _scratch(durable: bool) -> str:
    """Where a server's directory goes: for the tests, the tmpfs when there is one (a new
    database is a few hundred files: on this machine's disk creating and removing them took
    most of a postgres test's setup, ~0.15 s of ~0.45), else /tmp; a durable server
    (benchmarks) on the disk, whose flushes it measures. Short either way: a Unix socket path
    is at most 107 bytes."""
    shm = "/dev/shm"
    if not durable and os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return "/tmp"


def binaries() -> Path | None:
    """The directory of ``initdb``, ``pg_ctl`` and ``postgres``: pgserver's bundled server
    first (found without importing it: its import has side effects), then the machine's."""
    spec = importlib.util.find_spec("pgserver")
    if spec is not None and spec.submodule_search_locations:
        bundled = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
        if (bundled / "pg_ctl").exists():
            return bundled
    on_path = shutil.which("pg_ctl")
    if on_path is not None and shutil.which("initdb") is not None:
        return Path(on_path).resolve().parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_ctl").exists():
            return candidate
    return None


def _server_user() -> pwd.struct_passwd | None:
    """``None`` when not root (the server runs as this user); else the user it runs as,
    made once (``useradd --system``) when missing."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                SERVER_USER,
            ],
            check=True,
            capture_output=True,
            timeout=_TIMEOUT,
        )
        return pwd.getpwnam(SERVER_USER)


def _database_of(url: str) -> str:
    """The database a URL of :meth:`PostgresServer.url` names (its host is a path)."""
    return url.split("?", 1)[0].rsplit("/", 1)[1]


@dataclass
class PostgresServer:
    """A running server: its data directory (holding its socket) and how to reach it."""

    bin: Path
    directory: Path
    user: pwd.struct_passwd | None
    _databases: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _template: str | None = None

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={quote(str(self.directory), safe='/')}"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            timeout=_TIMEOUT,
            user=self.user.pw_uid if self.user else None,
            group=self.user.pw_gid if self.user else None,
            cwd=self.directory,
        )

    def create_database(self, prefix: str = "test", *, migrated: bool = False) -> str:
        """A new database, empty or (``migrated``) with the store's schema; its URL."""
        import psycopg

        template = self._migrated_template() if migrated else "template0"
        name = f"{prefix}_{os.getpid()}_{next(self._databases)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            # copying the template's files is twice as fast as logging each of its pages
            # (PostgreSQL 15's default); older servers only copy files, and have no option
            strategy = " STRATEGY FILE_COPY" if admin.info.server_version >= 150000 else ""
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"{strategy}')
        return self.url(name)

    def _migrated_template(self) -> str:
        """A database the store migrated, made once: copying it is faster than migrating."""
        if self._template is None:
            from compozy_mcp.store.postgres import PostgresStore

            url = self.create_database("template")
            PostgresStore(url).close()
            self._template = _database_of(url)
        return self._template

    def set_database(self, url: str, setting: str, value: str) -> None:
        """A setting every new connection to that database starts with."""
        import psycopg

        name = _database_of(url)
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" SET {setting} = {value}')

    def drop_database(self, url: str) -> None:
        import psycopg

        name = _database_of(url)
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        # not running: it failed to start, or was stopped already
        with suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)


@contextmanager
def started(*, durable: bool = False) -> Iterator[PostgresServer]:
    """Start a server in a new directory; stop it and remove its files at the end. Raises
    :class:`RuntimeError` saying why when none can be started."""
    where = binaries()
    if where is None:
        raise RuntimeError(
            "no PostgreSQL server to start: install the dev dependencies (pgserver) or "
            "PostgreSQL's initdb and pg_ctl"
        )
    user = _server_user()
    directory = Path(tempfile.mkdtemp(prefix="cpg-", dir=_scratch(durable)))
    if user is not None:
        os.chown(directory, user.pw_uid, user.pw_gid)
    server = PostgresServer(where, directory, user)
    try:
        server._run(
            "initdb", "-D", str(server.data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        options = [*_COMMON, "-c", f"unix_socket_directories={directory}"]
        if not durable:
            options += FAST
        server._run(
            "pg_ctl", "-D", str(server.data), "-l", str(directory / "server.log"), "-w",
            "-t", str(_TIMEOUT), "-o", " ".join(options), "start",
        )  # fmt: skip
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        log = directory / "server.log"
        said = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        stderr = getattr(exc, "stderr", b"") or b""
        server.stop()
        raise RuntimeError(
            f"PostgreSQL ({where}) did not start: {exc}; {stderr.decode(errors='replace')}{said}"
        ) from exc
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server for this test process (an xdist worker has its own)."""
    try:
        with started() as server:
            yield server
    except RuntimeError as exc:
        pytest.skip(f"no PostgreSQL for the postgres tier: {exc}")


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database (no schema: the store made on it migrates it),
    dropped after the test."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


#: ``COMPOZY_TEST_STORE=postgresql``: every test of the ``app`` fixture runs on PostgreSQL (and
#: so in the postgres tier: ``COMPOZY_TEST_STORE=postgresql pytest tests/sessions -m postgres``)
ENV_TEST_STORE = "COMPOZY_TEST_STORE"


def default_engine() -> str:
    """The engine of a test's ``app`` store when the test does not choose one."""
    return "postgres" if os.environ.get(ENV_TEST_STORE, "").startswith("postgres") else "sqlite"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that needs the server is in the ``postgres`` tier (it starts a process)."""
    everything = default_engine() == "postgres"
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "postgres_server" in fixtures or "postgres_url" in fixtures:
            item.add_marker(pytest.mark.postgres)
        elif everything and "app_store" in fixtures and item.get_closest_marker("postgres") is None:
            callspec = getattr(item, "callspec", None)
            if callspec is None or callspec.params.get("app_store", "postgres") == "postgres":
                item.add_marker(pytest.mark.postgres)


#: the engines a contract test runs on (``postgres`` in its own tier)
ENGINES = (
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
)
#: runs each test of a module (or a test) that uses the ``app`` fixture (or ``app_store``) on
#: both engines; a test that uses neither runs once
on_both_engines = pytest.mark.both_engines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marked = metafunc.definition.get_closest_marker("both_engines") is not None
    if marked and "app_store" in metafunc.fixturenames:
        metafunc.parametrize("app_store", ENGINES, indirect=True)


@contextmanager
def stores_on(engine: str, request: pytest.FixtureRequest, count: int = 1) -> Iterator[list[Store]]:
    """``count`` stores on one new database of ``engine``, as ``count`` daemons would open it
    (one SQLite store alone is in memory); closed, and the database dropped, at the end."""
    opened: list[Store] = []
    url = None
    server: PostgresServer | None = None
    try:
        if engine == "sqlite" and count == 1:
            opened.append(SQLiteStore.memory())
        elif engine == "sqlite":
            path = request.getfixturevalue("tmp_path_factory").mktemp("store") / "compozy.db"
            opened += [SQLiteStore(path) for _ in range(count)]
        else:
            from compozy_mcp.store.postgres import PostgresStore

            server = request.getfixturevalue("postgres_server")
            url = server.create_database(migrated=True)
            opened += [PostgresStore(url) for _ in range(count)]
        yield opened
    finally:
        for store in opened:
            store.close()
        if server is not None and url is not None:
            server.drop_database(url)
