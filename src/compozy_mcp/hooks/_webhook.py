"""Webhook hooks: the payload is POSTed as JSON; a 2xx response's body is the patch (empty: no
patch); any other status, or no answer, is a failure.

The core may not use the daemon's HTTP client (layers: no ``httpx2`` below the surfaces), and a
hook needs no more than one POST: ``urllib`` does it, in a worker thread. The call waits for the
timeout at most; a thread still blocked in the network after that is abandoned (its socket has
the same timeout, so it ends soon after).
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread

from compozy_mcp import __version__, jsonutil
from compozy_mcp.hooks._execution import MAX_OUTPUT_BYTES, Execution, RunContext, tail


def _no_redirects() -> urllib.request.OpenerDirector:
    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # a 3xx is an answer, not a hop: the payload goes where it was told

    return urllib.request.build_opener(Refuse)


_OPENER = _no_redirects()


def _post(url: str, headers: Mapping[str, str], data: bytes, timeout: float) -> Execution:
    try:
        request = urllib.request.Request(
            url,
            data=data,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": f"compozy-mcp/{__version__} hooks",
                **headers,
            },
        )
        with _OPENER.open(request, timeout=timeout) as response:
            body = response.read(MAX_OUTPUT_BYTES + 1)
            status = response.status
    except urllib.error.HTTPError as answer:
        detail = tail(answer.read(2048)) if answer.fp is not None else ""
        return Execution(stderr_tail=detail, exit_code=None, failure=f"answered HTTP {answer.code}")
    except TimeoutError:
        return Execution(failure=f"timed out after {timeout:g} s", timed_out=True)
    except (urllib.error.URLError, OSError) as exc:
        cause = getattr(exc, "reason", exc)
        why = getattr(cause, "strerror", None) or type(cause).__name__
        return Execution(failure=f"could not be reached ({why})")
    except (ValueError, http.client.InvalidURL):
        # a URL or header http.client cannot send (a control character, "http://[", a header
        # that is not Latin-1): the hook fails, as its on_error says; the call never does
        return Execution(failure="could not be sent (its url or headers are not valid HTTP)")
    except http.client.HTTPException as exc:
        return Execution(failure=f"answered with no valid HTTP ({type(exc).__name__})")
    if len(body) > MAX_OUTPUT_BYTES:
        return Execution(unreadable=f"answered more than {MAX_OUTPUT_BYTES} bytes")
    if not 200 <= status < 300:
        return Execution(failure=f"answered HTTP {status}")
    return Execution(output=body)


class WebhookRunner:
    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        self.url = url
        self.headers = dict(headers or {})

    async def __call__(
        self, payload: dict[str, Any], timeout: float, where: RunContext
    ) -> Execution:
        with anyio.move_on_after(timeout):
            return await anyio.to_thread.run_sync(
                _post,
                self.url,
                self.headers,
                jsonutil.dumps(payload),
                timeout,
                abandon_on_cancel=True,
            )
        return Execution(failure=f"timed out after {timeout:g} s", timed_out=True)
