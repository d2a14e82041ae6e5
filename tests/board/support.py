"""What the board's HTTP and browser tiers share: the hostile text, tool calls over the HTTP
API, a hook that fails with that text on its stderr."""

from __future__ import annotations

from typing import Any

import httpx2

HOSTILE = '<img src=x onerror=alert(1)><script>alert("x")</script>'


def create(client: httpx2.Client, **fields: Any) -> dict[str, Any]:
    """``POST /api/sessions`` (agent ``general`` unless named): the session made."""
    fields.setdefault("agent_name", "general")
    response = client.post("/api/sessions", json=fields)
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()["session"]
    return session


def invoke(client: httpx2.Client, tool: str, **tool_input: Any) -> dict[str, Any]:
    """``POST /api/tools/{tool}/invoke``: the tool's structured result."""
    response = client.post(f"/api/tools/{tool}/invoke", json={"input": tool_input})
    assert response.status_code == 200, response.text
    structured: dict[str, Any] = response.json()["result"]["structured"]
    return structured


def add_failing_hook(client: httpx2.Client, tool: str) -> None:
    """A ``tool.pre_call`` hook ``hostile-stderr`` on ``tool`` that writes :data:`HOSTILE` to
    its stderr and exits 3 (a failed run; the call goes on: ``on_error`` allow)."""
    invoke(
        client,
        "compozy__hooks_create",
        id="hostile-stderr",
        event="tool.pre_call",
        command=f"printf '%s' '{HOSTILE}' >&2; exit 3",
        matcher={"tool": tool},
    )


def remember_hostile_grant(client: httpx2.Client, tool: str, field: str) -> dict[str, Any]:
    """A remembered approval of ``tool`` for the agent ``general``, answered on an input whose
    ``field`` is :data:`HOSTILE`: the grant."""
    grant: dict[str, Any] = invoke(
        client,
        "compozy__tool_approvals_set",
        tool_id=tool,
        decision="allow",
        agent_name="general",
        input={field: HOSTILE},
    )["grant"]
    return grant
