"""``compozy mcp list --check``: try each server once, now, from this process (start it or
reach it, read its listing, stop it), every server at once and each within its startup
timeout."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

from compozy_mcp.upstream.config import ServerDefinition
from compozy_mcp.upstream.connection import connect, describe_failure
from compozy_mcp.upstream.status import ServerStatus, State


async def probe(
    definition: ServerDefinition, *, home: Path, env: Mapping[str, str], cwd: Path | None = None
) -> ServerStatus:
    limit = definition.timeouts.startup
    try:
        with anyio.move_on_after(limit):
            async with connect(definition, home=home, env=env, cwd=cwd) as connection:
                tools = await connection.list_tools()
            return ServerStatus(definition.name, State.READY, tools=len(tools))
        error = f"did not start within {limit:g} s"
    except Exception as exc:  # reported, never raised: one server's failure is its own
        error = describe_failure(exc, definition)
    return ServerStatus(definition.name, State.DOWN, last_error=error)


def probe_all(
    definitions: Sequence[ServerDefinition],
    env: Mapping[str, str],
    *,
    home: Path,
    workspace: Path | None = None,
) -> dict[str, ServerStatus]:
    from compozy_mcp.upstream.config import Scope

    found: dict[str, ServerStatus] = {}

    async def one(definition: ServerDefinition) -> None:
        cwd = workspace if definition.scope is Scope.WORKSPACE else None
        found[definition.name] = await probe(definition, home=home, env=env, cwd=cwd)

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            for definition in definitions:
                tasks.start_soon(one, definition)

    anyio.run(main)
    return found
