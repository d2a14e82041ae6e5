"""Issue 15, item 1 and "How it is shown": ``run-agent`` nodes and the three-node Loop
(session_status full -> run-agent -> gate), on the shipped ``echo`` agent run in this process
(:mod:`tests.runtime.inprocess`, the default test app's launcher). Echo answers a prompt with
``echo: <prompt>``, and a prompt with "crash" in it by dying mid-turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.conftest import Caller
from tests.loops.support import SPEC_EXAMPLE, gate, graph, status_node, tool

from compozy_mcp.assembly import App

pytestmark = pytest.mark.anyio

AGENT = "echo"


@pytest.fixture(autouse=True)
async def _agents_stop(app: App) -> AsyncIterator[None]:
    """The agents a test started end with it (their connections closed, not left to the
    garbage collector of a later test)."""
    yield
    await app.shutdown()


def _node(run: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in run["nodes"] if node["node_id"] == node_id)


async def _run(app: App, text: str, **request: Any) -> dict[str, Any]:
    run: dict[str, Any] = (
        await tool(app, "run", {"definition": text, "wait": True, "result_view": "full", **request})
    )["run"]
    return run


def three_nodes() -> str:
    """The spec's example on the echo agent, with a gate after the agent's turn."""
    return (
        SPEC_EXAMPLE.replace("agent: general", f"agent: {AGENT}").replace(
            "  edges:\n", "    - " + gate("review").replace("\n", "\n      ") + "\n  edges:\n"
        )
        + "    - from: report\n      to: review\n"
    )


async def test_the_three_node_loop_runs_end_to_end(app: App, call: Caller) -> None:
    sid = (await call.create())["id"]
    run = await _run(app, three_nodes(), inputs={"session_id": sid})
    assert run["status"] == "waiting", run
    report = _node(run, "report")["output"]
    assert set(report) == {"session_id", "turn_id", "stop_reason", "final_message"}
    assert report["final_message"] == 'echo: Tools allowed: ["*"]'
    assert report["stop_reason"] == "end_turn"
    assert report["turn_id"]
    created = await call.full(report["session_id"])
    assert created["agent_name"] == "report"
    assert created["runtime"]["effective"]["provider"] == AGENT
    done = (
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True})
    )["run"]
    assert done["status"] == "succeeded"


async def test_run_agent_prompts_a_given_session(app: App, call: Caller) -> None:
    sid = (await call.create(provider=AGENT))["id"]
    text = graph(
        "id: ask\nclass: action\nkind: run-agent\nparams:\n"
        f'  agent: {AGENT}\n  session_id: "{{{{ .inputs.sid }}}}"\n  prompt: hello\n'
        "  timeout_seconds: 30"
    )
    run = await _run(app, text, inputs={"sid": sid})
    output = _node(run, "ask")["output"]
    assert output["session_id"] == sid
    assert output["final_message"] == "echo: hello"


async def test_a_turn_that_did_not_complete_fails_the_node(app: App) -> None:
    text = graph(
        f"id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: {AGENT}\n  prompt: crash now"
    )
    run = await _run(app, text)
    assert run["status"] == "failed"
    error = _node(run, "ask")["error"]
    assert error["reason"] == "turn_not_completed"
    assert "ended failed (agent_crashed), not completed" in error["message"]


async def test_run_agent_reads_a_compact_field_without_full(app: App, call: Caller) -> None:
    sid = (await call.create())["id"]
    text = graph(
        status_node(),
        "id: ask\nclass: action\nkind: run-agent\nparams:\n"
        f'  agent: {AGENT}\n  prompt: "state {{{{ .nodes.inspect.output.session.state }}}}"',
        edges=(("inspect", "ask"),),
    )
    run = await _run(app, text, inputs={"session_id": sid})
    assert _node(run, "ask")["output"]["final_message"] == "echo: state active"


# --- a gate answered by a reviewing agent ---------------------------------------------------------
# Echo repeats the prompt, whose criteria lines read "- <id>: <prompt>": a criterion prompt that
# starts with PASS or FAIL is an answer, any other leaves the criterion undecided.


def _reviewed_gate(*criteria: tuple[str, str]) -> str:
    items = "".join(f"\n    - id: {cid}\n      prompt: {text!r}" for cid, text in criteria)
    return graph(
        "id: review\nclass: control\nkind: gate\nparams:\n"
        f"  title: Ship it?\n  reviewer:\n    agent: {AGENT}\n  criteria:{items}"
    )


async def test_a_reviewing_agent_approves_a_gate(app: App) -> None:
    run = await _run(app, _reviewed_gate(("tests", "PASS when the tests are green")))
    assert run["status"] == "succeeded", run
    review = _node(run, "review")
    assert review["gate"]["decision"] == "approve"
    assert review["gate"]["answered_by"].startswith("agent:")
    assert review["output"]["answers"] == [
        {
            "criterion_id": "tests",
            "prompt": "PASS when the tests are green",
            "passed": True,
            "note": "when the tests are green",
        }
    ]


async def test_a_reviewing_agent_rejects_a_gate(app: App) -> None:
    run = await _run(app, _reviewed_gate(("a", "PASS fine"), ("b", "FAIL broken")))
    assert run["status"] == "failed"
    assert run["error"]["reason"] == "gate_rejected"
    assert _node(run, "review")["gate"]["decision"] == "reject"


async def test_an_undecided_review_leaves_the_gate_to_the_operator(app: App) -> None:
    run = await _run(app, _reviewed_gate(("a", "PASS fine"), ("b", "Is the changelog updated?")))
    assert run["status"] == "waiting"
    gate_state = _node(run, "review")["gate"]
    assert gate_state["review"]["note"] == "the reviewing agent did not decide every criterion"
    done = (
        await tool(app, "approve", {"run_id": run["run_id"], "decision": "approve", "wait": True})
    )["run"]
    assert done["status"] == "succeeded"
    assert _node(done, "review")["gate"]["answered_by"] == "operator"
