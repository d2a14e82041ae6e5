"""``compozy loop validate | create | list | inspect | run | status | runs | cancel | approve``:
the ``compozy__loop_*`` tools, in-process or against the daemon that ``--url`` / ``--socket`` /
``COMPOZY_URL`` names.

``validate``, ``create`` and ``run`` lint the definition first and print every item as
``<severity>: <code>`` and the message (then where it is), exiting 2 on an error, before anything
is stored or started. ``run`` and ``approve`` follow the run and print each node as it moves,
until the run ends or waits at a gate (``--detach`` returns at once). ``-o json`` prints the
tool's structured result.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import Command, operation_command, output_options
from compozy_mcp.cli._reporting import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from compozy_mcp.cli._tool import bad_input, read_json_object
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.reasons import Reason

TOOL = "compozy__loop_{}"
#: how often a followed run is read again, once it has run a while
POLL_SECONDS = 0.2
#: the first read again comes this soon, each next one twice as late up to POLL_SECONDS: a
#: short run (transforms, a tool call) ends in milliseconds, and waited a whole POLL_SECONDS
FIRST_POLL_SECONDS = 0.01
ENDED = ("succeeded", "failed", "cancelled", "interrupted")
RUN_STATUSES = ("queued", "running", "waiting", *ENDED)


def _invoke(host: Any, verb: str, tool_input: dict[str, Any]) -> Any:
    return host.call(ops.INVOKE, {"tool_id": TOOL.format(verb), "input": tool_input})


def _call(context: Context, verb: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return context.structured(TOOL.format(verb), tool_input)


def _read_definition(verb: str, path: str) -> str:
    """The document at ``path`` (``-``: stdin), as text: lint items then carry positions."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise bad_input(TOOL.format(verb), f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise bad_input(TOOL.format(verb), f"{path} is not UTF-8 text") from None


def item_lines(items: list[dict[str, Any]], where: str) -> list[str]:
    """Each item as ``error: <code>``, its message, and where it is."""
    lines: list[str] = []
    for item in items:
        lines.append(f"{item['severity']}: {item['code']}")
        lines.append(item["message"])
        if item.get("line") is not None:
            place = f"  --> {where}:{item['line']}:{item['column']}"
            if item.get("node_id"):
                place += f" (node {item['node_id']}{', ' + item['path'] if item['path'] else ''})"
            lines.append(place)
    return lines


def _lint(context: Context, args: argparse.Namespace, text: str) -> int | None:
    """Print the lint items of ``text``; an exit code when there is an error, else ``None``."""
    result = _call(context, "validate", {"definition": text})
    items = result["items"]
    if result["valid"]:
        if items:
            print("\n".join(item_lines(items, args.file)), file=sys.stderr)
        return None
    if args.output == "json":
        print(jsonutil.dumps_pretty(result))
    else:
        print("\n".join(item_lines(items, args.file)), file=sys.stderr)
    return EXIT_USAGE


def validate(args: argparse.Namespace, context: Context) -> int:
    text = _read_definition("validate", args.file)
    result = _call(context, "validate", {"definition": text})
    if args.output == "json":
        print(jsonutil.dumps_pretty(result))
    else:
        lines = item_lines(result["items"], args.file)
        errors = sum(1 for item in result["items"] if item["severity"] == "error")
        warnings = len(result["items"]) - errors
        verdict = "valid" if result["valid"] else "invalid"
        lines.append(f"{args.file}: {verdict} ({errors} error(s), {warnings} warning(s))")
        print("\n".join(lines))
    return EXIT_OK if result["valid"] else EXIT_USAGE


def _loop_lines(loop: dict[str, Any]) -> list[str]:
    lines = [
        f"loop {loop['id']} version {loop['version']}"
        + (f": {loop['name']}" if loop.get("name") else "")
    ]
    for node in loop["nodes"]:
        view = f" (result_view {node['result_view']})" if node.get("result_view") else ""
        lines.append(f"  {node['id']:<20} {node['class']:<8} {node['kind']}{view}")
    if loop.get("owner"):
        lines.append(f"owner: {loop['owner']}")
    for entry in loop.get("versions", []):
        lines.append(
            f"  version {entry['version']:<4} written by {entry['author']} at {entry['created_at']}"
        )
    return lines


def create(args: argparse.Namespace, context: Context) -> int:
    text = _read_definition("create", args.file)
    failed = _lint(context, args, text)
    if failed is not None:
        return failed
    tool_input: dict[str, Any] = {"definition": text}
    if args.id:
        tool_input["loop_id"] = args.id
    made = _call(context, "create", tool_input)
    return _show(args, made, _loop_lines(made["loop"]))


def list_loops(args: argparse.Namespace, context: Context) -> int:
    listed = _call(context, "list", {})
    lines = [
        f"{loop['id']:<24} v{loop['version']:<4} {len(loop['nodes'])} nodes"
        + (f"  {loop['name']}" if loop.get("name") else "")
        for loop in listed["loops"]
    ] or ["no loops"]
    return _show(args, listed, lines)


