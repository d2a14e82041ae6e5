"""Tasks (issue 27): queued work that sessions claim in runs, deliver for review, and that a
reviewer accepts or sends back; compact records keep identity, state, the current run and
what a follow-up takes, and review records keep delivery_id (spec)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.conftest import Caller
from tests.waiting import wait_until_async

from compozy_mcp.assembly import App
from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.errors import ResourceNotFound, ToolConflict, ToolDenied, ToolInvalidInput
from compozy_mcp.sessions._workspaces import DEFAULT_WORKSPACE_ID

pytestmark = pytest.mark.anyio

TASK_TOOLS = ["compozy__task_*"]


async def _task(call: Caller, title: str, **fields: Any) -> dict[str, Any]:
    created = await call.structured("compozy__task_create", {"title": title, **fields})
    task: dict[str, Any] = created["task"]
    return task


async def _session(call: Caller) -> str:
    session_id: str = (await call.create(provider="claude"))["id"]
    return session_id


async def _claim(
    call: Caller, session_id: str, scope: CallScope = OPERATOR, **extra: Any
) -> dict[str, Any]:
    return await call.structured(
        "compozy__task_run_claim_next", {"session_id": session_id, **extra}, scope=scope
    )


async def test_a_task_is_created_todo_and_compact_keeps_identity_state_and_follow_up(
    call: Caller,
) -> None:
    task = await _task(
        call,
        "Fix the parser",
        description="It drops the last line.",
        acceptance_criteria=["a test for the last line"],
        labels=["bug"],
        priority=5,
    )
    assert task == {
        "task_id": task["task_id"],
        "workspace_id": DEFAULT_WORKSPACE_ID,
        "title": "Fix the parser",
        "state": "todo",
        "priority": 5,
        "labels": ["bug"],
    }
    full = await call.structured(
        "compozy__task_status", {"task_id": task["task_id"], "result_view": "full"}
    )
    assert full["task"]["description"] == "It drops the last line."
    assert full["task"]["acceptance_criteria"] == ["a test for the last line"]
    assert full["task"]["runs"] == []
    assert full["task"]["reviews"] == []


async def test_claims_take_the_highest_priority_then_the_oldest_todo_task(call: Caller) -> None:
    low = await _task(call, "low", priority=1)
    high = await _task(call, "high", priority=9)
    later_low = await _task(call, "later low", priority=1)
    worker = await _session(call)
    order = [(await _claim(call, worker))["task"]["task_id"] for _ in range(3)]
    assert order == [high["task_id"], low["task_id"], later_low["task_id"]]
    assert await _claim(call, worker) == {"claimed": False, "session_id": worker}


async def test_twenty_sessions_claiming_ten_tasks_claim_each_task_once(call: Caller) -> None:
    tasks = {(await _task(call, f"task {n}"))["task_id"] for n in range(10)}
    workers = [await _session(call) for _ in range(20)]
    claimed: list[dict[str, Any]] = []

    async def claim(worker: str) -> None:
        claimed.append(await _claim(call, worker))

    async with anyio.create_task_group() as group:
        for worker in workers:
            group.start_soon(claim, worker)
    won = [result["task"]["task_id"] for result in claimed if result["claimed"]]
    assert sorted(won) == sorted(tasks)  # every task once, none twice
    assert sum(not result["claimed"] for result in claimed) == 10
    listed = await call.structured("compozy__task_list", {"workspace_id": DEFAULT_WORKSPACE_ID})
    assert {task["state"] for task in listed["tasks"]} == {"in_progress"}


async def test_a_run_completes_into_review_and_an_accepting_review_keeps_delivery_id(
    call: Caller,
) -> None:
    task = await _task(call, "ship it")
    worker, reviewer = await _session(call), await _session(call)
    claimed = await _claim(call, worker)
    run_id = claimed["task"]["current_run"]["run_id"]
    assert claimed["task"]["state"] == "in_progress"
    assert claimed["task"]["current_run"]["session_id"] == worker
    done = await call.structured(
        "compozy__task_run_complete",
        {"run_id": run_id, "summary": "shipped", "commit": "abc123"},
        scope=CallScope(worker),
    )
    delivery_id = done["task"]["current_run"]["delivery_id"]
    assert done["task"]["state"] == "in_review"
    assert delivery_id.startswith("dlv-")
    reviewed = await call.structured(
        "compozy__task_run_review_submit",
        {"task_id": task["task_id"], "decision": "accept"},
        scope=CallScope(reviewer),
    )
    assert reviewed["review"] == {
        "review_id": reviewed["review"]["review_id"],
        "task_id": task["task_id"],
        "run_id": run_id,
        "delivery_id": delivery_id,
        "decision": "accept",
    }
    assert reviewed["task"]["state"] == "done"
    status = await call.structured("compozy__task_status", {"task_id": task["task_id"]})
    assert [review["delivery_id"] for review in status["task"]["reviews"]] == [delivery_id]


async def test_requested_changes_go_back_to_the_same_session_in_a_new_run_with_the_notes(
    call: Caller, app: App
) -> None:
    prompts: list[tuple[str, str]] = []

    async def prompter(session_id: str, text: str) -> None:
        prompts.append((session_id, text))

    app.services.tasks.prompter = prompter
    task = await _task(call, "ship it")
    worker = await _session(call)
    run_id = (await _claim(call, worker))["task"]["current_run"]["run_id"]
    await call("compozy__task_run_complete", {"run_id": run_id, "summary": "first try"})
    with pytest.raises(ToolDenied):  # a session never reviews its own run
        await call(
            "compozy__task_run_review_submit",
            {"task_id": task["task_id"], "decision": "accept"},
            scope=CallScope(worker),
        )
    with pytest.raises(ToolInvalidInput):
        await call(
            "compozy__task_run_review_submit",
            {"task_id": task["task_id"], "decision": "request_changes"},
        )
    sent_back = await call.structured(
        "compozy__task_run_review_submit",
        {"task_id": task["task_id"], "decision": "request_changes", "comments": "add a test"},
    )
    again = sent_back["task"]
    assert again["state"] == "in_progress"
    assert again["review_notes"] == "add a test"
    assert again["current_run"]["session_id"] == worker
    assert again["current_run"]["run_id"] != run_id
    assert len(prompts) == 1
    assert prompts[0][0] == worker
    assert "add a test" in prompts[0][1]


async def test_fail_and_release_put_the_task_back_to_todo_with_the_run_recorded(
    call: Caller,
) -> None:
    task = await _task(call, "flaky")
    worker = await _session(call)
    first = (await _claim(call, worker))["task"]["current_run"]["run_id"]
    failed = await call.structured(
        "compozy__task_run_fail", {"run_id": first, "reason": "tests do not pass"}
    )
    assert failed["task"]["state"] == "todo"
    assert "current_run" not in failed["task"]
    second = (await _claim(call, worker))["task"]["current_run"]["run_id"]
    await call("compozy__task_run_release", {"run_id": second})
    with pytest.raises(ToolConflict):  # an ended run takes no more heartbeats
        await call("compozy__task_run_heartbeat", {"run_id": second})
    status = await call.structured(
        "compozy__task_status", {"task_id": task["task_id"], "result_view": "full"}
    )
    runs = status["task"]["runs"]
    assert [(run["state"], run.get("failure")) for run in runs] == [
        ("failed", "tests do not pass"),
        ("released", None),
    ]


async def test_an_expired_claim_returns_the_task_to_todo_and_heartbeats_extend_it(
    call: Caller, app: App, clock: FixedClock
) -> None:
    task = await _task(call, "slow")
    worker = await _session(call)
    run_id = (await _claim(call, worker, lease_seconds=60))["task"]["current_run"]["run_id"]
    clock.advance(50)
    await call("compozy__task_run_heartbeat", {"run_id": run_id, "lease_seconds": 60})
    clock.advance(50)
    assert app.services.tasks.expire_claims() == 0  # the heartbeat kept it
    clock.advance(11)
    app.upkeep.run()
    status = await call.structured(
        "compozy__task_status", {"task_id": task["task_id"], "result_view": "full"}
    )
    assert status["task"]["state"] == "todo"
    (run,) = status["task"]["runs"]
    assert run["state"] == "expired"
    assert run["failure"].startswith("claim expired at")
    with pytest.raises(ToolConflict):
        await call("compozy__task_run_complete", {"run_id": run_id, "summary": "too late"})


async def test_update_and_cancel(call: Caller) -> None:
    task = await _task(call, "old title")
    updated = await call.structured(
        "compozy__task_update", {"task_id": task["task_id"], "title": "new", "priority": 3}
    )
    assert (updated["task"]["title"], updated["task"]["priority"]) == ("new", 3)
    worker = await _session(call)
    run_id = (await _claim(call, worker))["task"]["current_run"]["run_id"]
    cancelled = await call.structured("compozy__task_cancel", {"task_id": task["task_id"]})
    assert cancelled["task"]["state"] == "cancelled"
    assert cancelled["task"]["current_run"]["state"] == "cancelled"
    with pytest.raises(ToolConflict):
        await call("compozy__task_update", {"task_id": task["task_id"], "title": "x"})
    with pytest.raises(ToolConflict):
        await call("compozy__task_run_heartbeat", {"run_id": run_id})


async def test_a_session_sees_and_creates_the_tasks_of_its_own_workspace_only(
    call: Caller, app: App, tmp_path: Any
) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = app.sessions.workspaces.add_workspace(other_dir, "other")
    worker = await _session(call)
    mine = await call.structured("compozy__task_create", {"title": "mine"}, scope=CallScope(worker))
    assert mine["task"]["workspace_id"] == DEFAULT_WORKSPACE_ID
    foreign = await _task(call, "theirs", workspace_id=other.id)
    listed = await call.structured("compozy__task_list", {}, scope=CallScope(worker))
    assert [task["title"] for task in listed["tasks"]] == ["mine"]
    with pytest.raises(ResourceNotFound):
        await call("compozy__task_status", {"task_id": foreign["task_id"]}, scope=CallScope(worker))
    with pytest.raises(ToolDenied):
        await call(
            "compozy__task_create",
            {"title": "x", "workspace_id": other.id},
            scope=CallScope(worker),
        )
    # naming another workspace's task: unknown to the session, a conflict to the operator
    named = {"session_id": worker, "task_id": foreign["task_id"]}
    with pytest.raises(ResourceNotFound):
        await call("compozy__task_run_claim_next", named, scope=CallScope(worker))
    with pytest.raises(ToolConflict) as caught:
        await call("compozy__task_run_claim_next", named)
    assert f'is in workspace "{other.id}"' in caught.value.message


@pytest.mark.parametrize("who", ["self", "grandchild", "parent", "sibling"])
@pytest.mark.parametrize(
    "tool",
    ["compozy__task_run_heartbeat", "compozy__task_run_release", "compozy__task_run_complete"],
)
async def test_a_restricted_child_acts_only_on_runs_of_itself_and_its_descendants(
    call: Caller, who: str, tool: str
) -> None:
    parent = await _session(call)
    spawn = {"agent_name": "worker", "ttl_seconds": 600, "tools": TASK_TOOLS}
    child = (
        await call.structured("compozy__session_spawn", {"parent_session_id": parent, **spawn})
    )["session_id"]
    grandchild = (
        await call.structured("compozy__session_spawn", {"parent_session_id": child, **spawn})
    )["session_id"]
    sibling = (
        await call.structured("compozy__session_spawn", {"parent_session_id": parent, **spawn})
    )["session_id"]
    worker = {"self": child, "grandchild": grandchild, "parent": parent, "sibling": sibling}[who]
    await _task(call, "work")
    run_id = (await _claim(call, worker))["task"]["current_run"]["run_id"]
    tool_input = {"run_id": run_id}
    if tool.endswith("complete"):
        tool_input["summary"] = "done"
    if who in ("parent", "sibling"):
        with pytest.raises(ToolDenied) as caught:
            await call(tool, tool_input, scope=CallScope(child))
        assert f'session "{child}" may act only on runs of itself' in caught.value.message
        with pytest.raises(ToolDenied):  # nor claim for them
            await _claim(call, worker, scope=CallScope(child))
    else:
        await call(tool, tool_input, scope=CallScope(child))


async def test_the_policy_says_who_may_claim_and_who_may_review(call: Caller) -> None:
    """Workers allowed to claim and deliver but not to review, a reviewer allowed to review but
    not to claim: each is refused, by its policy, what the policy leaves out."""
    parent = await _session(call)

    async def spawn(name: str, tools: list[str]) -> str:
        spawned = await call.structured(
            "compozy__session_spawn",
            {"parent_session_id": parent, "agent_name": name, "ttl_seconds": 600, "tools": tools},
        )
        return str(spawned["session_id"])

    run_tools = ["claim_next", "heartbeat", "complete", "fail", "release"]
    work_tools = ["compozy__task_status", *(f"compozy__task_run_{t}" for t in run_tools)]
    worker, other_worker = await spawn("worker", work_tools), await spawn("worker", work_tools)
    reviewer = await spawn("reviewer", ["compozy__task_status", "compozy__task_run_review_submit"])
    task = await _task(call, "reviewed by another")
    with pytest.raises(ToolDenied) as refused:
        await _claim(call, reviewer, scope=CallScope(reviewer))
    assert "is not allowed by the permission policy" in refused.value.message
    run_id = (await _claim(call, worker, scope=CallScope(worker)))["task"]["current_run"]["run_id"]
    await call(
        "compozy__task_run_complete", {"run_id": run_id, "summary": "done"}, scope=CallScope(worker)
    )
    review = {"task_id": task["task_id"], "decision": "accept"}
    with pytest.raises(ToolDenied) as refused:  # it did not work on the run: the policy refuses
        await call("compozy__task_run_review_submit", review, scope=CallScope(other_worker))
    assert "is not allowed by the permission policy" in refused.value.message
    reviewed = await call.structured(
        "compozy__task_run_review_submit", review, scope=CallScope(reviewer)
    )
    assert reviewed["task"]["state"] == "done"


async def test_a_named_task_is_claimed_when_todo_and_refused_saying_why_otherwise(
    call: Caller,
) -> None:
    first = await _task(call, "first", priority=9)
    named = await _task(call, "named", priority=1)
    worker = await _session(call)
    claimed = await _claim(call, worker, task_id=named["task_id"])
    assert claimed["task"]["task_id"] == named["task_id"]  # not the higher-priority one
    assert claimed["task"]["current_run"]["session_id"] == worker
    with pytest.raises(ToolConflict) as caught:
        await _claim(call, worker, task_id=named["task_id"])
    assert f'task "{named["task_id"]}" is in_progress' in caught.value.message
    with pytest.raises(ResourceNotFound):
        await _claim(call, worker, task_id="task-nope")
    assert (await _claim(call, worker))["task"]["task_id"] == first["task_id"]


async def test_a_review_round_trip_with_the_echo_agent(call: Caller) -> None:
    """The worker is the echo agent: requested changes reach it as its next prompt and it
    answers; delivered again and accepted, the task's reviews keep both deliveries."""
    task = await _task(call, "ship it")
    worker = await _session(call)
    run_id = (await _claim(call, worker))["task"]["current_run"]["run_id"]
    first = await call.structured(
        "compozy__task_run_complete", {"run_id": run_id, "summary": "first try"}
    )
    sent_back = await call.structured(
        "compozy__task_run_review_submit",
        {"task_id": task["task_id"], "decision": "request_changes", "comments": "add a test"},
    )
    again = sent_back["task"]["current_run"]["run_id"]

    async def answered() -> list[dict[str, Any]] | None:
        history = await call.structured(
            "compozy__session_history", {"session_id": worker, "result_view": "full"}
        )
        turns: list[dict[str, Any]] = history["turns"]
        return turns if turns and turns[-1]["status"] == "completed" else None

    turns: list[dict[str, Any]] = await wait_until_async(
        answered, "the worker answered the requested changes"
    )
    (turn,) = turns
    assert "add a test" in turn["prompt"]["text"]
    assert turn["final_message"].startswith("echo: ")
    assert "add a test" in turn["final_message"]
    second = await call.structured(
        "compozy__task_run_complete", {"run_id": again, "summary": "with a test"}
    )
    accepted = await call.structured(
        "compozy__task_run_review_submit", {"task_id": task["task_id"], "decision": "accept"}
    )
    assert accepted["task"]["state"] == "done"
    status = await call.structured("compozy__task_status", {"task_id": task["task_id"]})
    assert [review["delivery_id"] for review in status["task"]["reviews"]] == [
        first["task"]["current_run"]["delivery_id"],
        second["task"]["current_run"]["delivery_id"],
    ]
