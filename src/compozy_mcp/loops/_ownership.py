"""Who a Loop and its runs belong to, and whose rights a run acts with.

A Loop belongs to whoever stored its first version: the operator (``None``) or a managed
session, and with it that session's ancestors. Every version carries the Loop's owner and its
own author (the session that wrote it, ``None`` for the operator). A Loop stored before Loops
had owners belongs to the operator.

- A managed session reads, versions and runs only the Loops it or one of its descendants owns;
  the operator acts on every Loop.
- A run acts with the narrower rights of the caller that starts it and the author of the
  version it runs: the operator running a version a session wrote gets that session's policy,
  never more (the version could otherwise borrow the operator's rights).
"""

from __future__ import annotations

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ToolDenied
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.access import Access


def who(session_id: str | None) -> str:
    """``the operator`` or ``session "<id>"``, for messages."""
    return "the operator" if session_id is None else f'session "{session_id}"'


def author_label(session_id: str | None) -> str:
    """The public form of an owner or author: ``operator`` or ``session:<id>``."""
    return "operator" if session_id is None else f"session:{session_id}"


def owns(access: Access, caller: str | None, owner: str | None) -> bool:
    """Whether ``caller`` (``None``: the operator) may act on what ``owner`` owns."""
    if caller is None:
        return True
    return owner is not None and access.within(caller, owner)


def check_loop(access: Access, call: CallInfo, loop_id: str, owner: str | None) -> None:
    caller = call.scope.session_id
    if owns(access, caller, owner):
        return
    raise ToolDenied(
        call.tool_id,
        f'loop "{loop_id}" belongs to {who(owner)}; session "{caller}" may act only on Loops '
        "it or its descendants own",
        reason=Reason.LOOP_NOT_IN_SCOPE,
    )


def acting_scope(access: Access, caller: str | None, author: str | None) -> str | None:
    """The session a run acts as: the narrower of its starter and its version's author.

    A session may run only Loops its tree owns, and only the owner or its ancestors write
    versions, so the author is the caller, one of its descendants (narrower: the author) or an
    ancestor (wider: the caller)."""
    if author is None:
        return caller
    if caller is None or access.within(caller, author):
        return author
    return caller
