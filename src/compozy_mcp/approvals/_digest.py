"""The one input digest of approvals: prompts, grants and one-shot tokens all use
:func:`input_digest`, so a call, the grant it matches and the token minted for it always agree.

Canonicalization, exactly:

1. the input is a JSON object; no input is ``{}``;
2. the top-level key ``result_view`` is removed: the view changes only what a call returns,
   never which approval applies (spec, "Approvals"). Only the top level: it is the selector
   there and nowhere else;
3. the rest is written as canonical JSON (:func:`compozy_mcp.jsonutil.canonical_json`, the same
   form schema digests use): keys sorted by code point, no whitespace, strings UTF-8 and
   unescaped (except U+2028/U+2029, as Go writes them), integers verbatim and other numbers in
   Go's shortest form;
4. the digest is ``"sha256:" + lowercase hex SHA-256`` of those bytes.

Upstream takes ``json.Compact`` of the input as sent, which only strips whitespace, so two
clients sending the same keys in another order get two digests and a remembered approval does
not match. Sorting keys fixes that. Grants stored by that older rule (over an input that, before
views, never held ``result_view``) are still found: :func:`matching_digests` also gives the
digest of the input compacted in the order it was sent.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from compozy_mcp import jsonutil

SELECTOR = "result_view"
PREFIX = "sha256:"


def approval_input(tool_input: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of an input that approvals look at: all of it but the selector."""
    return {key: value for key, value in (tool_input or {}).items() if key != SELECTOR}


def _digest(data: bytes) -> str:
    return PREFIX + hashlib.sha256(data).hexdigest()


def input_digest(tool_input: Mapping[str, Any] | None) -> str:
    """The digest of an input for approvals (steps 1-4 above)."""
    return _digest(jsonutil.canonical_json(approval_input(tool_input)))


def compact_digest(tool_input: Mapping[str, Any] | None) -> str:
    """Upstream's older digest: the input (selector removed) compacted in the order it was sent."""
    return _digest(jsonutil.dumps(approval_input(tool_input)))


def matching_digests(tool_input: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The digests a remembered grant for this input may be stored under: the canonical one
    first, then the older compact one when it differs."""
    canonical = input_digest(tool_input)
    compact = compact_digest(tool_input)
    return (canonical,) if compact == canonical else (canonical, compact)


def same_digest(a: str, b: str) -> bool:
    """Digests compared in constant time."""
    return hmac.compare_digest(a.encode(), b.encode())


def is_digest(text: str) -> bool:
    hexpart = text.removeprefix(PREFIX)
    return (
        text.startswith(PREFIX)
        and len(hexpart) == 64
        and all(c in "0123456789abcdef" for c in hexpart)
    )
