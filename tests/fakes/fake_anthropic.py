"""A fake Anthropic Messages API, as Claude Code (through its ACP adapter) calls it:
``POST /v1/messages`` (streamed as Server-Sent Events, or one JSON message),
``POST /v1/messages/count_tokens``, ``GET /v1/models``, ``HEAD /``.

    python -m tests.fakes.fake_anthropic --port 8787
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from typing import Any

from tests.fakes.script import Reply, decide
from tests.fakes.server import Request, Response, serve_main

MODEL = "claude-sonnet-4-5"
_ids = itertools.count(1)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    found = []
    for block in content or []:
        if isinstance(block, dict) and block.get("type") == "text":
            found.append(str(block.get("text", "")))
    return found


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(_texts(content))


def _reminder(text: str) -> bool:
    return text.lstrip().startswith("<system-reminder>")


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def conversation(body: dict[str, Any]) -> tuple[str, list[str]]:
    """The prompt (the last user text, system reminders left out) and the tool results that
    came back since."""
    prompt, results = "", list[str]()
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        said = [
            t
            for t in _texts(blocks)
            if t.strip() and not t.lstrip().startswith("<system-reminder>")
        ]
        returned = [
            _result_text(b)
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if said and not returned:
            prompt, results = "\n".join(said), []
        results += returned
    return prompt, results


def _usage(body: dict[str, Any], out: int) -> dict[str, int]:
    return {
        "input_tokens": len(json.dumps(body)) // 4,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": out,
    }


def _content(reply: Reply) -> list[dict[str, Any]]:
    if reply.tool_calls:
        return [
            {
                "type": "tool_use",
                "id": f"toolu_{next(_ids):04d}",
                "name": c.name,
                "input": c.arguments,
            }
            for c in reply.tool_calls
        ]
    return [{"type": "text", "text": reply.text}]


def _stream(body: dict[str, Any], reply: Reply) -> Iterator[tuple[str | None, Any]]:
    message_id = f"msg_{next(_ids):04d}"
    usage = _usage(body, 1)
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": body.get("model", MODEL),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
    )
    if reply.tool_calls:
        for index, block in enumerate(_content(reply)):
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                },
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(block["input"]),
                    },
                },
            )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        stop = "tool_use"
    else:
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        for chunk in reply.chunks:
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": chunk},
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        stop = "end_turn"
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": _usage(body, max(1, len(reply.text) // 4)),
        },
    )
    yield "message_stop", {"type": "message_stop"}


class AnthropicApi:
    name = "anthropic"

    def handle(self, request: Request) -> Response:
        if request.method == "HEAD" or request.path == "/":
            return Response(json_body={})
        if request.path.endswith("/v1/models"):
            return Response(
                json_body={
                    "data": [
                        {
                            "type": "model",
                            "id": MODEL,
                            "display_name": "Fake Sonnet",
                            "created_at": "2026-01-01T00:00:00Z",
                        }
                    ],
                    "has_more": False,
                    "first_id": MODEL,
                    "last_id": MODEL,
                }
            )
        body = request.body if isinstance(request.body, dict) else {}
        if request.path.endswith("/count_tokens"):
            return Response(json_body={"input_tokens": len(json.dumps(body)) // 4})
        if not request.path.endswith("/v1/messages"):
            return Response(
                status=404,
                json_body={
                    "type": "error",
                    "error": {"type": "not_found_error", "message": request.path},
                },
            )
        prompt, results = conversation(body)
        tools = [str(tool.get("name")) for tool in body.get("tools", []) if isinstance(tool, dict)]
        reply = decide(prompt, tools, results)
        if body.get("stream"):
            return Response(events=_stream(body, reply), delay=reply.delay)
        return Response(
            json_body={
                "id": f"msg_{next(_ids):04d}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", MODEL),
                "content": _content(reply),
                "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
                "stop_sequence": None,
                "usage": _usage(body, max(1, len(reply.text) // 4)),
            }
        )


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(tool.get("name")) for tool in body.get("tools", []) if isinstance(tool, dict)]


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results a request carried back to the model."""
    return conversation(body)[1]


if __name__ == "__main__":
    sys.exit(serve_main(AnthropicApi()))
