"""Issue 28, item 5: a migration race of three daemons starting at once on one empty
PostgreSQL database (postgres tier). All three come up and serve; the schema is migrated once
(one set of migration records, the one a single store makes)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from tests.cluster.support import one_store_daemons
from tests.pg import PostgresServer

pytestmark = pytest.mark.process


def _migrations(url: str) -> tuple[list[tuple[int, str]], int]:
    """The migration records of a database, and how many ``schema_migrations`` tables it has."""
    with psycopg.connect(url) as conn:
        records = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        applied = [(int(version), str(name)) for version, name in records.fetchall()]
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
        ).fetchone()
    assert tables is not None
    return applied, int(tables[0])


def test_three_daemons_starting_at_once_on_an_empty_database_migrate_it_once(
    tmp_path: Path, postgres_server: PostgresServer, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url) as conn:
        empty = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert empty == (0,)
    with one_store_daemons(tmp_path, 3, postgres_url, at_once=True) as daemons:
        identities = set()
        for daemon in daemons:
            with daemon.client() as http:
                health = http.get("/api/health")
            assert health.status_code == 200, health.text
            identities.add(health.json()["daemon"]["id"])
        assert len(identities) == 3
        # each serves writes on the one schema: a session made on one is read on the others
        with daemons[0].client() as http:
            made = http.post("/api/sessions", json={"agent_name": "g", "provider": "echo"})
        assert made.status_code == 201, made.text
        sid = made.json()["session"]["id"]
        for daemon in daemons[1:]:
            with daemon.client() as http:
                assert http.get(f"/api/sessions/{sid}").status_code == 200
        applied, tables = _migrations(postgres_url)
    reference = postgres_server.create_database("reference", migrated=True)
    try:
        assert (applied, tables) == _migrations(reference)
    finally:
        postgres_server.drop_database(reference)
    assert tables == 1
    assert applied
