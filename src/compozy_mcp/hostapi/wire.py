"""What travels between a Host API client and a daemon, besides the payloads themselves."""

from __future__ import annotations

from typing import Any

from compozy_mcp.errors import CompozyError

#: the HTTP header (API and ``/mcp``) naming the managed session a call is made as
SESSION_HEADER = "X-Compozy-Session"
#: where the HTTP API is mounted on a daemon
API_PREFIX = "/api"


def error_body(error: CompozyError) -> dict[str, Any]:
    """``{"error": {...}}``, redacted as the spec says for the CLI and HTTP/UDS."""
    return {"error": error.payload(redact=True)}
