"""The PostgreSQL store: the same readers, writers and migrations as SQLite's, on a server
several daemons can share (``compozy serve --store postgresql://…``).

Driver: psycopg 3 with its connection pool. The store interface is synchronous and always
called off the event loop (:mod:`compozy_mcp.blocking`), and psycopg's sync API with a pool
fits it as it is (``benchmarks/pg_driver.py`` measures it against asyncpg; docs/deployment.md).

Semantics kept from SQLite, so that every caller works unchanged:

- **A reader** is one ``REPEATABLE READ READ ONLY`` transaction: a consistent snapshot, taken
  from a pool of connections; it never waits for a writer.
- **A writer** is one transaction on this store's writer connection, and holds a
  transaction-level advisory lock (:data:`WRITE_LOCK`) for its length: writers run one at a
  time across every process and daemon on the database, as SQLite's ``BEGIN IMMEDIATE`` makes
  them, so a read-modify-write of the callers is never interleaved with another one. The wait
  for it (this process's writers first, then the lock) is bounded by ``busy_timeout_ms``;
  past it, and on a serialization failure or deadlock, the write fails as
  :class:`~compozy_mcp.errors.StoreBusy`. Sessions stay compared-and-swapped on ``version``.
- **Migrations** run once, under a session advisory lock (:data:`MIGRATION_LOCK`), whichever
  of several daemons starting together gets it first; the others find them applied.

This module imports psycopg: it is imported only when a ``postgresql://`` store is asked for
(:mod:`compozy_mcp.store.open`), so the CLI starts without it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg
import psycopg.errors
from psycopg.adapt import Dumper
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from compozy_mcp.errors import StoreBusy, StoreError
from compozy_mcp.store._schema import migrate, schema_version
from compozy_mcp.store._sql_reader import SQLReader
from compozy_mcp.store._sql_writer import SQLWriter
from compozy_mcp.store.base import Store, StoreReader, StoreSize, StoreWriter
from compozy_mcp.store.sql import POSTGRES, ConstraintViolation, SQLCursor

#: how long a write waits for the other writers, by default (as SQLite's store)
BUSY_TIMEOUT_MS = 5_000
#: reader connections the pool keeps open at most
READER_POOL_SIZE = 8
#: how long a daemon starting waits for another one's migrations
MIGRATION_WAIT_MS = 120_000


def _lock_key(name: str) -> int:
    """A stable 64-bit advisory lock key of a name (every compozy uses the same)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


WRITE_LOCK = _lock_key("compozy-mcp/store/write")
MIGRATION_LOCK = _lock_key("compozy-mcp/store/migrate")

#: SQLSTATEs a caller may retry: a lock not had in time (55P03), a statement timeout (57014),
#: a serialization failure (40001), a deadlock (40P01)
_BUSY = (
    psycopg.errors.LockNotAvailable,
    psycopg.errors.QueryCanceled,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
)


class _BoolAsInteger(Dumper):
    """The schema keeps flags in integer columns (as SQLite does): a ``bool`` goes as 0/1."""

    oid = psycopg.adapters.types["int8"].oid

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


@lru_cache(maxsize=2048)
def _psycopg_sql(sql: str) -> str:
    """The store's SQL (``?`` parameter markers, DB-API ``qmark``) in psycopg's ``format`` style
    (``%s`` markers; a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _Connection:
    """A psycopg connection as the shared readers and writers use one."""

    __slots__ = ("_conn",)

    def __init__(self, conn: psycopg.Connection[DictRow]) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> SQLCursor:
        try:
            return self._conn.execute(_psycopg_sql(sql), parameters)
        except psycopg.errors.IntegrityError as exc:
            raise ConstraintViolation(str(exc)) from exc

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> SQLCursor:
        cursor = self._conn.cursor()
        try:
            cursor.executemany(_psycopg_sql(sql), list(parameters))
        except psycopg.errors.IntegrityError as exc:
            raise ConstraintViolation(str(exc)) from exc
        return cursor


def _configure(conn: psycopg.Connection[Any]) -> None:
    conn.adapters.register_dumper(bool, _BoolAsInteger)


def redact(url: str) -> str:
    """A URL with its password left out (what errors and logs may show)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://…"
    where = info.get("host") or "localhost"
    return f"postgresql://{info.get('user') or ''}@{where}/{info.get('dbname') or ''}"


