"""``compozy tool invoke | info | list | search``: in-process, or against the daemon that
``--url`` / ``--socket`` / ``COMPOZY_URL`` names (see :mod:`compozy_mcp.cli.client`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compozy_mcp import jsonutil
from compozy_mcp.cli._artifacts import read_back
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._output import Column, Style, emit, is_document, table
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.errors import CompozyError, ToolInvalidInput, ToolNotFound
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.reasons import Reason

if TYPE_CHECKING:
    pass


def read_json_object(tool_id: str, text: str, option: str = "--input") -> dict[str, Any]:
    """A JSON object from an option: inline, ``@FILE``, or ``-`` for stdin. A bad one is the
    tool's input error (reason ``input_not_json``), so that in-process and remote calls fail
    alike."""
    value, source = _read_json(tool_id, text, option)
    if not isinstance(value, dict):
        raise bad_input(tool_id, f"{source} must be a JSON object, not {_json_kind(value)}")
    return value


def read_json(tool_id: str, text: str, option: str = "--input") -> Any:
    """Any JSON value from an option (inline, ``@FILE`` or ``-``)."""
    return _read_json(tool_id, text, option)[0]


def _read_json(tool_id: str, text: str, option: str) -> tuple[Any, str]:
    source = option
    if text == "-":
        text, source = sys.stdin.read(), "standard input"
    elif text.startswith("@"):
        path = text[1:]
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise bad_input(tool_id, f"cannot read {path}: {exc.strerror}") from None
        source = path
    try:
        return jsonutil.loads_request(text), source
    except ValueError as exc:
        raise bad_input(tool_id, f"{source} is not valid JSON: {exc}") from None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


def bad_input(tool_id: str, detail: str) -> ToolInvalidInput:
    return ToolInvalidInput(tool_id, f'tool "{tool_id}" {detail}', reason=Reason.INPUT_NOT_JSON)


def _call(
    context: Context,
    tool_id: str,
    tool_input: Any,
    *,
    session: str | None = None,
    approval_token: str | None = None,
) -> dict[str, Any]:
    """Invoke a tool; the envelope ``{"structured", "preview", ...}``."""
    payload = context.call(
        lambda host: host.call(
            ops.INVOKE,
            {"tool_id": tool_id, "input": tool_input, "approval_token": approval_token},
            session=session,
        )
    )
    envelope: dict[str, Any] = payload["result"]
    return envelope


def invoke(args: argparse.Namespace, context: Context) -> int:
    tool_input = read_json_object(args.tool_id, args.input)
    envelope = _call(
        context,
        args.tool_id,
        tool_input,
        session=args.session,
        approval_token=args.approval_token,
    )
    if envelope.get("truncated") and args.all:
        envelope = _whole(context, envelope, session=args.session)
    emit(
        args,
        {"result": envelope},
        lambda _style: envelope["preview"] + "\n" + jsonutil.dumps_pretty(envelope["structured"]),
    )
    if envelope.get("truncated"):
        print("hint: the result was truncated; add --all to read it whole", file=sys.stderr)
    return EXIT_OK


def _whole(context: Context, envelope: dict[str, Any], *, session: str | None) -> dict[str, Any]:
    """A truncated result read back whole from its artifact, page by page (what the preview
    tells an agent to do), as the envelope an untruncated call would have returned."""
    truncated = envelope["structured"]
    structured = read_back(context, truncated, session=session)
    uri = truncated["artifacts"][0]["uri"]
    whole = {k: v for k, v in envelope.items() if k not in ("truncated", "artifacts")}
    whole["structured"] = structured
    whole["preview"] = f"the whole result ({truncated['bytes']} bytes), read back from {uri}"
    return whole


def _fields(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", ()))
    lines = []
    for name, field in schema.get("properties", {}).items():
        kind = field.get("type", "any")
        kind = " | ".join(kind) if isinstance(kind, list) else kind
        if "enum" in field:
            kind = " | ".join(str(v) for v in field["enum"])
        note = "required" if name in required else "optional"
        text = f"    {name:<22} {kind:<18} {note}"
        if field.get("description"):
            text += f"  {field['description']}"
        lines.append(text)
    return lines


def _external_info(d: dict[str, Any]) -> list[str]:
    """A tool of an MCP server: its contracts as its server declared them."""
    lines = [
        d["id"],
        f"  {d['description']}",
        f"  MCP server: {d['server']}",
        "  input:",
        *_fields(d["input_schema"]),
        f"  input schema digest:  {d['input_schema_digest']}",
    ]
    if "output_schema_digest" in d:
        lines.append(f"  output schema digest: {d['output_schema_digest']}")
    return lines


def info(args: argparse.Namespace, context: Context) -> int:
    try:
        envelope = _call(context, "compozy__tool_info", {"tool_id": args.tool_id})
    except CompozyError as error:
        # one code and wording for an unknown tool on every command: `tool invoke`'s
        if error.reason == Reason.TOOL_NOT_FOUND:
            raise ToolNotFound(args.tool_id) from None
        raise
    if is_document(args):
        emit(args, envelope["structured"])
        return EXIT_OK
    d = envelope["structured"]["tool"]["descriptor"]
    if "server" in d:
        print("\n".join(_external_info(d)))
        return EXIT_OK
    views = "compact (default) | full" if d["has_result_views"] else "single result"
    lines = [
        d["id"],
        f"  {d['description']}",
        f"  risk: {d['risk']}    idempotent: {'yes' if d['idempotent'] else 'no'}    "
        f"toolsets: {', '.join(d['toolsets'])}",
        f"  result: {views}",
        "  input:",
        *_fields(d["input_schema"]),
        f"  input schema digest:  {d['input_schema_digest']}",
    ]
    if "output_views" in d:
        lines.append(f"  compact schema digest: {d['output_views']['compact']['digest']}")
        lines.append(f"  full schema digest:    {d['output_views']['full']['digest']}")
    else:
        lines.append(f"  output schema digest: {d['output_schema_digest']}")
    print("\n".join(lines))
    return EXIT_OK


def _views(tool: Mapping[str, Any]) -> str:
    # a tool of an MCP server has no risk class or views of ours
    if "has_result_views" not in tool:
        return "-"
    return "yes" if tool["has_result_views"] else "no"


def _table(tools: list[dict[str, Any]], style: Style, *, score: bool = False) -> str:
    if not tools:
        return "no tools"
    columns = [
        Column.key("TOOL", "id"),
        Column("RISK", lambda t: t.get("risk", "-")),
        Column("VIEWS", _views),
        *([Column("SCORE", lambda t: f"{t['score']:.2f}")] if score else []),
        Column.key("DESCRIPTION", "description", flex=True),
    ]
    return table(columns, tools, style)


def list_tools(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"limit": 500}
    if args.toolset:
        tool_input["toolset"] = args.toolset
    structured = _call(context, "compozy__tool_list", tool_input)["structured"]
    emit(args, structured, lambda style: _table(structured["tools"], style), env=context.env)
    return EXIT_OK


def search(args: argparse.Namespace, context: Context) -> int:
    found = _call(context, "compozy__tool_search", {"query": args.query, "limit": 50})
    structured = found["structured"]
    emit(
        args,
        structured,
        lambda style: _table(structured["tools"], style, score=True),
        env=context.env,
    )
    return EXIT_OK


COMMANDS: dict[str, Command] = {
    "invoke": invoke,
    "info": info,
    "list": list_tools,
    "search": search,
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tool = commands.add_parser("tool", help="list, inspect, search and invoke native tools")
    tool_commands = tool.add_subparsers(dest="tool_command", metavar="SUBCOMMAND", required=True)

    invoke_cmd = operation_command(tool_commands, ops.INVOKE)
    invoke_cmd.add_argument(
        "--input",
        default="{}",
        metavar="JSON",
        help="the tool input: a JSON object, @FILE to read it from a file, or - for stdin",
    )
    invoke_cmd.add_argument("--session", metavar="ID", help="call as this managed session")
    invoke_cmd.add_argument(
        "--approval-token",
        metavar="TOKEN",
        help="a one-shot approval token for this call (compozy approvals mint)",
    )
    invoke_cmd.add_argument(
        "--all",
        "--follow-artifacts",
        dest="all",
        action="store_true",
        help="when the result is truncated, read it back whole from its artifact",
    )
    output_options(invoke_cmd)

    info_cmd = operation_command(tool_commands, ops.TOOL_INFO)
    output_options(info_cmd)

    list_cmd = operation_command(tool_commands, ops.LIST_TOOLS)
    list_cmd.add_argument("--toolset", help="only tools of this toolset")
    output_options(list_cmd)

    search_cmd = operation_command(tool_commands, ops.SEARCH_TOOLS)
    search_cmd.add_argument("query", metavar="QUERY", help="what the tool should do, in words")
    output_options(search_cmd)


def run(args: argparse.Namespace, context: Context) -> int:
    return COMMANDS[args.tool_command](args, context)
