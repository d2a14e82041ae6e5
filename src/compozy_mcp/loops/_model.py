"""A Loop definition: a graph of nodes and edges, read from its document, and the lint item
every check reports in.

A node has an ``id`` (``^[a-z][a-z0-9_]*$``), a ``class`` and a ``kind``:

- ``action``: a native tool id (the node calls that tool through dispatch, its ``params`` are
  the input), ``run-agent`` (prompts a session of the named agent and waits for the turn) or
  ``transform`` (its ``params.output``, rendered, is its output);
- ``control``: ``branch`` (``params.condition``; edges out of it carry ``when: true|false``),
  ``gate`` (``params.criteria``, each with an ``id`` and a ``prompt``, answered by an operator
  through ``compozy__loop_approve``), ``fan-out`` (``params.items``: the nodes between it and its
  ``collect`` run once per item, reading ``.item`` and ``.index``) and ``collect``
  (``params.from``: the fan-out it gathers);
- ``source``: ``input`` (a typed Loop input: ``params.schema``, optional ``params.default``;
  ``.inputs.<id>`` reads it).

``produces`` (optional) is a JSON Schema of the node's output; references are proven against it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compozy_mcp.loops._source import Path, Source

NODE_ID = re.compile(r"^[a-z][a-z0-9_]*$")
ACTION, CONTROL, SOURCE = "action", "control", "source"
RUN_AGENT, TRANSFORM = "run-agent", "transform"
BRANCH, GATE, FAN_OUT, COLLECT = "branch", "gate", "fan-out", "collect"
INPUT = "input"
KINDS: Mapping[str, tuple[str, ...]] = {
    ACTION: (RUN_AGENT, TRANSFORM),  # and every native tool id
    CONTROL: (BRANCH, GATE, FAN_OUT, COLLECT),
    SOURCE: (INPUT,),
}
ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class LintItem:
    """One finding: ``{node_id, path, code, message, severity, line, column}``."""

    code: str
    message: str
    severity: str = ERROR
    node_id: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "path": self.path,
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            "line": self.line,
            "column": self.column,
        }


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    cls: str
    kind: str
    params: dict[str, Any]
    produces: dict[str, Any] | None
    #: where the node is in the document (``("graph", "nodes", 3)``)
    where: Path

    @property
    def is_tool(self) -> bool:
        return self.cls == ACTION and self.kind not in KINDS[ACTION]


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    #: on edges out of a branch: the condition value that takes this edge
    when: bool | None
    where: Path


@dataclass(slots=True)
class Definition:
    name: str | None
    description: str | None
    nodes: dict[str, Node]
    edges: list[Edge]
    source: Source
    #: the document as given (stored as is)
    document: dict[str, Any] = field(default_factory=dict)

    def parents(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {node_id: [] for node_id in self.nodes}
        for edge in self.edges:
            if edge.source in self.nodes and edge.target in self.nodes:
                found[edge.target].append(edge.source)
        return found

    def children(self) -> dict[str, list[Edge]]:
        found: dict[str, list[Edge]] = {node_id: [] for node_id in self.nodes}
        for edge in self.edges:
            if edge.source in self.nodes and edge.target in self.nodes:
                found[edge.source].append(edge)
        return found

    def inputs(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes.values() if n.cls == SOURCE and n.kind == INPUT}


def locate(source: Source, path: Path) -> tuple[int | None, int | None]:
    mark = source.mark(path)
    return (mark.line, mark.column) if mark is not None else (None, None)


def dotted(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


class _Reader:
    """Builds a :class:`Definition`, collecting structural problems as lint items."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.items: list[LintItem] = []

    def problem(
        self, code: str, message: str, where: Path, node_id: str | None = None, path: str = ""
    ) -> None:
        line, column = locate(self.source, where)
        self.items.append(LintItem(code, message, ERROR, node_id, path or None, line, column))

    def read(self) -> Definition:
        data = self.source.data
        empty = Definition(None, None, {}, [], self.source)
        if not isinstance(data, dict):
            self.problem("definition_invalid", "a Loop definition is an object with a graph", ())
            return empty
        empty.document = data
        name = data.get("name") if isinstance(data.get("name"), str) else None
        description = data.get("description")
        graph = data.get("graph")
        if not isinstance(graph, dict):
            self.problem(
                "definition_invalid", "a Loop definition needs graph: {nodes, edges}", ("graph",)
            )
            return empty
        raw_nodes = graph.get("nodes")
        if not isinstance(raw_nodes, list) or not raw_nodes:
            self.problem(
                "definition_invalid", "graph.nodes must be a non-empty list", ("graph", "nodes")
            )
            raw_nodes = []
        nodes: dict[str, Node] = {}
        for index, raw in enumerate(raw_nodes):
            node = self.node(raw, ("graph", "nodes", index))
            if node is None:
                continue
            if node.id in nodes:
                self.problem(
                    "node_id_duplicate",
                    f'node id "{node.id}" is used twice',
                    (*node.where, "id"),
                    node.id,
                    "id",
                )
                continue
            nodes[node.id] = node
        edges = self.edges(graph.get("edges", []), nodes)
        return Definition(
            name,
            description if isinstance(description, str) else None,
            nodes,
            edges,
            self.source,
            data,
        )

    def node(self, raw: Any, where: Path) -> Node | None:
        if not isinstance(raw, dict):
            self.problem("definition_invalid", f"{dotted(where)} must be an object", where)
            return None
        node_id = raw.get("id")
        if not isinstance(node_id, str) or not NODE_ID.match(node_id):
            self.problem(
                "node_id_invalid",
                f"{dotted(where)}.id must match ^[a-z][a-z0-9_]*$ (got {node_id!r})",
                (*where, "id"),
                path="id",
            )
            return None
        cls, kind = raw.get("class"), raw.get("kind")
        if not isinstance(cls, str) or cls not in KINDS:
            self.problem(
                "class_unknown",
                f'node "{node_id}" class must be one of action, control, source (got {cls!r})',
                (*where, "class"),
                node_id,
                "class",
            )
            return None
        if not isinstance(kind, str) or not kind:
            self.problem(
                "kind_unknown",
                f'node "{node_id}" needs a kind',
                (*where, "kind"),
                node_id,
                "kind",
            )
            return None
        if cls != ACTION and kind not in KINDS[cls]:
            self.problem(
                "kind_unknown",
                f'node "{node_id}" kind "{kind}" is not a {cls} kind '
                f"(known: {', '.join(KINDS[cls])})",
                (*where, "kind"),
                node_id,
                "kind",
            )
            return None
        params = raw.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self.problem(
                "params_invalid",
                f'node "{node_id}" params must be an object',
                (*where, "params"),
                node_id,
                "params",
            )
            params = {}
        produces = raw.get("produces")
        if produces is not None and not isinstance(produces, dict):
            self.problem(
                "produces_invalid",
                f'node "{node_id}" produces must be a JSON Schema object',
                (*where, "produces"),
                node_id,
                "produces",
            )
            produces = None
        return Node(node_id, cls, kind, params, produces, where)

    def edges(self, raw_edges: Any, nodes: Mapping[str, Node]) -> list[Edge]:
        if raw_edges is None:
            return []
        if not isinstance(raw_edges, list):
            self.problem("definition_invalid", "graph.edges must be a list", ("graph", "edges"))
            return []
        edges: list[Edge] = []
        for index, raw in enumerate(raw_edges):
            where: Path = ("graph", "edges", index)
            if not isinstance(raw, dict):
                self.problem("definition_invalid", f"{dotted(where)} must be an object", where)
                continue
            ends = []
            for end in ("from", "to"):
                value = raw.get(end)
                if not isinstance(value, str):
                    self.problem(
                        "definition_invalid", f"{dotted(where)}.{end} must be a node id", where
                    )
                elif value not in nodes:
                    self.problem(
                        "unknown_node",
                        f'edge {index} {end} names node "{value}", which is not defined',
                        (*where, end),
                        path=f"edges[{index}].{end}",
                    )
                ends.append(value)
            when = raw.get("when")
            if when is not None and not isinstance(when, bool):
                self.problem(
                    "definition_invalid", f"{dotted(where)}.when must be true or false", where
                )
                when = None
            if all(isinstance(end, str) for end in ends):
                edges.append(Edge(str(ends[0]), str(ends[1]), when, where))
        return edges


def read_definition(source: Source) -> tuple[Definition, list[LintItem]]:
    """The definition in ``source`` and the structural problems found reading it."""
    reader = _Reader(source)
    definition = reader.read()
    return definition, reader.items
