"""The operator's board over HTTP against a real daemon: its security headers, escaping of
hostile session names, the token, the same-origin rule on POSTs, GETs that change nothing, and
the stream redrawing the cards when a turn starts and ends."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx2
import pytest
from tests.api.support import Daemon, Home, running_daemon
from tests.board.support import (
    HOSTILE,
    add_failing_hook,
    create,
    invoke,
    remember_hostile_grant,
)
from tests.loops.support import gate, graph, status_node, transform

from compozy_mcp.board._app import TRANSCRIPT_PAGE

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    return Home.make(tmp_path_factory.mktemp("board"))


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


def test_the_listening_line_names_the_board(daemon: Daemon) -> None:
    assert re.search(r"board http://127\.0\.0\.1:\d+/", daemon.stderr)


def test_every_board_response_has_a_strict_csp_and_no_inline_script(
    client: httpx2.Client,
) -> None:
    for path in ("/", "/static/board.js", "/static/board.css", "/board/cards"):
        response = client.get(path)
        assert response.status_code == 200, path
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert "default-src 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
    page = client.get("/").text
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", page))
    assert not re.search(r"<script[^>]*>\s*[^<\s]", page)  # every script tag is empty


def test_cards_sit_in_their_column_with_hostile_names_escaped(client: httpx2.Client) -> None:
    made = create(client, name=HOSTILE)
    cards = client.get("/board/cards").text
    column = re.search(
        r'<section class="column" data-column="(\w+)">((?:(?!</section>).)*)'
        + re.escape(f'id="card-{made["id"]}"'),
        cards,
        re.S,
    )
    assert column is not None
    assert column.group(1) == made["board_column"]
    assert "<img src=x" not in cards
    assert "<script>" not in cards
    assert "&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;" in cards


def test_archived_sessions_are_hidden_unless_asked(client: httpx2.Client) -> None:
    made = create(client, name="to be archived")
    assert client.post(f"/api/sessions/{made['id']}/archive").status_code == 200
    assert f'id="card-{made["id"]}"' not in client.get("/board/cards").text
    assert f'id="card-{made["id"]}"' in client.get("/board/cards?archived=1").text


def test_gets_change_nothing(client: httpx2.Client) -> None:
    made = create(client, name="unchanged")
    grants = invoke(client, "compozy__tool_approvals_list")
    before = client.get("/api/sessions").json()
    for path in (
        "/",
        "/board/cards",
        "/board/cards?archived=1",
        "/static/board.js",
        f"/board/session?id={made['id']}",
        f"/board/transcript?id={made['id']}",
        "/board/loops",
        "/board/hooks",
        "/board/approvals",
    ):
        assert client.get(path).status_code == 200, path
    with client.stream("GET", "/board/stream") as stream:
        next(stream.iter_lines())
    assert client.get("/api/sessions").json() == before
    assert invoke(client, "compozy__tool_approvals_list") == grants


def test_a_post_from_another_origin_is_refused(client: httpx2.Client) -> None:
    made = create(client, name="guarded")
    response = client.post(
        f"/api/sessions/{made['id']}/archive", headers={"Origin": "http://evil.example"}
    )
    assert response.status_code == 403
    assert client.get(f"/api/sessions/{made['id']}").json()["session"]["archived_at"] is None


def test_the_board_stream_redraws_when_a_turn_starts_and_ends(client: httpx2.Client) -> None:
    made = create(client, name="streamed", provider="echo")
    card = f'id="card-{made["id"]}"'
    with client.stream("GET", "/board/stream", timeout=60) as stream:
        frames = _frames(stream.iter_lines())
        first = next(frames)
        assert card in first
        response = client.post(
            f"/api/sessions/{made['id']}/prompt", json={"prompt": HOSTILE, "wait": True}
        )
        assert response.status_code == 200, response.text
        settled = client.get(f"/api/sessions/{made['id']}").json()["session"]["board_column"]
        for frame in frames:  # the stream redraws until the card sits where the turn left it
            found = re.search(r'data-column="(\w+)">(?:(?!</section>).)*' + card, frame, re.S)
            if found and found.group(1) == settled and frame != first:
                break
        else:
            pytest.fail("the stream ended before the card settled")
    assert "<img src=x" not in frame


def _frames(lines: Iterator[str]) -> Iterator[str]:
    data: list[str] = []
    for line in lines:
        if line.startswith("data: "):
            data.append(line[6:])
        elif not line and data:
            yield "\n".join(data)
            data = []


def test_with_a_token_the_page_loads_and_its_data_needs_the_token(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    home = Home.make(tmp_path_factory.mktemp("board-token"))
    token_file = home.path.parent / "token"
    token_file.write_text("s3cret-board-token\n")
    authorized = {"Authorization": "Bearer s3cret-board-token"}
    with (
        running_daemon(
            home,
            *("--port", "0", "--no-uds", "--token-file", str(token_file)),
            listeners=1,
            ready_headers=authorized,
        ) as running,
        running.client() as anonymous,
    ):
        for shell in ("/", "/session?id=x", "/loops", "/hooks", "/approvals", "/static/common.js"):
            assert anonymous.get(shell).status_code == 200, shell  # no data: asks for the token
        for data in (
            "/board/cards",
            "/board/stream",
            "/board/session?id=x",
            "/board/transcript?id=x",
            "/board/loops",
            "/board/hooks",
            "/board/approvals",
        ):
            assert anonymous.get(data).status_code == 401, data
        assert anonymous.get("/board/cards", headers=authorized).status_code == 200


def test_the_session_page_escapes_names_and_agent_messages(client: httpx2.Client) -> None:
    made = create(client, name=HOSTILE, provider="echo")
    response = client.post(
        f"/api/sessions/{made['id']}/prompt", json={"prompt": HOSTILE, "wait": True}
    )
    assert response.status_code == 200, response.text
    shell = client.get(f"/session?id={made['id']}")
    assert shell.headers["content-security-policy"].startswith("default-src 'none'")
    assert made["id"] not in shell.text  # the shell holds no data: it loads before the token
    for fragment in ("/board/session", "/board/transcript"):
        detail = client.get(fragment, params={"id": made["id"]}).text
        assert "&lt;img src=x onerror=alert(1)&gt;" in detail
        assert "<img" not in detail
        assert "<script" not in detail


def test_the_session_fragment_of_an_unknown_session_is_a_404(client: httpx2.Client) -> None:
    response = client.get("/board/session", params={"id": "sess-nope"})
    assert response.status_code == 404
    assert response.json()["error"]["reason"] == "session_not_found"


def test_a_card_shows_its_last_turns_summary(client: httpx2.Client) -> None:
    made = create(client, name="summarized", provider="echo")
    assert 'class="summary"' not in _card(client.get("/board/cards").text, made["id"])
    response = client.post(
        f"/api/sessions/{made['id']}/prompt", json={"prompt": "tell me", "wait": True}
    )
    assert response.status_code == 200, response.text
    shown = _card(client.get("/board/cards").text, made["id"])
    assert re.search(
        r'<span class="turn-status">completed</span> <span class="age">\d+s ago', shown
    )
    assert '<span class="summary">echo: tell me</span>' in shown


def _card(cards: str, session_id: str) -> str:
    found = re.search(rf'<article [^>]*id="card-{session_id}".*?</article>', cards, re.S)
    assert found is not None
    return found.group(0)


def _events(client: httpx2.Client, session_id: str) -> int:
    page = client.get(f"/api/sessions/{session_id}/events", params={"limit": 500}).json()
    return len(page["events"])


def test_the_transcript_is_read_a_page_at_a_time_to_its_end(client: httpx2.Client) -> None:
    made = create(client, name="long", provider="echo")
    turns = 0
    while _events(client, made["id"]) <= TRANSCRIPT_PAGE:  # more than one page of events
        response = client.post(
            f"/api/sessions/{made['id']}/prompt",
            json={"prompt": f"turn {turns}", "wait": True},
        )
        assert response.status_code == 200, response.text
        turns += 1
    pages, cursor, more = [], 0, True
    while more:
        page = client.get("/board/transcript", params={"id": made["id"], "cursor": cursor}).text
        head = re.search(r'data-next-cursor="(\d+)" data-more="(true|false)"', page)
        assert head is not None
        cursor, more = int(head.group(1)), head.group(2) == "true"
        pages.append(page)
    assert len(pages) >= 2
    whole = "".join(pages)
    assert "echo: turn 0<" in whole
    assert f"echo: turn {turns - 1}<" in whole  # the end of a long session is readable
    assert whole.count('<span class="kind">turn_ended</span>') == turns


def test_a_transcript_cursor_that_is_not_a_number_is_a_400(client: httpx2.Client) -> None:
    made = create(client, name="cursor")
    response = client.get("/board/transcript", params={"id": made["id"], "cursor": "x"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"


def test_hook_runs_show_failures_with_their_stderr_escaped(client: httpx2.Client) -> None:
    add_failing_hook(client, "compozy__session_rename")
    made = create(client, name="renamed by a hooked call")
    invoke(client, "compozy__session_rename", session_id=made["id"], name="renamed")
    for query in ("", "?failed=1"):
        runs = client.get("/board/hooks" + query).text
        run = re.search(
            r'<section class="hook-run failed"[^>]*data-outcome="error">.*?</section>', runs, re.S
        )
        assert run is not None, query
        assert "hostile-stderr" in run.group(0)
        assert "exit 3" in run.group(0)
        assert '<pre class="stderr">&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;' in run.group(
            0
        )
        assert "<img" not in runs
        assert "<script" not in runs


def test_remembered_approvals_are_listed_with_their_inputs_escaped_and_revoked(
    client: httpx2.Client,
) -> None:
    grant = remember_hostile_grant(client, "compozy__session_rename", "name")
    listed = client.get("/board/approvals").text
    shown = re.search(
        rf'<section class="grant" id="grant-{grant["id"]}".*?</section>', listed, re.S
    )
    assert shown is not None
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown.group(0)
    assert f'data-grant="{grant["id"]}">Revoke</button>' in shown.group(0)
    assert "<img" not in listed
    invoke(client, "compozy__tool_approvals_revoke", grant_id=grant["id"])
    assert f'id="grant-{grant["id"]}"' not in client.get("/board/approvals").text


def test_the_session_page_links_a_parent_and_its_children_and_the_card_counts_them(
    client: httpx2.Client,
) -> None:
    parent = create(client, name="parent")
    child = invoke(
        client,
        "compozy__session_spawn",
        parent_session_id=parent["id"],
        agent_name="general",
        ttl_seconds=3600,
        name=HOSTILE,
    )["session_id"]
    shown = client.get("/board/session", params={"id": parent["id"]}).text
    assert f'child <a href="/session?id={child}">&lt;img src=x' in shown
    shown = client.get("/board/session", params={"id": child}).text
    assert f'parent <a href="/session?id={parent["id"]}">{parent["id"]}</a>' in shown
    alone = client.get("/board/session", params={"id": create(client, name="alone")["id"]}).text
    assert "Lineage" not in alone  # no parent, no children: no empty section
    card = _card(client.get("/board/cards").text, parent["id"])
    assert '<p class="children">1 child session</p>' in card


#: a transform whose output is hostile text, then a call that fails when it runs (its
#: ``session_id`` input is a number): the run fails at ``inspect`` after ``first`` succeeded
OUTPUT_THEN_FAILURE = graph(
    transform("first", f"'{HOSTILE}'"),
    status_node(view="full"),
    edges=(("first", "inspect"),),
)


def _run_section(page: str, run_id: str) -> str:
    shown = re.search(rf'<section class="run" id="run-{run_id}".*?</section>', page, re.S)
    assert shown is not None, page
    return shown.group(0)


def _node_item(section: str, node_id: str) -> str:
    shown = re.search(rf'<li class="node" data-node="{node_id}".*?</li>\n', section, re.S)
    assert shown is not None, section
    return shown.group(0)


def test_the_loops_page_shows_a_failed_nodes_error_with_its_code_and_a_nodes_output(
    client: httpx2.Client,
) -> None:
    made = client.post("/api/loops", json={"definition": OUTPUT_THEN_FAILURE})
    assert made.status_code == 201, made.text
    started = client.post(
        f"/api/loops/{made.json()['loop']['id']}/runs",
        json={"inputs": {"session_id": 7}, "wait": True},
    )
    assert started.status_code == 201, started.text
    run = started.json()["run"]
    assert run["status"] == "failed"
    section = _run_section(client.get("/board/loops").text, run["run_id"])
    assert 'data-status="failed"' in section
    failed = _node_item(section, "inspect")
    assert 'data-status="failed"' in failed
    # the code and the message as HTTP shows them (redacted as every dispatch message is)
    assert '<pre class="attention">tool_invalid_input: invalid tool request</pre>' in failed
    output = _node_item(section, "first")
    assert 'data-status="succeeded"' in output
    assert "<summary>output</summary>" in output
    assert "&#34;value&#34;: &#34;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;" in output
    assert "<img" not in section
    assert "<script" not in section


def test_a_waiting_gate_offers_pass_and_fail_for_each_criterion_and_a_note(
    client: httpx2.Client,
) -> None:
    definition = graph(gate("review", ("tests", HOSTILE), ("docs", "Docs updated?")))
    made = client.post("/api/loops", json={"definition": definition})
    assert made.status_code == 201, made.text
    started = client.post(f"/api/loops/{made.json()['loop']['id']}/runs", json={"wait": True})
    assert started.status_code == 201, started.text
    run_id = started.json()["run"]["run_id"]
    section = _run_section(client.get("/board/loops").text, run_id)
    shown = _node_item(section, "review")
    for criterion in ("tests", "docs"):
        for verdict in ("pass", "fail"):
            answer = f"gate-{run_id}-review-criterion-{criterion}"
            assert f'name="{answer}" id="{answer}-{verdict}" value="{verdict}"' in shown
    assert f'id="gate-{run_id}-review-note"' in shown
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown  # the criterion's prompt, as text
    assert "<img" not in section