def inspect(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"loop_id": args.loop_id, "result_view": "full"}
    if args.version:
        tool_input["version"] = args.version
    found = _call(context, "inspect", tool_input)
    return _show(args, found, _loop_lines(found["loop"]))


def _show(args: argparse.Namespace, structured: dict[str, Any], lines: list[str]) -> int:
    if args.output == "json":
        print(jsonutil.dumps_pretty(structured))
    else:
        print("\n".join(lines))
    return EXIT_OK


# --- runs ---------------------------------------------------------------------------------------


def node_line(node: dict[str, Any]) -> str:
    line = f"  {node['node_id']:<20} {node['status']}"
    if node.get("error"):
        line += f": {node['error']['message']}"
    gate = node.get("gate")
    if gate and node["status"] == "waiting":
        for criterion in gate["criteria"]:
            line += f"\n      [{criterion['id']}] {criterion['prompt']}"
    return line


def run_lines(run: dict[str, Any]) -> list[str]:
    lines = [f"run {run['run_id']} of {run['loop_id']} v{run['loop_version']}: {run['status']}"]
    lines.extend(node_line(node) for node in run["nodes"])
    if run.get("error"):
        lines.append(f"error: {run['error']['code']} ({run['error']['reason']})")
        lines.append(run["error"]["message"])
    return lines


def _exit(run: dict[str, Any]) -> int:
    return (
        EXIT_OK if run["status"] in ("succeeded", "waiting", "running", "queued") else EXIT_FAILED
    )


def _follow(
    context: Context, args: argparse.Namespace, verb: str, tool_input: dict[str, Any]
) -> int:
    """Start (``verb``), then read the run again until it ends or waits, printing each node as
    its status changes: all in one host session, so an in-process run keeps going meanwhile."""
    json_output = args.output == "json"
    detach = args.detach
    if detach and context.target is None:
        # without a daemon the run lives in this process: leaving would stop it mid-way
        print(
            "compozy: note: no daemon (--url, COMPOZY_URL): following the run in this process "
            "until it ends or waits at a gate",
            file=sys.stderr,
        )
        detach = False

    async def follow(host: Any) -> dict[str, Any]:
        import asyncio

        run: dict[str, Any] = (await _invoke(host, verb, tool_input))["result"]["structured"]["run"]
        if not json_output:
            print(f"run {run['run_id']} of {run['loop_id']} v{run['loop_version']}", flush=True)
        seen: dict[str, str] = {}
        deadline = time.monotonic() + args.timeout
        pause = FIRST_POLL_SECONDS
        while True:
            if not json_output:
                for node in run["nodes"]:
                    if seen.get(node["node_id"]) != node["status"] and node["status"] != "pending":
                        seen[node["node_id"]] = node["status"]
                        print(node_line(node), flush=True)
            if detach or run["status"] in (*ENDED, "waiting") or time.monotonic() > deadline:
                return run
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_SECONDS)
            status = await _invoke(host, "status", {"run_id": run["run_id"]})
            run = status["result"]["structured"]["run"]

    run = context.call(follow)
    if json_output:
        print(jsonutil.dumps_pretty({"run": run}))
        return _exit(run)
    print(
        f"{run['status']}"
        + (f" at gate: compozy loop approve {run['run_id']}" if run["status"] == "waiting" else "")
    )
    if run.get("error"):
        print(f"error: {run['error']['code']} ({run['error']['reason']})", file=sys.stderr)
        print(run["error"]["message"], file=sys.stderr)
    return _exit(run)


def _inputs(args: argparse.Namespace) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    if args.inputs is not None:
        inputs.update(read_json_object(TOOL.format("run"), args.inputs))
    for text in args.input or []:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise bad_input(TOOL.format("run"), f"--input wants NAME=VALUE, got {text!r}")
        inputs[name] = value
    return inputs


