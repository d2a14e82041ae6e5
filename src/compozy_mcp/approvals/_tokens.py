"""One-shot approval tokens: ``czat_`` and 32 random bytes, base64url without padding, handed
out once; the store keeps only their SHA-256. The prefix says what the secret is (a secret
scanner can find one pasted where it should not be), and a token never starts with ``-``,
which a command line would take for an option. A token is bound to tool, session, workspace,
agent and input digest, used once, and expires (120 s by default)."""

from __future__ import annotations

import base64
import hashlib
import secrets

TOKEN_BYTES = 32
DEFAULT_TTL_SECONDS = 120
#: how long an allow-once or reject-once answer waits for the retried call
ANSWER_TTL_SECONDS = 3600


TOKEN_PREFIX = "czat_"


def new_token() -> str:
    secret = base64.urlsafe_b64encode(secrets.token_bytes(TOKEN_BYTES)).decode().rstrip("=")
    return TOKEN_PREFIX + secret


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def answer_key() -> str:
    """The stored key of an allow-once/reject-once answer (no secret: the retried call finds it
    by its binding)."""
    return "answer-" + secrets.token_hex(16)
