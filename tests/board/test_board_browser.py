"""The operator's board in a real browser: Playwright for Python driving Debian's Chromium
(``/usr/bin/chromium``, ``make browser-deps``) against a real daemon. Skipped, with the reason,
where either is missing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Daemon, Home, running_daemon
from tests.board import support
from tests.board.support import HOSTILE
from tests.loops.support import gate, graph

from compozy_mcp.board._app import TRANSCRIPT_PAGE

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = "s3cret-browser-token"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)"
)
if not CHROMIUM.exists() and shutil.which("chromium") is None:
    pytest.skip(
        "Debian's chromium is not installed (/usr/bin/chromium): run `make browser-deps` as root",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = Home.make(tmp_path_factory.mktemp("board-browser"))
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon whose sessions ask the operator (not bypassed): permission requests wait."""
    home = Home.make(tmp_path_factory.mktemp("board-asking"))
    home = home.with_env(COMPOZY_PERMISSION_MODE="default")
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as running:
        yield running


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    opened = context.new_page()
    dialogs: list[str] = []

    def seen(dialog: Any) -> None:  # an alert() that ran: recorded, then dismissed
        dialogs.append(dialog.message)
        dialog.dismiss()

    opened.on("dialog", seen)
    opened.dialogs = dialogs
    try:
        yield opened
    finally:
        context.close()


