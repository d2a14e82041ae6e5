"""Which PostgreSQL driver for the store: psycopg 3 (sync, as the store uses it; and async) or
asyncpg, on the two statements the status path and every session write run most: reading one
session by id, and a session's compare-and-swap update (in its own transaction). One server
(tests/pg.py starts it, durable settings), one database, the same rows; the drivers take turns
set by set. Prints p50/p99 per statement and the calls/s of 8 concurrent callers.

    python -m benchmarks.pg_driver [--calls N] [--sets N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks.common import emit_json, machine, machine_line, percentile, table
from compozy_mcp import jsonutil
from compozy_mcp.store.postgres import PostgresStore
from compozy_mcp.store.sql import POSTGRES

SESSIONS = 200
CONCURRENT = 8
READ = "SELECT seq, id, version, doc FROM sessions WHERE id = $1"
UPDATE = (
    "UPDATE sessions SET updated_at = $1, version = version + 1, doc = $2 "
    "WHERE id = $3 AND version = $4 RETURNING version"
)
DOC = jsonutil.dumps_text({"id": "x", "runtime": {"status": "ready"}, "note": "n" * 900})


def _psycopg(sql: str) -> str:
    return sql.replace("$1", "%s").replace("$2", "%s").replace("$3", "%s").replace("$4", "%s")


def _seed(url: str) -> list[str]:
    """A workspace, a profile and :data:`SESSIONS` sessions of ~1 KB (a compact record's doc)."""
    from compozy_mcp.store.base import ProfileRow, SessionRow, WorkspaceRow

    ids = [f"sess-bench-{n:04d}" for n in range(SESSIONS)]
    with PostgresStore(url) as store, store.write() as writer:
        writer.insert_workspace(WorkspaceRow("ws", "ws", "/w", "2026"))
        writer.insert_profile(ProfileRow("prof", "p", None, None, "2026"))
        for sid in ids:
            writer.insert_session(
                SessionRow(
                    sid, "ws", "prof", None, sid, "general", "active", None, None, "2026",
                    "2026", DOC.encode(),
                )
            )  # fmt: skip
    assert POSTGRES.name == "postgresql"
    return ids


def _timed_sync(calls: int, work: Callable[[int], None]) -> list[float]:
    out = []
    for n in range(calls):
        start = time.perf_counter()
        work(n)
        out.append((time.perf_counter() - start) * 1e6)
    return out


async def _timed_async(calls: int, work: Callable[[int], Awaitable[None]]) -> list[float]:
    out = []
    for n in range(calls):
        start = time.perf_counter()
        await work(n)
        out.append((time.perf_counter() - start) * 1e6)
    return out


def psycopg_sync(url: str, ids: list[str], calls: int) -> dict[str, list[float]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        versions: dict[str, int] = {}
        for _ in range(6):  # past psycopg's prepare threshold, as a long-running daemon is
            conn.execute(_psycopg(READ), (ids[0],)).fetchone()

        def read(n: int) -> None:
            conn.execute(_psycopg(READ), (ids[n % SESSIONS],)).fetchone()

        def update(n: int) -> None:
            sid = ids[n % SESSIONS]
            if sid not in versions:
                got = conn.execute(_psycopg(READ), (sid,)).fetchone()
                assert got is not None
                versions[sid] = got[2]
            with conn.transaction():
                row = conn.execute(_psycopg(UPDATE), ("2026", DOC, sid, versions[sid])).fetchone()
            assert row is not None
            versions[sid] = row[0]

        return {"read": _timed_sync(calls, read), "cas_update": _timed_sync(calls, update)}


async def psycopg_async(url: str, ids: list[str], calls: int) -> dict[str, list[float]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        versions: dict[str, int] = {}

        async def read(n: int) -> None:
            await (await conn.execute(_psycopg(READ), (ids[n % SESSIONS],))).fetchone()

        async def update(n: int) -> None:
            sid = ids[n % SESSIONS]
            if sid not in versions:
                got = await (await conn.execute(_psycopg(READ), (sid,))).fetchone()
                assert got is not None
                versions[sid] = got[2]
            async with conn.transaction():
                cursor = await conn.execute(_psycopg(UPDATE), ("2026", DOC, sid, versions[sid]))
                row = await cursor.fetchone()
            assert row is not None
            versions[sid] = row[0]

        for _ in range(6):
            await read(0)
        return {
            "read": await _timed_async(calls, read),
            "cas_update": await _timed_async(calls, update),
        }


async def asyncpg_run(url: str, ids: list[str], calls: int) -> dict[str, list[float]]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        versions: dict[str, int] = {}

        async def read(n: int) -> None:
            await conn.fetchrow(READ, ids[n % SESSIONS])

        async def update(n: int) -> None:
            sid = ids[n % SESSIONS]
            if sid not in versions:
                versions[sid] = (await conn.fetchrow(READ, sid))["version"]
            async with conn.transaction():
                versions[sid] = await conn.fetchval(UPDATE, "2026", DOC, sid, versions[sid])

        for _ in range(6):
            await read(0)
        return {
            "read": await _timed_async(calls, read),
            "cas_update": await _timed_async(calls, update),
        }
    finally:
        await conn.close()


def throughput_sync(url: str, ids: list[str], calls: int) -> float:
    """Reads/s of :data:`CONCURRENT` threads sharing a psycopg pool (the store's shape)."""
    from psycopg_pool import ConnectionPool

    with ConnectionPool(url, min_size=CONCURRENT, max_size=CONCURRENT, open=True) as pool:
        pool.wait()

        def worker(k: int) -> None:
            for n in range(calls):
                with pool.connection() as conn:
                    conn.execute(_psycopg(READ), (ids[(n + k) % SESSIONS],)).fetchone()

        start = time.perf_counter()
        with ThreadPoolExecutor(CONCURRENT) as threads:
            list(threads.map(worker, range(CONCURRENT)))
        return CONCURRENT * calls / (time.perf_counter() - start)


async def throughput_asyncpg(url: str, ids: list[str], calls: int) -> float:
    import asyncpg

    pool = await asyncpg.create_pool(url, min_size=CONCURRENT, max_size=CONCURRENT)
    try:

        async def worker(k: int) -> None:
            for n in range(calls):
                async with pool.acquire() as conn:
                    await conn.fetchrow(READ, ids[(n + k) % SESSIONS])

        start = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(CONCURRENT)))
        return CONCURRENT * calls / (time.perf_counter() - start)
    finally:
        await pool.close()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from tests.pg import started

    samples: dict[str, dict[str, list[float]]] = {
        name: {"read": [], "cas_update": []} for name in ("psycopg", "psycopg_async", "asyncpg")
    }
    rates: dict[str, list[float]] = {"psycopg_pool_threads": [], "asyncpg_pool": []}
    with started(durable=True) as server:
        url = server.create_database("bench")
        ids = _seed(url)
        for _ in range(args.sets):
            for name, got in (
                ("psycopg", psycopg_sync(url, ids, args.calls)),
                ("psycopg_async", asyncio.run(psycopg_async(url, ids, args.calls))),
                ("asyncpg", asyncio.run(asyncpg_run(url, ids, args.calls))),
            ):
                for statement, values in got.items():
                    samples[name][statement] += values
            rates["psycopg_pool_threads"].append(throughput_sync(url, ids, args.calls // 4))
            rates["asyncpg_pool"].append(asyncio.run(throughput_asyncpg(url, ids, args.calls // 4)))
    rows = [
        {
            "driver": name,
            "statement": statement,
            "calls": len(values),
            "p50_us": round(percentile(values, 0.5), 1),
            "p99_us": round(percentile(values, 0.99), 1),
        }
        for name, statements in samples.items()
        for statement, values in statements.items()
    ]
    return {
        "machine": machine(),
        "rows": rows,
        "reads_per_s_8_concurrent": {k: round(max(v), 1) for k, v in rates.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per driver per set")
    parser.add_argument("--sets", type=int, default=3, help="sets, the drivers in turn")
    parser.add_argument("--quick", action="store_true", help="a tiny run (the tests')")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.sets = 40, 1
    result = measure(args)
    if args.json:
        emit_json(result)
        return
    print(machine_line(result["machine"]))
    print(
        table(
            ["driver", "statement", "calls", "p50 µs", "p99 µs"],
            [
                [r["driver"], r["statement"], r["calls"], r["p50_us"], r["p99_us"]]
                for r in result["rows"]
            ],
        )
    )
    for name, rate in result["reads_per_s_8_concurrent"].items():
        print(f"reads/s, {CONCURRENT} concurrent callers, {name}: {rate:,.0f}")


if __name__ == "__main__":
    main()
