"""Sessions that run agents (issue 12), through the tools as every surface calls them, with the
shipped echo agent run in this process (:mod:`tests.runtime.inprocess`)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.conftest import Caller
from tests.runtime.inprocess import InProcessLauncher

from compozy_mcp.assembly import App
from compozy_mcp.errors import ModelNotFound, ToolConflict
from compozy_mcp.runtime import _connection as connection
from compozy_mcp.runtime import _processes as processes
from compozy_mcp.runtime._processes import import_connection

pytestmark = pytest.mark.anyio


async def _echo_session(call: Caller, **fields: Any) -> str:
    return str((await call.create(provider="echo", **fields))["id"])


async def _prompt(call: Caller, sid: str, text: str, **extra: Any) -> dict[str, Any]:
    args = {"session_id": sid, "prompt": text, "wait": True, "timeout_seconds": 30, **extra}
    turn: dict[str, Any] = (await call.structured("compozy__session_prompt", args))["turn"]
    return turn


async def _pending(call: Caller, sid: str) -> dict[str, Any]:
    with anyio.fail_after(30):
        while True:
            session = await call.session("compozy__session_status", {"session_id": sid})
            if session["pending_interactions"]:
                return session
            await anyio.sleep(0.01)


# --- binding --------------------------------------------------------------------------------------


async def test_runtime_set_starts_the_agent_and_records_what_it_announced(call: Caller) -> None:
    sid = (await call.create())["id"]
    record = await call.session(
        "compozy__session_runtime_set",
        {
            "session_id": sid,
            "provider": "echo",
            "reasoning_effort": "high",
            "selection_revision": 0,
            "generation": 0,
            "result_view": "full",
        },
    )
    runtime = record["runtime"]
    assert runtime["status"] == "ready"
    assert runtime["generation"] == 1
    assert runtime["transition"] == "initial_bind"
    assert runtime["effective"] == {
        "provider": "echo",
        "model": "echo-1",
        "reasoning_effort": "high",
    }
    assert runtime["acp_session_id"].startswith("echo-")
    caps = runtime["acp_caps"]
    assert caps["supports_load_session"] is True
    assert caps["supported_modes"] == ["default", "plan"]
    assert {o["id"] for o in caps["config_options"]} == {"model", "thought_level"}


async def test_a_bind_imports_the_acp_sdk_in_a_worker_thread_not_on_the_event_loop(
    call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first bind of a daemon imports the ACP SDK (~0.5 s): on a worker thread, so that the
    event loop goes on serving every other request meanwhile."""
    threads: list[threading.Thread] = []

    def recording() -> None:
        threads.append(threading.current_thread())
        import_connection()

    monkeypatch.setattr(processes, "import_connection", recording)
    sid = await _echo_session(call)
    turn = await _prompt(call, sid, "hello")
    assert turn["status"] == "completed"
    assert threads
    assert threading.main_thread() not in threads


async def test_changing_only_the_effort_reconfigures_the_live_agent(
    call: Caller, launcher: InProcessLauncher
) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "hi")
    before = await call.full(sid)
    again = await call.session(
        "compozy__session_runtime_set",
        {
            "session_id": sid,
            "provider": "echo",
            "reasoning_effort": "high",
            "selection_revision": before["runtime"]["selection_revision"],
            "generation": before["runtime"]["generation"],
            "result_view": "full",
        },
    )
    assert again["runtime"]["transition"] == "live_configuration"
    assert again["runtime"]["generation"] == before["runtime"]["generation"]
    assert len(launcher.launched) == 1


async def test_a_command_that_cannot_start_fails_the_binding_with_a_clear_summary(
    call: Caller, app: App
) -> None:
    home = app.settings.home
    home.mkdir(parents=True, exist_ok=True)
    (home / "agents.yaml").write_text(
        "agents:\n  broken:\n    command: /nonexistent/agent\n", encoding="utf-8"
    )
    sid = (await call.create(provider="broken"))["id"]
    record = await call.session(
        "compozy__session_runtime_set",
        {"session_id": sid, "provider": "broken", "selection_revision": 1, "generation": 0},
    )
    assert record["runtime"]["status"] == "failed"
    failure = record["runtime"]["failure"]
    assert failure["kind"] == "agent_start_failed"
    assert failure["summary"] == (
        'agent "broken": cannot start "/nonexistent/agent": No such file or directory'
    )
    assert record["badge"] == "failed"


