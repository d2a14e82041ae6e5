"""``compozy approvals list | set | revoke | mint``: remembered approvals (the
``compozy__tool_approvals_*`` tools), permission modes, and one-shot tokens (``POST
/api/tools/{id}/approvals``), in-process or against a daemon.

``set TOOL_ID --allow|--reject`` remembers a grant (``--agent`` narrows it to one agent,
``--input``/``--input-digest`` to one input of that agent); ``set --session ID --mode MODE``
sets a session's permission mode. ``mint`` prints the token (``-o json``: the whole record);
send it once with ``compozy tool invoke --approval-token``. Answering a prompt is
``compozy session approve``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.cli._tool import read_json_object
from compozy_mcp.errors import InvalidRequest
from compozy_mcp.hostapi import operations as ops

TOOL = "compozy__tool_approvals_{}"
#: as in compozy_mcp.approvals._modes (this start-up path does not import it)
MODES = ("default", "accept_edits", "bypass", "plan")


def _call(context: Context, verb: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return context.structured(TOOL.format(verb), tool_input)


def _show(args: argparse.Namespace, value: Mapping[str, Any], lines: list[str]) -> int:
    print(jsonutil.dumps_pretty(value) if args.output == "json" else "\n".join(lines))
    return EXIT_OK


def _grant_line(grant: dict[str, Any]) -> str:
    who = grant.get("agent_name", "any agent")
    what = grant.get("input_digest", "any input")
    flag = "  (profile archived)" if grant.get("profile_archived") else ""
    return (
        f"{grant['id']}  {grant['decision']:<6}  {grant['tool_id']}  {grant['workspace_id']}  "
        f"{who}  {what}{flag}"
    )


def list_grants(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"result_view": "full" if args.full else "compact"}
    for name, value in (
        ("workspace_id", args.workspace),
        ("agent_name", args.agent),
        ("tool_id", args.tool),
    ):
        if value is not None:
            tool_input[name] = value
    listed = _call(context, "list", tool_input)
    lines = [_grant_line(grant) for grant in listed["grants"]] or ["no remembered approvals"]
    return _show(args, listed, lines)


def set_grant(args: argparse.Namespace, context: Context) -> int:
    if args.mode is not None:
        if args.session is None or args.tool_id is not None:
            raise InvalidRequest("--mode goes with --session ID and no TOOL_ID")
        done = _call(context, "set", {"session_id": args.session, "permission_mode": args.mode})
        mode = done["mode"]
        return _show(args, done, [f"{mode['session_id']}: {mode['permission_mode']}"])
    if args.tool_id is None or args.decision is None:
        raise InvalidRequest("name the TOOL_ID and --allow or --reject (or --session and --mode)")
    fields: dict[str, Any] = {"tool_id": args.tool_id, "decision": args.decision}
    for name, value in (
        ("workspace_id", args.workspace),
        ("agent_name", args.agent),
        ("input_digest", args.input_digest),
        ("profile_id", args.profile),
    ):
        if value is not None:
            fields[name] = value
    if args.input is not None:
        fields["input"] = read_json_object(TOOL.format("set"), args.input)
    done = _call(context, "set", fields)
    return _show(args, done, [_grant_line(done["grant"])])


def revoke(args: argparse.Namespace, context: Context) -> int:
    done = _call(context, "revoke", {"grant_id": args.grant_id})
    return _show(args, done, [f"{done['revoked']['id']} revoked"])


def mint(args: argparse.Namespace, context: Context) -> int:
    fields: dict[str, Any] = {"session_id": args.session}
    if args.input is not None:
        fields["input"] = read_json_object(args.tool_id, args.input)
    if args.input_digest is not None:
        fields["input_digest"] = args.input_digest
    if args.ttl is not None:
        fields["ttl_seconds"] = args.ttl
    minted = context.call(
        lambda host: host.call(ops.MINT_APPROVAL, {**fields, "tool_id": args.tool_id})
    )
    return _show(args, minted, [minted["approval"]["token"]])


COMMANDS: dict[str, Command] = {
    "list": list_grants,
    "set": set_grant,
    "revoke": revoke,
    "mint": mint,
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    approvals = commands.add_parser(
        "approvals", help="remembered approvals, permission modes and one-shot approval tokens"
    )
    verbs = approvals.add_subparsers(dest="approvals_command", metavar="SUBCOMMAND", required=True)

    listing = verbs.add_parser("list", help="remembered approvals (grants)")
    listing.add_argument("--workspace", metavar="ID", help="only this workspace's grants")
    listing.add_argument("--agent", metavar="NAME", help="only grants for this agent")
    listing.add_argument("--tool", metavar="TOOL_ID", help="only grants for this tool")
    listing.add_argument("--full", action="store_true", help="the full view")
    output_options(listing)

    setting = verbs.add_parser("set", help="remember an approval, or set a permission mode")
    setting.add_argument(
        "tool_id", metavar="TOOL_ID", nargs="?", help="the tool the grant is for (not with --mode)"
    )
    decision = setting.add_mutually_exclusive_group()
    decision.add_argument(
        "--allow", dest="decision", action="store_const", const="allow", help="allow such calls"
    )
    decision.add_argument(
        "--reject", dest="decision", action="store_const", const="reject", help="reject such calls"
    )
    setting.add_argument("--workspace", metavar="ID", help="default: the default workspace")
    setting.add_argument("--agent", metavar="NAME", help="only this agent's calls")
    which = setting.add_mutually_exclusive_group()
    which.add_argument("--input", metavar="JSON", help="only this input (@FILE, -)")
    which.add_argument("--input-digest", metavar="DIGEST", help="only the input of this digest")
    setting.add_argument("--profile", metavar="ID", help="the profile the grant is for")
    setting.add_argument("--session", metavar="ID", help="with --mode: the session")
    setting.add_argument("--mode", choices=MODES, help="set the session's permission mode")
    output_options(setting)

    revoking = verbs.add_parser("revoke", help="forget a remembered approval")
    revoking.add_argument("grant_id", metavar="GRANT_ID", help="the grant (approvals list)")
    output_options(revoking)

    minting = operation_command(verbs, ops.MINT_APPROVAL)
    minting.add_argument("--session", required=True, metavar="ID", help="the calling session")
    source = minting.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", metavar="JSON", help="the call's input (@FILE, -)")
    source.add_argument(
        "--input-digest", metavar="DIGEST", help="its digest, computed without result_view"
    )
    minting.add_argument("--ttl", type=int, metavar="SECONDS", help="default 120")
    output_options(minting)


def run(args: argparse.Namespace, context: Context) -> int:
    return COMMANDS[args.approvals_command](args, context)
