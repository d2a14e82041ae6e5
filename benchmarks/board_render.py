"""The operator's board with many sessions (issue 26): how long ``GET /board/cards`` takes
to render ``--sessions`` cards (500 by default) on a real daemon, and, with Debian's Chromium
(``/usr/bin/chromium``), how long the page takes from navigation to the cards drawn. Target:
500 sessions in under 1 s. ``--turns`` of the sessions (echo agents) have a last turn, which
their cards show: the first render reads every card's last turn, later ones only those of the
sessions that changed.

    python -m benchmarks.board_render [--sessions 500] [--turns 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from benchmarks.common import machine, machine_line, median

COMPOZY = Path(sys.executable).parent / "compozy"
CHROMIUM = Path("/usr/bin/chromium")


def _listening(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    for line in iter(process.stderr.readline, ""):
        found = re.search(r"listening on (http\S+)", line)
        if found:
            return found.group(1)
    raise SystemExit("compozy serve did not start")


@contextmanager
def scratch_daemon(**env_extra: str) -> Iterator[str]:
    """``compozy serve`` on a scratch data directory (TCP only), its URL; stopped after."""
    with tempfile.TemporaryDirectory(prefix="cz-board-") as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
        env.update(COMPOZY_HOME=f"{scratch}/home", **env_extra)
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
            yield _listening(process)
        finally:
            process.terminate()
            process.wait(timeout=20)


def _browser_seconds(url: str, sessions: int, rounds: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    took = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            for _ in range(rounds):
                started = time.perf_counter()
                page.goto(url + "/")
                # a locator, not wait_for_function: the page's CSP refuses evaluated strings
                page.locator(".card").nth(sessions - 1).wait_for(timeout=60_000)
                took.append(time.perf_counter() - started)
        finally:
            browser.close()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with scratch_daemon() as url:
        with httpx2.Client(base_url=url, trust_env=False, timeout=60) as client:
            for n in range(args.sessions):
                fields = {"agent_name": "general", "name": f"session {n}"}
                if n < args.turns:
                    fields["provider"] = "echo"
                made = client.post("/api/sessions", json=fields)
                made.raise_for_status()
                if n < args.turns:
                    session_id = made.json()["session"]["id"]
                    client.post(
                        f"/api/sessions/{session_id}/prompt",
                        json={"prompt": f"turn of session {n}", "wait": True},
                    ).raise_for_status()
            started = time.perf_counter()
            client.get("/board/cards").raise_for_status()
            first = time.perf_counter() - started
            server = []
            for _ in range(args.rounds):
                started = time.perf_counter()
                client.get("/board/cards").raise_for_status()
                server.append(time.perf_counter() - started)
        browser = _browser_seconds(url, args.sessions, args.rounds) if CHROMIUM.exists() else []
    print(machine_line(machine()))
    print(f"board with {args.sessions} sessions ({args.turns} with a last turn):")
    print(f"  GET /board/cards, first (every last turn read): {first * 1000:.0f} ms")
    took = median(server) * 1000
    print(f"  GET /board/cards (list + render), median of {args.rounds}: {took:.0f} ms")
    if browser:
        print(
            f"  Chromium, navigation to cards drawn, median of {args.rounds}: "
            f"{median(browser) * 1000:.0f} ms"
        )
    else:
        print("  Chromium: not measured (/usr/bin/chromium is missing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