@pytest.mark.settings(agent_start_timeout_seconds=1)
async def test_an_agent_that_never_answers_initialize_times_out_with_its_stderr(
    app: App, call: Caller, launcher: InProcessLauncher
) -> None:
    home = app.settings.home
    home.mkdir(parents=True, exist_ok=True)
    (home / "agents.yaml").write_text("agents:\n  silent:\n    command: silent\n", encoding="utf-8")
    sid = (await call.create(provider="silent"))["id"]
    record = await call.session(
        "compozy__session_continue", {"session_id": sid, "transcript_epoch": 0, "generation": 0}
    )
    failure = record["runtime"]["failure"]
    assert failure["kind"] == "agent_start_timeout"
    assert failure["summary"] == (
        'agent "silent" did not answer initialize and new_session within 1 s; '
        "stderr: silent: waiting forever"
    )
    assert launcher.running() == []  # the silent agent was ended


async def test_unknown_agents_and_models_are_refused_naming_what_exists(call: Caller) -> None:
    with pytest.raises(ModelNotFound, match=r'provider "nope" is not known \(known: claude, '):
        await call.create(provider="nope")
    with pytest.raises(ModelNotFound, match=r'has no model "gpt-1" \(models: echo-1\)'):
        await call.create(provider="echo", model="gpt-1")


# --- prompts and turns ----------------------------------------------------------------------------


async def test_a_prompt_binds_the_agent_and_the_turn_is_persisted_with_its_updates(
    call: Caller,
) -> None:
    sid = await _echo_session(call)
    turn = await _prompt(call, sid, "hello world", result_view="full")
    assert turn["status"] == "completed"
    assert turn["stop_reason"] == "end_turn"
    assert turn["final_message"] == "echo: hello world"
    assert turn["chunks"] == ["echo: ", "hello world"]
    assert turn["thoughts"] == ["The user said 2 words."]
    assert turn["usage"] == {"input_tokens": 2, "output_tokens": 3, "total_tokens": 5}
    assert turn["summary"] == {"text": "echo: hello world", "truncated": False}
    session = await call.full(sid)
    assert session["runtime"]["status"] == "ready"
    assert [c["name"] for c in session["available_commands"]] == ["plan", "write", "slow"]


async def test_history_compact_keeps_ids_stop_reasons_and_the_cut_final_message(
    call: Caller,
) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "x " * 400)
    await _prompt(call, sid, "plan it")
    compact = await call.structured("compozy__session_history", {"session_id": sid})
    first, second = compact["turns"]
    assert set(first) == {
        "session_id",
        "turn_id",
        "turn",
        "epoch",
        "status",
        "prompt",
        "summary",
        "created_at",
        "stop_reason",
        "started_at",
        "ended_at",
    }
    assert first["summary"]["truncated"] is True
    assert len(first["summary"]["text"]) == 500
    full = await call.structured(
        "compozy__session_history", {"session_id": sid, "result_view": "full"}
    )
    plan = full["turns"][1]["plan"]
    assert [entry["status"] for entry in plan] == ["completed"] * 3
    assert second["summary"]["text"] == "Plan done: 3 steps."
    page = await call.structured("compozy__session_history", {"session_id": sid, "limit": 1})
    assert page["next_cursor"] == 1
    rest = await call.structured(
        "compozy__session_history", {"session_id": sid, "limit": 1, "cursor": 1}
    )
    assert [t["turn"] for t in rest["turns"]] == [2]
    assert "next_cursor" not in rest


