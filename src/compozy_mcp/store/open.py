"""Which store a process opens: ``COMPOZY_STORE`` (or ``compozy serve --store``) names a
PostgreSQL database by its URL; without one, the SQLite file in the home. The one place every
process (the daemon, the CLI in-process, the proxies, the tests) makes its store."""

from __future__ import annotations

from pathlib import Path

from compozy_mcp.config import DATABASE_FILE, ENV_STORE
from compozy_mcp.errors import ConfigError
from compozy_mcp.store.base import Store

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(spec: str | None) -> bool:
    return bool(spec) and str(spec).strip().lower().startswith(_POSTGRES_SCHEMES)


def check_spec(spec: str | None) -> str | None:
    """The store a setting names, checked before anything opens it: ``None`` for SQLite in
    the home, else the PostgreSQL URL."""
    text = (spec or "").strip()
    if not text:
        return None
    if not is_postgres(text):
        raise ConfigError(
            f"{ENV_STORE} (or --store) must be a postgresql:// URL, such as "
            "postgresql://compozy@db.example/compozy; leave it unset for the SQLite store in "
            "the home"
        )
    return text


def open_store(spec: str | None, home: Path, *, busy_timeout_ms: int) -> Store:
    """Open (and migrate) the store ``spec`` names, or the SQLite file in ``home``. psycopg is
    imported only here, and only for a PostgreSQL URL: the CLI starts without it."""
    url = check_spec(spec)
    if url is not None:
        from compozy_mcp.store.postgres import PostgresStore

        return PostgresStore(url, busy_timeout_ms=busy_timeout_ms)
    from compozy_mcp.store._sqlite import SQLiteStore

    return SQLiteStore(home / DATABASE_FILE, busy_timeout_ms=busy_timeout_ms)
