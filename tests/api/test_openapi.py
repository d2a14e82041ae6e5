"""The OpenAPI document lists exactly the routes the app has, with their methods and parameters."""

from __future__ import annotations

import re

from starlette.routing import Mount, Route

from compozy_mcp.api.auth import Access
from compozy_mcp.api.openapi import document
from compozy_mcp.api.routes import api_app
from compozy_mcp.assembly import App
from compozy_mcp.daemon import daemon_app
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.wire import API_PREFIX as API_PATH

CONVERTOR = re.compile(r"\{(\w+):[^}]+\}")


def _operations(routes: list[Route], prefix: str) -> set[tuple[str, str]]:
    out = set()
    for route in routes:
        path = prefix + CONVERTOR.sub(r"{\1}", route.path)
        for method in route.methods or ():
            if method != "HEAD":  # Starlette adds HEAD to every GET route
                out.add((method.lower(), path))
    return out


INVOKE = re.compile(r"^/api/tools/compozy__[a-z_]+/invoke$")


def _documented() -> set[tuple[str, str]]:
    """Documented operations as route templates (each native tool's invoke path is documented
    on its own: it is an instance of ``/api/tools/{tool_id}/invoke``)."""
    return {
        (method, "/api/tools/{tool_id}/invoke" if INVOKE.match(path) else path)
        for path, operations in document()["paths"].items()
        for method in operations
    }


def test_every_native_tool_has_an_invoke_operation_with_its_own_input_schema(app: App) -> None:
    paths = document()["paths"]
    for tool in app.dispatcher.registry:
        operation = paths[f"/api/tools/{tool.id}/invoke"]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body["required"] == ["input"]
        stated = body["properties"]["input"]["properties"]
        assert list(stated) == list(tool.input_schema["properties"])
        for name, schema in tool.input_schema["properties"].items():  # stated, maybe bounded
            assert (
                stated[name].items() >= {k: v for k, v in schema.items() if k != "maximum"}.items()
            )


def test_every_route_of_the_api_app_is_documented_and_every_documented_one_exists(
    app: App,
) -> None:
    routes = [r for r in api_app(LocalHost(app), document).routes if isinstance(r, Route)]
    assert len(routes) == len(api_app(LocalHost(app), document).routes)
    assert _operations(routes, API_PATH) == _documented()


def test_the_daemon_mounts_the_api_at_api_and_serves_mcp_beside_it(app: App) -> None:
    daemon = daemon_app(app, Access.for_host("127.0.0.1", None))
    mounts = [r for r in daemon.routes if isinstance(r, Mount)]
    assert [m.path for m in mounts] == [API_PATH]
    others = [r for r in daemon.routes if not isinstance(r, Mount)]
    assert [getattr(r, "path", None) for r in others] == [
        "/healthz",
        "/api/health",
        # the operator's board (compozy_mcp.board): pages, their assets and data
        "/",
        "/session",
        "/loops",
        "/tasks",
        "/hooks",
        "/approvals",
        "/static/common.js",
        "/static/board.js",
        "/static/session.js",
        "/static/loops.js",
        "/static/tasks.js",
        "/static/hooks.js",
        "/static/approvals.js",
        "/static/board.css",
        "/board/cards",
        "/board/session",
        "/board/transcript",
        "/board/loops",
        "/board/hooks",
        "/board/approvals",
        "/board/tasks",
        "/board/stream",
        "/mcp",
    ]


def test_documented_path_parameters_match_the_path_templates() -> None:
    for path, operations in document()["paths"].items():
        names = set(re.findall(r"\{(\w+)\}", path))
        for method, operation in operations.items():
            declared = {
                p["name"]
                for p in operation.get("parameters", [])
                if "$ref" not in p and p["in"] == "path"
            }
            assert declared == names, (method, path)


def test_documented_session_list_parameters_are_the_session_list_inputs() -> None:
    from compozy_mcp.hostapi.inputs import SESSION_LIST, input_schema

    operation = document()["paths"]["/api/sessions"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert names == set(input_schema(SESSION_LIST)["properties"])


def test_session_payload_schema_is_the_full_session_record_schema() -> None:
    from compozy_mcp.sessions.record_schema import SESSION_RECORD

    assert document()["components"]["schemas"]["SessionPayload"] == SESSION_RECORD


def test_tool_descriptor_payload_schema_names_tool_id_not_id() -> None:
    schema = document()["components"]["schemas"]["ToolDescriptorPayload"]
    assert "tool_id" in schema["required"]
    assert "id" not in schema["properties"]
    assert schema["additionalProperties"] is False