async def test_events_stream_every_update_and_compact_keeps_only_what_a_caller_must_not_miss(
    call: Caller,
) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "hello")
    compact = await call.structured("compozy__session_events", {"session_id": sid})
    kinds = [e["kind"] for e in compact["events"]]
    assert kinds[-5:] == [
        "turn_started",
        "agent_thought_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "turn_ended",
    ]
    # message chunks carry nothing compact keeps: their payload is left out, not shown as {}
    assert all("payload" not in e for e in compact["events"][-5:-1])
    assert compact["events"][-1]["payload"] == {"status": "completed", "stop_reason": "end_turn"}
    full = await call.structured(
        "compozy__session_events",
        {"session_id": sid, "cursor": compact["events"][-2]["seq"], "result_view": "full"},
    )
    assert [e["payload"] for e in full["events"]] == [
        {"status": "completed", "stop_reason": "end_turn"}
    ]
    assert full["next_cursor"] == compact["next_cursor"]


async def test_a_prompt_without_a_selection_and_wait_is_refused_and_queues_nothing(
    call: Caller,
) -> None:
    sid = (await call.create())["id"]
    with pytest.raises(ToolConflict, match="has no runtime selection") as caught:
        await _prompt(call, sid, "hi")
    assert caught.value.reason == "runtime_unselected"
    assert "queue" not in await call.full(sid)
    queued = await call.structured(
        "compozy__session_prompt", {"session_id": sid, "prompt": "later"}
    )
    assert queued["turn"]["status"] == "queued"


async def test_a_slow_turn_is_cancelled_and_the_next_prompt_runs(call: Caller) -> None:
    sid = await _echo_session(call)
    started = await call.structured(
        "compozy__session_prompt", {"session_id": sid, "prompt": "slow 20"}
    )
    turn_id = started["turn"]["turn_id"]
    with anyio.fail_after(30):
        while (await call.full(sid))["runtime"]["status"] != "running":
            await anyio.sleep(0.01)
    cancelled = await call.structured("compozy__session_prompt_cancel", {"session_id": sid})
    assert cancelled["running_turn_id"] == turn_id
    assert cancelled["queued_cancelled"] == 0  # only a running turn: nothing was queued
    ended = await call.structured(
        "compozy__session_wait", {"session_id": sid, "turn_id": turn_id, "timeout_seconds": 10}
    )
    assert (ended["turn"]["status"], ended["turn"]["stop_reason"]) == ("cancelled", "cancelled")
    assert (await _prompt(call, sid, "after"))["summary"]["text"] == "echo: after"


