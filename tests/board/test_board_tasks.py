"""Tasks on the operator's board (issue 27: "tasks appear on the board"), over HTTP against a
real daemon: the tasks page and its fragment, tasks in their state's column with hostile text
escaped, the run's session linked, a delivery in review with the buttons that review it (the
HTTP API's review route), data behind the token, GETs that change nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from tests.api.support import Daemon, Home, running_daemon

pytestmark = pytest.mark.process

HOSTILE = '<img src=x onerror=alert(1)><script>alert("x")</script>'


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = Home.make(tmp_path_factory.mktemp("board-tasks"))
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


def _post(client: httpx2.Client, path: str, body: dict[str, Any], expect: int = 200) -> Any:
    response = client.post(path, json=body)
    assert response.status_code == expect, response.text
    return response.json()


def _column_of(page: str, task_id: str) -> str | None:
    found = re.search(
        r'<section class="column" data-column="(\w+)">((?:(?!</section>).)*)'
        + re.escape(f'id="task-{task_id}"'),
        page,
        re.S,
    )
    return found.group(1) if found else None


def test_tasks_sit_in_their_states_column_with_hostile_text_escaped(
    client: httpx2.Client,
) -> None:
    worker = _post(client, "/api/sessions", {"agent_name": "general"}, 201)["session"]["id"]
    queued = _post(client, "/api/tasks", {"title": HOSTILE, "labels": ["ui"]}, 201)["task"]
    claimed = _post(client, "/api/tasks/claim", {"session_id": worker})["task"]
    run_id = claimed["current_run"]["run_id"]
    _post(client, f"/api/task-runs/{run_id}/complete", {"summary": HOSTILE})
    waiting = _post(client, "/api/tasks", {"title": "next up", "priority": 0}, 201)["task"]
    page = client.get("/board/tasks")
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    html = page.text
    assert _column_of(html, queued["task_id"]) == "in_review"
    assert _column_of(html, waiting["task_id"]) == "todo"
    assert f'href="/session?id={worker}"' in html  # the run's session, linked
    assert "<img src=x" not in html
    assert "<script" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") == 2  # the title and the summary
    # the buttons a delivery in review has, and the route they post to review it
    assert f'class="task-review" data-task="{queued["task_id"]}" data-decision="accept"' in html
    _post(client, f"/api/tasks/{queued['task_id']}/review", {"decision": "accept"})
    assert _column_of(client.get("/board/tasks").text, queued["task_id"]) == "done"


def test_the_tasks_page_is_a_shell_linked_from_the_board_and_gets_change_nothing(
    client: httpx2.Client,
) -> None:
    _post(client, "/api/tasks", {"title": "unchanged"}, 201)
    before = client.get("/api/tasks").json()
    shell = client.get("/tasks")
    assert shell.status_code == 200
    assert '<script src="/static/tasks.js" defer></script>' in shell.text
    assert "unchanged" not in shell.text  # no data before the token
    assert 'href="/tasks"' in client.get("/").text
    script = client.get("/static/tasks.js")
    assert script.headers["content-type"].startswith("text/javascript")
    for path in ("/tasks", "/board/tasks", "/static/tasks.js"):
        client.get(path)
    assert client.get("/api/tasks").json() == before


def test_with_a_token_the_tasks_data_needs_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    home = Home.make(tmp_path_factory.mktemp("board-tasks-token"))
    token_file = home.path.parent / "token"
    token_file.write_text("s3cret-tasks-token\n")
    authorized = {"Authorization": "Bearer s3cret-tasks-token"}
    with (
        running_daemon(
            home,
            *("--port", "0", "--no-uds", "--token-file", str(token_file)),
            listeners=1,
            ready_headers=authorized,
        ) as running,
        running.client() as anonymous,
    ):
        assert anonymous.get("/tasks").status_code == 200  # the shell asks for the token
        assert anonymous.get("/board/tasks").status_code == 401
        assert anonymous.get("/board/tasks", headers=authorized).status_code == 200
