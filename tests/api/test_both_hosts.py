"""Issue 24, item 3: one suite against both Host API implementations. The same operations,
sent to ``LocalHost`` (in process) and to ``RemoteHost`` over HTTP and over the Unix socket of
a daemon on the same store, answer the same (ids and times aside), and fail the same. The
remote ones run twice: with httpx2, and with the standard library's one-shot requests the CLI
sends (``oneshot=True``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from tests.api.support import Daemon, Home, running_daemon, short_dir

from compozy_mcp.config import Settings
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi import HostClient
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.remote import RemoteHost
from compozy_mcp.hostapi.target import parse_target

pytestmark = [pytest.mark.anyio, pytest.mark.process]

#: what differs between two runs of the same operation: ids and times
_VOLATILE = re.compile(
    r"(sess|wt|run|loop|turn|art)-[a-z0-9]+|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"
)


def _same(value: Any) -> Any:
    """``value`` with its ids and times replaced by placeholders."""
    if isinstance(value, dict):
        return {key: _same(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_same(item) for item in value]
    if isinstance(value, str):
        return _VOLATILE.sub("<volatile>", value)
    return value


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Home, Daemon]]:
    home = Home.make(tmp_path_factory.mktemp("both"))
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as daemon,
    ):
        yield home, daemon


@pytest.fixture(params=["local", "http", "socket", "http-oneshot", "socket-oneshot"])
async def host(request: pytest.FixtureRequest, served: tuple[Home, Daemon]) -> AsyncIterator[Any]:
    home, daemon = served
    opened: HostClient
    if request.param == "local":
        opened = LocalHost.open(Settings.from_env(home.env))
    elif request.param.startswith("http"):
        assert daemon.url is not None
        opened = RemoteHost(parse_target(daemon.url), oneshot=request.param.endswith("oneshot"))
    else:
        assert daemon.socket is not None
        opened = RemoteHost(
            parse_target(f"unix:{daemon.socket}"), oneshot=request.param.endswith("oneshot")
        )
    try:
        yield opened
    finally:
        await opened.aclose()


async def _walk(host: Any) -> list[Any]:
    """A session's life and a Loop's, through the Host API; every answer, in order."""
    answers: list[Any] = []
    created = await host.call(ops.CREATE_SESSION, {"agent_name": "general", "name": "both hosts"})
    sid = created["session"]["id"]
    answers.append(created)
    answers.append(await host.call(ops.SESSION_STATUS, {"session_id": sid}))
    answers.append(await host.call(ops.ARCHIVE_SESSION, {"session_id": sid}))
    answers.append(await host.call(ops.UNARCHIVE_SESSION, {"session_id": sid}))
    listed = await host.call(ops.LIST_SESSIONS, {"limit": 100})
    answers.append([s for s in listed["sessions"] if s["id"] == sid])
    answers.append(await host.call(ops.VALIDATE_LOOP, {"definition": "graph: {}\n"}))
    answers.append(await host.call(ops.LIST_AGENTS, {}))
    answers.append(await host.call(ops.ARCHIVE_SESSION, {"session_id": sid}))
    answers.append(await host.call(ops.DELETE_SESSION, {"session_id": sid}))
    return answers


async def test_every_host_answers_the_same(host: Any, served: tuple[Home, Daemon]) -> None:
    home, _ = served
    reference = LocalHost.open(Settings.from_env(home.env))
    try:
        expected = _same(await _walk(reference))
    finally:
        await reference.aclose()
    assert _same(await _walk(host)) == expected


async def test_every_host_fails_the_same(host: Any) -> None:
    failures: list[tuple[str, str]] = []
    for attempt in (
        host.call(ops.SESSION_STATUS, {"session_id": "sess-nope"}),
        host.call(ops.ARCHIVE_SESSION, {"session_id": "sess-nope"}),
        host.call(ops.CREATE_SESSION, {"agent_name": "general", "result_view": "full"}),
        host.call(ops.CREATE_SESSION, {"agent_name": 7}),
    ):
        with pytest.raises(CompozyError) as caught:
            await attempt
        failures.append((caught.value.code, str(caught.value.reason)))
    assert failures == [
        ("not_found", "session_not_found"),
        ("not_found", "session_not_found"),
        ("tool_invalid_input", "schema_invalid"),
        ("tool_invalid_input", "schema_invalid"),
    ]


async def test_every_host_walks_a_task_the_same(host: Any) -> None:
    """Issue 27: a task queued, claimed, delivered and accepted through either host."""
    session = (await host.call(ops.CREATE_SESSION, {"agent_name": "general"}))["session"]["id"]
    task = (await host.call(ops.BY_NAME["task_create"], {"title": "both hosts", "priority": 1000}))[
        "task"
    ]
    claimed = await host.call(
        ops.BY_NAME["task_run_claim_next"], {"session_id": session, "lease_seconds": 60}
    )
    assert claimed["task"]["task_id"] == task["task_id"]
    run_id = claimed["task"]["current_run"]["run_id"]
    await host.call(ops.BY_NAME["task_run_heartbeat"], {"run_id": run_id})
    delivered = await host.call(
        ops.BY_NAME["task_run_complete"], {"run_id": run_id, "summary": "done"}
    )
    delivery = delivered["task"]["current_run"]["delivery_id"]
    reviewed = await host.call(
        ops.BY_NAME["task_run_review_submit"], {"task_id": task["task_id"], "decision": "accept"}
    )
    assert (reviewed["task"]["state"], reviewed["review"]["delivery_id"]) == ("done", delivery)
    listed = await host.call(ops.BY_NAME["task_list"], {"states": ["done"], "limit": 500})
    assert task["task_id"] in [t["task_id"] for t in listed["tasks"]]
    with pytest.raises(CompozyError) as caught:
        await host.call(ops.BY_NAME["task_status"], {"task_id": "task-nope"})
    assert (caught.value.code, str(caught.value.reason)) == ("not_found", "not_found")


async def test_every_host_sets_shows_and_wakes_a_heartbeat_the_same(host: Any) -> None:
    """Issue 27: a session's heartbeat through either host, with the policy it runs under."""
    session = (await host.call(ops.CREATE_SESSION, {"agent_name": "general"}))["session"]["id"]
    given = {"session_id": session, "cron": "0 9 * * 1-5", "quiet_hours": "22:00-06:00"}
    beat = (await host.call(ops.BY_NAME["heartbeat_set"], given))["heartbeat"]
    assert (beat["cron"], beat["quiet_hours"], beat["enabled"]) == (
        "0 9 * * 1-5",
        "22:00-06:00",
        True,
    )
    shown = (await host.call(ops.BY_NAME["heartbeat_status"], {"session_id": session}))["heartbeat"]
    assert shown["snapshot_id"] == beat["snapshot_id"]
    assert shown["prompt"]  # the full record
    woken = (await host.call(ops.BY_NAME["heartbeat_wake"], {"session_id": session}))["heartbeat"]
    assert woken["last_outcome"] in ("woken", "skipped_busy")
    with pytest.raises(CompozyError) as caught:
        await host.call(ops.BY_NAME["heartbeat_set"], {"session_id": session, "cron": "61 * * * *"})
    assert (caught.value.code, str(caught.value.reason)) == ("tool_invalid_input", "schema_invalid")
