"""Running a benchmark script the way ``make bench`` does, in its tiny ``--quick`` mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from benchmarks.common import REPO_ROOT


def run_json(module: str, *args: str, timeout: float = 240) -> dict[str, Any]:
    """``python -m benchmarks.<module> --quick --json ...``; its parsed output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", "--quick", "--json", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result
