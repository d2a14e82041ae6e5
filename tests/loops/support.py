"""What the Loop tests share: the spec's example (literally), Loop documents, and the ways to
reach the Loop tools (dispatch, an MCP client, the CLI)."""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client import Client

from compozy_mcp.assembly import App
from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.proxy.server import ProxyServer

#: spec, "Loops": the example, word for word (it passes with ``result_view: full``)
SPEC_EXAMPLE = """\
graph:
  nodes:
    - id: inspect
      class: action
      kind: compozy__session_status
      params:
        session_id: "{{ .inputs.session_id }}"
        result_view: full
    - id: report
      class: action
      kind: run-agent
      params:
        agent: general
        prompt: "Tools allowed: {{ .nodes.inspect.output.session.lineage.permission_policy.tools }}"
  edges:
    - from: inspect
      to: report
"""
#: codes that validate reports as a warning and a run that starts now as an error
RUN_ERRORS = frozenset({"agent_unknown"})
#: the one-line agents.yaml that makes the spec's example run on a default install: its
#: ``agent: general`` names no built-in agent (here the echo agent; ``like: claude`` in use)
GENERAL_AGENT = "agents: {general: {like: echo}}\n"


def define_general(home: Path) -> None:
    """Write :data:`GENERAL_AGENT` as ``home``'s agents.yaml."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)  # a home others can read is warned of
    (home / "agents.yaml").write_text(GENERAL_AGENT, encoding="utf-8")


#: the example without ``result_view: full`` on inspect: Loop validation stops it
SPEC_EXAMPLE_COMPACT = SPEC_EXAMPLE.replace("        result_view: full\n", "")
#: spec, "Loops": the error it stops with
SPEC_MESSAGE = (
    'node "report" reads nodes.inspect.output.session.lineage.permission_policy.tools, which '
    "the compact result of compozy__session_status does not include; fix: add "
    '`result_view: full` to the params of node "inspect"'
)
SPEC_CLI_LINES = f"error: result_view_field_requires_full\n{SPEC_MESSAGE}"


def graph(*nodes: str, edges: tuple[tuple[str, str], ...] = ()) -> str:
    """A Loop document from node blocks (YAML, dedented) and edges."""
    lines = ["graph:", "  nodes:"]
    for node in nodes:
        block = textwrap.dedent(node).strip("\n").splitlines()
        lines.append("    - " + block[0])
        lines.extend("      " + line for line in block[1:])
    lines.append("  edges:" if edges else "  edges: []")
    for source, target in edges:
        lines.extend([f"    - from: {source}", f"      to: {target}"])
    return "\n".join(lines) + "\n"


def status_node(node_id: str = "inspect", view: str | None = None, **params: str) -> str:
    extra = "".join(f"\n    {k}: {v}" for k, v in params.items())
    selector = f"\n    result_view: {view}" if view else ""
    return (
        f"id: {node_id}\nclass: action\nkind: compozy__session_status\nparams:\n"
        f'    session_id: "{{{{ .inputs.session_id }}}}"{selector}{extra}'
    )


def transform(node_id: str, value: str) -> str:
    return f"id: {node_id}\nclass: action\nkind: transform\nparams:\n  output:\n    value: {value}"


def gate(node_id: str = "review", *criteria: tuple[str, str]) -> str:
    items = "".join(
        f"\n    - id: {cid}\n      prompt: {prompt!r}"
        for cid, prompt in (criteria or (("ok", "Is it right?"),))
    )
    return f"id: {node_id}\nclass: control\nkind: gate\nparams:\n  criteria:{items}"


async def tool(
    app: App, verb: str, tool_input: dict[str, Any], scope: CallScope = OPERATOR
) -> dict[str, Any]:
    result = await app.dispatcher.call(f"compozy__loop_{verb}", tool_input, scope=scope)
    return result.structured


async def lint_items(app: App, text: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = (await tool(app, "validate", {"definition": text}))["items"]
    return items


def codes(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["severity"], item["code"]) for item in items]


@asynccontextmanager
async def mcp_client(app: App, session: str | None = None) -> AsyncIterator[Client]:
    """An MCP client on the proxy over ``app`` (no transport), as a managed session or not."""
    scope = CallScope(session_id=session) if session else CallScope()
    server = ProxyServer(app, scope=scope).server
    async with Client(server, mode="auto", cache=None) as client:
        yield client


_FAN = 'id: each\nclass: control\nkind: fan-out\nparams:\n  items: "{{ .inputs.names }}"'
_COLLECT = "id: all\nclass: control\nkind: collect\nparams:\n  from: each"

#: one document per lint code (each has exactly that one item), for every surface's tests
LINT_CASES: dict[str, str] = {
    "definition_invalid": "graph: {}\n",
    "node_id_invalid": graph("id: Bad\nclass: action\nkind: transform"),
    "node_id_duplicate": graph(transform("a", "x"), transform("a", "y")),
    "class_unknown": graph("id: a\nclass: nope\nkind: transform"),
    "kind_unknown": graph("id: a\nclass: control\nkind: transform"),
    "params_invalid": graph("id: x\nclass: action\nkind: compozy__session_status\nparams: {}"),
    "produces_invalid": graph(transform("a", "x") + "\nproduces: 7"),
    "unknown_node": graph(transform("t", '"{{ .nodes.ghost.output }}"')),
    "cycle": graph(transform("a", "1"), transform("b", "2"), edges=(("a", "b"), ("b", "a"))),
    "unknown_tool": graph("id: x\nclass: action\nkind: compozy__nope"),
    "agent_unknown": graph(
        "id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: ech\n  prompt: hi"
    ),
    "result_view_not_literal": graph(status_node(view='"{{ .inputs.v }}"')),
    "template_invalid": graph(transform("t", '"{{ .inputs.x "')),
    "unknown_reference": graph(transform("t", '"{{ .env.HOME }}"')),
    "unknown_input": graph(
        "id: ticket\nclass: source\nkind: input", transform("t", '"{{ .inputs.tiket }}"')
    ),
    "reference_not_upstream": graph(
        status_node(), transform("t", '"{{ .nodes.inspect.output.session.id }}"')
    ),
    "item_outside_fanout": graph(transform("t", '"{{ .item }}"')),
    "gate_in_fanout": graph(
        _FAN, gate("review"), _COLLECT, edges=(("each", "review"), ("review", "all"))
    ),
    "result_view_field_requires_full": SPEC_EXAMPLE_COMPACT,
    "unresolvable_path": graph(
        status_node(view="full"),
        transform("t", '"{{ .nodes.inspect.output.session.nope }}"'),
        edges=(("inspect", "t"),),
    ),
}