async def test_a_cancel_cancels_the_queue_before_the_agent_can_take_its_next_turn(
    app: App, call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``session_prompt_cancel`` with a turn running and one queued: the queued turn is
    cancelled (and counted), never started. It once cancelled the queue after telling the agent
    to stop, and an agent that stopped at once took the queued turn in between (a daemon test
    saw "0 queued" under load). The cancel of whatever is left waits here until no turn of the
    session is queued: had the queue not been cancelled first, the queued turn starts in that
    wait."""
    sid = await _echo_session(call)
    started = await call.structured(
        "compozy__session_prompt", {"session_id": sid, "prompt": "slow 20"}
    )
    with anyio.fail_after(30):
        while (await call.full(sid))["runtime"]["status"] != "running":
            await anyio.sleep(0.01)
    later = await call.structured("compozy__session_prompt", {"session_id": sid, "prompt": "later"})
    assert later["turn"]["status"] == "queued"
    turns = app.sessions.turns
    cancel_queued = turns.cancel_queued

    def none_queued() -> bool:
        with app.sessions.ledger.store.read() as reader:
            return all(turn.status != "queued" for turn in reader.transcript(sid))

    def cancel_once_none_is_queued(session_id: str, stop_reason: str, **kw: Any) -> int:
        if not kw.get("queued_only"):
            deadline = time.monotonic() + 10
            while not none_queued() and time.monotonic() < deadline:
                time.sleep(0.01)
        return cancel_queued(session_id, stop_reason, **kw)

    monkeypatch.setattr(turns, "cancel_queued", cancel_once_none_is_queued)
    cancelled = await call.structured("compozy__session_prompt_cancel", {"session_id": sid})
    assert cancelled["running_turn_id"] == started["turn"]["turn_id"]
    assert cancelled["queued_cancelled"] == 1
    ended = await call.structured(
        "compozy__session_wait",
        {"session_id": sid, "turn_id": later["turn"]["turn_id"], "timeout_seconds": 10},
    )
    assert (ended["turn"]["status"], ended["turn"]["stop_reason"]) == ("cancelled", "cancelled")


async def test_compact_events_keep_a_failed_turns_status_and_stop_reason(call: Caller) -> None:
    """Spec, what compact keeps: state, failures and stop reasons."""
    sid = await _echo_session(call)
    await _prompt(call, sid, "crash please")
    compact = await call.structured("compozy__session_events", {"session_id": sid})
    ended = compact["events"][-1]
    assert ended["kind"] == "turn_ended"
    assert ended["payload"] == {
        "status": "failed",
        "stop_reason": "agent_crashed",
        "detail": 'agent "echo" exited with status 3 during a turn; stderr: echo: crashed on '
        "request",
    }
    full = await call.structured(
        "compozy__session_events", {"session_id": sid, "result_view": "full"}
    )
    assert full["events"][-1]["payload"] == ended["payload"]


async def test_compact_events_keep_the_interaction_id_and_choices_the_approve_call_takes(
    call: Caller,
) -> None:
    """Spec, what compact keeps: pending interactions and the fields a follow-up call takes.
    The answer is given from the compact event alone."""
    sid = await _echo_session(call)
    async with anyio.create_task_group() as tasks:
        results: list[dict[str, Any]] = []

        async def prompt() -> None:
            results.append(await _prompt(call, sid, "write it"))

        tasks.start_soon(prompt)
        await _pending(call, sid)
        compact = await call.structured("compozy__session_events", {"session_id": sid})
        (requested,) = [e for e in compact["events"] if e["kind"] == "permission_requested"]
        payload = requested["payload"]
        assert payload["title"] == "Write notes.txt"
        assert payload["interaction_id"].startswith("int-")
        assert payload["options"] == [
            {"option_id": choice}
            for choice in ("allow-once", "allow-always", "reject-once", "reject-always")
        ]
        await call.structured(
            "compozy__session_approve",
            {
                "session_id": sid,
                "interaction_id": payload["interaction_id"],
                "decision": payload["options"][2]["option_id"],
            },
        )
    assert results[0]["summary"]["text"] == "did not write notes.txt (reject-once)"
    after = await call.structured(
        "compozy__session_events", {"session_id": sid, "cursor": requested["seq"]}
    )
    answered = next(e for e in after["events"] if e["kind"] == "permission_answered")
    assert answered["payload"] == {
        "interaction_id": payload["interaction_id"],
        "outcome": "answered",
        "option_id": "reject-once",
    }
    failed_call = next(e for e in after["events"] if e["kind"] == "tool_call_update")
    assert failed_call["payload"]["status"] == "failed"
    full = await call.structured(
        "compozy__session_events",
        {"session_id": sid, "cursor": requested["seq"] - 1, "limit": 1, "result_view": "full"},
    )
    assert full["events"][0]["payload"]["options"][0] == {
        "option_id": "allow-once",
        "name": full["events"][0]["payload"]["options"][0]["name"],
        "kind": "allow_once",
    }


# --- permission requests --------------------------------------------------------------------------


async def test_a_permission_request_waits_for_the_operator_and_the_answer_reaches_the_agent(
    call: Caller,
) -> None:
    sid = await _echo_session(call)
    async with anyio.create_task_group() as tasks:
        results: list[dict[str, Any]] = []

        async def prompt() -> None:
            results.append(await _prompt(call, sid, "write it"))

        tasks.start_soon(prompt)
        waiting = await _pending(call, sid)
        assert (waiting["badge"], waiting["board_column"]) == ("waiting-for-auth", "needs_you")
        (item,) = waiting["pending_interactions"]
        assert item["kind"] == "permission"
        assert item["title"] == "Write notes.txt"
        assert item["choices"] == ["allow-once", "allow-always", "reject-once", "reject-always"]
        assert set(item) >= {
            "session_id",
            "interaction_id",
            "kind",
            "provider_request_id",
            "title",
            "status",
            "created_at",
        }
        with pytest.raises(ToolConflict, match='decision "maybe" is not one the agent offered'):
            await call(
                "compozy__session_approve",
                {"session_id": sid, "interaction_id": item["interaction_id"], "decision": "maybe"},
            )
        answer = await call.structured(
            "compozy__session_approve",
            {
                "session_id": sid,
                "interaction_id": item["interaction_id"],
                "decision": "reject-once",
            },
        )
        assert answer["decision"] == "reject-once"
    assert results[0]["summary"]["text"] == "did not write notes.txt (reject-once)"
    session = await call.full(sid)
    assert session["pending_interactions"] == []
    assert session["diagnostics"][-1]["code"] == "interaction.answered"


@pytest.mark.settings(permission_timeout_seconds=1)
async def test_an_unanswered_permission_request_is_rejected_after_the_timeout(
    app: App, call: Caller
) -> None:
    sid = await _echo_session(call)
    turn = await _prompt(call, sid, "write", result_view="full")
    assert turn["final_message"] == "did not write notes.txt (reject-once)"
    assert turn["tool_calls"][0]["status"] == "failed"
    session = await call.full(sid)
    assert session["pending_interactions"] == []
    timed_out = session["diagnostics"][-1]
    assert (timed_out["code"], timed_out["severity"]) == ("interaction.timed_out", "warning")
    assert timed_out["message"] == "Write notes.txt: unanswered after 1 s; rejected"


async def _answered(call: Caller, sid: str, text: str, decision: str) -> dict[str, Any]:
    """The turn of ``text``, its permission request answered with ``decision``."""
    async with anyio.create_task_group() as tasks:
        results: list[dict[str, Any]] = []

        async def prompt() -> None:
            results.append(await _prompt(call, sid, text, result_view="full"))

        tasks.start_soon(prompt)
        (item,) = (await _pending(call, sid))["pending_interactions"]
        await call.structured(
            "compozy__session_approve",
            {"session_id": sid, "interaction_id": item["interaction_id"], "decision": decision},
        )
    return results[0]


async def test_an_allowed_write_writes_the_file_in_the_sessions_directory(
    call: Caller, workspace: Path
) -> None:
    sid = await _echo_session(call)
    turn = await _answered(call, sid, "write docs/plan.md Step one\nStep two", "allow-once")
    assert turn["final_message"] == "wrote docs/plan.md"
    assert turn["tool_calls"][0]["status"] == "completed"
    assert (workspace / "docs" / "plan.md").read_text() == "Step one\nStep two\n"
    turn = await _answered(call, sid, "write the notes", "allow-once")
    assert turn["final_message"] == "wrote notes.txt"
    assert (workspace / "notes.txt").read_text() == "Notes written by the echo agent.\n"


async def test_a_write_rejected_or_outside_the_directory_writes_nothing(
    call: Caller, workspace: Path
) -> None:
    sid = await _echo_session(call)
    turn = await _answered(call, sid, "write kept.txt no", "reject-once")
    assert turn["final_message"] == "did not write kept.txt (reject-once)"
    assert not (workspace / "kept.txt").exists()
    turn = await _answered(call, sid, "write ../escape.txt no", "allow-once")
    assert turn["final_message"] == (
        "could not write ../escape.txt: it is outside the session's directory"
    )
    assert turn["tool_calls"][0]["status"] == "failed"
    assert not (workspace.parent / "escape.txt").exists()


# --- crashes, stops and the processes -------------------------------------------------------------


async def test_an_agent_crashing_mid_turn_fails_the_runtime_and_a_later_bind_works(
    call: Caller, launcher: InProcessLauncher
) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "first")
    crashed = await _prompt(call, sid, "crash please", result_view="full")
    assert (crashed["status"], crashed["stop_reason"]) == ("failed", "agent_crashed")
    assert crashed["final_message"] == "about to crash"  # what streamed before is kept
    session = await call.full(sid)
    assert session["runtime"]["status"] == "failed"
    assert session["runtime"]["failure"]["kind"] == "agent_crashed"
    assert session["runtime"]["failure"]["summary"] == (
        'agent "echo" exited with status 3 during a turn; stderr: echo: crashed on request'
    )
    assert session["stop_cause"] == "failure"
    # spec, session record tools: "stop_reason, stop_detail, failure | The session stopped or
    # failed": the session's own failure, in the compact record too
    compact = await call.session("compozy__session_status", {"session_id": sid})
    assert compact["failure"] == {
        "kind": "agent_crashed",
        "summary": session["runtime"]["failure"]["summary"],
    }
    assert (compact["stop_reason"], compact["stop_detail"]) == (
        "agent_crashed",
        compact["failure"]["summary"],
    )
    rebound = await call.session(
        "compozy__session_runtime_set",
        {
            "session_id": sid,
            "provider": "echo",
            "selection_revision": session["runtime"]["selection_revision"],
            "generation": session["runtime"]["generation"],
        },
    )
    assert rebound["runtime"]["status"] == "ready"
    assert "stop_cause" not in rebound
    assert "failure" not in rebound
    assert (await _prompt(call, sid, "again"))["status"] == "completed"
    assert len(launcher.running()) == 1


async def test_stop_and_runtime_clear_end_the_agent(
    call: Caller, launcher: InProcessLauncher
) -> None:
    first = await _echo_session(call)
    second = await _echo_session(call)
    await _prompt(call, first, "a")
    await _prompt(call, second, "b")
    assert len(launcher.running()) == 2
    await call("compozy__session_stop", {"session_id": first})
    await call("compozy__session_runtime_clear", {"session_id": second})
    assert launcher.running() == []
    assert all(t.terminated for t in launcher.launched)


async def test_a_reconcile_while_a_bind_is_being_recorded_leaves_the_new_agent_running(
    app: App, call: Caller, launcher: InProcessLauncher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the agent's start and the record of its bind, the record still names the
    generation before it: a reconcile then (a TTL round, a cluster tick) must not take the new
    agent for a stale one and end it, leaving a bound session that no agent serves."""
    sid = await _echo_session(call)
    complete = app.sessions.binding.complete
    reconciled: list[list[str]] = []

    def reconcile_first(*args: Any) -> Any:
        anyio.from_thread.run(app.runtime.reconcile)
        reconciled.append(app.runtime.live_sessions())
        return complete(*args)

    monkeypatch.setattr(app.sessions.binding, "complete", reconcile_first)
    turn = await _prompt(call, sid, "hello")
    assert reconciled == [[sid]]  # the agent survived the reconcile
    assert (turn["status"], turn["summary"]["text"]) == ("completed", "echo: hello")
    assert len(launcher.running()) == 1
    await app.runtime.reconcile()  # recorded now: the agent is the session's
    assert app.runtime.live_sessions() == [sid]


async def test_shutdown_ends_every_agent_and_unbinds_their_sessions(
    app: App, call: Caller, launcher: InProcessLauncher
) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "a")
    await app.shutdown()
    assert launcher.running() == []
    runtime = (await call.full(sid))["runtime"]
    assert runtime["status"] == "unbound"
    # the next prompt binds a new agent, which loads the ACP session the old one had
    turn = await _prompt(call, sid, "b")
    assert turn["status"] == "completed"
    again = (await call.full(sid))["runtime"]
    assert again["acp_session_id"] == runtime.get("acp_session_id", again["acp_session_id"])
    assert again["generation"] == 2


