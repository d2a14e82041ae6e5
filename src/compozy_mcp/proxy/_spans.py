"""The SDK's OpenTelemetry span per request, made only when it can be seen.

The SDK's server wraps every request in an OpenTelemetry span. With no tracer provider set
(none is, unless the process is instrumented), the span is the no-op tracer's: it records
nothing, and it is the current span already unless the request's ``_meta`` carries a trace
context to continue (which then reaches the upstream servers a call is forwarded to). Making
it costs about as much CPU as a native echo call's dispatch; :func:`spans_when_traced` skips
it exactly when it would change nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from opentelemetry import trace
from opentelemetry.propagate import get_global_textmap


class _Fields:
    """The fields the global propagator reads, kept while it stays the same (a composite
    propagator builds the set anew each time it is asked)."""

    def __init__(self) -> None:
        self._of: object = None
        self._fields: tuple[str, ...] = ()

    def __call__(self) -> tuple[str, ...]:
        textmap = get_global_textmap()
        if textmap is not self._of:
            self._fields = tuple(textmap.fields)
            self._of = textmap
        return self._fields


_propagated = _Fields()


def tracing(meta: Any) -> bool:
    """Whether a request's span would record anything or carry a trace context on: a tracer
    provider is set, or ``meta`` has a field the propagator reads."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return True
    return isinstance(meta, Mapping) and not meta.keys().isdisjoint(_propagated())


class SpansWhenTraced:
    """The SDK's span middleware, run only when :func:`tracing`."""

    def __init__(self, spans: ServerMiddleware[Any]) -> None:
        self._spans = spans

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if tracing(params.get("_meta") if isinstance(params, Mapping) else None):
            return await self._spans(ctx, call_next)
        return await call_next(ctx)


def spans_when_traced(middleware: ServerMiddleware[Any]) -> ServerMiddleware[Any]:
    """``middleware``, made conditional if it is the SDK's span middleware."""
    if isinstance(middleware, OpenTelemetryMiddleware):
        return SpansWhenTraced(middleware)
    return middleware
