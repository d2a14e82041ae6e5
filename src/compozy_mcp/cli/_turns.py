"""``compozy session prompt | history | approve | cancel``: a session's agent at the terminal.

``session prompt ID TEXT`` queues the prompt, then follows the session's event stream until its
turn ends, printing the agent's message as it arrives (``-o json``: one JSON object per event,
one per line). A permission request is shown with its choices; on a terminal the command asks
for the answer, otherwise it names the ``session approve`` command that answers it. Exit status:
0 when the turn completed, 1 when it failed, 130 when it was cancelled.

Without a daemon the agent runs in this process for the length of the command; with
``compozy serve`` running (``--url``/``COMPOZY_URL``) the daemon runs it and the session keeps
its agent between commands.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compozy_mcp import jsonutil
from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import operation_command, output_options
from compozy_mcp.cli._output import emit, is_document
from compozy_mcp.cli._reporting import EXIT_FAILED, EXIT_OK
from compozy_mcp.errors import InvalidRequest
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.reasons import Reason

if TYPE_CHECKING:
    from compozy_mcp.hostapi import HostClient

#: ``session prompt --help``: the module's text after its title line
PROMPT_DESCRIPTION = (__doc__ or "").split("\n\n", 1)[-1]

EXIT_CANCELLED = 130
PAGE = 500


class _Printer:
    """Events as a person reads them."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.mid_line = False

    def _line(self, text: str) -> None:
        if self.mid_line:
            print()
            self.mid_line = False
        print(text, flush=True)

    def show(self, event: dict[str, Any]) -> None:
        kind, payload = event["kind"], event.get("payload", {})
        if kind == "agent_message_chunk":
            print(payload.get("content", {}).get("text", ""), end="", flush=True)
            self.mid_line = True
        elif kind == "agent_thought_chunk":
            self._line(f"  (thinking) {payload.get('content', {}).get('text', '')}")
        elif kind == "tool_call":
            self._line(
                f"  -> {payload.get('title', payload.get('tool_call_id'))} "
                f"[{payload.get('status', 'pending')}]"
            )
        elif kind == "tool_call_update" and payload.get("status"):
            self._line(f"  -> {payload.get('tool_call_id')} {payload['status']}")
        elif kind == "plan":
            self._line("  plan:")
            for entry in payload.get("entries", []):
                mark = "x" if entry.get("status") == "completed" else " "
                self._line(f"    [{mark}] {entry.get('content', '')}")
        elif kind == "permission_requested":
            choices = " | ".join(o["option_id"] for o in payload.get("options", []))
            self._line(f"? {payload.get('title')} ({choices})")
            self._line(
                f"  answer: compozy session approve {self.session_id} "
                f"{payload['interaction_id']} <choice>"
            )
        elif kind == "permission_answered":
            self._line(f"  answered: {payload.get('option_id') or payload.get('outcome')}")
        elif kind == "turn_ended" and self.mid_line:
            print(flush=True)
            self.mid_line = False


async def _latest_cursor(host: HostClient, session_id: str) -> int:
    cursor = 0
    while True:
        page = await host.call(
            ops.SESSION_EVENTS, {"cursor": cursor, "limit": PAGE, "session_id": session_id}
        )
        if not page["events"]:
            return cursor
        cursor = page["next_cursor"]


async def _ask(host: HostClient, session_id: str, event: dict[str, Any]) -> None:
    """On a terminal: ask which choice, and answer the agent with it."""
    import anyio

    payload = event["payload"]
    options = payload.get("options", [])
    for number, option in enumerate(options, 1):
        print(f"  [{number}] {option['name']} ({option['option_id']})", flush=True)
    answer = await anyio.to_thread.run_sync(input, "  choice: ")
    answer = answer.strip()
    chosen = next(
        (o["option_id"] for n, o in enumerate(options, 1) if answer in (str(n), o["option_id"])),
        answer,
    )
    fields = {"interaction_id": payload["interaction_id"], "decision": chosen}
    await host.call(ops.APPROVE_SESSION, {**fields, "session_id": session_id})


async def _follow(
    host: HostClient, args: argparse.Namespace, turn_id: str, cursor: int
) -> dict[str, Any]:
    printer = _Printer(args.session_id)
    lines = is_document(args)  # -o json (and yaml): one JSON object per update, a line each
    interactive = not lines and sys.stdin.isatty() and sys.stdout.isatty()
    async for event in host.follow_events(args.session_id, cursor):
        # only this turn: an agent that loads its session replays the old conversation first
        if event is None or event.get("turn_id") != turn_id:
            continue
        if lines:
            print(jsonutil.dumps(event).decode(), flush=True)
        else:
            printer.show(event)
            if interactive and event["kind"] == "permission_requested":
                await _ask(host, args.session_id, event)
        if event["kind"] == "turn_ended":
            return dict(event["payload"])
    raise InvalidRequest(  # pragma: no cover - a follower ends only with its turn
        "the event stream ended before the turn did", reason=Reason.REQUEST_INVALID
    )


def prompt(args: argparse.Namespace, context: Context) -> int:
    async def run(host: HostClient) -> int:
        cursor = await _latest_cursor(host, args.session_id)
        fields: dict[str, Any] = {"prompt": args.text}
        if args.no_wait:
            queued = await host.call(ops.PROMPT_SESSION, {**fields, "session_id": args.session_id})
            _print_turn(args, queued)
            return EXIT_OK
        queued = await host.call(ops.PROMPT_SESSION, {**fields, "session_id": args.session_id})
        turn_id = queued["turn"]["turn_id"]
        ended = await _follow(host, args, turn_id, cursor)
        status = ended.get("status")
        if not is_document(args):
            detail = f": {ended['detail']}" if status == "failed" and ended.get("detail") else ""
            print(
                f"turn {queued['turn']['turn']} {status} ({ended.get('stop_reason')}){detail}",
                file=sys.stderr,
            )
        if status == "completed":
            return EXIT_OK
        return EXIT_CANCELLED if status == "cancelled" else EXIT_FAILED

    return context.call(run)


