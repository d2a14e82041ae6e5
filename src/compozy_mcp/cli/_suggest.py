""" "Did you mean": for an unknown tool id, session id or provider, what the user most likely
meant.

Asked only once a command has failed, through the same Host API the command used (in-process
or a daemon), so it works the same both ways and costs nothing on success. A lookup that fails
in turn is no reason to hide the first error: it gives no hint.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from compozy_mcp.cli._parsing import did_you_mean
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.reasons import Reason

if TYPE_CHECKING:
    from compozy_mcp.cli._context import Context
    from compozy_mcp.hostapi import HostClient

#: sessions read to find a close id (the newest first, archived ones too)
SESSIONS_SCANNED = 200


async def _tool_ids(host: HostClient) -> list[str]:
    payload = await host.call(ops.LIST_TOOLS, {})
    return [str(tool["tool_id"]) for tool in payload["tools"]]


async def _session_ids(host: HostClient) -> list[str]:
    ids: list[str] = []
    for archived in (False, True):
        page = await host.call(ops.LIST_SESSIONS, {"limit": SESSIONS_SCANNED, "archived": archived})
        ids += [str(session["id"]) for session in page["sessions"]]
    return ids


async def _agent_names(host: HostClient) -> list[str]:
    payload = await host.call(ops.LIST_AGENTS, {})
    return [str(agent["name"]) for agent in payload["agents"]]


def _mistyped(error: CompozyError, args: argparse.Namespace, *names: str) -> str | None:
    ident: Any = getattr(error, "ident", None)
    if not ident and error.code == "tool_not_found":
        ident = getattr(error, "tool_id", None)
    for name in names:
        ident = ident or getattr(args, name, None)
    return str(ident) if ident else None


def hint(error: CompozyError, args: argparse.Namespace, context: Context) -> str | None:
    """``hint: did you mean "x"?`` for an unknown tool, session or provider, else ``None``."""
    if error.code == "tool_not_found" or error.reason == Reason.TOOL_NOT_FOUND:
        word, lookup = _mistyped(error, args, "tool_id", "tool"), _tool_ids
    elif error.reason == Reason.SESSION_NOT_FOUND:
        word, lookup = _mistyped(error, args, "session_id", "session"), _session_ids
    elif error.reason == Reason.PROVIDER_UNKNOWN:
        provider = getattr(args, "provider", None)
        word, lookup = (str(provider) if provider else None), _agent_names
    else:
        return None
    if not word:
        return None
    try:
        candidates = context.call(lookup)
    except CompozyError:
        return None
    found = did_you_mean(word, [c for c in candidates if c != word])
    return f"hint: {found.removeprefix(' (').removesuffix(')')}" if found else None
