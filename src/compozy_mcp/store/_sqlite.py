"""The embedded SQLite store: WAL mode, versioned migrations, one transaction per write.

Several processes (the CLI, the proxy, the daemon) may open the same file at once.

- **Writes** go through one connection: each takes SQLite's write lock up front
  (``BEGIN IMMEDIATE``), so a read-modify-write is never interleaved with another one. The wait
  for that lock is bounded (``busy_timeout_ms``); past it the write fails as
  :class:`~compozy_mcp.errors.StoreBusy`, a typed answer the caller may retry, never a stall.
  Async callers run writes in worker threads (:mod:`compozy_mcp.blocking`).
- **Reads** use connections of their own, taken from a small pool: in WAL mode a reader never
  waits for a writer, so a read on the event loop stays fast while another process writes.

An in-memory store (tests) has one connection for everything: separate connections would see
separate databases. It starts as a copy of an image of the migrated schema made once per
process (``serialize``/``deserialize``, ~0.2 ms, where migrating takes ~13 ms): the test suite
makes one per test.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path

from compozy_mcp.errors import StoreBusy, StoreError
from compozy_mcp.store._schema import migrate, schema_version
from compozy_mcp.store._sql_reader import SQLReader
from compozy_mcp.store._sql_writer import SQLWriter
from compozy_mcp.store.base import Store, StoreReader, StoreSize, StoreWriter
from compozy_mcp.store.private_files import private_file
from compozy_mcp.store.sql import SQLITE

#: how long a write waits for the write lock another connection holds, by default
BUSY_TIMEOUT_MS = 5_000
#: between tries to switch a new database to WAL mode while another connection has it locked
WAL_RETRY_SECONDS = 0.01
#: idle reader connections kept for reuse
READER_POOL_SIZE = 8


class SQLiteReader(SQLReader):
    """A read on a SQLite connection, which can tell whether anything was committed since."""

    _conn: sqlite3.Connection
    #: the revision as this read first asked it (a status read asks twice: the TTL check and
    #: the record). Taken no later than anything this read sees, it can only make what is kept
    #: under it look out of date sooner (and built again), never pass for what changed since.
    _revision: Hashable | None = None

    def revision(self) -> Hashable | None:
        # data_version changes when another connection commits (another process, or this
        # process's writer, when this is a pooled reader); total_changes when this connection
        # writes (the in-memory store reads on its writer). A write is never asked (its reader
        # is a SQLWriter, which gives no revision): its changes may yet roll back, which
        # total_changes would not undo. A read writes nothing: both stay what they were.
        if self._revision is None:
            conn = self._conn
            row = conn.execute("PRAGMA data_version").fetchone()
            self._revision = (conn, row[0], conn.total_changes)
        return self._revision


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SQLiteStore(Store):
    """A store in one SQLite file (or in memory, for tests)."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = str(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._memory = self.path == ":memory:"
        if not self._memory:
            private_file(Path(self.path))
        self._write_lock = threading.RLock()
        #: the last write's outcome: ``None`` once one succeeded, else why it failed (what
        #: ``/api/health`` reports as ``degraded``)
        self.write_failure: str | None = None
        self._pool_lock = threading.Lock()
        self._readers: list[sqlite3.Connection] = []
        self._open: list[sqlite3.Connection] = []
        self._closed = False
        self._writer = self._connect(writer=True)
        try:
            if self._memory:
                self._migrate_from_image()
            else:
                self._migrate()
        except BaseException:
            self.close()
            raise

    #: the bytes of an in-memory database the migrations were applied to, once per process
    _memory_image: bytes | None = None

    @classmethod
    def memory(cls) -> SQLiteStore:
        return cls(":memory:")

    def _migrate_from_image(self) -> None:
        """Start from the migrated image when there is one (the migrations then find nothing
        to do: the same check as on any store), else migrate and keep the image."""
        image = SQLiteStore._memory_image
        if image is not None:
            self._writer.deserialize(image)
        self._migrate()
        if image is None:
            SQLiteStore._memory_image = self._writer.serialize()

    def _connect(self, *, writer: bool = False) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,  # writes run in worker threads; pooled readers move
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store: {exc}") from exc
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
            conn.execute("PRAGMA foreign_keys = ON")
            if writer and not self._memory:
                # before WAL, and only takes on a database with no table yet (a new one): its
                # deleted pages are given back by each checkpoint; an older one's once its next
                # vacuum has made it incremental
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                mode = self._enter_wal(conn)
                if mode.lower() != "wal":
                    raise StoreError(f"the store cannot use WAL mode (got {mode})")
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError as exc:
            conn.close()
            raise self._failure(exc) from exc
        except BaseException:
            conn.close()
            raise
        with self._pool_lock:
            self._open.append(conn)
        return conn

    def _enter_wal(self, conn: sqlite3.Connection) -> str:
        """Switch to WAL mode, waiting at most ``busy_timeout_ms`` for the lock it needs.

        Switching a new database needs its exclusive lock. While another connection holds the
        write lock (another process opening the same new store, migrating it), SQLite answers
        "locked" at once instead of calling its busy handler, since the switch already holds a
        read lock; so the wait is ours. Once the file is in WAL mode this is one read."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(WAL_RETRY_SECONDS)

    def _failure(self, exc: sqlite3.OperationalError) -> StoreBusy | StoreError:
        if _locked(exc):
            return StoreBusy(
                f"the store is busy: another writer held it for more than "
                f"{self.busy_timeout_ms} ms; retry"
            )
        return StoreError(f"the store failed: {exc}")

    def _migrate(self) -> None:
        with self._transaction(self._writer, immediate=True) as conn:
            migrate(conn, SQLITE)

    def schema_version(self) -> int:
        with self._reader_connection() as conn, self._transaction(conn, immediate=False):
            return schema_version(conn)

    def journal_mode(self) -> str:
        with self._write_lock:
            return str(self._writer.execute("PRAGMA journal_mode").fetchone()[0])

    @contextmanager
    def _transaction(
        self, conn: sqlite3.Connection, *, immediate: bool
    ) -> Iterator[sqlite3.Connection]:
        try:
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        except sqlite3.OperationalError as exc:
            raise self._failure(exc) from exc
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            conn.execute("ROLLBACK")
            raise self._failure(exc) from exc

    def _busy(self) -> StoreBusy:
        return StoreBusy(
            f"the store is busy: {self.busy_timeout_ms} ms passed waiting for a write; retry"
        )

    @contextmanager
    def _holding_writer(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, within one deadline for every wait of the write: our own
        writers' queue here, then SQLite's lock (another process), together at most
        ``busy_timeout_ms`` (waits that stacked made a write fail after three times that)."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        if not self._write_lock.acquire(timeout=self.busy_timeout_ms / 1000):
            raise self._busy()
        try:
            # rounded up: SQLite's busy handler sleeps for exactly the milliseconds it is
            # given, so a write that waits fails at its bound, never up to 1 ms before it
            left_ms = math.ceil((deadline - time.monotonic()) * 1000)
            if left_ms <= 0 and self.busy_timeout_ms > 0:
                raise self._busy()
            self._writer.execute(f"PRAGMA busy_timeout = {max(left_ms, 0)}")
            yield self._writer
        finally:
            self._write_lock.release()

    @contextmanager
    def _reader_connection(self) -> Iterator[sqlite3.Connection]:
        if self._memory:
            with self._holding_writer() as conn:
                yield conn
            return
        with self._pool_lock:
            pooled = self._readers.pop() if self._readers else None
        conn = pooled if pooled is not None else self._connect()
        try:
            yield conn
        finally:
            with self._pool_lock:
                kept = (
                    not self._closed
                    and len(self._readers) < READER_POOL_SIZE
                    and conn in self._open
                )
                if kept:
                    self._readers.append(conn)
            if not kept:
                self._discard(conn)

    def _discard(self, conn: sqlite3.Connection) -> None:
        with self._pool_lock:
            if conn in self._open:
                self._open.remove(conn)
        conn.close()

    @contextmanager
    def read(self) -> Iterator[StoreReader]:
        with self._reader_connection() as conn, self._transaction(conn, immediate=False):
            yield SQLiteReader(conn, SQLITE)

    @contextmanager
    def write(self) -> Iterator[StoreWriter]:
        try:
            with self._holding_writer() as conn, self._transaction(conn, immediate=True):
                yield SQLWriter(conn, SQLITE)
        except StoreBusy as busy:
            self.write_failure = busy.message
            raise
        self.write_failure = None

    def close(self) -> None:
        """Close every connection no thread is using; a write in flight in another thread
        (an agent's start, say) finishes first, and a reader in use is closed when it is
        given back: closing a connection under a running statement crashes the interpreter."""
        acquired = self._write_lock.acquire(timeout=2 * max(self.busy_timeout_ms / 1000, 1))
        try:
            with self._pool_lock:
                self._closed = True
                idle = {id(conn) for conn in self._readers}
                idle.add(id(self._writer))
                conns = [conn for conn in self._open if id(conn) in idle]
                self._open = [conn for conn in self._open if id(conn) not in idle]
                self._readers = []
            for conn in conns:
                conn.close()
        finally:
            if acquired:
                self._write_lock.release()

    def size(self) -> StoreSize:
        if self._memory:
            with self._reader_connection() as conn:
                pages = conn.execute("PRAGMA page_count").fetchone()
                page_size = conn.execute("PRAGMA page_size").fetchone()
            return StoreSize(int(pages[0]) * int(page_size[0]) if pages and page_size else 0, 0)
        wal = Path(self.path + "-wal")
        return StoreSize(Path(self.path).stat().st_size, wal.stat().st_size if wal.exists() else 0)

    def checkpoint(self) -> None:
        with self._holding_writer() as conn:
            try:
                # executescript steps the pragma to its end (execute frees one page a call)
                conn.executescript("PRAGMA incremental_vacuum;")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as exc:
                raise self._failure(exc) from exc

    def vacuum(self) -> None:
        with self._holding_writer() as conn:
            try:
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # VACUUM makes it take
                conn.execute("VACUUM")
            except sqlite3.OperationalError as exc:
                raise self._failure(exc) from exc
        self.checkpoint()


__all__ = ["SQLiteStore"]
