"""MCP clients built on the TypeScript SDK, which validates every response strictly: a small
script on ``@modelcontextprotocol/sdk`` (``ts_client/``) and the MCP Inspector CLI
(``inspector_cli/``), over stdio and Streamable HTTP.

Each folder pins its packages with a lockfile; ``make node-deps`` (part of ``make test``)
installs them. Without ``node`` or the installed packages, the tests skip and say why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.proxy.support import COMPOZY, UNKNOWN_VIEW, Home, ProxyPool

from compozy_mcp.native import build_registry
from compozy_mcp.native.registry import Risk

pytestmark = pytest.mark.node

HERE = Path(__file__).parent
TS_CLIENT = HERE / "ts_client"
INSPECTOR = HERE / "inspector_cli"
RUN_TIMEOUT = 60

REGISTRY = build_registry()
NATIVE = [tool.id for tool in REGISTRY]
WITH_VIEWS = [tool.id for tool in REGISTRY if tool.has_views]


def node_folder(folder: Path, installed: str) -> Path:
    """``folder`` with its locked packages installed (``make node-deps`` installs them, and
    says what it downloads); skips, saying why, when they are not there."""
    if shutil.which("node") is None:
        pytest.skip("node is needed to run MCP clients built on the TypeScript SDK")
    if not (folder / "node_modules" / installed / "package.json").exists():
        pytest.skip(f"{folder.name}'s packages are not installed: run `make node-deps`")
    return folder


def run_node(folder: Path, args: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_a_typescript_sdk_client_works_over_stdio_and_streamable_http(
    proxy_home: Home, pool: ProxyPool
) -> None:
    folder = node_folder(TS_CLIENT, "@modelcontextprotocol/sdk")
    config = {
        "stdio": {"command": str(COMPOZY), "args": ["proxy"], "env": proxy_home.env},
        "url": pool.http().url,
    }
    summary = run_node(folder, ["check.mjs", json.dumps(config)])
    assert set(summary) == {"stdio", "http"}
    for transport, seen in summary.items():
        # the TypeScript SDK 1.x speaks the handshake era
        assert seen["protocolVersion"] == "2025-11-25", transport
        assert seen["server"]["name"] == "compozy-mcp"
        assert seen["tools"] == NATIVE, transport
        assert seen["withOutputSchema"] == [], transport
        assert seen["withResultView"] == WITH_VIEWS, transport
        for tool in REGISTRY:
            hints = seen["annotations"][tool.id]
            assert hints["readOnlyHint"] is (tool.risk is Risk.READ), tool.id
            assert hints["destructiveHint"] is (tool.risk is Risk.DESTRUCTIVE), tool.id
        sid = seen["sessionId"]
        for name in ("created", "compact", "full"):
            assert seen[name]["isError"] is False, (transport, name)
            assert seen[name]["textIsStructured"] is True, (transport, name)
            assert seen[name]["structured"]["session"]["id"] == sid
        assert seen["created"]["structured"]["session"]["name"] == "TypeScript check"
        assert "supervision" not in seen["compact"]["structured"]["session"]
        assert "supervision" in seen["full"]["structured"]["session"]
        assert seen["selectorError"] == {
            "isError": True,
            "textIsStructured": False,
            "text": UNKNOWN_VIEW,
            "structured": {
                "error": {
                    "code": "tool_invalid_input",
                    "reason": "schema_invalid",
                    "message": UNKNOWN_VIEW,
                    "tool_id": "compozy__session_status",
                }
            },
        }
        assert seen["unknownTool"] == {"code": -32602}


def inspector(folder: Path, home: Home, target: list[str], *args: str) -> dict[str, Any]:
    env = [
        item
        for key in ("COMPOZY_HOME", "COMPOZY_WORKSPACE")
        for item in ("-e", f"{key}={home.env[key]}")
    ]
    return run_node(
        folder,
        [
            "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js",
            "--cli",
            *env,
            *target,
            *args,
        ],
    )


def test_the_mcp_inspector_cli_lists_and_calls_tools(proxy_home: Home, pool: ProxyPool) -> None:
    folder = node_folder(INSPECTOR, "@modelcontextprotocol/inspector")
    listed = inspector(folder, proxy_home, [str(COMPOZY), "proxy"], "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == NATIVE
    assert all("outputSchema" not in tool for tool in listed["tools"])

    url = [pool.http().url, "--transport", "http"]
    created = inspector(
        folder,
        proxy_home,
        url,
        "--method",
        "tools/call",
        "--tool-name",
        "compozy__session_create",
        "--tool-arg",
        "agent_name=general",
    )
    session = created["structuredContent"]["session"]
    assert json.loads(created["content"][0]["text"]) == created["structuredContent"]
    failed = inspector(
        folder,
        proxy_home,
        url,
        "--method",
        "tools/call",
        "--tool-name",
        "compozy__session_status",
        "--tool-arg",
        f"session_id={session['id']}",
        "result_view=detailed",
    )
    assert failed["isError"] is True
    assert failed["content"] == [{"type": "text", "text": UNKNOWN_VIEW}]
    assert failed["structuredContent"]["error"]["code"] == "tool_invalid_input"
