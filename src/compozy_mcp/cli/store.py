"""``compozy store vacuum``: give the space of deleted and expired content back to the disk
(stop expired sessions, delete expired artifacts, rebuild the database). In-process on the
store or against a daemon, like every command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from compozy_mcp.cli.options import operation_command, output_options
from compozy_mcp.cli.output import emit, is_document
from compozy_mcp.cli.reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops

if TYPE_CHECKING:
    from compozy_mcp.cli.context import Context


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = commands.add_parser("store", help="keep the store small")
    sub = store.add_subparsers(dest="store_command", metavar="SUBCOMMAND", required=True)
    output_options(operation_command(sub, ops.VACUUM_STORE))


def _mib(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MiB"


def run(args: argparse.Namespace, context: Context) -> int:
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
