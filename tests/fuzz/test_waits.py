"""The soak's schemathesis run asks a generated wait for at most a few seconds, and never turns
an invalid request valid (:mod:`tests.fuzz.waits`)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.fuzz.waits import WAIT_SECONDS, cap_wait, waiting_input

INVOKE_WAIT = "/api/tools/compozy__session_wait/invoke"


def test_the_input_of_a_waiting_invoke_and_of_a_waiting_route_is_found() -> None:
    tool_input = {"session_id": "sess-1"}
    assert waiting_input("POST", INVOKE_WAIT, {"input": tool_input}) is tool_input
    body = {"prompt": "hi", "wait": True}
    assert waiting_input("POST", "/api/sessions/{session_id}/prompt", body) is body
    assert waiting_input("POST", "/api/loops/{loop_id}/runs", body) is body


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/tools/compozy__session_status/invoke", {"input": {"session_id": "s"}}),
        ("POST", INVOKE_WAIT, {"input": "not an object"}),
        ("POST", INVOKE_WAIT, ["not", "an", "object"]),
        ("POST", "/api/sessions", {"agent_name": "general"}),
    ],
)
def test_a_call_that_does_not_wait_is_left_alone(method: str, path: str, body: Any) -> None:
    assert waiting_input(method, path, body) is None


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ({}, {"timeout_seconds": WAIT_SECONDS}),
        ({"timeout_seconds": 600}, {"timeout_seconds": WAIT_SECONDS}),
        ({"timeout_seconds": 1.5}, {"timeout_seconds": 1.5}),
        ({"timeout_seconds": 0}, {"timeout_seconds": 0}),
        # invalid ones stay invalid, for the daemon to refuse
        ({"timeout_seconds": "600"}, {"timeout_seconds": "600"}),
        ({"timeout_seconds": True}, {"timeout_seconds": True}),
        ({"timeout_seconds": None}, {"timeout_seconds": None}),
        ({"timeout_seconds": -5}, {"timeout_seconds": -5}),
    ],
)
def test_a_valid_wait_is_capped_and_an_invalid_one_kept(
    given: dict[str, Any], sent: dict[str, Any]
) -> None:
    cap_wait(given)
    assert given == sent
