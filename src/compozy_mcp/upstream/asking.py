"""What an upstream MCP server asks its client (sampling, elicitation, roots), answered for it.

compozy is the client of its upstream servers, and a server may ask its client something while
it serves a call: to sample a model, to elicit an answer from the person, for its roots. compozy
declares those capabilities when the client of its own proxy does (:class:`Declared`: a stdio
proxy declares exactly what its one client declared; the daemon and an HTTP proxy, which serve
many clients, declare all three and check each call's client), and answers them so:

- sampling and elicitation go to the client of the call that is waiting on the server (an
  :class:`Asker`), on that call's own response stream; refused, with why, when that client did
  not declare the capability, cannot be asked mid-call (the 2026-07-28 era has no requests to the
  client), or when no call or several calls from different clients are waiting on the server
  (nothing on the wire says which one asks);
- roots are answered here with the workspace of the session whose call is waiting (or the one
  the servers were started for), never forwarded.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from mcp import types
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

log = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Declared:
    """The client capabilities compozy declares to its upstream servers."""

    sampling: bool = False
    elicitation: bool = False
    roots: bool = False

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities | None) -> Declared:
        """What a downstream client declared."""
        if capabilities is None:
            return cls()
        return cls(
            sampling=capabilities.sampling is not None,
            elicitation=capabilities.elicitation is not None,
            roots=capabilities.roots is not None,
        )


#: for many clients at once (the daemon, an HTTP proxy): each call's own client is checked
EVERY_CAPABILITY = Declared(sampling=True, elicitation=True, roots=True)
#: no client to ask (a command line run, a check)
NO_CAPABILITY = Declared()


class Asker(Protocol):
    """The client of a call forwarded to an upstream server, as that server's questions reach
    it."""

    @property
    def capabilities(self) -> types.ClientCapabilities | None:
        """What the client declared (``None``: nothing)."""
        ...

    @property
    def roots(self) -> Sequence[Path]:
        """The workspace roots of the call's session."""
        ...

    @property
    def identity(self) -> object:
        """Equal for two calls of the same client (one connection, one session)."""
        ...

    async def ask(self, request: types.ServerRequest, result: type[R]) -> R:
        """Send ``request`` to the client on the call's response stream; raises ``MCPError``
        with the client's answer when it refuses, or when it cannot be asked mid-call."""
        ...


def _refusal(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


def _root(path: Path) -> types.Root:
    return types.Root.model_validate({"uri": path.resolve().as_uri(), "name": path.name or "/"})


class Askers:
    """The calls waiting on one upstream server, and the answers to what it asks."""

    def __init__(self, server: str, default_roots: Sequence[Path] = ()) -> None:
        self.server = server
        self.default_roots = tuple(default_roots)
        self._waiting: list[Asker] = []

    @contextlib.contextmanager
    def waiting(self, asker: Asker | None) -> Iterator[None]:
        """For the length of a call: ``asker`` is waiting on the server."""
        if asker is None:
            yield
            return
        self._waiting.append(asker)
        try:
            yield
        finally:
            self._waiting.remove(asker)

    def current(self) -> Asker | None:
        """The client the server's question is for: the only one waiting (several calls of
        one client count as one)."""
        if not self._waiting:
            return None
        first = self._waiting[0]
        if any(asker.identity != first.identity for asker in self._waiting[1:]):
            return None
        return self._waiting[-1]

    def _who(self, wanted: str) -> Asker | types.ErrorData:
        if not self._waiting:
            return _refusal(
                f'MCP server "{self.server}" asked for {wanted} while no call was waiting on it'
            )
        asker = self.current()
        if asker is None:
            return _refusal(
                f'MCP server "{self.server}" asked for {wanted} while calls of several clients '
                "were waiting on it; compozy cannot tell which one it asks"
            )
        return asker

    async def _forward(self, asker: Asker, request: types.ServerRequest, result: type[R]) -> Any:
        try:
            return await asker.ask(request, result)
        except MCPError as exc:
            return exc.error
        except Exception as exc:  # the client went away, or answered something invalid
            log.info('forwarding a request of MCP server "%s" failed: %r', self.server, exc)
            return _refusal(f"the client could not be asked ({type(exc).__name__})")

    # --- the client callbacks of the SDK ---------------------------------------------------------

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        asker = self._who("sampling")
        if isinstance(asker, types.ErrorData):
            return asker
        if asker.capabilities is None or asker.capabilities.sampling is None:
            return _refusal("the client of this call does not support sampling")
        request = types.CreateMessageRequest(params=params)
        wants_tools = params.tools is not None or params.tool_choice is not None
        kind = types.CreateMessageResultWithTools if wants_tools else types.CreateMessageResult
        answer: Any = await self._forward(asker, request, kind)
        return answer  # type: ignore[no-any-return]

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        asker = self._who("elicitation")
        if isinstance(asker, types.ErrorData):
            return asker
        supported = asker.capabilities.elicitation if asker.capabilities else None
        if supported is None:
            return _refusal("the client of this call does not support elicitation")
        url_mode = isinstance(params, types.ElicitRequestURLParams)
        # an empty capability is form mode (MCP 2025-11-25)
        if url_mode and supported.url is None:
            return _refusal("the client of this call does not support URL elicitation")
        if not url_mode and supported.form is None and supported.url is not None:
            return _refusal("the client of this call does not support form elicitation")
        answer: Any = await self._forward(
            asker, types.ElicitRequest(params=params), types.ElicitResult
        )
        return answer  # type: ignore[no-any-return]

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        asker = self.current()
        roots = asker.roots if asker is not None and asker.roots else self.default_roots
        return types.ListRootsResult(roots=[_root(path) for path in roots])
