"""The FastMCP virtualenv under ``.bench/``: created on first use, reused afterwards.

FastMCP is not a dependency of compozy-mcp, so it gets its own environment. It is pinned, and
so is its ``mcp`` (to the version this project runs), so that both stacks sit on the same SDK
and the comparison measures the frameworks, not two SDK releases.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from benchmarks.common import REPO_ROOT

FASTMCP_VERSION = "4.2.3"
BENCH_DIR = REPO_ROOT / ".bench"
VENV = BENCH_DIR / "fastmcp"


def python() -> Path:
    return VENV / "bin" / "python"


def installed_version() -> str | None:
    """The FastMCP version in the virtualenv, or ``None`` if there is none."""
    if not python().exists():
        return None
    probe = subprocess.run(
        [str(python()), "-c", "import importlib.metadata as m; print(m.version('fastmcp'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure(*, log: bool = True) -> Path:
    """The virtualenv's python, creating or updating the virtualenv when needed."""
    if installed_version() == FASTMCP_VERSION:
        return python()
    BENCH_DIR.mkdir(exist_ok=True)
    # nothing under .bench/ belongs in version control
    (BENCH_DIR / ".gitignore").write_text("*\n", encoding="utf-8")
    if log:
        print(f"installing fastmcp=={FASTMCP_VERSION} into {VENV} ...", file=sys.stderr)
    if not python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    mcp_version = importlib.metadata.version("mcp")
    subprocess.run(
        [
            str(python()),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"fastmcp=={FASTMCP_VERSION}",
            f"mcp=={mcp_version}",
        ],
        check=True,
    )
    return python()


def script() -> Path:
    return Path(__file__).with_name("fastmcp_bench.py")
