"""The schemas and views of the Loop records (a definition version, a run, a lint item); the
records are built in :mod:`compozy_mcp.loops._records`.

A run's compact view keeps what a caller must act on: the run's identity and status, its error,
and per node the id, kind, status, error and the gate (criterion prompts included: spec,
"Compact ... Loop status preserves gate criterion prompts"). The full view adds inputs, node
outputs, timings, fan-out items and the pinned contracts.
"""

from __future__ import annotations

from compozy_mcp.schemas import (
    COUNT,
    OPEN_OBJECT,
    STRING,
    TIMESTAMP,
    array,
    described,
    enum,
    nullable,
    obj,
)
from compozy_mcp.views import KEEP, Each, Fields, ViewSpec

RUN_STATUSES = ("queued", "running", "waiting", "succeeded", "failed", "cancelled", "interrupted")
NODE_STATUSES = (
    "pending",
    "running",
    "waiting",
    "succeeded",
    "failed",
    "skipped",
    "cancelled",
    "interrupted",
)
VIEW = {"type": ["string", "null"], "enum": ["compact", "full", None]}
ERROR = obj(
    {"code": STRING, "reason": STRING, "message": STRING},
    {
        "tool_id": STRING,
        "node_id": STRING,
        "item_index": COUNT,
        "details": OPEN_OBJECT,
        "redacted_as": {
            "type": "string",
            "description": "The message the CLI and HTTP/UDS show instead of the dispatch "
            "message (input errors and denials).",
        },
    },
)
CRITERION = obj({"id": STRING, "prompt": STRING})
GATE = obj(
    {"criteria": array(CRITERION)},
    {
        "title": nullable(STRING),
        "decision": enum("approve", "reject"),
        "answered_by": STRING,
        "review": obj(
            {},
            {"session_id": STRING, "turn_id": STRING, "note": STRING},
        ),
    },
)
CONTRACT = obj(
    {
        "tool_id": STRING,
        "view": VIEW,
        "input_schema_digest": STRING,
        "output_schema_digest": STRING,
    }
)
NODE_STATE = obj(
    {
        "node_id": STRING,
        "class": enum("action", "control", "source"),
        "kind": STRING,
        "status": enum(*NODE_STATUSES),
    },
    {
        "result_view": VIEW,
        "started_at": TIMESTAMP,
        "ended_at": TIMESTAMP,
        "error": ERROR,
        "gate": GATE,
        "output": {"description": "The node's output (any JSON value)."},
        "items": array(
            obj({"status": STRING}, {"output": {}, "error": ERROR}),
            description="Per item of the fan-out this node runs in.",
        ),
    },
)
RUN_RECORD = obj(
    {
        "run_id": STRING,
        "loop_id": STRING,
        "loop_version": {"type": "integer", "minimum": 1},
        "status": enum(*RUN_STATUSES),
        "started_by": nullable(STRING),
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
        "nodes": array(NODE_STATE),
        "inputs": OPEN_OBJECT,
        "contracts": {"type": "object", "additionalProperties": CONTRACT},
    },
    {
        "acts_as": described(
            STRING,
            "The session whose policy the run's nodes act with, when it is not its starter's "
            "own: the narrower of the starter and the author of the version it runs.",
        ),
        "ended_at": TIMESTAMP,
        "recovered_at": TIMESTAMP,
        "error": ERROR,
    },
    order=("run_id", "loop_id", "loop_version", "status", "started_by", "created_at"),
)
RUN_RESULT = obj({"run": RUN_RECORD})
RUN_COMPACT = Fields.of(
    "run_id",
    "loop_id",
    "loop_version",
    "status",
    "started_by",
    "acts_as",
    "created_at",
    "updated_at",
    "ended_at",
    "recovered_at",
    "error",
    nodes=Each(
        Fields.of(
            "node_id",
            "kind",
            "status",
            "result_view",
            "error",
            "gate",
            # the state and failure of every fan-out item; their outputs are in the full record
            items=Each(Fields.of("status", "error")),
        )
    ),
)
RUN_VIEWS = ViewSpec(
    Fields({"run": RUN_COMPACT}),
    follow_up=("run.run_id", "run.nodes[].node_id"),
)
RUNS_VIEWS = ViewSpec(
    Fields({"runs": Each(RUN_COMPACT), "next_cursor": KEEP}),
    follow_up=("runs[].run_id", "next_cursor"),
)

#: ``operator`` or ``session:<id>``
OWNER = {"type": "string", "pattern": "^(operator|session:.+)$"}
LOOP_NODE = obj(
    {"id": STRING, "class": STRING, "kind": STRING},
    {"result_view": VIEW},
)
LOOP_RECORD = obj(
    {
        "id": STRING,
        "version": {"type": "integer", "minimum": 1},
        "name": nullable(STRING),
        "created_at": TIMESTAMP,
        "nodes": array(LOOP_NODE),
        "edges": array(obj({"from": STRING, "to": STRING}, {"when": {"type": "boolean"}})),
        "definition": OPEN_OBJECT,
    },
    {
        "description": STRING,
        "source": STRING,
        "owner": described(OWNER, "Who the Loop belongs to (its tree may act on it)."),
        "author": described(OWNER, "Who wrote this version."),
        "versions": described(
            array(
                obj(
                    {
                        "version": {"type": "integer", "minimum": 1},
                        "author": OWNER,
                        "created_at": TIMESTAMP,
                    }
                )
            ),
            "Every version of the Loop and who wrote it (compozy__loop_inspect).",
        ),
    },
)
LOOP_COMPACT = Fields.of(
    "id", "version", "name", "description", "owner", "author", "created_at", "nodes", "versions"
)
LOOP_VIEWS = ViewSpec(Fields({"loop": LOOP_COMPACT}), follow_up=("loop.id", "loop.version"))
LOOPS_VIEWS = ViewSpec(Fields({"loops": Each(LOOP_COMPACT)}), follow_up=("loops[].id",))
LINT_ITEM = obj(
    {
        "node_id": nullable(STRING),
        "path": nullable(STRING),
        "code": STRING,
        "message": STRING,
        "severity": enum("error", "warning"),
        "line": nullable({"type": "integer", "minimum": 1}),
        "column": nullable({"type": "integer", "minimum": 1}),
    }
)
