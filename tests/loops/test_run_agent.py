"""Issue 15, item 1 and "How it is shown": ``run-agent`` nodes and the three-node Loop
(session_status full -> run-agent -> gate).

Until the agent runtime (issue 12) is merged, ``compozy__session_prompt`` here is a test double
registered in this file's app only (never in src/): it answers a prompt with a completed turn
whose final message echoes the prompt, and a prompt with "crash" in it with a failed turn. Its
contract is the one issue 12 builds: ``{"turn": {session_id, turn_id, turn, status, stop_reason,
summary, final_message, usage}}``. After the merge, drop ``_prompt_double`` and the ``extra_tools``
and run these against the real ``echo`` agent (``AGENT = "echo"``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.loops.support import SPEC_EXAMPLE, gate, graph, status_node, tool

from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.native import Risk, ToolDefinition
from compozy_mcp.native.context import ToolCall
from compozy_mcp.schemas import BOOLEAN, OPEN_OBJECT, STRING, obj, tool_input
from compozy_mcp.store import SQLiteStore
from compozy_mcp.views import Fields, ViewSpec

pytestmark = pytest.mark.anyio

#: the provider the run-agent nodes name (a provider on main today; "echo" after issue 12)
AGENT = "claude"
PROMPTS: list[dict[str, Any]] = []

TURN = obj(
    {
        "session_id": STRING,
        "turn_id": STRING,
        "turn": {"type": "integer"},
        "status": STRING,
        "stop_reason": STRING,
        "summary": obj({"text": STRING, "truncated": BOOLEAN}),
        "final_message": STRING,
        "usage": OPEN_OBJECT,
    }
)


def _reviewer_answer(prompt: str) -> str:
    """What a reviewing agent answers: each criterion whose prompt says "(passes)" passes."""
    lines = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
    answers = []
    for line in lines:
        criterion_id, _, text = line.partition(": ")
        if "(undecided)" in text:
            continue
        verdict = "PASS" if "(passes)" in text else "FAIL"
        answers.append(f"{criterion_id}: {verdict} checked")
    return "\n".join(answers)


async def _prompt(call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
    PROMPTS.append(args)
    crashed = "crash" in args["prompt"]
    reviewing = "Criteria:" in args["prompt"]
    turn = len(PROMPTS)
    return {
        "turn": {
            "session_id": args["session_id"],
            "turn_id": f"turn-{turn}",
            "turn": turn,
            "status": "failed" if crashed else "completed",
            "stop_reason": "agent_crashed" if crashed else "end_turn",
            "summary": {"text": args["prompt"][:40], "truncated": False},
            "final_message": _reviewer_answer(args["prompt"])
            if reviewing
            else f"echo: {args['prompt']}",
            "usage": {},
        }
    }


def _prompt_double() -> ToolDefinition:
    return ToolDefinition(
        id="compozy__session_prompt",
        description="Test double of issue 12's session_prompt.",
        input_schema=tool_input(
            {"session_id": STRING, "prompt": STRING},
            {"wait": BOOLEAN, "timeout_seconds": {"type": "integer"}},
        ),
        output_schema=obj({"turn": TURN}),
        handler=_prompt,
        risk=Risk.MUTATING,
        toolsets=("compozy__sessions",),
        views=ViewSpec(
            Fields(
                {
                    "turn": Fields.of(
                        "session_id", "turn_id", "turn", "status", "stop_reason", "summary"
                    )
                }
            ),
            follow_up=("turn.session_id",),
        ),
        acts_on=("session_id",),
    )


@pytest.fixture
def app(settings: Settings, clock: FixedClock) -> Iterator[App]:
    PROMPTS.clear()
    with open_app(
        settings, store=SQLiteStore.memory(), clock=clock, extra_tools=[_prompt_double()]
    ) as opened:
        yield opened


def _node(run: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in run["nodes"] if node["node_id"] == node_id)


async def _run(app: App, text: str, **request: Any) -> dict[str, Any]:
    run: dict[str, Any] = (
        await tool(app, "run", {"definition": text, "wait": True, "result_view": "full", **request})
    )["run"]
    return run


async def test_the_three_node_loop_runs_end_to_end(app: App) -> None:
    """session_status (full) -> run-agent -> gate: the spec's example with a gate after it."""
    sid = (
        await app.dispatcher.call("compozy__session_create", {"agent_name": "general"})
    ).structured["session"]["id"]
    text = (
        SPEC_EXAMPLE.replace("agent: general", f"agent: {AGENT}").replace(
            "  edges:\n", "    - " + gate("review").replace("\n", "\n      ") + "\n  edges:\n"
        )
        + "    - from: report\n      to: review\n"
    )
    run = await _run(app, text, inputs={"session_id": sid})
    assert run["status"] == "waiting", run
    report = _node(run, "report")["output"]
    assert report["final_message"] == 'echo: Tools allowed: ["*"]'
    assert report["stop_reason"] == "end_turn"
    assert report["turn_id"] == "turn-1"
    assert set(report) == {"session_id", "turn_id", "stop_reason", "final_message"}
    [prompt] = PROMPTS
    assert prompt == {
        "session_id": report["session_id"],
        "prompt": 'Tools allowed: ["*"]',
        "wait": True,
        "timeout_seconds": 600,
    }
    created = (
        await app.dispatcher.call(
            "compozy__session_status", {"session_id": report["session_id"], "result_view": "full"}
        )
    ).structured["session"]
    assert created["agent_name"] == "report"
    assert created["runtime"]["selected"]["provider"] == AGENT
    done = (
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True})
    )["run"]
    assert done["status"] == "succeeded"


