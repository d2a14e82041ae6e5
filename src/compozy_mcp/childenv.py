"""What the processes compozy starts (hook commands, agents) see of its environment: all of it
but the daemon's secrets.

The daemon's bearer token (``COMPOZY_TOKEN``, the file ``COMPOZY_TOKEN_FILE`` names, or the
token ``compozy serve --token-file`` read) acts as the operator: a hook or an agent holding it
could call anything. So those variables, and any variable whose value holds a withheld secret,
are left out of a child's environment. An agent that needs the daemon gets a credential good
for its own session only (:mod:`compozy_mcp.credentials`), in the environment of the
``compozy proxy --session`` it is told to start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: variables that hold or name the daemon's token, or a session's credential (a child gets its
#: own session's credential from compozy, never one it inherited)
SECRET_NAMES = frozenset({"COMPOZY_TOKEN", "COMPOZY_TOKEN_FILE", "COMPOZY_SESSION_TOKEN"})
#: shorter secrets are not looked for inside values (they would match unrelated text)
MIN_SECRET_CHARS = 8

_withheld: set[str] = set()


def withhold(secret: str) -> None:
    """Never pass ``secret`` (the daemon's token) to a child, under any variable name."""
    if len(secret) >= MIN_SECRET_CHARS:
        _withheld.add(secret)


def child_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without the daemon's secrets."""
    given = os.environ if base is None else base
    return {
        name: value
        for name, value in given.items()
        if name not in SECRET_NAMES and not any(secret in value for secret in _withheld)
    }
