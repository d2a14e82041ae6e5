"""Session credentials: what an agent's ``compozy proxy --session ID`` shows a daemon that
wants a bearer token, instead of the daemon's own token (which never leaves the daemon:
:mod:`compozy_mcp.childenv`).

A credential is ``compozy-session:<session id>:<HMAC>``, keyed by a secret this process draws
at start: only the daemon that minted it accepts it (a restarted daemon mints new ones as it
binds its agents again), and only for requests made as that session
(:class:`~compozy_mcp.api.auth.Access`), so they are held to that session's policy.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

PREFIX = "compozy-session:"
#: the variable the credential travels in, to the proxy an agent starts
SESSION_TOKEN = "COMPOZY_SESSION_TOKEN"
_KEY = secrets.token_bytes(32)


def _digest(session_id: str) -> str:
    return hmac.new(_KEY, session_id.encode(), hashlib.sha256).hexdigest()


def session_credential(session_id: str) -> str:
    """The credential of ``session_id``, good with this process only."""
    return f"{PREFIX}{session_id}:{_digest(session_id)}"


def is_session_credential(token: str) -> bool:
    return token.startswith(PREFIX)


def credential_session(token: str) -> str | None:
    """The session a credential this process minted is for; ``None`` if it is not one."""
    if not token.startswith(PREFIX):
        return None
    session_id, _, digest = token[len(PREFIX) :].rpartition(":")
    if not session_id or not hmac.compare_digest(digest.encode(), _digest(session_id).encode()):
        return None
    return session_id
