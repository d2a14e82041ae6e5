"""The Loop tools, ``compozy__loop_*``: lint, store and run Loops, read and answer their runs.

Who may act: a Loop belongs to who stored its first version (the operator, or a session and
with it its ancestors; see :mod:`compozy_mcp.loops._ownership`). ``validate`` is open to every
caller its policy allows; ``create`` (of a new version), ``list``, ``inspect`` and ``run`` act
only on Loops the caller or one of its descendants owns (the operator: every Loop): another
tree's Loop is refused with ``tool_denied`` / ``loop_not_in_scope`` and left out of ``list``. A
run's nodes act with the narrower rights of the caller that started it and the author of the
version it runs (the operator running a version a session wrote gets that session's policy).
``status``, ``runs``, ``cancel`` and ``approve`` act on a run only for the operator, the session
that started it, or an ancestor of that session: a child never reads or answers its parent's or
a sibling's runs.
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.cursors import cursor_schema
from compozy_mcp.native.context import ToolCall
from compozy_mcp.native.loop_schema import (
    LINT_ITEM,
    LOOP_RECORD,
    LOOP_VIEWS,
    LOOPS_VIEWS,
    RUN_RECORD,
    RUN_STATUSES,
    RUN_VIEWS,
    RUNS_VIEWS,
)
from compozy_mcp.native.registry import Handler, Risk, ToolDefinition
from compozy_mcp.schemas import (
    BOOLEAN,
    OPEN_OBJECT,
    STRING,
    array,
    described,
    enum,
    obj,
    tool_input,
)

LOOPS = ("compozy__loops",)
LOOP_ID = {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,63}$"}
RUN_ID = described(STRING, "Run id (compozy__loop_run returns it).")
VERSION = described({"type": "integer", "minimum": 1}, "Default: the latest version.")
DEFINITION = described(
    {"type": ["string", "object"]},
    "The Loop document: YAML or JSON text (lint items then carry line and column), or an "
    "object: {graph: {nodes: [{id, class, kind, params, produces?}], edges: [{from, to}]}}.",
)
WAIT = {
    "wait": described(BOOLEAN, "Wait until the run ends or waits at a gate."),
    "timeout_seconds": described(
        {"type": "integer", "minimum": 1, "maximum": 3600},
        "How long wait waits (default 600); the run goes on after it.",
    ),
}
LOOP_RESULT = obj({"loop": LOOP_RECORD})
RUN_RESULT = obj({"run": RUN_RECORD})


def _loop_preview(result: dict[str, Any]) -> str:
    loop = result["loop"]
    return f"{loop['id']} v{loop['version']} ({len(loop['nodes'])} nodes)"


def _run_preview(result: dict[str, Any]) -> str:
    run = result["run"]
    text = f"{run['run_id']} {run['status']}"
    waiting = [n["node_id"] for n in run["nodes"] if n["status"] == "waiting"]
    if waiting:
        text += f" at gate {', '.join(waiting)}"
    if run.get("error"):
        text += f": {run['error']['message']}"
    return text


def _validate_preview(result: dict[str, Any]) -> str:
    errors = sum(1 for item in result["items"] if item["severity"] == "error")
    warnings = len(result["items"]) - errors
    return f"{'valid' if result['valid'] else 'invalid'}: {errors} error(s), {warnings} warning(s)"


async def _validate(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.validate(call.info, args["definition"])


async def _create(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.create(call.info, args["definition"], args.get("loop_id"))


async def _inspect(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.info(call.info, args["loop_id"], args.get("version"))


async def _list(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.list_loops(call.info)


async def _run(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.run(call.info, args)


async def _status(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.status(call.info, args["run_id"])


async def _runs(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.runs(call.info, args)


async def _cancel(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.cancel(call.info, args["run_id"])


async def _approve(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    return await call.services.loops.approve(call.info, args)


def _tool(
    verb: str,
    description: str,
    handler: Handler,
    input_schema: dict[str, Any],
    risk: Risk,
    **extra: Any,
) -> ToolDefinition:
    return ToolDefinition(
        id=f"compozy__loop_{verb}",
        description=description,
        input_schema=input_schema,
        handler=handler,
        risk=risk,
        toolsets=LOOPS,
        **extra,
    )


def loop_tools() -> list[ToolDefinition]:
    run_tool = {"output_schema": RUN_RESULT, "views": RUN_VIEWS, "preview": _run_preview}
    return [
        _tool(
            "validate",
            "Lint a Loop definition against the tools' contracts and the view each tool node "
            "selects: every reference, produces and param; stores and runs nothing.",
            _validate,
            tool_input({"definition": DEFINITION}),
            Risk.READ,
            output_schema=obj({"valid": BOOLEAN, "items": array(LINT_ITEM)}),
            preview=_validate_preview,
            idempotent=True,
        ),
        _tool(
            "create",
            "Lint and store a Loop definition; with the loop_id of a stored Loop, store its "
            "next version (runs name the version they run). A definition with lint errors is "
            "refused (loop_invalid, with every item).",
            _create,
            tool_input(
                {"definition": DEFINITION},
                {"loop_id": described(LOOP_ID, "Store as this id (a new version if it exists).")},
            ),
            Risk.MUTATING,
            output_schema=LOOP_RESULT,
            views=LOOP_VIEWS,
            preview=_loop_preview,
        ),
        _tool(
            "inspect",
            "Read one stored Loop version: nodes, edges, the view each tool node selects, and "
            "its definition.",
            _inspect,
            tool_input({"loop_id": described(LOOP_ID, "The loop.")}, {"version": VERSION}),
            Risk.READ,
            output_schema=LOOP_RESULT,
            views=LOOP_VIEWS,
            preview=_loop_preview,
            idempotent=True,
        ),
        _tool(
            "list",
            "List stored Loops (the latest version of each).",
            _list,
            tool_input(),
            Risk.READ,
            output_schema=obj({"loops": array(LOOP_RECORD)}),
            views=LOOPS_VIEWS,
            preview=lambda r: f"{len(r['loops'])} loop(s)",
            idempotent=True,
        ),
        _tool(
            "run",
            "Start a run of a stored Loop (loop_id, version) or of a definition given here "
            "(stored first). Lint runs before the start; the run pins, per tool node, the "
            "contract of the view it selects. Tool and agent nodes act as the caller.",
            _run,
            tool_input(
                optional={
                    "loop_id": described(LOOP_ID, "A stored loop to run (its latest version)."),
                    "version": VERSION,
                    "definition": DEFINITION,
                    "inputs": described(OPEN_OBJECT, "The Loop's inputs, by name."),
                    **WAIT,
                }
            ),
            Risk.MUTATING,
            **run_tool,
        ),
        _tool(
            "status",
            "Read one run: its status and each node's (gates with their criterion prompts); "
            "outputs and pinned contracts in the full view.",
            _status,
            tool_input({"run_id": RUN_ID}),
            Risk.READ,
            idempotent=True,
            **run_tool,
        ),
        _tool(
            "runs",
            "List runs, newest first.",
            _runs,
            tool_input(
                optional={
                    "loop_id": described(LOOP_ID, "Only this loop's runs."),
                    "status": described(enum(*RUN_STATUSES), "Only runs in this status."),
                    "limit": described(
                        {"type": "integer", "minimum": 1, "maximum": 200}, "Runs per page."
                    ),
                    "cursor": cursor_schema("l"),
                }
            ),
            Risk.READ,
            output_schema=obj({"runs": array(RUN_RECORD)}, {"next_cursor": STRING}),
            views=RUNS_VIEWS,
            preview=lambda r: f"{len(r['runs'])} run(s)",
            idempotent=True,
        ),
        _tool(
            "cancel",
            "Cancel a run that has not ended: the node running stops, the rest do not run.",
            _cancel,
            tool_input({"run_id": RUN_ID}),
            Risk.MUTATING,
            **run_tool,
        ),
        _tool(
            "approve",
            "Answer the gate a run waits at: approve (the run goes on) or reject (the run "
            "fails), with an answer per criterion if wanted.",
            _approve,
            tool_input(
                {
                    "run_id": RUN_ID,
                    "decision": described(
                        enum("approve", "reject"), "Approve the gate, or reject it (the run fails)."
                    ),
                },
                {
                    "node_id": described(STRING, "The gate; default: the one the run waits at."),
                    "answers": described(
                        array(
                            obj(
                                {
                                    "criterion_id": described(STRING, "The criterion's id."),
                                    "passed": described(BOOLEAN, "Whether it is met."),
                                },
                                {"note": described(STRING, "Why.")},
                            )
                        ),
                        "One answer per criterion of the gate.",
                    ),
                    "note": described(STRING, "Kept with the answer."),
                    **WAIT,
                },
            ),
            Risk.MUTATING,
            **run_tool,
        ),
    ]
