"""``tools/call`` through the proxy: views, typed errors (spec, "Errors"), session policies and
truncated results, in both eras and over every transport."""

from __future__ import annotations

import hashlib
import json
import secrets

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from tests.proxy.support import (
    ARTIFACT_READ,
    META_ARTIFACTS,
    META_READ_TOOL,
    SINGLE_RESULT,
    UNKNOWN_VIEW,
    Mode,
    Proxy,
    create_session,
    read_artifact,
    record,
    spawn_child,
    tool_error,
)

pytestmark = pytest.mark.anyio

BUDGET = 2048
#: fields the full session record has and the compact one leaves out (spec, "Result Views")
FULL_ONLY = ("supervision", "available_commands", "diagnostics")


def _unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


async def test_a_session_reads_compact_by_default_and_full_on_request(
    proxy: Proxy, mode: Mode
) -> None:
    async with proxy.client(mode) as client:
        created = await create_session(client, name="Fix flaky upload test")
        sid = created["id"]
        compact = record(await client.call_tool("compozy__session_status", {"session_id": sid}))
        chosen = record(
            await client.call_tool(
                "compozy__session_status", {"session_id": sid, "result_view": "compact"}
            )
        )
        full = record(
            await client.call_tool(
                "compozy__session_status", {"session_id": sid, "result_view": "full"}
            )
        )
    assert compact == chosen == {"session": created}
    assert created["name"] == "Fix flaky upload test"
    session, whole = compact["session"], full["session"]
    for name in FULL_ONLY:
        assert name not in session
        assert name in whole
    assert "permission_policy" not in session["lineage"]
    assert "permission_policy" in whole["lineage"]
    # every compact field is in the full record at the same path with the same value
    for key, value in session.items():
        if isinstance(value, dict):
            assert {k: whole[key][k] for k in value} == value, key
        else:
            assert whole[key] == value, key


async def test_each_selector_error_is_an_is_error_result_with_the_dispatch_message(
    proxy: Proxy, mode: Mode
) -> None:
    cases = [
        ("compozy__session_status", "detailed", UNKNOWN_VIEW),
        ("compozy__session_status", "FULL", UNKNOWN_VIEW),
        ("compozy__session_status", 1, UNKNOWN_VIEW),
        ("compozy__session_status", True, UNKNOWN_VIEW),
        ("compozy__session_status", None, UNKNOWN_VIEW),
        ("compozy__session_status", ["full"], UNKNOWN_VIEW),
        ("compozy__skill_view", "full", SINGLE_RESULT),
        ("compozy__skill_view", "compact", SINGLE_RESULT),
    ]
    async with proxy.client(mode) as client:
        sid = (await create_session(client))["id"]
        for tool_id, view, message in cases:
            args = {"session_id": sid} if tool_id.startswith("compozy__session") else {"name": "x"}
            result = await client.call_tool(tool_id, {**args, "result_view": view})
            assert tool_error(result) == {
                "code": "tool_invalid_input",
                "reason": "schema_invalid",
                "message": message,
                "tool_id": tool_id,
            }, view
        # the selector is checked first, and the tool does not run
        ghost = _unique("sess-ghost")
        result = await client.call_tool(
            "compozy__session_create",
            {"agent_name": "general", "session_id": ghost, "result_view": "detailed"},
        )
        assert tool_error(result)["message"] == UNKNOWN_VIEW.replace("status", "create")
        missing = tool_error(
            await client.call_tool("compozy__session_status", {"session_id": ghost})
        )
        assert (missing["code"], missing["reason"]) == ("not_found", "session_not_found")


async def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(proxy: Proxy, mode: Mode) -> None:
    async with proxy.client(mode) as client:
        for name in ["compozy__nope", "compozy__session_status ", "", "test__big"]:
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, {})
            assert caught.value.error.code == INVALID_PARAMS, name
            assert name in caught.value.error.message
        # the connection still serves
        await create_session(client)


