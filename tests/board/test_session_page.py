"""The session page's fragments over HTTP against a real daemon whose workspace is a git
repository: the diff of a session's worktree (and no diff section without one), an approval
with its four answers and the call's input as sent, the runtime's status and failure when the
agent cannot start, and the agent's thoughts folded in the transcript."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.api.support import Daemon, Home, running_daemon
from tests.board.support import HOSTILE, create, invoke
from tests.worktrees.gitrepo import make_repo

pytestmark = pytest.mark.process

#: an agent whose command does not exist: binding a session to it fails the runtime
BROKEN_AGENTS = "agents:\n  broken:\n    command: /nonexistent/agent\n"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = Home.make(tmp_path_factory.mktemp("session-page"))
    make_repo(Path(home.env["COMPOZY_WORKSPACE"]), {"app.py": "print(1)\n"})
    home.path.mkdir(parents=True, exist_ok=True)
    (home.path / "agents.yaml").write_text(BROKEN_AGENTS, encoding="utf-8")
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


def detail(client: httpx2.Client, session_id: str) -> str:
    response = client.get("/board/session", params={"id": session_id})
    assert response.status_code == 200, response.text
    return response.text


def full(client: httpx2.Client, session_id: str) -> dict[str, Any]:
    response = client.get(f"/api/sessions/{session_id}", params={"result_view": "full"})
    assert response.status_code == 200, response.text
    session: dict[str, Any] = response.json()["session"]
    return session


def test_a_session_with_a_changed_worktree_shows_its_diff(client: httpx2.Client) -> None:
    made = create(client, name="with a worktree", worktree=True)
    directory = Path(full(client, made["id"])["worktree"]["directory"])
    (directory / "app.py").write_text(f"print({HOSTILE!r})\n")
    shown = detail(client, made["id"])
    section = re.search(
        r'<section class="diff"><h3>Worktree diff</h3><pre>(.*?)</pre>', shown, re.S
    )
    assert section is not None
    patch = html.unescape(section.group(1))
    assert "--- a/app.py" in patch
    assert "-print(1)" in patch
    assert f"+print({HOSTILE!r})" in patch
    assert "<img" not in shown  # the patch is shown as text


def test_a_session_without_a_worktree_has_no_diff_section(client: httpx2.Client) -> None:
    made = create(client, name="without a worktree")
    assert full(client, made["id"]).get("worktree") is None
    shown = detail(client, made["id"])
    assert 'class="diff"' not in shown
    assert "Worktree diff" not in shown


def held_rename(client: httpx2.Client, session_id: str, name: str) -> httpx2.Response:
    """The session ``session_id`` (as its agent would) renames itself to ``name``."""
    return client.post(
        "/api/tools/compozy__session_rename/invoke",
        json={"input": {"session_id": session_id, "name": name}},
        headers={"X-Compozy-Session": session_id},
    )


def asking_session(client: httpx2.Client, name: str) -> dict[str, Any]:
    """A session whose mutating calls wait for the operator (permission mode ``default``)."""
    made = create(client, name=name)
    invoke(client, "compozy__tool_approvals_set", session_id=made["id"], permission_mode="default")
    return made


def test_an_approval_shows_its_four_answers_and_the_input_as_sent(client: httpx2.Client) -> None:
    made = asking_session(client, "asks for approval")
    waiting = held_rename(client, made["id"], HOSTILE)
    assert waiting.status_code == 202, waiting.text
    (item,) = full(client, made["id"])["pending_interactions"]
    assert item["kind"] == "approval"
    shown = detail(client, made["id"])
    block = re.search(
        rf'<div class="interaction" data-interaction="{item["interaction_id"]}">.*?</div>',
        shown,
        re.S,
    )
    assert block is not None
    labels = re.findall(
        r'<button type="button" class="decide" [^>]*data-decision="([\w-]+)">([^<]*)</button>',
        block.group(0),
    )
    assert labels == [
        ("allow-once", "allow once"),
        ("allow-always", "allow always"),
        ("reject-once", "reject once"),
        ("reject-always", "reject always"),
    ]
    assert "compozy__session_rename" in block.group(0)
    sent = re.search(r'<pre class="input">(.*?)</pre>', block.group(0), re.S)
    assert sent is not None
    assert json.loads(html.unescape(sent.group(1))) == {"session_id": made["id"], "name": HOSTILE}
    assert "<img" not in shown


def test_a_runtime_that_cannot_start_shows_its_status_and_failure(client: httpx2.Client) -> None:
    made = create(client, name="cannot start")
    bound = invoke(
        client,
        "compozy__session_runtime_set",
        session_id=made["id"],
        provider="broken",
        selection_revision=0,
        generation=0,
        result_view="full",
    )
    assert bound["session"]["runtime"]["status"] == "failed"
    shown = detail(client, made["id"])
    assert "runtime failed" in shown
    failure = re.search(r'<p class="attention failure">failed: (.*?)</p>', shown, re.S)
    assert failure is not None
    shown_failure = json.loads(html.unescape(failure.group(1)))
    assert shown_failure["kind"] == "agent_start_failed"
    assert shown_failure["summary"].startswith('agent "broken": cannot start "/nonexistent/agent"')


def test_a_healthy_session_shows_no_failure(client: httpx2.Client) -> None:
    made = create(client, name="healthy", provider="echo")
    response = client.post(
        f"/api/sessions/{made['id']}/prompt", json={"prompt": "hi", "wait": True}
    )
    assert response.status_code == 200, response.text
    shown = detail(client, made["id"])
    assert "failure" not in shown
    assert re.search(r"runtime (\w+)", shown) is not None


def test_the_agents_thoughts_are_folded_in_the_transcript(client: httpx2.Client) -> None:
    made = create(client, name="thinks", provider="echo")
    response = client.post(
        f"/api/sessions/{made['id']}/prompt", json={"prompt": "three small words", "wait": True}
    )
    assert response.status_code == 200, response.text
    transcript = client.get("/board/transcript", params={"id": made["id"]}).text
    thoughts = re.findall(
        r'<details class="event thought" data-kind="([\w]+)"><summary>\1</summary>'
        r"<pre>(.*?)</pre></details>",
        transcript,
    )
    assert thoughts == [("agent_thought_chunk", "The user said 3 words.")]
    assert "echo: three small words" in transcript  # the reply is not folded
    assert not re.search(r"<details[^>]*>(?:(?!</details>).)*echo: three", transcript, re.S)
