"""Spec, "Discovering both contracts": tool_info descriptors, tool_list and tool_search."""

from __future__ import annotations

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.errors import ResourceNotFound
from compozy_mcp.jsonutil import schema_digest
from compozy_mcp.validation import compile_validator

pytestmark = pytest.mark.anyio

TOOLS_WITH_VIEWS = {
    "compozy__session_status",
    "compozy__session_create",
    "compozy__session_archive",
    "compozy__session_unarchive",
    "compozy__session_rename",
    "compozy__session_stop",
    "compozy__session_fork",
    "compozy__session_rewind",
    "compozy__session_continue",
    "compozy__session_runtime_set",
    "compozy__session_runtime_clear",
    "compozy__session_spawn",
    "compozy__session_list",
    "compozy__skill_list",
    "compozy__skill_search",
    "compozy__tool_list",
    "compozy__hooks_list",
    "compozy__hooks_runs",
    "compozy__agent_list",
    "compozy__session_prompt",
    "compozy__session_wait",
    "compozy__session_history",
    "compozy__session_events",
    "compozy__session_clear",
    "compozy__tool_approvals_list",
    "compozy__loop_create",
    "compozy__loop_inspect",
    "compozy__loop_list",
    "compozy__loop_run",
    "compozy__loop_status",
    "compozy__loop_runs",
    "compozy__loop_cancel",
    "compozy__loop_approve",
    "compozy__worktree_list",
    "compozy__worktree_inspect",
    "compozy__session_diff",
    "compozy__task_create",
    "compozy__task_list",
    "compozy__task_status",
    "compozy__task_update",
    "compozy__task_cancel",
    "compozy__task_run_claim_next",
    "compozy__task_run_heartbeat",
    "compozy__task_run_complete",
    "compozy__task_run_fail",
    "compozy__task_run_release",
    "compozy__task_run_review_submit",
    "compozy__agent_heartbeat_set",
    "compozy__agent_heartbeat_status",
    "compozy__agent_heartbeat_wake",
}
SINGLE_RESULT = {
    "compozy__session_delete",
    "compozy__tool_info",
    "compozy__tool_search",
    "compozy__skill_view",
    "compozy__tool_artifact_read",
    "compozy__hooks_events",
    "compozy__hooks_info",
    "compozy__hooks_create",
    "compozy__hooks_update",
    "compozy__hooks_enable",
    "compozy__hooks_disable",
    "compozy__hooks_delete",
    "compozy__hooks_test",
    "compozy__session_prompt_cancel",
    "compozy__session_approve",
    "compozy__command_list",
    "compozy__tool_approvals_set",
    "compozy__tool_approvals_revoke",
    "compozy__loop_validate",
    "compozy__worktree_create",
    "compozy__worktree_remove",
    "compozy__session_merge",
    "compozy__session_pull_request",
}


def test_the_native_catalog_has_exactly_the_tools_with_and_without_views(app: App) -> None:
    tools = {tool.id: tool for tool in app.dispatcher.registry}
    assert set(tools) == TOOLS_WITH_VIEWS | SINGLE_RESULT
    assert {tool_id for tool_id, tool in tools.items() if tool.has_views} == TOOLS_WITH_VIEWS


def test_every_published_schema_is_valid_json_schema(app: App) -> None:
    checked: set[str] = set()  # tools share schemas (196 published, 129 distinct): each once
    for tool in app.dispatcher.registry:
        schemas = [tool.input_schema, tool.output_schema]
        if tool.views is not None:
            schemas.append(tool.views.full.schema)
        for schema in schemas:
            if (digest := schema_digest(dict(schema))) not in checked:
                compile_validator(schema)
                checked.add(digest)


@pytest.mark.parametrize(
    ("tool_id", "risk"),
    [
        ("compozy__session_status", "read"),
        ("compozy__session_create", "mutating"),
        ("compozy__session_stop", "destructive"),
        ("compozy__session_rewind", "destructive"),
        ("compozy__session_spawn", "mutating"),
        ("compozy__tool_info", "read"),
        ("compozy__tool_artifact_read", "read"),
    ],
)
def test_risk_classes_are_upstreams(app: App, tool_id: str, risk: str) -> None:
    assert app.dispatcher.registry.get(tool_id).risk.value == risk


