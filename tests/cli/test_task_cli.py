"""``compozy task ...`` in-process on the embedded store, as a user types it (issue 27): a task
is queued, claimed for a session, delivered, sent back by a review, delivered again and
accepted; the review records keep the delivery they reviewed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Home, compozy


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.make(tmp_path)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def as_json(home: Home, *args: str) -> Any:
    return json.loads(ok(compozy(home, *args, "-o", "json")))


def test_a_task_round_trip_through_the_cli(home: Home) -> None:
    session = as_json(home, "session", "create", "--agent", "general")["session"]["id"]
    created = as_json(
        home,
        "task",
        "create",
        "Fix the upload test",
        "--criterion",
        "the suite passes",
        "--label",
        "bug",
        "--priority",
        "5",
    )["task"]
    task_id = created["task_id"]
    assert (created["state"], created["acceptance_criteria"]) == ("todo", ["the suite passes"])
    listed = ok(compozy(home, "task", "list", "--state", "todo"))
    assert task_id in listed
    assert "Fix the upload test" in listed
    claimed = as_json(home, "task", "claim", "--session", session)
    run_id = claimed["task"]["current_run"]["run_id"]
    assert "claimed until" in ok(compozy(home, "task", "heartbeat", run_id))
    delivered = as_json(home, "task", "complete", run_id, "-m", "fixed")["task"]
    first_delivery = delivered["current_run"]["delivery_id"]
    back = as_json(home, "task", "review", task_id, "--request-changes", "-m", "add a test")
    assert back["task"]["state"] == "in_progress"
    assert back["review"]["delivery_id"] == first_delivery
    again = back["task"]["current_run"]["run_id"]
    as_json(home, "task", "complete", again, "-m", "with a test")
    accepted = as_json(home, "task", "review", task_id, "--accept")
    assert accepted["task"]["state"] == "done"
    shown = ok(compozy(home, "task", "show", task_id))
    assert f"request_changes of {first_delivery}" in shown
    assert "accept of dlv-" in shown


def test_release_fail_and_cancel(home: Home) -> None:
    session = as_json(home, "session", "create", "--agent", "general")["session"]["id"]
    task_id = as_json(home, "task", "create", "Flaky")["task"]["task_id"]
    run_id = as_json(home, "task", "claim", "--session", session)["task"]["current_run"]["run_id"]
    assert as_json(home, "task", "release", run_id)["task"]["state"] == "todo"
    run_id = as_json(home, "task", "claim", "--session", session)["task"]["current_run"]["run_id"]
    failed = as_json(home, "task", "fail", run_id, "--reason", "broken")["task"]
    assert failed["state"] == "todo"
    assert as_json(home, "task", "cancel", task_id)["task"]["state"] == "cancelled"
    assert "no todo task to claim" in ok(compozy(home, "task", "claim", "--session", session))
    refused = compozy(home, "task", "update", task_id, "--title", "x")
    assert refused.returncode != 0
    assert "cancelled" in refused.stderr


def test_a_heartbeat_set_shown_and_woken_through_the_cli(home: Home) -> None:
    session = as_json(home, "session", "create", "--agent", "general")["session"]["id"]
    set_ = ok(
        compozy(
            home, "heartbeat", "set", session, "--cron", "0 9 * * 1-5", "--quiet", "22:00-06:00"
        )
    )
    assert "cron 0 9 * * 1-5 (UTC)" in set_
    assert "quiet:      22:00-06:00" in set_
    shown = as_json(home, "heartbeat", "show", session)["heartbeat"]
    assert (shown["cron"], shown["snapshot_id"][:4], shown["enabled"]) == (
        "0 9 * * 1-5",
        "pol-",
        True,
    )
    first = as_json(home, "heartbeat", "wake", session)["heartbeat"]
    again = ok(compozy(home, "heartbeat", "wake", session))
    assert "last wake:" in again
    assert f"    {first['last_wake_at']} {first['last_outcome']}" in again  # the wake before
    paused = as_json(home, "heartbeat", "set", session, "--every", "600", "--disable")
    assert (paused["heartbeat"]["enabled"], "cron" in paused["heartbeat"]) == (False, False)
    refused = compozy(home, "heartbeat", "set", session, "--cron", "61 * * * *")
    assert refused.returncode != 0
    assert "tool_invalid_input" in refused.stderr  # redacted (spec): the tool says why
