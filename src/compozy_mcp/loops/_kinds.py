"""The reserved node kinds: the params each takes and the output each produces (tool nodes take
their tool's input schema and produce the view they select)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compozy_mcp.loops._model import BRANCH, COLLECT, FAN_OUT, GATE, INPUT, RUN_AGENT, TRANSFORM
from compozy_mcp.schemas import BOOLEAN, COUNT, OPEN_OBJECT, STRING, array, obj

Schema = dict[str, Any]

#: a string that may hold a reference (rendered at run time)
TEMPLATE = STRING
CRITERION = obj({"id": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}, "prompt": STRING})

PARAMS: Mapping[str, Schema] = {
    RUN_AGENT: obj(
        {"agent": STRING, "prompt": TEMPLATE},
        {
            "agent_name": STRING,
            "session_id": TEMPLATE,
            "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 86_400},
        },
    ),
    TRANSFORM: obj({"output": {}}),
    BRANCH: obj({"condition": TEMPLATE}),
    GATE: obj(
        {"criteria": array(CRITERION, minItems=1)},
        {
            "title": STRING,
            # answered by a reviewing agent (a run-agent style prompt) instead of the operator;
            # an answer that decides nothing leaves the gate to the operator
            "reviewer": obj(
                {"agent": STRING},
                {
                    "agent_name": STRING,
                    "session_id": TEMPLATE,
                    "context": TEMPLATE,
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 86_400},
                },
            ),
        },
    ),
    FAN_OUT: obj({"items": {}}),
    COLLECT: obj({"from": STRING}),
    INPUT: obj({}, {"schema": OPEN_OBJECT, "default": {}, "description": STRING}),
}

DECISION = {"type": "string", "enum": ["approve", "reject"]}
ANSWER = obj({"criterion_id": STRING, "prompt": STRING, "passed": BOOLEAN}, {"note": STRING})

OUTPUTS: Mapping[str, Schema] = {
    RUN_AGENT: obj(
        {
            "session_id": STRING,
            "turn_id": STRING,
            "stop_reason": STRING,
            "final_message": STRING,
        }
    ),
    BRANCH: obj({"result": BOOLEAN}),
    GATE: obj(
        {"decision": DECISION, "answered_by": STRING, "answers": array(ANSWER)},
        {"note": STRING},
    ),
    FAN_OUT: obj({"items": array({}), "count": COUNT}),
    COLLECT: obj({"items": array({}), "count": COUNT}),
}


def input_schema(params: Mapping[str, Any]) -> Schema:
    """The schema of a Loop input (``input`` node): the one it declares, or any value."""
    declared = params.get("schema")
    return dict(declared) if isinstance(declared, Mapping) else {}