async def test_tool_info_for_a_tool_with_views_describes_both_contracts(call: Caller) -> None:
    result = await call.structured("compozy__tool_info", {"tool_id": "compozy__session_status"})
    descriptor = result["tool"]["descriptor"]
    assert descriptor["id"] == "compozy__session_status"
    assert descriptor["description"] == (
        'Read one session. Returns the compact result; pass result_view "full" for the '
        "complete record."
    )
    assert descriptor["input_schema"]["properties"]["result_view"]["enum"] == ["compact", "full"]
    assert descriptor["input_schema"]["additionalProperties"] is False
    views = descriptor["output_views"]
    assert set(views) == {"compact", "full"}
    assert descriptor["output_schema"] == views["compact"]["schema"]
    assert descriptor["output_schema_digest"] == views["compact"]["digest"]
    assert views["compact"]["digest"] == schema_digest(views["compact"]["schema"])
    assert views["full"]["digest"] == schema_digest(views["full"]["schema"])
    assert views["compact"]["digest"] != views["full"]["digest"]
    assert descriptor["input_schema_digest"] == schema_digest(descriptor["input_schema"])
    assert views["compact"]["schema"]["required"] == ["session"]
    assert views["compact"]["schema"]["additionalProperties"] is False
    assert (descriptor["risk"], descriptor["read_only"], descriptor["destructive"]) == (
        "read",
        True,
        False,
    )


async def test_a_single_result_tool_has_output_schema_only(call: Caller) -> None:
    result = await call.structured("compozy__tool_info", {"tool_id": "compozy__skill_view"})
    descriptor = result["tool"]["descriptor"]
    assert "output_views" not in descriptor
    assert "result_view" not in descriptor["input_schema"]["properties"]
    assert descriptor["output_schema_digest"] == schema_digest(descriptor["output_schema"])
    assert descriptor["has_result_views"] is False


async def test_tool_info_for_an_unknown_tool_is_not_found(call: Caller) -> None:
    with pytest.raises(ResourceNotFound) as caught:
        await call("compozy__tool_info", {"tool_id": "compozy__nope"})
    assert caught.value.reason == "tool_not_found"


async def test_compact_tool_list_keeps_ids_and_full_embeds_descriptors(call: Caller) -> None:
    compact = await call.structured("compozy__tool_list", {})
    assert compact["tools"][0] == {
        "id": "compozy__session_create",
        "description": compact["tools"][0]["description"],
        "risk": "mutating",
        "has_result_views": True,
    }
    full = await call.structured("compozy__tool_list", {"result_view": "full"})
    assert full["tools"][0]["input_schema"]["properties"]["agent_name"]
    assert [t["id"] for t in full["tools"]] == [t["id"] for t in compact["tools"]]


async def test_tool_list_filters_and_pages(call: Caller) -> None:
    page = await call.structured("compozy__tool_list", {"toolset": "compozy__catalog", "limit": 2})
    assert [t["id"] for t in page["tools"]] == ["compozy__tool_info", "compozy__tool_list"]
    rest = await call.structured(
        "compozy__tool_list", {"toolset": "compozy__catalog", "cursor": page["next_cursor"]}
    )
    assert rest["tools"][0]["id"] == "compozy__tool_search"
    destructive = await call.structured("compozy__tool_list", {"risk": "destructive"})
    assert {t["id"] for t in destructive["tools"]} == {
        "compozy__session_delete",
        "compozy__session_stop",
        "compozy__session_rewind",
        "compozy__session_clear",
        "compozy__hooks_delete",
        "compozy__tool_approvals_set",
        "compozy__tool_approvals_revoke",
        "compozy__worktree_remove",
        "compozy__task_cancel",
    }


async def test_tool_search_ranks_matching_ids_first(call: Caller) -> None:
    result = await call.structured("compozy__tool_search", {"query": "session status"})
    assert result["tools"][0]["id"] == "compozy__session_status"
    assert all(t["score"] > 0 for t in result["tools"])
    exact = await call.structured("compozy__tool_search", {"query": "compozy__skill_view"})
    assert exact["tools"][0]["id"] == "compozy__skill_view"
    nothing = await call.structured("compozy__tool_search", {"query": "zebra"})
    assert nothing["tools"] == []