#: a child session per subprocess transport, shared by both modes: each child needs a proxy
#: process bound to it, and HTTP/socket ones stay up until the end of the run
_CHILDREN: dict[str, str] = {}


async def _child(proxy: Proxy, mode: Mode) -> str:
    if proxy.kind in _CHILDREN:
        return _CHILDREN[proxy.kind]
    async with proxy.client(mode) as operator:
        root = (await create_session(operator))["id"]
        child = await spawn_child(operator, root, ["compozy__session_status"])
    if proxy.kind != "inproc":
        _CHILDREN[proxy.kind] = child
    return child


async def test_a_session_bound_proxy_lists_and_calls_only_what_its_policy_allows(
    proxy: Proxy, mode: Mode
) -> None:
    child = await _child(proxy, mode)
    async with proxy.client(mode, session=child) as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == ["compozy__session_status"]
        assert listed.next_cursor is None
        status = record(await client.call_tool("compozy__session_status", {"session_id": child}))
        assert status["session"]["id"] == child
        for tool_id, args in [
            ("compozy__session_create", {"agent_name": "general"}),
            ("compozy__session_stop", {"session_id": child}),
            ("compozy__tool_list", {}),
        ]:
            denied = tool_error(await client.call_tool(tool_id, args))
            assert denied == {
                "code": "tool_denied",
                "reason": "permission_denied",
                "message": f'tool "{tool_id}" is not allowed by the permission policy of '
                f'session "{child}"',
                "tool_id": tool_id,
            }
        # authorization comes first: a bad selector on a denied tool is still a denial
        denied = tool_error(
            await client.call_tool("compozy__skill_view", {"name": "x", "result_view": "full"})
        )
        assert denied["code"] == "tool_denied"
        with pytest.raises(MCPError) as caught:
            await client.call_tool("compozy__nope", {})
        assert caught.value.error.code == INVALID_PARAMS
        # the denied stop did not run
        after = record(await client.call_tool("compozy__session_status", {"session_id": child}))
        assert after["session"]["state"] == "active"


async def test_a_truncated_result_is_read_to_its_end_through_artifact_pages(
    proxy: Proxy, mode: Mode
) -> None:
    agent = _unique("trunc")
    async with proxy.client(mode, budget=BUDGET) as client:
        ids = [(await create_session(client, agent_name=agent))["id"] for _ in range(4)]
        fulls = {
            sid: record(
                await client.call_tool(
                    "compozy__session_status", {"session_id": sid, "result_view": "full"}
                )
            )["session"]
            for sid in ids
        }
        result = await client.call_tool(
            "compozy__session_list", {"agent_name": agent, "result_view": "full", "limit": 200}
        )
        cut = record(result)
        assert cut["truncated"] is True
        assert cut["bytes"] > BUDGET == cut["budget_bytes"]
        assert cut["result_view"] == "full"
        assert cut["read_tool"] == ARTIFACT_READ
        [artifact] = cut["artifacts"]
        assert cut["read_input"] == {"artifact_uri": artifact["uri"], "offset": 0, "limit": 65536}
        assert ARTIFACT_READ in cut["message"]
        # the same continuation, for clients that read _meta
        assert result.meta is not None
        assert result.meta[META_ARTIFACTS] == cut["artifacts"]
        assert result.meta[META_READ_TOOL] == ARTIFACT_READ
        # pages smaller than the record, so that it takes several
        data, pages = await read_artifact(client, {**cut["read_input"], "limit": 1000})
    assert pages == -(-len(data) // 1000) > 1
    assert len(data) == artifact["bytes"] == cut["bytes"]
    assert hashlib.sha256(data).hexdigest() == artifact["sha256"]
    listed = json.loads(data)
    assert list(listed) == ["sessions"]
    assert sorted(s["id"] for s in listed["sessions"]) == sorted(ids)
    assert {s["id"]: s for s in listed["sessions"]} == fulls
