"""The tasks page in a real browser (issue 27): a delivery in review sent back with comments
and then accepted from the keyboard, hostile text shown as text. The browser, the page and the
daemon are the board's browser tier's (:mod:`tests.board.test_board_browser`)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.api.support import Daemon
from tests.board.support import HOSTILE
from tests.board.test_board_browser import board, browser, daemon, page

pytestmark = pytest.mark.browser
__all__ = ["browser", "daemon", "page"]  # the fixtures this module uses


def _in_review(daemon: Daemon, title: str) -> str:
    """A task delivered by a session, waiting for its review; its id."""
    with daemon.client() as client:
        worker = client.post("/api/sessions", json={"agent_name": "general"}).json()
        client.post("/api/tasks", json={"title": title, "priority": 1000})
        claimed = client.post("/api/tasks/claim", json={"session_id": worker["session"]["id"]})
        task = claimed.json()["task"]
        run_id = task["current_run"]["run_id"]
        done = client.post(f"/api/task-runs/{run_id}/complete", json={"summary": HOSTILE})
        assert done.status_code == 200, done.text
    task_id: str = task["task_id"]
    return task_id


def test_a_delivery_is_sent_back_then_accepted_from_the_keyboard(daemon: Daemon, page: Any) -> None:
    task_id = _in_review(daemon, HOSTILE)
    page.goto(board(daemon) + "tasks")
    card = page.locator(f'article[data-task="{task_id}"]')
    card.wait_for(timeout=15_000)
    assert card.locator("h3").inner_text() == HOSTILE  # shown as text, never run
    assert page.dialogs == []
    card.locator("input.task-comments").focus()
    page.keyboard.type("add a test")
    page.keyboard.press("Tab")  # to Request changes
    page.keyboard.press("Enter")
    page.locator(f'section[data-column="in_progress"] article[data-task="{task_id}"]').wait_for(
        timeout=15_000
    )
    with daemon.client() as client:
        task = client.get(f"/api/tasks/{task_id}").json()["task"]
        assert task["review_notes"] == "add a test"
        run_id = task["current_run"]["run_id"]
        done = client.post(f"/api/task-runs/{run_id}/complete", json={"summary": "with a test"})
        assert done.status_code == 200, done.text
    page.locator("#refresh").click()
    accept = page.locator(f'button.task-review[data-task="{task_id}"][data-decision="accept"]')
    accept.focus()
    page.keyboard.press(" ")
    page.locator(f'section[data-column="done"] article[data-task="{task_id}"]').wait_for(
        timeout=15_000
    )
    assert page.dialogs == []