def run_loop(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {"inputs": _inputs(args)}
    if args.file is not None:
        text = _read_definition("run", args.file)
        failed = _lint(context, args, text)
        if failed is not None:
            return failed
        tool_input["definition"] = text
        if args.loop:
            tool_input["loop_id"] = args.loop
    elif args.loop:
        tool_input["loop_id"] = args.loop
        if args.version:
            tool_input["version"] = args.version
    else:
        raise bad_input(TOOL.format("run"), "name a definition FILE or a stored loop with --loop")
    try:
        return _follow(context, args, "run", tool_input)
    except CompozyError as exc:
        # what lint finds only when the run starts now (an agent the catalog does not define)
        # or since the loop was stored: the items, as validate prints them
        items = exc.payload(redact=True).get("details", {}).get("items")
        if exc.reason != Reason.LOOP_INVALID or not isinstance(items, list):
            raise
        if args.output == "json":
            print(jsonutil.dumps_pretty({"valid": False, "items": items}))
        else:
            print("\n".join(item_lines(items, args.file or args.loop)), file=sys.stderr)
        return EXIT_USAGE


def status(args: argparse.Namespace, context: Context) -> int:
    found = _call(
        context,
        "status",
        {"run_id": args.run_id, "result_view": "full" if args.full else "compact"},
    )
    _show(args, found, run_lines(found["run"]))
    return _exit(found["run"])


def runs(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {}
    for name, value in (
        ("loop_id", args.loop),
        ("status", args.status),
        ("limit", args.limit),
        ("cursor", args.cursor),
    ):
        if value is not None:
            tool_input[name] = value
    found = _call(context, "runs", tool_input)
    lines = [
        f"{run['run_id']}  {run['loop_id']} v{run['loop_version']}  {run['status']:<11} "
        f"{run['created_at']}"
        for run in found["runs"]
    ] or ["no runs"]
    if "next_cursor" in found:
        lines.append(f"more: --cursor {found['next_cursor']}")
    return _show(args, found, lines)


def cancel(args: argparse.Namespace, context: Context) -> int:
    done = _call(context, "cancel", {"run_id": args.run_id})
    return _show(args, done, run_lines(done["run"]))


def approve(args: argparse.Namespace, context: Context) -> int:
    tool_input: dict[str, Any] = {
        "run_id": args.run_id,
        "decision": "reject" if args.reject else "approve",
    }
    if args.node:
        tool_input["node_id"] = args.node
    if args.note:
        tool_input["note"] = args.note
    answers = []
    for text in args.criterion or []:
        name, sep, verdict = text.partition("=")
        if not sep or verdict not in ("pass", "fail"):
            raise bad_input(TOOL.format("approve"), f"--criterion wants ID=pass|fail, got {text!r}")
        answers.append({"criterion_id": name, "passed": verdict == "pass"})
    if answers:
        tool_input["answers"] = answers
    return _follow(context, args, "approve", tool_input)


COMMANDS: dict[str, Command] = {
    "validate": validate,
    "create": create,
    "list": list_loops,
    "inspect": inspect,
    "run": run_loop,
    "status": status,
    "runs": runs,
    "cancel": cancel,
    "approve": approve,
}


def _follow_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--detach", action="store_true", help="return once started; do not follow the run"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="stop following after this long (the run goes on; default 3600)",
    )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    loop = commands.add_parser(
        "loop", help="Loops: lint, store and run graphs of tool calls and agent turns"
    )
    verbs = loop.add_subparsers(dest="loop_command", metavar="SUBCOMMAND", required=True)

    check = operation_command(verbs, ops.VALIDATE_LOOP)
    check.add_argument("file", metavar="FILE", help="the definition (YAML or JSON; - for stdin)")
    output_options(check)

    made = operation_command(verbs, ops.CREATE_LOOP)
    made.add_argument("file", metavar="FILE", help="the definition (YAML or JSON; - for stdin)")
    made.add_argument("--id", help="the loop's id (an existing one gets a new version)")
    output_options(made)

    listing = operation_command(verbs, ops.LIST_LOOPS)
    output_options(listing)

    shown = operation_command(verbs, ops.LOOP_INFO)
    shown.add_argument("--version", type=int, help="this version (default: the latest)")
    output_options(shown)

    started = operation_command(verbs, ops.START_LOOP_RUN, ids=False)
    started.add_argument("file", metavar="FILE", nargs="?", help="a definition to store and run")
    started.add_argument("--loop", metavar="ID", help="a stored loop (with FILE: its id)")
    started.add_argument("--version", type=int, help="the stored version (default: latest)")
    started.add_argument(
        "--input", action="append", metavar="NAME=VALUE", help="an input (a string)"
    )
    started.add_argument("--inputs", metavar="JSON", help="inputs as a JSON object (@FILE, -)")
    _follow_options(started)
    output_options(started)

    one = operation_command(verbs, ops.LOOP_RUN_STATUS)
    one.add_argument("--full", action="store_true", help="the full view (outputs, contracts)")
    output_options(one)

    log = operation_command(verbs, ops.LIST_LOOP_RUNS)
    log.add_argument("--loop", metavar="ID", help="only this loop's runs")
    log.add_argument("--status", choices=RUN_STATUSES, help="only runs in this status")
    log.add_argument("--limit", type=int, help="at most this many runs")
    log.add_argument("--cursor", help="the next_cursor of a previous page")
    output_options(log)

    stop = operation_command(verbs, ops.CANCEL_LOOP_RUN)
    output_options(stop)

    answer = operation_command(verbs, ops.APPROVE_LOOP_RUN)
    answer.add_argument("--node", metavar="ID", help="the gate (default: the waiting one)")
    answer.add_argument("--reject", action="store_true", help="reject: the run fails")
    answer.add_argument(
        "--criterion", action="append", metavar="ID=pass|fail", help="an answer per criterion"
    )
    answer.add_argument("--note", help="a note kept with the answer")
    _follow_options(answer)
    output_options(answer)


def run(args: argparse.Namespace, context: Context) -> int:
    return COMMANDS[args.loop_command](args, context)
