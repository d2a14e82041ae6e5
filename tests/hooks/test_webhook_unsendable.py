"""A webhook whose URL or headers HTTP cannot carry fails as a hook, as its on_error says: it
never fails the call it guards with a server error (schemathesis created such hooks in
``make soak`` and every later call answered 500)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Caller
from tests.hooks.support import runs

from compozy_mcp.assembly import App
from compozy_mcp.errors import HookFailed

pytestmark = pytest.mark.anyio

DETAIL = "could not be sent (its url or headers are not valid HTTP)"

#: what schemathesis sent: each passes the hook's input schema
UNSENDABLE: list[dict[str, Any]] = [
    {"url": "http://["},
    {"url": "http://a b/"},
    {"url": "http://127.0.0.1:9/\x00"},
    {"url": "http://127.0.0.1:9/x", "headers": {"a": "b\nc"}},
    {"url": "http://127.0.0.1:9/x", "headers": {"a\u00e9": "b"}},
    {"url": "http://127.0.0.1:9/x", "headers": {"a": "\u0100"}},
]


@pytest.mark.parametrize("target", UNSENDABLE, ids=lambda t: repr(t)[:40])
@pytest.mark.parametrize("on_error", ["allow", "deny"])
async def test_an_unsendable_webhook_fails_as_its_on_error_says_never_the_call_with_a_500(
    app: App, call: Caller, target: dict[str, Any], on_error: str
) -> None:
    await call.structured(
        "compozy__hooks_create",
        {
            "id": "h",
            "event": "tool.pre_call",
            "matcher": {"tool": "compozy__session_create"},
            "on_error": on_error,
            **target,
        },
    )
    if on_error == "allow":
        await call.create()
    else:
        with pytest.raises(HookFailed) as caught:
            await call.create()
        assert DETAIL in caught.value.message
    (run,) = await runs(app, hook_id="h")
    assert (run["outcome"], run["detail"], run["decision"]) == ("error", DETAIL, on_error)
