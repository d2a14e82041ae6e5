"""``compozy store vacuum``: give the space of deleted and expired content back to the disk
(stop expired sessions, delete expired artifacts, rebuild the database). In-process on the
store or against a daemon, like every command.

``compozy store migrate --to postgresql://…``: copy the home's SQLite store (every table) into
an empty PostgreSQL database, then compare the counts; always in-process, on the home's file
(stop the daemon first: what it writes after the copy's snapshot is not copied)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from compozy_mcp.cli._options import operation_command, output_options
from compozy_mcp.cli._output import emit, is_document
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.errors import ConfigError
from compozy_mcp.hostapi import operations as ops

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = commands.add_parser(
        "store", help="keep the store small; move a SQLite home's store into PostgreSQL"
    )
    sub = store.add_subparsers(dest="store_command", metavar="SUBCOMMAND", required=True)
    output_options(operation_command(sub, ops.VACUUM_STORE))
    migrate = sub.add_parser(
        "migrate",
        help="copy the home's SQLite store into an empty PostgreSQL database (docs/deployment.md)",
    )
    migrate.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="the empty PostgreSQL database: postgresql://USER@HOST/DB",
    )
    output_options(migrate)


def _mib(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MiB"


def run(args: argparse.Namespace, context: Context) -> int:
    if args.store_command == "migrate":
        return _migrate(args, context)
    payload = context.call(lambda host: host.call(ops.VACUUM_STORE, {}))
    if is_document(args):
        emit(args, payload)
        return EXIT_OK
    report = payload["upkeep"]
    before = report["bytes_before"]["database"] + report["bytes_before"]["wal"]
    after = report["bytes_after"]["database"] + report["bytes_after"]["wal"]
    print(
        f"store: {_mib(before)} -> {_mib(after)}; stopped {report['sessions_stopped']} expired "
        f"session(s), deleted {report['artifacts_deleted']} expired artifact(s)"
    )
    return EXIT_OK


def _migrate(args: argparse.Namespace, context: Context) -> int:
    from compozy_mcp.store.open import check_spec
    from compozy_mcp.store.postgres import redact
    from compozy_mcp.store.transfer import migrate_to_postgres

    url = check_spec(args.to)
    if url is None:
        raise ConfigError("--to needs the PostgreSQL database's URL: postgresql://USER@HOST/DB")
    settings = context.settings()
    done = migrate_to_postgres(
        settings.db_path, url, busy_timeout_ms=settings.store_busy_timeout_ms
    )
    payload = {
        "migrated": {"from": str(settings.db_path), "to": redact(url)},
        "tables": done.tables,
    }
    if is_document(args):
        emit(args, payload)
        return EXIT_OK
    for table, rows in done.tables.items():
        print(f"  {table}: {rows} row(s)")
    print(
        f"store: copied {done.rows} row(s) of {len(done.tables)} tables from "
        f"{settings.db_path} to {redact(url)}; the counts match. Serve from it with "
        f"COMPOZY_STORE or compozy serve --store"
    )
    return EXIT_OK
