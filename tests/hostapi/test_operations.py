"""Issue 24, item 2: each Host API operation is declared once, and every surface derives its
part from that declaration: the routes, the OpenAPI paths, the remote client, the local host and
the CLI's commands."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from starlette.routing import Match, Route

from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import Routes, route_paths
from compozy_mcp.cli.main import build_parser
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import unanswered
from compozy_mcp.hostapi.operation import Body, Operation
from compozy_mcp.hostapi.remote import RemoteHost
from compozy_mcp.hostapi.target import parse_target
from compozy_mcp.native import build_registry

pytestmark = pytest.mark.unit


def _sample_path(operation: Operation[Any]) -> str:
    return operation.path.format(**dict.fromkeys(operation.path_fields, "x-1"))


def test_operation_names_and_operation_ids_are_unique() -> None:
    names = [operation.name for operation in ops.OPERATIONS]
    ids = [operation.operation_id for operation in ops.OPERATIONS]
    assert len(set(names)) == len(names)
    assert len(set(ids)) == len(ids)
    assert len({(o.method, o.path) for o in ops.OPERATIONS}) == len(ops.OPERATIONS)


def test_every_operation_is_a_native_tool_or_answered_by_the_local_host() -> None:
    registry = build_registry()
    for operation in ops.OPERATIONS:
        if operation.tool_id is not None:
            assert operation.tool_id in registry, operation.name
    assert unanswered() == []


@pytest.mark.parametrize("operation", ops.OPERATIONS, ids=lambda o: o.name)
def test_every_operation_is_routed_by_its_method_and_path(operation: Operation[Any]) -> None:
    routes = Routes(host=None, openapi=dict).table()  # type: ignore[arg-type]
    scope = {"type": "http", "method": operation.method, "path": _sample_path(operation)}
    matched = [route for route in routes if route.matches(scope)[0] is Match.FULL]
    assert matched, f"no route serves {operation.method} {operation.path}"
    route = matched[0]
    assert isinstance(route, Route)
    params = route.matches(scope)[1]["path_params"]
    assert params == dict.fromkeys(operation.path_fields, "x-1")


@pytest.mark.parametrize("operation", ops.OPERATIONS, ids=lambda o: o.name)
def test_every_operation_is_documented_as_declared(operation: Operation[Any]) -> None:
    paths = document()["paths"]
    if operation is ops.INVOKE:  # one entry per native tool, each with its input schema
        assert "/api/tools/compozy__session_status/invoke" in paths
        return
    entry = paths[f"/api{operation.path}"][operation.method.lower()]
    assert entry["operationId"] == operation.operation_id
    assert entry["summary"] == operation.summary
    assert str(operation.status) in entry["responses"]
    assert ("requestBody" in entry) is (operation.request is not None)
    named = {p["name"] for p in entry.get("parameters", []) if "name" in p}
    assert named == {*operation.path_fields, *(param.name for param in operation.query)}


def test_ids_that_end_a_path_refuse_the_actions_that_follow_them() -> None:
    """``GET /sessions/x/archive`` is a wrong method on an action (405), never the status of
    a session named ``x/archive``."""
    routed = route_paths(ops.OPERATIONS)
    assert routed["session_status"] == "/sessions/{session_id:compozy_sessions_session_id}"
    assert routed["archive_session"] == "/sessions/{session_id:path}/archive"
    routes = Routes(host=None, openapi=dict).table()  # type: ignore[arg-type]
    scope = {"type": "http", "method": "GET", "path": "/sessions/x/archive"}
    assert [r.matches(scope)[0] for r in routes].count(Match.FULL) == 0
    assert Match.PARTIAL in [r.matches(scope)[0] for r in routes]


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found[" ".join((*words, name))] = (sub, helps.get(name))
                found.update(_commands(sub, (*words, name)))
    return found


def test_every_declared_command_exists_with_its_help_and_its_ids() -> None:
    commands = _commands(build_parser())
    for words, operation in ops.BY_CLI.items():
        assert words in commands, words
        parser, text = commands[words]
        assert operation.cli is not None
        assert text == operation.cli.help, words
        positional = [a.dest for a in parser._actions if not a.option_strings]
        for field in operation.path_fields:
            if words not in ("loop run", "workspace trust"):  # a file / a directory instead
                assert field in positional, (words, field)


class _Recorder(RemoteHost):
    """A remote host that records the request it would send."""

    sent: list[tuple[str, str, Any, Any]]

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.sent.append((method, path, kwargs.get("params"), kwargs.get("body")))
        return {}


@pytest.mark.anyio
async def test_the_remote_host_sends_each_operation_as_declared() -> None:
    host = _Recorder(parse_target("http://127.0.0.1:9"))
    host.sent = []
    await host.call(ops.SESSION_STATUS, {"session_id": "a/b c"})
    await host.call(ops.PROMPT_SESSION, {"session_id": "s1", "prompt": "hi", "wait": True})
    await host.call(ops.TASK_LIST, {"states": ["todo", "done"], "limit": 5})
    await host.call(ops.REMOVE_WORKTREE, {"worktree_id": "wt-1", "force": True})
    await host.call(ops.SEARCH_TOOLS, {"query": "skill"})
    assert host.sent == [
        ("GET", "/sessions/a%2Fb%20c", None, None),
        ("POST", "/sessions/s1/prompt", None, {"prompt": "hi", "wait": True}),
        ("GET", "/tasks", {"state": "todo,done", "limit": 5}, None),
        ("DELETE", "/worktrees/wt-1", {"force": True}, None),
        ("GET", "/tools/search", {"q": "skill"}, None),
    ]


def test_bodies_and_queries_are_exclusive() -> None:
    for operation in ops.OPERATIONS:
        if operation.body is not Body.NONE:
            assert operation.query == (), operation.name
            assert operation.method in ("POST", "PUT", "PATCH"), operation.name
