"""The cluster node (issue 28 items 2, 3, 6) in this process: one daemon's runtime with its
:class:`~compozy_mcp.cluster.ClusterNode`, and a peer daemon played by writing its leases into
the same store. The agents are the shipped echo agent run in this process."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import anyio
import pytest
from tests import pg
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.blocking import Offload
from compozy_mcp.cluster import ClusterNode, DaemonIdentity
from compozy_mcp.cluster._node import EVERY_LEASE_EXPIRED, session_key
from compozy_mcp.store.leases import LeaseRow

pytestmark = [pytest.mark.anyio, pg.on_both_engines]

PEER = "d-peer"
LEASE_MS = 15_000


class Now:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def now() -> Now:
    return Now()


@pytest.fixture
def node(app: App, now: Now) -> ClusterNode:
    made = ClusterNode(
        app.sessions,
        app.runtime,
        app.loops,
        DaemonIdentity("d-here", "http://127.0.0.1:1"),
        Offload(),
        LEASE_MS // 1000,
        now_ms=now,
    )
    app.runtime.placement = made
    return made


def _peer_holds(app: App, session_id: str, now: Now, *, expired: bool = False) -> None:
    expires = now.ms - 1 if expired else now.ms + LEASE_MS
    row = LeaseRow(session_key(session_id), PEER, "http://127.0.0.1:2", expires, now.ms)
    with app.store.write() as writer:
        writer.claim_lease(row, EVERY_LEASE_EXPIRED)


def _lease(app: App, session_id: str) -> LeaseRow | None:
    with app.store.read() as reader:
        return reader.lease(session_key(session_id))


async def _session(call: Caller) -> str:
    return str((await call.create(provider="echo"))["id"])


async def _prompt(call: Caller, sid: str, text: str, **extra: Any) -> dict[str, Any]:
    args = {"session_id": sid, "prompt": text, "timeout_seconds": 30, **extra}
    turn: dict[str, Any] = (await call.structured("compozy__session_prompt", args))["turn"]
    return turn


async def test_a_prompt_binds_here_and_the_daemon_holds_the_lease_while_its_agent_runs(
    app: App, call: Caller, node: ClusterNode, now: Now
) -> None:
    sid = await _session(call)
    turn = await _prompt(call, sid, "hi", wait=True)
    assert turn["status"] == "completed"
    lease = _lease(app, sid)
    assert lease is not None
    assert (lease.daemon_id, lease.address) == ("d-here", "http://127.0.0.1:1")
    assert lease.expires_at == now.ms + LEASE_MS
    now.ms += 10_000
    await node.renew()
    renewed = _lease(app, sid)
    assert renewed is not None
    assert renewed.expires_at == now.ms + LEASE_MS
    await call("compozy__session_stop", {"session_id": sid})
    assert _lease(app, sid) is None  # its agent ended: the lease went with it


async def test_a_prompt_for_an_agent_another_daemon_runs_stays_queued_for_it(
    app: App, call: Caller, node: ClusterNode, now: Now
) -> None:
    sid = await _session(call)
    _peer_holds(app, sid, now)
    turn = await _prompt(call, sid, "for the owner", wait=False)
    await app.runtime.settled()
    assert app.runtime.live_sessions() == []
    history = await call.structured("compozy__session_history", {"session_id": sid})
    assert [t["status"] for t in history["turns"]] == ["queued"]
    assert history["turns"][0]["turn_id"] == turn["turn_id"]
    lease = _lease(app, sid)
    assert lease is not None
    assert lease.daemon_id == PEER


async def test_a_cancel_and_a_permission_answer_are_left_for_the_owning_daemon(
    app: App, call: Caller, node: ClusterNode, now: Now
) -> None:
    sid = await _session(call)
    _peer_holds(app, sid, now)
    idle = await call.structured("compozy__session_prompt_cancel", {"session_id": sid})
    assert idle["running_turn_id"] is None  # nothing runs: nothing to tell the owner
    queued = await _prompt(call, sid, "runs on the peer", wait=False)
    with app.store.write() as writer:  # the peer's agent took it
        turn = writer.turn(sid, queued["turn_id"])
        assert turn is not None
        writer.save_turn(dataclasses.replace(turn, status="running"))
    cancelled = await call.structured("compozy__session_prompt_cancel", {"session_id": sid})
    assert cancelled["running_turn_id"] == queued["turn_id"]
    with app.store.read() as reader:
        signals = reader.signals(PEER)
    assert [(s.session_id, s.kind) for s in signals] == [(sid, "cancel")]
    # a lease that expired has no owner to tell
    now.ms += LEASE_MS
    assert await node.forward(sid, "cancel", {}) is False


async def test_an_expired_lease_is_taken_over_its_running_turn_marked_and_its_queue_run_here(
    app: App, call: Caller, node: ClusterNode, now: Now
) -> None:
    sid = await _session(call)
    first = await _prompt(call, sid, "one", wait=True)
    assert first["status"] == "completed"
    acp_session = (await call.full(sid))["runtime"]["acp_session_id"]
    # the peer takes the session (a bind there), runs a turn and is killed in it
    _peer_holds(app, sid, now)
    await node.renew()
    await app.runtime.settled()
    assert app.runtime.live_sessions() == []  # the agent here ended: it is the peer's now
    cut = await _prompt(call, sid, "cut off", wait=False)
    with app.store.write() as writer:  # what the peer's agent had stored when it was killed
        running = writer.turn(sid, cut["turn_id"])
        assert running is not None
        writer.save_turn(dataclasses.replace(running, status="running"))
    waiting = await _prompt(call, sid, "after", wait=False)
    assert await node.take_over_expired() == []  # not expired yet
    now.ms += LEASE_MS
    assert await node.take_over_expired() == [sid]
    lease = _lease(app, sid)
    assert lease is not None
    assert lease.daemon_id == "d-here"
    with anyio.fail_after(30):
        done = await app.runtime.wait_turn(_call(), sid, waiting["turn_id"], 30)
    assert done["status"] == "completed"
    assert done["final_message"] == "echo: after"
    history = await call.structured(
        "compozy__session_history", {"session_id": sid, "result_view": "full"}
    )
    cut_off = next(t for t in history["turns"] if t["turn_id"] == cut["turn_id"])
    assert (cut_off["status"], cut_off["stop_reason"]) == ("cancelled", "daemon_restarted")
    # the agent bound here loaded the ACP session the killed daemon's agent had
    runtime = (await call.full(sid))["runtime"]
    assert (runtime["acp_session_id"], runtime["generation"]) == (acp_session, 2)


async def test_start_up_leaves_the_sessions_other_live_daemons_run(
    app: App, call: Caller, node: ClusterNode, now: Now
) -> None:
    mine, theirs = await _session(call), await _session(call)
    for sid in (mine, theirs):
        assert (await _prompt(call, sid, "hi", wait=True))["status"] == "completed"
    _peer_holds(app, theirs, now)
    # a restart of this daemon: its own leases are its killed predecessor's
    assert node.reset_stale() == [mine]
    assert (await call.full(mine))["runtime"]["status"] == "unbound"
    assert (await call.full(theirs))["runtime"]["status"] == "ready"
    assert _lease(app, mine) is None


def _call() -> Any:
    from compozy_mcp.calls import CallInfo

    return CallInfo("compozy__session_prompt")


async def test_a_loop_run_left_running_is_resumed_by_one_daemon_and_not_while_leased(
    app: App, call: Caller, node: ClusterNode, now: Now
) -> None:
    from tests.loops.support import graph, status_node, tool
    from tests.loops.test_restart import _left_running

    text = graph(status_node(view="full"))
    sid = await _session(call)
    run_id = await _left_running(app, text, "inspect", session_id=sid)
    app.loops.placement = node
    # driven by a live peer (its lease runs): left alone
    with app.store.write() as writer:
        row = LeaseRow(f"loop_run:{run_id}", PEER, None, now.ms + LEASE_MS, now.ms)
        writer.claim_lease(row, EVERY_LEASE_EXPIRED)
    assert await app.loops.recover() == {"resumed": [], "interrupted": [], "failed": []}
    # the peer stopped renewing: this daemon takes the run over, once
    now.ms += LEASE_MS
    assert await node.take_over_expired() == []
    await app.loops.settle(run_id, 30)
    run = (await tool(app, "status", {"run_id": run_id}))["run"]
    assert run["status"] == "succeeded"
    with app.store.read() as reader:
        assert reader.lease(f"loop_run:{run_id}") is None  # ended: its lease went


async def test_events_another_daemon_stored_wake_this_daemons_followers_and_board(
    app: App, call: Caller, node: ClusterNode
) -> None:
    from compozy_mcp.store.base import SessionEventRow

    sid = await _session(call)
    other = await _session(call)

    def stored_by_the_peer(session_id: str) -> None:
        row = SessionEventRow(
            0, session_id, None, "agent_message_chunk", "2026-01-01T00:00:00Z", "{}"
        )
        with app.store.write() as writer:
            writer.append_session_events([row])

    stored_by_the_peer(sid)  # before this daemon looked: nobody waits on it
    await node.deliver()
    with app.runtime.any_event() as board:
        async with app.runtime.stored_events(sid) as followed:
            stored_by_the_peer(other)
            await node.deliver()
            assert board.is_set()
            assert not followed.is_set()  # another session's events
            board.clear()
            stored_by_the_peer(sid)
            await node.deliver()
            assert followed.is_set()
            assert board.is_set()
            followed.clear()
            board.clear()
            await node.deliver()  # nothing new
            assert not followed.is_set()
            assert not board.is_set()


async def test_a_queued_turn_of_a_bound_session_no_daemon_holds_is_run_here(
    app: App, call: Caller, node: ClusterNode
) -> None:
    sid = await _session(call)
    assert (await _prompt(call, sid, "one", wait=True))["status"] == "completed"
    acp_session = (await call.full(sid))["runtime"]["acp_session_id"]
    unbound = await _session(call)
    # its agent ended with its lease, the store still says bound (a bind that lost a race)
    await app.runtime.release(sid)
    assert _lease(app, sid) is None
    _, turn = app.sessions.turns.enqueue(_call(), sid, "orphaned", False)
    app.sessions.turns.enqueue(_call(), unbound, "not bound: its prompt binds it", False)
    assert node.bind_unowned() == [sid]
    with anyio.fail_after(30):
        done = await app.runtime.wait_turn(_call(), sid, turn.turn_id or "", 30)
    assert done["status"] == "completed"
    # a new agent, which loaded the ACP session the one that ended had (no replay needed)
    assert done["final_message"] == "echo: orphaned"
    runtime = (await call.full(sid))["runtime"]
    assert (runtime["acp_session_id"], runtime["generation"]) == (acp_session, 2)
    held = _lease(app, sid)
    assert held is not None
    assert held.daemon_id == "d-here"
    assert node.bind_unowned() == []


async def test_start_up_checks_only_the_worktrees_under_this_daemons_home(
    app: App, call: Caller
) -> None:
    """Another daemon's worktrees live under its home (maybe on another host): a daemon
    starting does not mark them missing because it cannot see them."""
    from compozy_mcp.store.worktrees import WorktreeRow

    sid = await _session(call)
    with app.store.read() as reader:
        workspace_id = reader.workspaces()[0].id
    stamp = "2026-01-01T00:00:00Z"
    elsewhere = "/elsewhere/other-home/worktrees/ws/" + sid
    row = WorktreeRow(
        id="wt-other",
        session_id=sid,
        workspace_id=workspace_id,
        path=elsewhere,
        repository="/elsewhere/repo",
        prefix="",
        branch="compozy/other",
        base_ref="main",
        base_commit="0" * 40,
        state="active",
        created_at=stamp,
        updated_at=stamp,
    )
    with app.store.write() as writer:
        writer.put_worktree(row)
    assert await app.sessions.recover_worktrees() == 0
    with app.store.read() as reader:
        kept = reader.worktree("wt-other")
    assert kept is not None
    assert kept.state == "active"


async def test_a_take_over_during_a_refused_claim_still_runs_the_queued_turn(
    app: App, call: Caller, node: ClusterNode, now: Now, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt's bind asks for the lease while the peer holds it; its answer (refused) comes
    back only after this daemon took the expired lease over, whose own bind found the first
    under way: the refused claim is tried again, and the queued turn runs here."""
    sid = await _session(call)
    _peer_holds(app, sid, now)
    real_claim = node.claim
    asked, answer = anyio.Event(), anyio.Event()
    claims: list[bool] = []

    async def slow_first_claim(session_id: str) -> bool:
        held = await real_claim(session_id)
        claims.append(held)
        if len(claims) == 1:
            asked.set()
            await answer.wait()  # the refusal arrives late
        return held

    monkeypatch.setattr(node, "claim", slow_first_claim)
    waiting = await _prompt(call, sid, "after", wait=False)
    await asked.wait()
    now.ms += LEASE_MS
    assert await node.take_over_expired() == [sid]
    answer.set()
    with anyio.fail_after(30):
        done = await app.runtime.wait_turn(_call(), sid, waiting["turn_id"], 30)
    assert (done["status"], done["final_message"]) == ("completed", "echo: after")
    assert claims[0] is False
    assert True in claims[1:]
    lease = _lease(app, sid)
    assert lease is not None
    assert lease.daemon_id == "d-here"