def _print_turn(args: argparse.Namespace, payload: Mapping[str, Any]) -> None:
    turn = payload["turn"]
    emit(args, payload, lambda _: f"turn {turn['turn']} {turn['status']}  {turn['turn_id']}")


def history(args: argparse.Namespace, context: Context) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.cursor is not None:
        params["cursor"] = args.cursor
    page = context.call(
        lambda host: host.call(ops.SESSION_HISTORY, {**params, "session_id": args.session_id})
    )
    if is_document(args):
        # session commands keep their complete output (spec, CLI): the session API's page
        emit(args, page)
        return EXIT_OK
    if not page["turns"]:
        print("no turns")
    for turn in page["turns"]:
        stop = f" ({turn['stop_reason']})" if "stop_reason" in turn else ""
        print(f"#{turn['turn']} {turn['status']}{stop}  epoch {turn['epoch']}  {turn['turn_id']}")
        print(f"  you:   {turn['prompt']['text']}")
        text = turn["final_message"] if args.full else turn["summary"]["text"]
        if text:
            print(f"  agent: {text}")
        if args.full:
            for call in turn["tool_calls"]:
                print(
                    f"  tool:  {call.get('title', call.get('tool_call_id'))} {call.get('status')}"
                )
    if "next_cursor" in page:
        print(
            f"more: compozy session history {args.session_id} --cursor {page['next_cursor']} "
            f"--limit {args.limit}"
        )
    return EXIT_OK


#: how long ``session approve ID CHOICE`` waits for the session's request to appear
PENDING_WAIT_SECONDS = 10.0


async def _only_pending(host: HostClient, session_id: str) -> str:
    """The one pending interaction of a session, waiting a little for it to appear (a prompt
    just sent); more than one must be named."""
    import anyio

    with anyio.move_on_after(PENDING_WAIT_SECONDS):
        while True:
            session = (await host.call(ops.SESSION_STATUS, {"session_id": session_id}))["session"]
            pending = session["pending_interactions"]
            if len(pending) > 1:
                ids = ", ".join(item["interaction_id"] for item in pending)
                raise InvalidRequest(
                    f'session "{session_id}" has {len(pending)} pending interactions '
                    f"({ids}): name the one to answer",
                    reason=Reason.INTERACTION_NOT_FOUND,
                )
            if pending:
                return str(pending[0]["interaction_id"])
            await anyio.sleep(0.1)
    raise InvalidRequest(
        f'session "{session_id}" has no pending interaction (waited {PENDING_WAIT_SECONDS:g} s)',
        reason=Reason.INTERACTION_NOT_FOUND,
    )


def approve(args: argparse.Namespace, context: Context) -> int:
    *named, decision = args.answer
    if len(named) > 1:
        raise InvalidRequest(
            "session approve takes the interaction id (optional) and one choice; "
            f"got {len(args.answer)} words",
            reason=Reason.REQUEST_INVALID,
        )

    async def run(host: HostClient) -> dict[str, Any]:
        interaction = named[0] if named else await _only_pending(host, args.session_id)
        fields = {"interaction_id": interaction, "decision": decision}
        return await host.call(ops.APPROVE_SESSION, {**fields, "session_id": args.session_id})

    answer = context.call(run)
    if is_document(args):
        emit(args, answer)
    else:
        title = f" ({answer['title']})" if "title" in answer else ""
        print(f"answered {answer['interaction_id']}{title}: {answer['decision']}")
        if "next" in answer:  # an approval prompt: what the retried call will do
            print(f"  next: {answer['next']}")
        if "grant" in answer:
            print(f"  remembered as {answer['grant']['id']}")
    return EXIT_OK


def cancel(args: argparse.Namespace, context: Context) -> int:
    done = context.call(lambda host: host.call(ops.CANCEL_TURN, {"session_id": args.session_id}))
    if is_document(args):
        emit(args, done)
    else:
        running = done.get("running_turn_id") or "no running turn"
        print(f"cancelled: {running}; {done['queued_cancelled']} queued")
    return EXIT_OK


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = operation_command(sub, ops.PROMPT_SESSION, description=PROMPT_DESCRIPTION)
    cmd.add_argument("text", metavar="TEXT", help="the prompt")
    cmd.add_argument("--no-wait", action="store_true", help="queue the prompt and return at once")
    output_options(cmd)

    cmd = operation_command(sub, ops.SESSION_HISTORY)
    cmd.add_argument(
        "--full",
        action="store_true",
        help="whole messages and tool calls (-o json and yaml always print complete turns)",
    )
    cmd.add_argument("--limit", type=int, default=20, metavar="N", help="turns (default 20)")
    cmd.add_argument("--cursor", type=int, metavar="N", help="next_cursor of a previous page")
    output_options(cmd)

    cmd = operation_command(sub, ops.APPROVE_SESSION)
    cmd.add_argument(
        "answer",
        nargs="+",
        metavar="[INTERACTION] CHOICE",
        help="the pending interaction's id (default: the session's only one, waited for up to "
        "10 s), then an approval's allow-once, allow-always, reject-once or reject-always, or "
        "one of the choices the agent offered",
    )
    output_options(cmd)

    cmd = operation_command(sub, ops.CANCEL_TURN)
    output_options(cmd)


COMMANDS = {"prompt": prompt, "history": history, "approve": approve, "cancel": cancel}
