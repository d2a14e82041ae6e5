"""What travels between a Host API client and a daemon, besides the payloads themselves."""

from __future__ import annotations

from typing import Any

from compozy_mcp.errors import CompozyError

#: the HTTP header (API and ``/mcp``) naming the managed session a call is made as
SESSION_HEADER = "X-Compozy-Session"
#: a request header asking for the dispatch diagnostic of an error (``compozy -v``): the
#: daemon honours it only on its Unix socket or from a loopback address (spec, Errors: the
#: CLI and HTTP redact input-error and denial messages; a local operator may opt in)
DIAGNOSTIC_HEADER = "X-Compozy-Diagnostic"
#: where the HTTP API is mounted on a daemon
API_PREFIX = "/api"
#: where a daemon (and ``compozy proxy --http``) serves MCP
MCP_PATH = "/mcp"


def error_body(error: CompozyError, *, diagnostic: bool = False) -> dict[str, Any]:
    """``{"error": {...}}``, redacted as the spec says for the CLI and HTTP/UDS; with
    ``diagnostic``, plus ``diagnostic`` (the dispatch message) and ``details`` when the
    redaction hid them."""
    body = error.payload(redact=True)
    if diagnostic:
        full = error.payload(redact=False)
        if full["message"] != body["message"]:
            body["diagnostic"] = full["message"]
        if "details" in full and "details" not in body:
            body["details"] = full["details"]
    return {"error": body}