async def test_run_agent_prompts_a_given_session(app: App) -> None:
    sid = (
        await app.dispatcher.call("compozy__session_create", {"agent_name": "general"})
    ).structured["session"]["id"]
    text = graph(
        "id: ask\nclass: action\nkind: run-agent\nparams:\n"
        f'  agent: {AGENT}\n  session_id: "{{{{ .inputs.sid }}}}"\n  prompt: hello\n'
        "  timeout_seconds: 30"
    )
    run = await _run(app, text, inputs={"sid": sid})
    assert _node(run, "ask")["output"]["session_id"] == sid
    assert PROMPTS[0]["timeout_seconds"] == 30


async def test_a_turn_that_did_not_complete_fails_the_node(app: App) -> None:
    text = graph(
        f"id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: {AGENT}\n  prompt: crash now"
    )
    run = await _run(app, text)
    assert run["status"] == "failed"
    error = _node(run, "ask")["error"]
    assert error["reason"] == "turn_not_completed"
    assert "ended failed (agent_crashed), not completed" in error["message"]


async def test_run_agent_reads_a_compact_field_without_full(app: App) -> None:
    sid = (
        await app.dispatcher.call("compozy__session_create", {"agent_name": "general"})
    ).structured["session"]["id"]
    text = graph(
        status_node(),
        "id: ask\nclass: action\nkind: run-agent\nparams:\n"
        f'  agent: {AGENT}\n  prompt: "state {{{{ .nodes.inspect.output.session.state }}}}"',
        edges=(("inspect", "ask"),),
    )
    run = await _run(app, text, inputs={"session_id": sid})
    assert _node(run, "ask")["output"]["final_message"] == "echo: state active"


def _reviewed_gate(*criteria: tuple[str, str]) -> str:
    items = "".join(f"\n    - id: {cid}\n      prompt: {text!r}" for cid, text in criteria)
    return graph(
        "id: review\nclass: control\nkind: gate\nparams:\n"
        f"  title: Ship it?\n  reviewer:\n    agent: {AGENT}\n  criteria:{items}"
    )


async def test_a_reviewing_agent_approves_a_gate(app: App) -> None:
    run = await _run(app, _reviewed_gate(("tests", "Tests are green (passes)")))
    assert run["status"] == "succeeded", run
    review = _node(run, "review")
    assert review["gate"]["decision"] == "approve"
    assert review["gate"]["answered_by"].startswith("agent:")
    assert review["output"]["answers"] == [
        {
            "criterion_id": "tests",
            "prompt": "Tests are green (passes)",
            "passed": True,
            "note": "checked",
        }
    ]
    assert "- tests: Tests are green (passes)" in PROMPTS[0]["prompt"]
    assert "Gate: Ship it?" in PROMPTS[0]["prompt"]


async def test_a_reviewing_agent_rejects_a_gate(app: App) -> None:
    run = await _run(app, _reviewed_gate(("a", "fine (passes)"), ("b", "broken")))
    assert run["status"] == "failed"
    assert run["error"]["reason"] == "gate_rejected"
    assert _node(run, "review")["gate"]["decision"] == "reject"


async def test_an_undecided_review_leaves_the_gate_to_the_operator(app: App) -> None:
    run = await _run(app, _reviewed_gate(("a", "fine (passes)"), ("b", "(undecided)")))
    assert run["status"] == "waiting"
    gate = _node(run, "review")["gate"]
    assert gate["review"]["note"] == "the reviewing agent did not decide every criterion"
    done = (
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True})
    )["run"]
    assert done["status"] == "succeeded"
    assert _node(done, "review")["gate"]["answered_by"] == "operator"
