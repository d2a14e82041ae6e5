"""The operator's board in a real browser: Playwright for Python driving Debian's Chromium
(``/usr/bin/chromium``, ``make browser-deps``) against a real daemon. Skipped, with the reason,
where either is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Daemon, Home, running_daemon

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = '<img src=x onerror=alert(1)><script>alert("x")</script>'
TOKEN = "s3cret-browser-token"

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


def test_the_token_is_asked_once_and_kept_for_the_tab(
    tmp_path_factory: pytest.TempPathFactory, browser: Any
) -> None:
    home = Home.make(tmp_path_factory.mktemp("board-browser-token"))
    token_file = home.path.parent / "token"
    token_file.write_text(TOKEN + "\n")
    authorized = {"Authorization": f"Bearer {TOKEN}"}
    with running_daemon(
        home,
        *("--port", "0", "--no-uds", "--token-file", str(token_file)),
        listeners=1,
        ready_headers=authorized,
    ) as running:
        made = create(running, headers=authorized, name="behind the token")
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(board(running))
            page.locator("#token").wait_for()
            page.fill("#token", TOKEN)
            page.keyboard.press("Enter")
            page.locator(f"#card-{made['id']}").wait_for()
            assert page.evaluate("sessionStorage.getItem('compozy.token')") == TOKEN
            assert page.evaluate("localStorage.length") == 0
            assert TOKEN not in page.url
            page.reload()  # kept for the tab: no second prompt
            page.locator(f"#card-{made['id']}").wait_for()
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


def test_cancel_from_the_session_page_ends_the_turn(asking: Daemon, page: Any) -> None:
    daemon = asking
    made = create(daemon, name="cancelled", provider="echo")
    page.goto(board(daemon) + f"session?id={made['id']}")
    page.locator(".session .name").wait_for()
    page.fill("#prompt", "write")
    page.click("#prompt-form button[type=submit]")
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


def test_a_gate_is_approved_from_the_loops_page(daemon: Daemon, page: Any) -> None:
    with daemon.client() as client:
        made = client.post("/api/loops", json={"definition": GATE_LOOP, "loop_id": "gated"})
        assert made.status_code == 201, made.text
        started = client.post("/api/loops/gated/runs", json={})
        assert started.status_code in (200, 201, 202), started.text
    run_id = started.json()["run"]["run_id"]
    page.goto(board(daemon) + "loops")
    run = page.locator(f'section.run[data-run="{run_id}"]')
    run.locator(".gate li", has_text="Is <b>it</b> right?").wait_for(timeout=15_000)  # as text
    assert run.locator("b").count() == 0
    run.locator("button.gate-answer[data-decision=approve]").click()
    page.locator(f'section.run[data-run="{run_id}"][data-status="succeeded"]').wait_for(
        timeout=15_000
    )
