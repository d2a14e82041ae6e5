"""Issue 28, item 5: 14 concurrent writers across three daemons on one store (SQLite, and
PostgreSQL in the postgres tier), each writing the same session through a fenced operation
(``compozy__session_rewind`` with the ``transcript_epoch`` and ``generation`` it read). For each
fence value exactly one writer wins; every other gets ``409 tool_conflict / stale_fence``
naming the value the winner left; the record counts exactly the winners (no lost update)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from tests.api.support import Daemon
from tests.cluster.support import one_store_daemons

pytestmark = pytest.mark.process

WRITERS = 14
ROUNDS = 4
REWIND = "/api/tools/compozy__session_rewind/invoke"


def _fences(daemon: Daemon, session_id: str) -> tuple[int, int]:
    """The session's ``transcript_epoch`` and ``generation`` as ``daemon`` reads them (a
    record leaves each out while it is 0)."""
    with daemon.client() as http:
        found = http.get(f"/api/sessions/{session_id}", params={"result_view": "full"})
    session = found.json()["session"]
    return session.get("transcript_epoch", 0), session["runtime"].get("generation", 0)


def _race(daemons: list[Daemon], session_id: str, epoch: int, generation: int) -> list[Any]:
    """All writers (spread over the daemons) send the same fences at once; their answers."""
    start = threading.Barrier(WRITERS)
    answers: list[Any] = [None] * WRITERS
    fences = {"session_id": session_id, "transcript_epoch": epoch, "generation": generation}

    def write(index: int) -> None:
        with daemons[index % len(daemons)].client() as http:
            start.wait(timeout=60)
            try:
                answers[index] = http.post(REWIND, json={"input": fences}, timeout=60)
            except httpx.HTTPError as error:  # kept, so the assertion shows it
                answers[index] = error

    writers = [threading.Thread(target=write, args=(index,)) for index in range(WRITERS)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
    assert not any(writer.is_alive() for writer in writers)
    return answers


def test_fourteen_fenced_writers_across_three_daemons_one_winner_per_fence_value(
    tmp_path: Path, store_url: str | None
) -> None:
    with one_store_daemons(tmp_path, 3, store_url) as daemons:
        with daemons[0].client() as http:
            made = http.post("/api/sessions", json={"agent_name": "g", "provider": "echo"})
        assert made.status_code == 201, made.text
        sid = str(made.json()["session"]["id"])
        start, generation = _fences(daemons[1], sid)
        epoch = start
        for _ in range(ROUNDS):
            answers = _race(daemons, sid, epoch, generation)
            bodies = [
                (a.status_code, a.json()) if isinstance(a, httpx.Response) else a for a in answers
            ]
            won = [body for code, body in bodies if code == 200]
            lost = [body for code, body in bodies if code != 200]
            assert len(won) == 1, bodies
            assert len(lost) == WRITERS - 1, bodies
            for code, body in bodies:
                if code != 200:
                    assert code == 409, body
                    error = body["error"]
                    assert (error["code"], error["reason"]) == ("tool_conflict", "stale_fence")
                    assert error["details"]["fence"] == "transcript_epoch", error
                    assert error["details"]["sent"] == epoch
                    assert error["details"]["current"] == epoch + 1
            epoch += 1
            # every daemon reads what the winner wrote
            for daemon in daemons:
                assert _fences(daemon, sid) == (epoch, generation)
        assert _fences(daemons[2], sid)[0] == start + ROUNDS  # one winner a round, none lost