def create(daemon: Daemon, headers: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    fields.setdefault("agent_name", "general")
    with daemon.client(headers=headers or {}) as client:
        response = client.post("/api/sessions", json=fields)
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()["session"]
    return session


def status(daemon: Daemon, session_id: str) -> dict[str, Any]:
    with daemon.client() as client:
        session: dict[str, Any] = client.get(f"/api/sessions/{session_id}").json()["session"]
    return session


def board(daemon: Daemon) -> str:
    assert daemon.url is not None
    return daemon.url + "/"


def card_in(page: Any, column: str, session_id: str) -> Any:
    return page.locator(f'section[data-column="{column}"] #card-{session_id}')


def test_the_board_renders_each_session_in_its_column(daemon: Daemon, page: Any) -> None:
    made = [create(daemon, name=f"board {n}") for n in range(3)]
    page.goto(board(daemon))
    for session in made:
        card = card_in(page, session["board_column"], session["id"])
        card.wait_for()
        assert card.locator(".name").inner_text() == session["name"]


def test_a_card_moves_when_a_turn_starts_and_ends(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name="mover", provider="echo")
    page.goto(board(daemon))
    card_in(page, made["board_column"], made["id"]).wait_for()
    with daemon.client() as client:
        response = client.post(
            f"/api/sessions/{made['id']}/prompt", json={"prompt": "hello", "wait": True}
        )
    assert response.status_code == 200, response.text
    settled = status(daemon, made["id"])["board_column"]
    assert settled != made["board_column"]
    card_in(page, settled, made["id"]).wait_for(timeout=15_000)
    summary = card_in(page, settled, made["id"]).locator(".last-turn .summary")
    assert summary.inner_text() == "echo: hello"  # the last turn's summary, and how long ago
    assert (
        card_in(page, settled, made["id"]).locator(".last-turn .age").inner_text().endswith(" ago")
    )


def test_hostile_names_and_messages_run_nothing(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name=HOSTILE, provider="echo")
    with daemon.client() as client:
        response = client.post(
            f"/api/sessions/{made['id']}/prompt", json={"prompt": HOSTILE, "wait": True}
        )
    assert response.status_code == 200, response.text
    page.goto(board(daemon))
    name = page.locator(f"#card-{made['id']} .name")
    name.wait_for()
    assert name.inner_text() == HOSTILE  # shown as text
    assert page.locator("#board img, #board script").count() == 0
    page.wait_for_timeout(300)  # give an injected handler its chance to run (it must not)
    assert page.dialogs == []


def test_the_filters_hide_cards_that_do_not_match(daemon: Daemon, page: Any) -> None:
    wanted = create(daemon, name="needle in the board")
    other = create(daemon, name="haystack")
    page.goto(board(daemon))
    page.locator(f"#card-{other['id']}").wait_for()
    page.fill("#filter-text", "needle")
    assert page.locator(f"#card-{wanted['id']}").is_visible()
    assert not page.locator(f"#card-{other['id']}").is_visible()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon started with --token-file: every page asks for its token."""
    home = Home.make(tmp_path_factory.mktemp("board-browser-token"))
    token_file = home.path.parent / "token"
    token_file.write_text(TOKEN + "\n")
    with running_daemon(
        home,
        *("--port", "0", "--no-uds", "--token-file", str(token_file)),
        listeners=1,
        ready_headers=AUTHORIZED,
    ) as running:
        yield running


#: each page, and what it shows once it has the token
PAGES = {
    "board": ("", "#board .columns"),
    "session": ("session?id={session}", ".session .name"),
    "loops": ("loops", "#loops .runs"),
    "hooks": ("hooks", "#hooks .hook-runs"),
    "approvals": ("approvals", "#approvals .grants"),
}


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_asks_the_token_once_and_keeps_it_for_the_tab(
    guarded: Daemon, browser: Any, name: str
) -> None:
    made = create(guarded, headers=AUTHORIZED, name="behind the token")
    path, drawn = PAGES[name]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(board(guarded) + path.format(session=made["id"]))
        page.locator("#token").wait_for()
        assert page.locator(drawn).count() == 0  # nothing shown before the token
        page.fill("#token", TOKEN)
        page.keyboard.press("Enter")
        page.locator(drawn).wait_for()
        assert page.locator("#token-form").is_hidden()
        assert page.evaluate("sessionStorage.getItem('compozy.token')") == TOKEN
        assert page.evaluate("localStorage.length") == 0
        assert TOKEN not in page.url
        page.reload()  # kept for the tab: no second prompt
        page.locator(drawn).wait_for()
        assert page.locator("#token-form").is_hidden()
    finally:
        context.close()


def test_the_page_loads_no_asset_from_elsewhere(daemon: Daemon, page: Any) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(board(daemon))
    page.locator("#board .columns").wait_for()
    assert requested
    assert all(url.startswith(board(daemon)) for url in requested)


def test_a_prompt_from_the_session_page_streams_into_its_transcript(
    daemon: Daemon, page: Any
) -> None:
    made = create(daemon, name="talker", provider="echo")
    page.goto(board(daemon) + f"session?id={made['id']}")
    page.locator(".session .name").wait_for()
    page.fill("#prompt", HOSTILE)
    page.click("#prompt-form button[type=submit]")
    page.locator(".transcript .event", has_text="onerror").first.wait_for(timeout=20_000)
    assert page.locator("#session img, #session script").count() == 0
    page.wait_for_timeout(300)
    assert page.dialogs == []


def test_archive_from_the_session_page_goes_through_the_api(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name="archived from the page")
    page.goto(board(daemon) + f"session?id={made['id']}")
    page.locator(".session .name").wait_for()
    page.focus("#archive")
    page.keyboard.press("Enter")  # keyboard access
    page.locator("#status", has_text="archive: done").wait_for()
    assert status(daemon, made["id"])["archived_at"] is not None


def test_a_permission_request_is_answered_from_the_page_and_counted_in_the_title(
    asking: Daemon, browser: Any, page: Any
) -> None:
    daemon = asking
    made = create(daemon, name="asks", provider="echo")
    watcher = browser.new_context().new_page()
    try:
        watcher.goto(board(daemon))
        watcher.locator(f"#card-{made['id']}").wait_for()
        page.goto(board(daemon) + f"session?id={made['id']}")
        page.locator(".session .name").wait_for()
        page.fill("#prompt", "write")
        page.click("#prompt-form button[type=submit]")
        allow = page.locator("button.decide[data-decision='allow-once']")
        allow.wait_for(timeout=20_000)  # the agent's real options, as buttons
        watcher.locator(f"#card-{made['id']}.needs-you").wait_for(timeout=15_000)
        assert watcher.title().startswith("(")
        allow.click()
        page.locator(".transcript .event", has_text="wrote notes.txt").first.wait_for(
            timeout=20_000
        )
        assert status(daemon, made["id"])["pending_interactions"] == []
    finally:
        watcher.context.close()


def ask_to_write(daemon: Daemon, page: Any, name: str) -> dict[str, Any]:
    """An echo session ``name``, its page open in ``page``, prompted from it to write a file
    (it asks permission first): the session."""
    made = create(daemon, name=name, provider="echo")
    page.goto(board(daemon) + f"session?id={made['id']}")
    page.locator(".session .name").wait_for()
    page.fill("#prompt", "write")
    page.click("#prompt-form button[type=submit]")
    return made


def test_cancel_from_the_session_page_ends_the_turn(asking: Daemon, page: Any) -> None:
    daemon = asking
    made = ask_to_write(daemon, page, "cancelled")
    page.locator("button.decide").first.wait_for(timeout=20_000)
    page.click("#cancel")
    page.locator(".transcript .event.turn_ended").first.wait_for(timeout=20_000)
    assert status(daemon, made["id"])["pending_interactions"] == []


GATE_LOOP = (
    "graph:\n  nodes:\n    - id: review\n      class: control\n      kind: gate\n"
    "      params:\n        criteria:\n"
    "          - id: ok\n            prompt: 'Is <b>it</b> right?'\n"
    "  edges: []\n"
)


def start_gated_run(daemon: Daemon, loop_id: str, definition: str = GATE_LOOP) -> str:
    """A run of ``definition`` (a gate) saved as ``loop_id``: its id (the run waits at the
    gate)."""
    with daemon.client() as client:
        made = client.post("/api/loops", json={"definition": definition, "loop_id": loop_id})
        assert made.status_code == 201, made.text
        started = client.post(f"/api/loops/{loop_id}/runs", json={})
        assert started.status_code in (200, 201, 202), started.text
    return str(started.json()["run"]["run_id"])


def test_a_gate_is_approved_from_the_loops_page(daemon: Daemon, page: Any) -> None:
    run_id = start_gated_run(daemon, "gated")
    page.goto(board(daemon) + "loops")
    run = page.locator(f'section.run[data-run="{run_id}"]')
    run.locator(".gate li", has_text="Is <b>it</b> right?").wait_for(timeout=15_000)  # as text
    assert run.locator("b").count() == 0
    run.locator("button.gate-answer[data-decision=approve]").click()
    page.locator(f'section.run[data-run="{run_id}"][data-status="succeeded"]').wait_for(
        timeout=15_000
    )


SLOW_THEN_GATE = graph(
    "id: work\nclass: action\nkind: run-agent\nparams:\n"
    "  agent: echo\n  prompt: slow 2\n  timeout_seconds: 60",
    gate("review", ("ok", "Done?")),
    edges=(("work", "review"),),
)


def test_a_run_that_reaches_its_gate_after_the_page_was_drawn_shows_the_gate(
    daemon: Daemon, page: Any
) -> None:
    """The loops page looks again while a run moves (a Loop run sends the board no event):
    drawn while the agent's two-second turn runs, it shows the gate once the run waits."""
    with daemon.client() as client:
        made = client.post("/api/loops", json={"definition": SLOW_THEN_GATE, "loop_id": "slow"})
        assert made.status_code == 201, made.text
        started = client.post("/api/loops/slow/runs", json={})
        assert started.status_code in (200, 201, 202), started.text
    run_id = started.json()["run"]["run_id"]
    page.goto(board(daemon) + "loops")
    moving = f'section.run[data-run="{run_id}"]:is([data-status="queued"], [data-status="running"])'
    page.locator(moving).wait_for(timeout=15_000)  # drawn before the gate
    run = page.locator(f'section.run[data-run="{run_id}"][data-status="waiting"]')
    run.locator(".gate li", has_text="Done?").wait_for(timeout=30_000)


def invoke(daemon: Daemon, tool: str, **tool_input: Any) -> dict[str, Any]:
    with daemon.client() as client:
        return support.invoke(client, tool, **tool_input)


def prompt(daemon: Daemon, session_id: str, text: str) -> None:
    with daemon.client() as client:
        response = client.post(
            f"/api/sessions/{session_id}/prompt", json={"prompt": text, "wait": True}
        )
    assert response.status_code == 200, response.text


def tab_to(page: Any, selector: str, presses: int = 80) -> None:
    """Press Tab until the element ``selector`` names has the focus (keyboard access: it can
    be reached without a mouse); fails when it cannot be reached."""
    target = page.locator(selector)
    target.wait_for()
    for _ in range(presses):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    pytest.fail(f"{selector} cannot be reached with the Tab key")


def test_the_filters_and_a_card_work_from_the_keyboard(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name="opened by keyboard")
    hidden = create(daemon, name="archived, shown when asked")
    with daemon.client() as client:
        assert client.post(f"/api/sessions/{hidden['id']}/archive").status_code == 200
    page.goto(board(daemon))
    page.locator(f"#card-{made['id']}").wait_for()
    assert page.locator(f"#card-{hidden['id']}").count() == 0
    tab_to(page, "#filter-archived")
    page.keyboard.press("Space")
    page.locator(f"#card-{hidden['id']}").wait_for()
    tab_to(page, "#filter-text")
    page.keyboard.type("opened by")
    assert not page.locator(f"#card-{hidden['id']}").is_visible()
    tab_to(page, f"#card-{made['id']} .name a")
    page.keyboard.press("Enter")
    page.locator(".session .name", has_text="opened by keyboard").wait_for()


def test_prompt_rename_stop_and_archive_from_the_keyboard(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name="driven by keyboard", provider="echo")
    page.goto(board(daemon) + f"session?id={made['id']}")
    page.locator(".session .name").wait_for()
    tab_to(page, "#prompt")
    page.keyboard.type("typed")
    tab_to(page, "#prompt-form button[type=submit]")
    page.keyboard.press("Enter")
    page.locator(".transcript .event", has_text="echo: typed").first.wait_for(timeout=20_000)

    tab_to(page, "#new-name")
    page.keyboard.type("renamed by keyboard")
    tab_to(page, "#rename")
    page.keyboard.press("Space")
    page.locator(".session .name", has_text="renamed by keyboard").wait_for()
    assert status(daemon, made["id"])["name"] == "renamed by keyboard"

    tab_to(page, "#stop")
    page.keyboard.press("Enter")
    page.locator("#status", has_text="stop: done").wait_for()
    assert status(daemon, made["id"])["state"] == "stopped"

    tab_to(page, "#archive")
    page.keyboard.press("Space")
    page.locator("#status", has_text="archive: done").wait_for()
    assert status(daemon, made["id"])["archived_at"] is not None


def test_permission_and_cancel_from_the_keyboard(asking: Daemon, page: Any) -> None:
    daemon = asking
    made = ask_to_write(daemon, page, "answered by keyboard")
    tab_to(page, "button.decide[data-decision='allow-once']")
    page.keyboard.press("Enter")
    page.locator(".transcript .event", has_text="wrote notes.txt").first.wait_for(timeout=20_000)
    assert status(daemon, made["id"])["pending_interactions"] == []

    page.fill("#prompt", "write")
    page.click("#prompt-form button[type=submit]")
    page.locator("button.decide").first.wait_for(timeout=20_000)
    tab_to(page, "#cancel")
    page.keyboard.press("Space")
    page.locator(".transcript .event.turn_ended").nth(1).wait_for(timeout=20_000)
    assert status(daemon, made["id"])["pending_interactions"] == []


def test_a_gate_is_approved_from_the_keyboard(daemon: Daemon, page: Any) -> None:
    run_id = start_gated_run(daemon, "gated-keys")
    page.goto(board(daemon) + "loops")
    tab_to(page, f'section.run[data-run="{run_id}"] button.gate-answer[data-decision=approve]')
    page.keyboard.press("Space")
    page.locator(f'section.run[data-run="{run_id}"][data-status="succeeded"]').wait_for(
        timeout=15_000
    )


TWO_CRITERIA = graph(gate("review", ("tests", "Do the tests pass?"), ("docs", "Docs updated?")))


def test_a_gate_is_answered_per_criterion_with_a_note_from_the_loops_page(
    daemon: Daemon, page: Any
) -> None:
    """Each criterion marked pass or fail (one with the mouse, one with the keyboard), a note,
    then Reject: the run records those answers and the note, as `compozy loop approve --reject
    --criterion tests=pass --criterion docs=fail --note ...` would."""
    run_id = start_gated_run(daemon, "gated-criteria", TWO_CRITERIA)
    page.goto(board(daemon) + "loops")
    gate_id = f"gate-{run_id}-review"

    def control(suffix: str) -> Any:
        return page.locator(f'[id="{gate_id}-{suffix}"]')

    control("criterion-tests-pass").wait_for(timeout=30_000)  # once the run waits at its gate
    control("criterion-tests-pass").click()
    tab_to(page, f'[id="{gate_id}-criterion-docs-pass"]')
    page.keyboard.press("ArrowRight")  # the group's other choice
    assert control("criterion-docs-fail").is_checked()
    tab_to(page, f'[id="{gate_id}-note"]')
    page.keyboard.type("docs <b>missing</b>")

    # a redraw (Refresh here; a moving run's every second) keeps what was started
    drawn = control("note").element_handle()
    page.click("#refresh")
    page.wait_for_function("element => !element.isConnected", arg=drawn, timeout=15_000)
    assert control("criterion-tests-pass").is_checked()
    assert control("criterion-docs-fail").is_checked()
    assert control("note").input_value() == "docs <b>missing</b>"

    tab_to(page, f'[id="{gate_id}-reject"]')
    page.keyboard.press("Enter")
    page.locator(f'section.run[data-run="{run_id}"][data-status="failed"]').wait_for(timeout=30_000)
    with daemon.client() as client:
        shown = client.get(f"/api/loop-runs/{run_id}")
    assert shown.status_code == 200, shown.text
    (review,) = [node for node in shown.json()["run"]["nodes"] if node["node_id"] == "review"]
    output = review["output"]
    assert output["decision"] == "reject"
    assert output["note"] == "docs <b>missing</b>"
    assert [(a["criterion_id"], a["passed"]) for a in output["answers"]] == [
        ("tests", True),  # a reject without answers would fail every criterion
        ("docs", False),
    ]


def test_hook_runs_show_a_failure_and_its_hostile_stderr_as_text(daemon: Daemon, page: Any) -> None:
    with daemon.client() as client:
        support.add_failing_hook(client, "compozy__session_unarchive")
    made = create(daemon, name="hooked")
    invoke(daemon, "compozy__session_unarchive", session_id=made["id"])
    page.goto(board(daemon) + "hooks")
    run = page.locator("section.hook-run.failed", has_text="hostile-stderr").first
    run.wait_for()
    assert run.get_attribute("data-outcome") == "error"
    assert run.locator("pre.stderr").inner_text() == HOSTILE  # shown as text
    assert page.locator("#hooks img, #hooks script").count() == 0
    tab_to(page, "#failed-only")  # failed runs only, from the keyboard
    page.keyboard.press("Space")
    page.locator("section.hook-run", has_text="hostile-stderr").first.wait_for()
    assert page.locator("section.hook-run:not(.failed)").count() == 0
    page.wait_for_timeout(300)
    assert page.dialogs == []


def test_a_remembered_approval_shows_its_hostile_input_and_is_revoked_by_keyboard(
    daemon: Daemon, page: Any
) -> None:
    with daemon.client() as client:
        grant = support.remember_hostile_grant(client, "compozy__session_unarchive", "session_id")
    page.goto(board(daemon) + "approvals")
    shown = page.locator(f"#grant-{grant['id']}")
    shown.wait_for()
    assert json.loads(shown.locator("pre.input").inner_text()) == {"session_id": HOSTILE}
    assert page.locator("#approvals img, #approvals script").count() == 0
    tab_to(page, f"#revoke-{grant['id']}")
    page.keyboard.press("Enter")
    shown.wait_for(state="detached")
    listed = invoke(daemon, "compozy__tool_approvals_list")["grants"]
    assert grant["id"] not in [found["id"] for found in listed]
    page.wait_for_timeout(300)
    assert page.dialogs == []


def test_a_long_transcript_is_shown_to_its_end(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name="long talk", provider="echo")
    turns = 0
    with daemon.client() as client:
        while (
            len(
                client.get(f"/api/sessions/{made['id']}/events", params={"limit": 500}).json()[
                    "events"
                ]
            )
            <= TRANSCRIPT_PAGE
        ):
            prompt(daemon, made["id"], f"turn {turns}")
            turns += 1
    page.goto(board(daemon) + f"session?id={made['id']}")
    last = page.locator(".transcript .event", has_text=f"echo: turn {turns - 1}")
    last.first.wait_for(timeout=20_000)
    assert page.locator(".transcript .event", has_text="echo: turn 0").count() == 1
    # the last turn's end may come with the page read after its text: wait for it to be drawn
    page.locator(".transcript .event.turn_ended").nth(turns - 1).wait_for(timeout=20_000)
    assert page.locator(".transcript .event.turn_ended").count() == turns
    prompt(daemon, made["id"], "one more")  # and it goes on as the session does
    page.locator(".transcript .event", has_text="echo: one more").first.wait_for(timeout=20_000)


def test_the_workspace_agent_and_state_filters_hide_cards_that_do_not_match(
    daemon: Daemon, page: Any, tmp_path: Path
) -> None:
    project = tmp_path / "filtered-project"
    project.mkdir()
    with daemon.client() as client:
        added = client.post("/api/workspaces", json={"path": str(project), "name": "filtered"})
        assert added.status_code == 201, added.text
    workspace = added.json()["workspace"]["id"]
    elsewhere = create(daemon, name="in another workspace", workspace_id=workspace)
    echoing = create(daemon, name="the echo agent's", agent_name="echo")
    stopped = create(daemon, name="stopped one")
    invoke(daemon, "compozy__session_stop", session_id=stopped["id"])
    assert status(daemon, stopped["id"])["state"] == "stopped"
    cards = {
        key: page.locator(f"#card-{made['id']}")
        for key, made in (("elsewhere", elsewhere), ("echoing", echoing), ("stopped", stopped))
    }
    page.goto(board(daemon))
    for card in cards.values():
        card.wait_for()
    for field, value, shown in (
        ("#filter-workspace", workspace, "elsewhere"),
        ("#filter-agent", "echo", "echoing"),
        ("#filter-state", "stopped", "stopped"),
    ):
        page.fill(field, value)
        for key, card in cards.items():
            if key == shown:
                sync_api.expect(card).to_be_visible(timeout=15_000)
            else:
                sync_api.expect(card).to_be_hidden(timeout=15_000)
        page.fill(field, "")
        for card in cards.values():  # the filter cleared, every card is back
            sync_api.expect(card).to_be_visible(timeout=15_000)


def test_an_approval_is_answered_from_the_session_page(daemon: Daemon, page: Any) -> None:
    made = create(daemon, name="asks before renaming")
    invoke(daemon, "compozy__tool_approvals_set", session_id=made["id"], permission_mode="default")
    call = {"input": {"session_id": made["id"], "name": "renamed once allowed"}}
    agent = {"X-Compozy-Session": made["id"]}
    with daemon.client(headers=agent) as client:
        waiting = client.post("/api/tools/compozy__session_rename/invoke", json=call)
    assert waiting.status_code == 202, waiting.text
    (item,) = status(daemon, made["id"])["pending_interactions"]
    page.goto(board(daemon) + f"session?id={made['id']}")
    shown = page.locator(f'.interaction[data-interaction="{item["interaction_id"]}"]')
    shown.wait_for(timeout=15_000)
    assert shown.locator("button.decide").all_inner_texts() == [
        "allow once",
        "allow always",
        "reject once",
        "reject always",
    ]
    assert json.loads(shown.locator("pre.input").inner_text()) == call["input"]
    shown.locator("button.decide[data-decision='allow-once']").click()
    page.locator("#status", has_text="approve: done").wait_for(timeout=15_000)
    shown.wait_for(state="detached", timeout=15_000)
    assert status(daemon, made["id"])["pending_interactions"] == []
    with daemon.client(headers=agent) as client:  # the agent's retry runs: allowed once
        retried = client.post("/api/tools/compozy__session_rename/invoke", json=call)
    assert retried.status_code == 200, retried.text
    assert status(daemon, made["id"])["name"] == "renamed once allowed"
