"""The Host API's own requests that are not tool calls: registering a workspace or a profile.

Their schemas serve the check here, the OpenAPI document and the ``compozy_host__*`` tools.
A request that breaks its schema is an :class:`~compozy_mcp.errors.InvalidRequest` naming the
field; its message is reported as it is, since it only echoes what the caller sent.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from compozy_mcp.errors import InvalidRequest
from compozy_mcp.reasons import Reason
from compozy_mcp.schemas import STRING, TIMESTAMP, described, nullable, obj, tool_input
from compozy_mcp.validation import ABSOLUTE_PATH, LINE_OF_TEXT, InputCheck, describe

Schema = dict[str, Any]
NAME = {"type": "string", "pattern": LINE_OF_TEXT, "maxLength": 200}

WORKSPACE_ADD: Schema = tool_input(
    {
        "path": described(
            {"type": "string", "minLength": 1, "maxLength": 4096, "pattern": ABSOLUTE_PATH},
            "An absolute path to an existing directory on the daemon's machine.",
        )
    },
    {"name": described(NAME, "Display name (default: the directory's name).")},
)
PROFILE_ADD: Schema = tool_input(
    {"name": described(NAME, "Display name.")},
    {
        "color": described(
            {"type": "string", "maxLength": 64}, "Presentation color, such as #2563eb."
        ),
        "icon": described({"type": "string", "maxLength": 64}, "Presentation icon name."),
    },
)
APPROVAL_MINT: Schema = tool_input(
    {"session_id": described({"type": "string", "minLength": 1}, "The session that will call.")},
    {
        "input": described(
            {"type": "object"}, "The call's input (result_view, if any, is ignored)."
        ),
        "input_digest": described(
            {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
            "Instead of input: its approval digest, computed without result_view.",
        ),
        "ttl_seconds": described(
            {"type": "integer", "minimum": 1, "maximum": 3600}, "Default 120."
        ),
    },
)
APPROVAL: Schema = obj(
    {
        "token": described(STRING, "Send it with the call, once; it is shown only here."),
        "tool_id": STRING,
        "session_id": STRING,
        "workspace_id": STRING,
        "agent_name": STRING,
        "input_digest": STRING,
        "expires_at": TIMESTAMP,
    }
)
WORKSPACE: Schema = obj(
    {
        "id": STRING,
        "name": STRING,
        "path": STRING,
        "created_at": TIMESTAMP,
        "trusted_at": described(
            nullable(TIMESTAMP),
            "When the operator trusted it (its .compozy/hooks.yaml runs only then); null: not.",
        ),
    },
)
PROFILE: Schema = obj(
    {
        "id": STRING,
        "name": STRING,
        "color": nullable(STRING),
        "icon": nullable(STRING),
        "created_at": TIMESTAMP,
    },
)


_INVALID = {
    "workspace": Reason.WORKSPACE_INVALID,
    "profile": Reason.PROFILE_INVALID,
    "approval": Reason.REQUEST_INVALID,
}
_SCHEMAS = {
    "workspace": WORKSPACE_ADD,
    "profile": PROFILE_ADD,
    "approval": APPROVAL_MINT,
}


@functools.cache
def _check(what: str) -> InputCheck:
    return InputCheck(_SCHEMAS[what])


def check(what: str, value: Any) -> dict[str, Any]:
    """``value`` as the fields of a new ``what`` (``workspace``, ``profile``, ``approval``: a
    token request), or raise."""
    checker = _check(what)
    if not checker.is_valid(value):
        field, problem = describe(
            checker.validator.iter_errors(value), unknown=f"is not a field of a {what}"
        )
        subject = f"a {what} request" if field == "$" else f'{what} field "{field}"'
        raise InvalidRequest(f"{subject} {problem}", reason=_INVALID[what])
    fields: dict[str, Any] = value
    return fields


def workspace_directory(text: str) -> Path:
    """The directory a workspace is registered at: absolute and existing, here."""
    path = Path(text)
    if not path.is_absolute():
        raise InvalidRequest(
            f"the workspace path must be absolute, got {text!r}", reason=Reason.PATH_NOT_ABSOLUTE
        )
    try:
        is_directory = path.is_dir()
    except OSError as exc:  # /proc/1/root: there, but not for this daemon to look into
        raise InvalidRequest(
            f"{path} cannot be read by the daemon ({exc.strerror or exc})",
            reason=Reason.PATH_NOT_DIRECTORY,
        ) from None
    if not is_directory:
        raise InvalidRequest(f"{path} is not a directory", reason=Reason.PATH_NOT_DIRECTORY)
    return path
