"""The public records of Loops: a definition version and a run (their schemas and views are
in :mod:`compozy_mcp.native.loop_schema`)."""

from __future__ import annotations

from typing import Any

from compozy_mcp.loops._lint import selected_view
from compozy_mcp.loops._model import Definition
from compozy_mcp.loops._ownership import author_label
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.store.loops import LoopRow


def loop_record(row: LoopRow, definition: Definition, tools: ToolRegistry) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = []
    for node in definition.nodes.values():
        entry: dict[str, Any] = {"id": node.id, "class": node.cls, "kind": node.kind}
        tool = tools.find(node.kind) if node.is_tool else None
        if tool is not None:
            entry["result_view"] = selected_view(tool, node.params)
        nodes.append(entry)
    record: dict[str, Any] = {
        "id": row.id,
        "version": row.version,
        "name": row.name,
    }
    if definition.description:
        record["description"] = definition.description
    record.update(
        owner=author_label(row.owner),
        author=author_label(row.author),
        created_at=row.created_at,
        nodes=nodes,
        edges=[
            {"from": e.source, "to": e.target, **({"when": e.when} if e.when is not None else {})}
            for e in definition.edges
        ],
        definition=row.doc.get("document", {}),
    )
    if isinstance(row.doc.get("source"), str):
        record["source"] = row.doc["source"]
    return {"loop": record}


_NODE_KEYS = (
    "node_id",
    "class",
    "kind",
    "status",
    "result_view",
    "started_at",
    "ended_at",
    "error",
    "gate",
    "output",
    "items",
)
_RUN_KEYS = ("run_id", "loop_id", "loop_version", "status", "started_by", "created_at")


def run_record(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored run document as its public record (store-only fields left out)."""
    record: dict[str, Any] = {key: doc.get(key) for key in _RUN_KEYS}
    record["updated_at"] = doc["updated_at"]
    if doc.get("acts_as") not in (None, doc.get("started_by")):
        record["acts_as"] = doc["acts_as"]  # its nodes act with a narrower policy than its starter
    for key in ("ended_at", "recovered_at", "error"):
        if doc.get(key) is not None:
            record[key] = doc[key]
    contracts = doc.get("contracts", {})
    nodes = []
    for node_id, state in doc["nodes"].items():
        entry = {key: state[key] for key in _NODE_KEYS if key in state}
        if node_id in contracts:
            entry["result_view"] = contracts[node_id].get("view")
        nodes.append({key: entry[key] for key in _NODE_KEYS if key in entry})
    record["nodes"] = nodes
    record["inputs"] = doc.get("inputs", {})
    record["contracts"] = contracts
    return record
