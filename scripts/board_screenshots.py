"""Screenshots of the operator's board and a session page for the README (docs/images/).

Starts ``compozy serve`` on a scratch data directory, makes a few echo sessions (one waiting
for a permission answer, two that finished a turn), and drives Debian's Chromium
(``/usr/bin/chromium``) with Playwright. Run ``.venv/bin/python scripts/board_screenshots.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
COMPOZY = Path(sys.executable).parent / "compozy"
CHROMIUM = "/usr/bin/chromium"


def _listening(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        found = re.search(r"listening on (http\S+)", line)
        if found:
            return found.group(1)
    raise SystemExit("compozy serve did not start")


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
    with tempfile.TemporaryDirectory(prefix="cz-shots-") as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
        env.update(COMPOZY_HOME=f"{scratch}/home", COMPOZY_PERMISSION_MODE="default")
        process = subprocess.Popen(
            [str(COMPOZY), "serve", "--port", "0", "--no-uds"],
            env=env,
            cwd=scratch,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url = _listening(process)
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
        finally:
            process.terminate()
            process.wait(timeout=20)
    print(f"wrote {OUT / 'board.png'} and {OUT / 'session.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
