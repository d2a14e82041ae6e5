"""What the CLI and HTTP/UDS show of a Loop run's errors.

Those surfaces redact the dispatch message of input errors and denials (spec, Errors: "CLI and
HTTP/UDS errors retain the code and reason but redact the dispatch message"); MCP shows it. A
node fails with the error of the call it made, so a run record keeps the dispatch message and
says, in ``redacted_as``, what the redacting surfaces show instead: :func:`redact_result` puts it
in place (code and reason stay; details go, as with any redacted error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compozy_mcp.errors import CompozyError

#: the error field naming the message the CLI and HTTP/UDS show
REDACTED_AS = "redacted_as"


def error_payload(exc: CompozyError) -> dict[str, Any]:
    """An error as a run records it: the dispatch message, and ``redacted_as`` when the CLI
    and HTTP/UDS show another."""
    payload = exc.payload(redact=False)
    shown = exc.payload(redact=True)["message"]
    if shown != payload["message"]:
        payload[REDACTED_AS] = shown
    return payload


def _error(error: Any) -> Any:
    if not isinstance(error, Mapping) or REDACTED_AS not in error:
        return error
    out = {key: value for key, value in error.items() if key not in (REDACTED_AS, "details")}
    out["message"] = error[REDACTED_AS]
    return out


def _items(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [{**item, "error": _error(item["error"])} if "error" in item else item for item in items]


def _node(node: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(node)
    if "error" in out:
        out["error"] = _error(out["error"])
    if "items" in out:
        out["items"] = _items(out["items"])
    return out


def redact_run(run: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(run)
    if "error" in out:
        out["error"] = _error(out["error"])
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [_node(node) for node in out["nodes"]]
    return out


def redact_result(structured: Mapping[str, Any]) -> dict[str, Any]:
    """A Loop tool's result (``{"run"}`` or ``{"runs"}``; others pass) as the CLI and HTTP/UDS
    show it. Copies only what it changes."""
    out = dict(structured)
    if isinstance(out.get("run"), Mapping):
        out["run"] = redact_run(out["run"])
    if isinstance(out.get("runs"), list):
        out["runs"] = [redact_run(run) for run in out["runs"]]
    return out