async def test_a_prompt_during_a_take_over_that_gives_the_lease_up_keeps_the_lease_it_binds(
    app: App, call: Caller, node: ClusterNode, now: Now, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A take-over finds no queued turn and gives the lease up; a prompt arriving meanwhile
    binds the agent here. The lease is given up before that bind claims it (never after, from
    under a running agent, which the next renewal would then end mid-turn)."""
    sid = await _session(call)
    _peer_holds(app, sid, now, expired=True)
    real_drop = node._drop
    dropping, go_on = threading.Event(), threading.Event()

    def held_drop(session_id: str) -> None:
        dropping.set()
        go_on.wait(30)
        real_drop(session_id)

    monkeypatch.setattr(node, "_drop", held_drop)
    async with anyio.create_task_group() as group:
        group.start_soon(node.take_over_expired)
        await anyio.to_thread.run_sync(dropping.wait, 30)
        turn = await _prompt(call, sid, "during", wait=False)
        with anyio.move_on_after(0.5):  # were its bind not held back, it would be done by now
            while sid not in app.runtime.live_sessions():
                await anyio.sleep(0.02)
        go_on.set()
    with anyio.fail_after(30):
        done = await app.runtime.wait_turn(_call(), sid, turn["turn_id"], 30)
    assert (done["status"], done["final_message"]) == ("completed", "echo: during")
    lease = _lease(app, sid)
    assert lease is not None
    assert lease.daemon_id == "d-here"
    await node.renew()
    await app.runtime.settled()
    assert app.runtime.live_sessions() == [sid]  # its agent keeps running here
