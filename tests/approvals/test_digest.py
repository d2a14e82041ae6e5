"""Issue 14, item 5: the one input digest of approvals, and its canonicalization."""

from __future__ import annotations

import hashlib

from compozy_mcp.approvals._digest import (
    compact_digest,
    input_digest,
    is_digest,
    matching_digests,
)


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_the_digest_is_sha256_of_canonical_json_without_result_view() -> None:
    sent = {
        "session_id": "s",
        "name": "é x",
        "result_view": "full",
        "n": 1.0,
        "z": [2, {"b": 1, "a": 0}],
    }
    expected = _sha('{"n":1,"name":"é x","session_id":"s","z":[2,{"a":0,"b":1}]}'.encode())
    assert input_digest(sent) == expected
    assert is_digest(expected)


def test_the_selector_never_changes_the_digest() -> None:
    base = {"session_id": "s", "name": "x"}
    digests = {input_digest({**base, "result_view": v}) for v in ("full", "compact")}
    assert digests == {input_digest(base)}


def test_key_order_never_changes_the_digest() -> None:
    assert input_digest({"b": 1, "a": 2}) == input_digest({"a": 2, "b": 1})


def test_only_the_top_level_selector_is_removed() -> None:
    nested = {"input": {"result_view": "full"}}
    assert input_digest(nested) != input_digest({"input": {}})


def test_no_input_is_the_empty_object() -> None:
    assert input_digest(None) == input_digest({}) == _sha(b"{}")


def test_grants_of_the_older_compact_digest_are_looked_up_too() -> None:
    sent = {"session_id": "s", "name": "x", "result_view": "compact"}
    assert compact_digest(sent) == _sha(b'{"session_id":"s","name":"x"}')
    assert matching_digests(sent) == (input_digest(sent), compact_digest(sent))
    assert matching_digests({"a": 1}) == (input_digest({"a": 1}),)


def test_is_digest_wants_the_prefix_and_64_lowercase_hex_digits() -> None:
    assert not is_digest("a" * 64)
    assert not is_digest("sha256:" + "A" * 64)
    assert not is_digest("sha256:" + "a" * 63)