class PostgresStore(Store):
    """A store in one PostgreSQL database, which several daemons may share."""

    dialect = POSTGRES
    #: every statement is a round trip to the server
    reads_wait_on_a_server = True

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        readers: int = READER_POOL_SIZE,
    ) -> None:
        self.url = url
        self.busy_timeout_ms = busy_timeout_ms
        #: the last write's outcome: ``None`` once one succeeded, else why it failed (what
        #: ``/api/health`` reports as ``degraded``)
        self.write_failure: str | None = None
        self._write_lock = threading.Lock()
        self._closed = False
        self._writer: psycopg.Connection[DictRow] | None = None
        self._pool: ConnectionPool[psycopg.Connection[DictRow]] | None = None
        try:
            self._writer = self._connect()
            self._migrate()
            self._pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max(readers, 1),
                kwargs={"row_factory": dict_row},
                configure=self._configure_reader,
                timeout=max(busy_timeout_ms, 1) / 1000,
                name="compozy-store-readers",
                open=False,
            )
            self._pool.open(wait=True, timeout=10)
        except BaseException:
            self.close()
            raise

    def _connect(self) -> psycopg.Connection[DictRow]:
        try:
            conn = psycopg.connect(self.url, row_factory=dict_row, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the store at {redact(self.url)}: {exc}") from exc
        _configure(conn)
        return conn

    @staticmethod
    def _configure_reader(conn: psycopg.Connection[Any]) -> None:
        _configure(conn)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True

    def _failure(self, exc: psycopg.Error) -> StoreBusy | StoreError:
        if isinstance(exc, _BUSY):
            return StoreBusy(
                f"the store is busy: {self.busy_timeout_ms} ms passed waiting for the other "
                f"writers ({type(exc).__name__}); retry"
            )
        return StoreError(f"the store failed: {exc}")

    def _migrate(self) -> None:
        conn = self._writer
        assert conn is not None
        try:
            with conn.transaction():
                conn.execute(
                    "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s)",
                    (f"{MIGRATION_WAIT_MS}ms", MIGRATION_LOCK),
                )
                migrate(_Connection(conn), POSTGRES)
        except psycopg.Error as exc:
            raise self._failure(exc) from exc

    def schema_version(self) -> int:
        with self._reading() as conn:
            return schema_version(conn)

    @contextmanager
    def _reading(self) -> Iterator[_Connection]:
        if self._pool is None or self._closed:
            raise StoreError("the store is closed")
        try:
            with self._pool.connection() as conn:
                yield _Connection(conn)
        except PoolTimeout as exc:
            raise StoreBusy(
                f"the store is busy: no reader connection came free in "
                f"{self.busy_timeout_ms} ms; retry"
            ) from exc
        except psycopg.Error as exc:
            raise self._failure(exc) from exc

    @contextmanager
    def read(self) -> Iterator[StoreReader]:
        with self._reading() as conn:
            yield SQLReader(conn, POSTGRES)

    def _busy(self) -> StoreBusy:
        return StoreBusy(
            f"the store is busy: {self.busy_timeout_ms} ms passed waiting for a write; retry"
        )

    @contextmanager
    def _holding_writer(self) -> Iterator[psycopg.Connection[DictRow]]:
        """The writer connection (opened again if the server dropped it), within the write's
        deadline for this process's queue; the rest of the deadline is left for the lock."""
        if not self._write_lock.acquire(timeout=max(self.busy_timeout_ms, 1) / 1000):
            raise self._busy()
        try:
            if self._closed:
                raise StoreError("the store is closed")
            if self._writer is None or self._writer.closed or self._writer.broken:
                if self._writer is not None:
                    self._writer.close()
                self._writer = None
                self._writer = self._connect()
            yield self._writer
        finally:
            self._write_lock.release()

    @contextmanager
    def write(self) -> Iterator[StoreWriter]:
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        try:
            with self._holding_writer() as conn:
                try:
                    with conn.transaction():
                        left_ms = max(int((deadline - time.monotonic()) * 1000), 1)
                        conn.execute(
                            "SELECT set_config('lock_timeout', %s, true), "
                            "pg_advisory_xact_lock(%s)",
                            (f"{left_ms}ms", WRITE_LOCK),
                        )
                        yield SQLWriter(_Connection(conn), POSTGRES)
                except psycopg.Error as exc:
                    raise self._failure(exc) from exc
        except StoreBusy as busy:
            self.write_failure = busy.message
            raise
        self.write_failure = None

    def close(self) -> None:
        """Close the pool and the writer; a write in flight in another thread finishes first."""
        acquired = self._write_lock.acquire(timeout=2 * max(self.busy_timeout_ms / 1000, 1))
        try:
            self._closed = True
            if self._pool is not None:
                self._pool.close()
            if self._writer is not None:
                self._writer.close()
        finally:
            if acquired:
                self._write_lock.release()

    def size(self) -> StoreSize:
        with self._reading() as conn:
            row = conn.execute(
                "SELECT pg_database_size(current_database()) AS bytes", ()
            ).fetchone()
        # the write-ahead log is the server's, shared by its databases: not counted here
        return StoreSize(int(row["bytes"]), 0)

    def checkpoint(self) -> None:
        """Nothing to do: the server's autovacuum gives deleted rows' space back to the
        tables, and its checkpointer recycles the write-ahead log."""

    def vacuum(self) -> None:
        """``VACUUM (ANALYZE)`` the database (outside a transaction, as PostgreSQL needs)."""
        with self._holding_writer() as conn:
            try:
                conn.autocommit = True
                try:
                    conn.execute("VACUUM (ANALYZE)")
                finally:
                    conn.autocommit = False
            except psycopg.Error as exc:
                raise self._failure(exc) from exc


__all__ = ["PostgresStore", "redact"]
