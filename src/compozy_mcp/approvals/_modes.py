"""Permission modes and what each asks of a call by a managed session.

A session's mode is the one set on it, else the nearest ancestor's, else the configured default
(``COMPOZY_PERMISSION_MODE``, ``default``). The names are upstream's:

=============  ===========  ===========================  =============================
mode           read tools   mutating tools               destructive, open-world tools
=============  ===========  ===========================  =============================
default        run          ask                          ask
accept_edits   run          run                          ask
bypass         run          run                          run
plan           run          refused (plan is read-only)  refused
=============  ===========  ===========================  =============================

The operator (a call that names no session) is never asked. Remembered grants decide before the
mode does (except under ``plan``, which no grant widens): see :mod:`.service`.
"""

from __future__ import annotations

from enum import Enum, StrEnum

from compozy_mcp.native.registry import Risk


class PermissionMode(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    BYPASS = "bypass"
    PLAN = "plan"


class Need(Enum):
    """What a call needs before it runs."""

    NOTHING = "run"
    APPROVAL = "ask"
    REFUSAL = "refused"


def need(mode: PermissionMode, risk: Risk) -> Need:
    if risk is Risk.READ or mode is PermissionMode.BYPASS:
        return Need.NOTHING
    if mode is PermissionMode.PLAN:
        return Need.REFUSAL
    if mode is PermissionMode.ACCEPT_EDITS and risk is Risk.MUTATING:
        return Need.NOTHING
    return Need.APPROVAL
