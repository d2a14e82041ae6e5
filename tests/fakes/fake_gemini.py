"""A fake Gemini API (``generativelanguage``), as Gemini CLI calls it:
``POST /v1beta/models/M:streamGenerateContent?alt=sse``, ``:generateContent`` (its model router
asks with a JSON schema: answered with an object built from the schema) and ``:countTokens``.

    python -m tests.fakes.fake_gemini --port 8789
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from tests.fakes.script import Reply, decide
from tests.fakes.server import Request, Response, serve_main

MODEL = "gemini-2.5-flash"


def tools_of(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools", []):
        if isinstance(tool, dict):
            declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
            for declared in declarations or []:
                if isinstance(declared, dict) and declared.get("name"):
                    names.append(str(declared["name"]))
    return names


def conversation(body: dict[str, Any]) -> tuple[str, list[str]]:
    """The last user text and the function responses since."""
    prompt, results = "", list[str]()
    for content in body.get("contents", []):
        if not isinstance(content, dict) or content.get("role", "user") != "user":
            continue
        parts = content.get("parts", [])
        texts = [str(p["text"]) for p in parts if isinstance(p, dict) and "text" in p]
        answers = [
            json.dumps(p["functionResponse"].get("response"))
            for p in parts
            if isinstance(p, dict) and "functionResponse" in p
        ]
        said = [t for t in texts if t.strip() and not t.lstrip().startswith("<")]
        if said and not answers:
            prompt, results = "\n".join(said), []
        results += answers
    return prompt, results


def from_schema(schema: Any) -> Any:
    """A value a JSON schema (OpenAPI-flavoured or JSON Schema) accepts: the first of an enum,
    every property of an object."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: from_schema(sub) for name, sub in properties.items()}
    if kind == "array":
        return [from_schema(schema.get("items", {}))]
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "fake"


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    tokens_in = len(json.dumps(body)) // 4
    tokens_out = max(1, len(reply.text) // 4)
    return {
        "promptTokenCount": tokens_in,
        "candidatesTokenCount": tokens_out,
        "totalTokenCount": tokens_in + tokens_out,
    }


def _parts(reply: Reply) -> list[dict[str, Any]]:
    if reply.tool_calls:
        return [{"functionCall": {"name": c.name, "args": c.arguments}} for c in reply.tool_calls]
    return [{"text": reply.text}]


def _chunks(body: dict[str, Any], reply: Reply) -> Iterator[tuple[str | None, Any]]:
    if reply.tool_calls:
        pieces = [_parts(reply)]
    else:
        pieces = [[{"text": chunk}] for chunk in reply.chunks] or [[{"text": ""}]]
    for index, parts in enumerate(pieces):
        last = index == len(pieces) - 1
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL}
        if last:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = _usage(body, reply)
        yield None, chunk


class GeminiApi:
    name = "gemini"

    def handle(self, request: Request) -> Response:
        body = request.body if isinstance(request.body, dict) else {}
        if request.path.endswith(":countTokens"):
            return Response(json_body={"totalTokens": len(json.dumps(body)) // 4})
        if request.path.endswith("/models") and request.method == "GET":
            return Response(json_body={"models": [{"name": f"models/{MODEL}"}]})
        config = body.get("generationConfig", {}) or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if request.path.endswith(":generateContent") and schema is not None:
            answer = {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"text": json.dumps(from_schema(schema))}],
                        },
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "modelVersion": MODEL,
            }
            return Response(json_body=answer)
        prompt, results = conversation(body)
        reply = decide(prompt, tools_of(body), results)
        if request.path.endswith(":streamGenerateContent"):
            return Response(events=_chunks(body, reply), delay=reply.delay)
        if request.path.endswith(":generateContent"):
            candidate = {
                "content": {"role": "model", "parts": _parts(reply)},
                "finishReason": "STOP",
                "index": 0,
            }
            return Response(
                json_body={
                    "candidates": [candidate],
                    "usageMetadata": _usage(body, reply),
                    "modelVersion": MODEL,
                }
            )
        return Response(status=404, json_body={"error": {"code": 404, "message": request.path}})


def tool_results(body: dict[str, Any]) -> list[str]:
    return conversation(body)[1]


if __name__ == "__main__":
    sys.exit(serve_main(GeminiApi()))
