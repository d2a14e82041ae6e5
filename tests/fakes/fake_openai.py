"""A fake OpenAI Responses API, as Codex (through its ACP adapter) calls it: ``POST
/v1/responses``, streamed as Server-Sent Events (``response.created`` ... ``response.completed``).

MCP tools reach the model as one namespace tool (``{"type": "namespace", "name":
"mcp__compozy", "tools": [...]}``) and are called with a ``function_call`` that carries the
``namespace``.

    python -m tests.fakes.fake_openai --port 8788
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from typing import Any

from tests.fakes.script import Reply, decide
from tests.fakes.server import Request, Response, serve_main

MODEL = "gpt-5.5-codex"
_ids = itertools.count(1)


def tools_of(body: dict[str, Any]) -> dict[str, str | None]:
    """Every tool name the model is offered, with the namespace it sits in (or ``None``)."""
    found: dict[str, str | None] = {}
    for tool in body.get("tools", []):
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools", []):
                if isinstance(inner, dict) and inner.get("name"):
                    found[str(inner["name"])] = str(tool.get("name"))
        elif tool.get("name"):
            found[str(tool["name"])] = None
    return found


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if isinstance(part, dict) and part.get("type") in ("input_text", "text", "output_text"):
            parts.append(str(part.get("text", "")))
    return "".join(parts)


def conversation(body: dict[str, Any]) -> tuple[str, list[str]]:
    """The last user text (the harness's own context messages left out) and the function
    call outputs since."""
    prompt, results = "", []
    items = body.get("input", [])
    if isinstance(items, str):
        return items, []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            output = item.get("output")
            results.append(output if isinstance(output, str) else json.dumps(output))
        elif item.get("role") == "user":
            text = _text(item.get("content"))
            if text.strip() and not text.lstrip().startswith("<"):
                prompt, results = text, []
    return prompt, results


def _events(body: dict[str, Any], reply: Reply) -> Iterator[tuple[str | None, Any]]:
    response_id = f"resp_{next(_ids):04d}"
    model = body.get("model", MODEL)
    sequence = itertools.count()
    head = {"id": response_id, "object": "response", "model": model, "output": []}
    yield (
        "response.created",
        {
            "type": "response.created",
            "sequence_number": next(sequence),
            "response": {**head, "status": "in_progress"},
        },
    )
    output: list[dict[str, Any]] = []
    namespaces = tools_of(body)
    if reply.tool_calls:
        for index, call in enumerate(reply.tool_calls):
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{next(_ids):04d}",
                "call_id": f"call_{next(_ids):04d}",
                "name": call.name,
                "arguments": json.dumps(call.arguments),
                "status": "completed",
            }
            if namespaces.get(call.name):
                item["namespace"] = namespaces[call.name]
            yield (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(sequence),
                    "output_index": index,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                },
            )
            yield (
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(sequence),
                    "output_index": index,
                    "item": item,
                },
            )
            output.append(item)
    else:
        message_id = f"msg_{next(_ids):04d}"
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": next(sequence),
                "output_index": 0,
                "item": {
                    "type": "message",
                    "id": message_id,
                    "status": "in_progress",
                    "role": "assistant",
                    "content": [],
                },
            },
        )
        for chunk in reply.chunks:
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(sequence),
                    "item_id": message_id,
                    "output_index": 0,
                    "content_index": 0,
                    "delta": chunk,
                },
            )
        message = {
            "type": "message",
            "id": message_id,
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
        yield (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": next(sequence),
                "output_index": 0,
                "item": message,
            },
        )
        output.append(message)
    tokens_in = len(json.dumps(body)) // 4
    tokens_out = max(1, len(reply.text) // 4)
    yield (
        "response.completed",
        {
            "type": "response.completed",
            "sequence_number": next(sequence),
            "response": {
                **head,
                "status": "completed",
                "output": output,
                "usage": {
                    "input_tokens": tokens_in,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": tokens_out,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": tokens_in + tokens_out,
                },
            },
        },
    )


class OpenAIApi:
    name = "openai"

    def handle(self, request: Request) -> Response:
        if request.path.endswith("/models"):
            return Response(
                json_body={"object": "list", "data": [{"id": MODEL, "object": "model"}]}
            )
        if not request.path.endswith("/responses"):
            return Response(status=404, json_body={"error": {"message": f"no {request.path}"}})
        body = request.body if isinstance(request.body, dict) else {}
        prompt, results = conversation(body)
        reply = decide(prompt, list(tools_of(body)), results)
        return Response(events=_events(body, reply), delay=reply.delay)


def tool_results(body: dict[str, Any]) -> list[str]:
    return conversation(body)[1]


if __name__ == "__main__":
    sys.exit(serve_main(OpenAIApi()))
