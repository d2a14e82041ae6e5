"""``compozy heartbeat set | show | wake SESSION``: a session woken with a prompt on a schedule
(the ``compozy__agent_heartbeat_*`` tools' complete records, in-process or against a daemon),
as the operator."""

from __future__ import annotations

import argparse
from typing import Any

from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import operation_command, output_options
from compozy_mcp.cli._output import Style, emit
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops


def _lines(beat: dict[str, Any]) -> list[str]:
    state = "enabled" if beat["enabled"] else "disabled"
    lines = [f"{beat['session_id']}  {state}  policy {beat['snapshot_id']}"]
    if beat.get("cron"):
        lines.append(f"  schedule:   cron {beat['cron']} (UTC)")
    elif "interval_seconds" in beat:
        lines.append(f"  schedule:   every {beat['interval_seconds']} s")
    if beat.get("quiet_hours"):
        lines.append(f"  quiet:      {beat['quiet_hours']} (UTC)")
    if beat.get("next_wake_at"):
        lines.append(f"  next wake:  {beat['next_wake_at']}")
    if beat.get("last_wake_at"):
        turn = f", turn {beat['last_turn_id']}" if beat.get("last_turn_id") else ""
        error = f": {beat['last_error']}" if beat.get("last_error") else ""
        lines.append(
            f"  last wake:  {beat['last_wake_at']} {beat.get('last_outcome', '')}{turn}{error}"
        )
    lines.append(f"  wakes:      {beat.get('wakes', 0)}")
    for wake in beat.get("recent_wakes", [])[1:]:  # the last one is shown above
        detail = wake.get("turn_id") or wake.get("error") or ""
        lines.append(f"    {wake['at']} {wake['outcome']} {detail}".rstrip())
    if beat.get("prompt"):
        lines.append(f"  prompt:     {beat['prompt']}")
    return lines


def run(args: argparse.Namespace, context: Context) -> int:
    fields: dict[str, Any] = {"session_id": args.session_id}
    if args.heartbeat_command == "set":
        given = {
            "interval_seconds": args.every,
            "cron": args.cron,
            "prompt": args.prompt,
            "quiet_hours": args.quiet,
            "enabled": False if args.disable else None,
        }
        fields.update({name: value for name, value in given.items() if value is not None})
    operation = ops.BY_CLI[f"heartbeat {args.heartbeat_command}"]
    payload = context.call(lambda host: host.call(operation, fields))

    def readable(_style: Style) -> str:
        return "\n".join(_lines(payload["heartbeat"]))

    emit(args, payload, readable, env=context.env)
    return EXIT_OK


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    heartbeat = commands.add_parser(
        "heartbeat", help="a session woken with a prompt on a schedule: set, show, wake"
    )
    sub = heartbeat.add_subparsers(dest="heartbeat_command", metavar="SUBCOMMAND", required=True)

    cmd = operation_command(sub, ops.HEARTBEAT_SET)
    schedule = cmd.add_mutually_exclusive_group()
    schedule.add_argument(
        "--every", type=int, metavar="SECONDS", help="seconds between wakes (default 3600)"
    )
    schedule.add_argument(
        "--cron", metavar="EXPR", help="a 5-field cron expression (UTC), such as '0 9 * * 1-5'"
    )
    cmd.add_argument(
        "--prompt", help="what the session is woken with (default: the workspace's HEARTBEAT.md)"
    )
    cmd.add_argument(
        "--quiet", metavar="HH:MM-HH:MM", help="quiet hours (UTC): no scheduled wakes; '' clears"
    )
    cmd.add_argument("--disable", action="store_true", help="pause the heartbeat")
    output_options(cmd)

    cmd = operation_command(sub, ops.HEARTBEAT_STATUS)
    output_options(cmd)

    cmd = operation_command(sub, ops.HEARTBEAT_WAKE)
    output_options(cmd)