async def test_a_conversation_the_agent_replays_after_its_load_answer_stays_out_of_the_next_turn(
    app: App, call: Caller, launcher: InProcessLauncher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI answers ``load_session`` before it replays the conversation (the CI run of
    stop 37 saw "fake reply: firstfake reply: after the restart"): the replay is the session's,
    never the first turn's after the load. The agent replays 50 ms after its answer; the quiet
    wait is made longer than the product's 0.2 s so that a pause of this busy test process
    (a collection, a starved core) cannot outlast it."""
    monkeypatch.setattr(connection, "REPLAY_QUIET_SECONDS", 0.5)
    home = app.settings.home
    home.mkdir(parents=True, exist_ok=True)
    (home / "agents.yaml").write_text(
        "agents:\n  late-replay:\n    command: late-replay\n", encoding="utf-8"
    )
    sid = (await call.create(provider="late-replay"))["id"]
    assert (await _prompt(call, sid, "first"))["summary"]["text"] == "echo: first"
    await app.shutdown()
    turn = await _prompt(call, sid, "after the restart")  # a new agent loads the session
    assert (await call.full(sid))["runtime"]["generation"] == 2
    assert (turn["status"], turn["summary"]["text"]) == ("completed", "echo: after the restart")
    events = (
        await call.structured("compozy__session_events", {"session_id": sid, "result_view": "full"})
    )["events"]
    replayed = [e for e in events if e["kind"] == "user_message_chunk"]
    assert [e.get("turn_id") for e in replayed] == [None]


# --- transcripts and fences -----------------------------------------------------------------------


async def test_clear_advances_the_epoch_and_the_new_context_starts_empty(
    call: Caller, launcher: InProcessLauncher
) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "remember me")
    before = await call.full(sid)
    cleared = await call.session(
        "compozy__session_clear",
        {
            "session_id": sid,
            "transcript_epoch": 0,
            "generation": before["runtime"]["generation"],
            "result_view": "full",
        },
    )
    assert cleared["transcript_epoch"] == 1
    assert cleared["runtime"]["generation"] == 2
    assert cleared["runtime"]["acp_session_id"] != before["runtime"]["acp_session_id"]
    turn = await _prompt(call, sid, "fresh")
    assert turn["summary"]["text"] == "echo: fresh"  # no earlier turn in its context
    history = await call.structured("compozy__session_history", {"session_id": sid})
    assert [t["epoch"] for t in history["turns"]] == [0, 1]


async def test_rewind_replaces_the_agent_whose_context_holds_the_kept_turns(call: Caller) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "one")
    await _prompt(call, sid, "two")
    before = await call.full(sid)
    rewound = await call.session(
        "compozy__session_rewind",
        {
            "session_id": sid,
            "to_turn": 1,
            "transcript_epoch": 0,
            "generation": before["runtime"]["generation"],
        },
    )
    assert rewound["transcript_epoch"] == 1
    turn = await _prompt(call, sid, "three")
    # the new ACP session is told the kept turn first (echo repeats what it was sent)
    assert turn["summary"]["text"] == (
        "echo: Conversation so far (kept by compozy):\nUser: one\nAgent: echo: onethree"
    )
    history = await call.structured("compozy__session_history", {"session_id": sid})
    assert [t["prompt"]["text"] for t in history["turns"]] == ["one", "three"]


async def test_fork_copies_the_turns_with_their_outcomes(call: Caller) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "one")
    await _prompt(call, sid, "two")
    fork = await call.session(
        "compozy__session_fork", {"session_id": sid, "transcript_epoch": 0, "at_turn": 1}
    )
    history = await call.structured("compozy__session_history", {"session_id": fork["id"]})
    (copied,) = history["turns"]
    assert copied["summary"]["text"] == "echo: one"
    source = await call.structured("compozy__session_history", {"session_id": sid})
    assert copied["turn_id"] != source["turns"][0]["turn_id"]


async def test_command_list_follows_the_agents_announcement(call: Caller) -> None:
    sid = await _echo_session(call)
    assert (await call.structured("compozy__command_list", {"session_id": sid}))["commands"] == []
    await _prompt(call, sid, "hi")
    listed = await call.structured("compozy__command_list", {"session_id": sid})
    assert listed["commands"][2] == {
        "name": "slow",
        "description": "Stream slowly until cancelled",
        "input": {"hint": "seconds"},
    }


# --- agents ---------------------------------------------------------------------------------------


async def test_agent_list_shows_built_ins_and_file_agents_with_problems(
    app: App, call: Caller, workspace: Path
) -> None:
    home = app.settings.home
    home.mkdir(parents=True, exist_ok=True)
    (home / "agents.yaml").write_text(
        "agents:\n"
        "  reviewer:\n"
        "    command: npx\n"
        "    args: [-y, '@zed-industries/claude-code-acp']\n"
        "    env: {ANTHROPIC_MODEL: claude-sonnet-5}\n"
        "    provider: claude\n"
        "    models: [claude-sonnet-5]\n"
        "  bad:\n"
        "    args: [x]\n",
        encoding="utf-8",
    )
    compact = await call.structured("compozy__agent_list")
    names = [a["name"] for a in compact["agents"]]
    assert names == ["claude", "codex", "echo", "gemini", "reviewer"]
    reviewer = compact["agents"][-1]
    assert reviewer == {
        "name": "reviewer",
        "provider": "claude",
        "description": "",
        "models": ["claude-sonnet-5"],
        "default_model": "claude-sonnet-5",
        "reasoning_efforts": [],
    }
    assert compact["problems"] == [
        {
            "source": "$COMPOZY_HOME/agents.yaml",
            "agent": "bad",
            "message": 'field "command" is required',
        }
    ]
    full = await call.structured("compozy__agent_list", {"result_view": "full"})
    assert full["agents"][-1]["env_keys"] == ["ANTHROPIC_MODEL"]
    assert full["agents"][-1]["command"] == ["npx", "-y", "@zed-industries/claude-code-acp"]
    (workspace / ".compozy").mkdir()
    (workspace / ".compozy" / "agents.yaml").write_text(
        "agents:\n  local:\n    command: ./bin/agent\n", encoding="utf-8"
    )
    scoped = await call.structured(
        "compozy__agent_list", {"workspace_id": "ws_default", "result_view": "full"}
    )
    local = next(a for a in scoped["agents"] if a["name"] == "local")
    assert local["source"] == "workspace"
    assert local["command"] == [str(workspace / "bin" / "agent")]


async def test_a_waiting_prompt_whose_call_is_cancelled_cancels_the_turn(call: Caller) -> None:
    sid = await _echo_session(call)
    await _prompt(call, sid, "warm up")

    async def last_turn() -> dict[str, Any]:
        history = await call.structured("compozy__session_history", {"session_id": sid})
        turn: dict[str, Any] = history["turns"][-1]
        return turn

    async with anyio.create_task_group() as waiting:
        waiting.start_soon(_prompt, call, sid, "slow 30")
        with anyio.fail_after(30):  # the call is cancelled once its turn runs
            while (await last_turn())["status"] != "running":
                await anyio.sleep(0.01)
        waiting.cancel_scope.cancel()
    last = await last_turn()
    for _ in range(300):
        if last["status"] != "running":
            break
        await anyio.sleep(0.01)
        last = await last_turn()
    assert (last["status"], last["stop_reason"]) == ("cancelled", "cancelled")


async def test_a_binding_left_by_an_ended_process_does_not_hold_prompts_forever(
    app: App, call: Caller
) -> None:
    sid = await _echo_session(call)
    ledger = app.sessions.ledger
    with app.store.write() as writer:  # what a process that died while it bound leaves
        row = writer.session(sid)
        assert row is not None
        state = ledger.state(row)
        state.runtime.status = "binding"
        ledger.save(writer, ledger_call(), row, state)
    turn = await _prompt(call, sid, "still here")
    assert turn["summary"]["text"] == "echo: still here"


def ledger_call() -> Any:
    from compozy_mcp.calls import CallInfo

    return CallInfo("test")


async def test_a_changed_agents_file_is_read_again_and_an_unchanged_one_is_not(
    app: App, call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compozy_mcp.agents import definitions

    home = app.settings.home
    home.mkdir(parents=True, exist_ok=True)
    agents_file = home / "agents.yaml"
    agents_file.write_text("agents:\n  one:\n    command: one-acp\n", encoding="utf-8")
    reads: list[str] = []
    real = definitions.read_file

    def counted(file: definitions.AgentFile, into: definitions.AgentCatalog) -> None:
        reads.append(file.shown_as)
        real(file, into)

    monkeypatch.setattr(definitions, "read_file", counted)
    listed = await call.structured("compozy__agent_list")
    await call.create(provider="one")
    await call.structured("compozy__agent_list")
    assert "one" in [a["name"] for a in listed["agents"]]
    assert reads == ["$COMPOZY_HOME/agents.yaml"]  # read once, for three uses
    # another size too: a file rewritten within one clock tick keeps its modification time
    agents_file.write_text("agents:\n  two:\n    command: second-acp\n", encoding="utf-8")
    again = await call.structured("compozy__agent_list")
    assert [a["name"] for a in again["agents"]][-1] == "two"
    assert "one" not in [a["name"] for a in again["agents"]]
