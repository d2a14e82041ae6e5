"""Screenshots of the operator's board and a session page for the README (docs/images/).

Starts ``compozy serve`` on a scratch data directory, makes a few echo sessions (one waiting
for a permission answer, two that finished a turn), and drives Debian's Chromium
(``/usr/bin/chromium``) with Playwright. Run ``.venv/bin/python scripts/board_screenshots.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx2
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from benchmarks.board_render import scratch_daemon

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
CHROMIUM = "/usr/bin/chromium"


def _sessions(client: httpx2.Client) -> str:
    def create(**fields: object) -> str:
        made = client.post("/api/sessions", json={"agent_name": "general", **fields})
        made.raise_for_status()
        return str(made.json()["session"]["id"])

    create(name="Plan the release notes")
    done = create(name="Fix the flaky upload test", provider="echo")
    client.post(f"/api/sessions/{done}/prompt", json={"prompt": "plan", "wait": True})
    asking = create(name="Write notes.txt", provider="echo")
    client.post(f"/api/sessions/{asking}/prompt", json={"prompt": "write"})
    parent = create(name="Refactor the store", provider="echo")
    client.post(f"/api/sessions/{parent}/prompt", json={"prompt": "hello", "wait": True})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        record = client.get(f"/api/sessions/{asking}").json()["session"]
        if record["pending_interactions"]:
            break
        time.sleep(0.1)
    return asking


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with scratch_daemon(COMPOZY_PERMISSION_MODE="default") as url:
        with httpx2.Client(base_url=url, trust_env=False, timeout=60) as client:
            asking = _sessions(client)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 700})
                page.goto(url + "/")
                page.locator(f"#card-{asking}").wait_for()
                page.screenshot(path=str(OUT / "board.png"))
                page.goto(url + f"/session?id={asking}")
                page.locator("button.decide").first.wait_for()
                page.screenshot(path=str(OUT / "session.png"), full_page=True)
            finally:
                browser.close()
    print(f"wrote {OUT / 'board.png'} and {OUT / 'session.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
