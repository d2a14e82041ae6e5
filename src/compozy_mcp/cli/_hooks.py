"""``compozy hooks list | info | create | update | enable | disable | delete | runs | events |
test``: the ``compozy__hooks_*`` tools, in-process or against the daemon that ``--url`` /
``--socket`` / ``COMPOZY_URL`` names (a daemon runs the hooks, so ``hooks test`` runs there too).

``-o json`` prints the tool's structured result; ``list`` and ``runs`` print the compact view
unless ``--full``. Text output is for people: ``list`` shows each hook's last outcome and how
many of its runs failed, so that a guard that fails open does not go unnoticed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compozy_mcp.cli import _hooks_text as hooks_text
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, output_options
from compozy_mcp.cli._output import emit
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.cli._tool import bad_input, read_json, read_json_object
from compozy_mcp.errors import InvalidRequest

TOOL = "compozy__hooks_{}"
#: the events (as in compozy_mcp.native.hook_schema, which this start-up path does not import)
EVENTS = ("tool.pre_call", "tool.post_call", "tool.post_error")


def _call(context: Context, verb: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return context.structured(TOOL.format(verb), tool_input)


def _show(args: argparse.Namespace, structured: dict[str, Any], lines: list[str]) -> int:
    emit(args, structured, lambda _style: "\n".join(lines))
    return EXIT_OK


def _definition(args: argparse.Namespace) -> dict[str, Any]:
    """The hook fields the options set (only those given)."""
    fields: dict[str, Any] = {}
    if args.event:
        fields["event"] = args.event
    if args.shell is not None:
        fields["command"] = args.shell
    if args.argv is not None:
        fields["command"] = read_json(TOOL.format(args.hooks_command), args.argv, "--argv")
    if args.webhook is not None:
        fields["url"] = args.webhook
    if args.header:
        fields["headers"] = dict(_header(args, text) for text in args.header)
    matcher = {
        name: value
        for name, value in (
            ("tool", args.tool),
            ("agent_name", args.agent),
            ("workspace", args.workspace),
            ("session_type", args.session_type),
        )
        if value is not None
    }
    if matcher:
        fields["matcher"] = matcher
    for name in ("timeout", "on_error", "description"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    if args.mode is not None:
        fields["mode"] = args.mode
    if args.enabled is not None:
        fields["enabled"] = args.enabled
    return fields


def _header(args: argparse.Namespace, text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        tool_id = TOOL.format(args.hooks_command)
        raise bad_input(tool_id, f"--header wants NAME: VALUE, got {text!r}")
    return name.strip(), value.strip()


def list_hooks(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"result_view": "full" if args.full else "compact"}
    if args.event:
        tool_input["event"] = args.event
    listed = _call(context, "list", tool_input)
    for problem in listed["problems"]:
        print(f"compozy: warning: {hooks_text.problem(problem)}", file=sys.stderr)
    return _show(args, listed, hooks_text.hook_table(listed["hooks"]))


def info(args: argparse.Namespace, context: Context) -> int:
    hook = _call(context, "info", {"hook_id": args.hook_id})
    return _show(args, hook, hooks_text.hook_lines(hook["hook"]))


def create(args: argparse.Namespace, context: Context) -> int:
    fields = _definition(args)
    if args.id:
        fields["id"] = args.id
    made = _call(context, "create", fields)
    return _show(args, made, hooks_text.hook_lines(made["hook"]))


def update(args: argparse.Namespace, context: Context) -> int:
    changed = _call(context, "update", {"hook_id": args.hook_id, **_definition(args)})
    return _show(args, changed, hooks_text.hook_lines(changed["hook"]))


def _switch(verb: str) -> Command:
    def switch(args: argparse.Namespace, context: Context) -> int:
        done = _call(context, verb, {"hook_id": args.hook_id})
        if "hook" in done:
            state = "enabled" if done["hook"]["enabled"] else "disabled"
            return _show(args, done, [f"{done['hook']['id']} {state}"])
        return _show(args, done, [f"{done['hook_id']} deleted"])

    return switch


def runs(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"result_view": "full" if args.full else "compact"}
    for name, value in (
        ("hook_id", args.hook),
        ("event", args.event),
        ("tool_call_id", args.call),
        ("session_id", args.session),
        ("limit", args.limit),
        ("cursor", args.cursor),
    ):
        if value is not None:
            tool_input[name] = value
    if args.failed:
        tool_input["failed"] = True
    found = _call(context, "runs", tool_input)
    lines = hooks_text.run_lines(found["runs"], full=args.full)
    if "next_cursor" in found:
        lines.append(f"more: --cursor {found['next_cursor']}")
    return _show(args, found, lines)


def events(args: argparse.Namespace, context: Context) -> int:
    catalog = _call(context, "events", {})
    return _show(args, catalog, hooks_text.event_lines(catalog))


def _sample_tool(context: Context, hook_id: str) -> str:
    """The tool a sample payload is built for when ``--tool`` is not given: the one the hook's
    matcher names, if it names exactly one."""
    hook = _call(context, "info", {"hook_id": hook_id})["hook"]
    glob = hook["matcher"].get("tool")
    if glob and not any(c in glob for c in "*?["):
        return str(glob)
    matched = f'the tools "{glob}"' if glob else "every tool"
    raise InvalidRequest(
        f'hook "{hook_id}" matches {matched}: name the tool of the sample with --tool, or send '
        "a payload with --payload"
    )


def test(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"hook_id": args.hook_id}
    if args.event:
        tool_input["event"] = args.event
    if args.payload is not None:
        tool_input["payload"] = read_json_object("compozy__hooks_test", f"@{args.payload}")
    if args.tool is not None:
        tool_input["tool_id"] = args.tool
    elif args.payload is None:
        tool_input["tool_id"] = _sample_tool(context, args.hook_id)
    if args.input is not None:
        tool_input["tool_input"] = read_json_object("compozy__hooks_test", args.input)
    if args.session is not None:
        tool_input["session_id"] = args.session
    result = _call(context, "test", tool_input)
    return _show(args, result, hooks_text.test_lines(result))


COMMANDS: dict[str, Command] = {
    "list": list_hooks,
    "info": info,
    "create": create,
    "update": update,
    "enable": _switch("enable"),
    "disable": _switch("disable"),
    "delete": _switch("delete"),
    "runs": runs,
    "events": events,
    "test": test,
}


def _definition_options(parser: argparse.ArgumentParser, *, creating: bool) -> None:
    parser.add_argument("--event", choices=EVENTS, required=creating, help="the event")
    kind = parser.add_mutually_exclusive_group(required=creating)
    # dest: "command" is the top-level subcommand's
    kind.add_argument(
        "--command", dest="shell", metavar="SHELL", help="a shell command (/bin/sh -c)"
    )
    kind.add_argument("--argv", metavar="JSON", help="an argv list, such as '[\"./guard\"]'")
    # dest: "url" is the global option naming a daemon
    kind.add_argument("--url", dest="webhook", help="a webhook URL (the payload is POSTed as JSON)")
    parser.add_argument(
        "--header", action="append", metavar="'NAME: VALUE'", help="a webhook header"
    )
    parser.add_argument("--tool", metavar="GLOB", help="match tool ids (fnmatch glob)")
    parser.add_argument("--agent", metavar="GLOB", help="match the caller's agent name")
    parser.add_argument("--workspace", metavar="GLOB", help="match the caller's workspace")
    parser.add_argument(
        "--session-type",
        choices=("user", "subagent", "automation"),
        help="match the caller's session type",
    )
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="default 10")
    parser.add_argument(
        "--mode", choices=("sync", "async"), help="sync (default) or async (observe only)"
    )
    switch = parser.add_mutually_exclusive_group()
    switch.add_argument(
        "--enabled", dest="enabled", action="store_true", default=None, help="the hook runs"
    )
    switch.add_argument(
        "--disabled", dest="enabled", action="store_false", help="the hook is kept, not run"
    )
    parser.add_argument(
        "--on-error",
        choices=("allow", "deny"),
        help="a failing sync pre_call hook lets the call run (allow, default) or refuses it",
    )
    parser.add_argument("--description", help="what the hook is for, for people")
    output_options(parser)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hooks = commands.add_parser(
        "hooks", help="tool hooks: define, list, switch, test, and read their run log"
    )
    verbs = hooks.add_subparsers(dest="hooks_command", metavar="SUBCOMMAND", required=True)

    listing = verbs.add_parser("list", help="hooks, their last outcome and failed runs")
    listing.add_argument("--event", choices=EVENTS, help="only hooks of this event")
    listing.add_argument("--full", action="store_true", help="the full view")
    output_options(listing)

    for verb, text in (
        ("info", "show one hook"),
        ("enable", "enable a stored hook"),
        ("disable", "disable a stored hook"),
        ("delete", "delete a stored hook"),
    ):
        one = verbs.add_parser(verb, help=text)
        one.add_argument("hook_id", metavar="ID", help="the hook's id (compozy hooks list)")
        output_options(one)

    made = verbs.add_parser("create", help="create a hook")
    made.add_argument("--id", help="the hook's id (default: generated)")
    _definition_options(made, creating=True)

    changed = verbs.add_parser("update", help="change a stored hook")
    changed.add_argument("hook_id", metavar="ID", help="the hook's id (compozy hooks list)")
    _definition_options(changed, creating=False)

    log = verbs.add_parser("runs", help="the run log, newest first")
    log.add_argument("--hook", metavar="ID", help="runs of this hook")
    log.add_argument("--event", choices=EVENTS, help="runs for this event")
    log.add_argument("--call", metavar="TOOL_CALL_ID", help="runs for this tool call")
    log.add_argument("--session", metavar="ID", help="runs of calls this session made")
    log.add_argument("--failed", action="store_true", help="failed runs only")
    log.add_argument("--limit", type=int, metavar="N", help="at most N runs")
    log.add_argument("--cursor", help="the next_cursor of a previous page")
    log.add_argument("--full", action="store_true", help="the full view (stderr, patches)")
    output_options(log)

    catalog = verbs.add_parser("events", help="the events, their payloads and patches")
    output_options(catalog)

    trial = verbs.add_parser(
        "test", help="run one hook once and show what it decides (calls no tool)"
    )
    trial.add_argument("hook_id", metavar="ID", help="the hook's id (compozy hooks list)")
    trial.add_argument("--event", choices=EVENTS, help="default: the hook's event")
    source = trial.add_mutually_exclusive_group()
    source.add_argument("--payload", metavar="FILE", help="send this payload (JSON) as it is")
    source.add_argument("--tool", metavar="TOOL_ID", help="build a sample payload for this tool")
    trial.add_argument("--input", metavar="JSON", help="the sample's tool_input (@FILE, -)")
    trial.add_argument("--session", metavar="ID", help="the sample's calling session")
    output_options(trial)


def run(args: argparse.Namespace, context: Context) -> int:
    return COMMANDS[args.hooks_command](args, context)
