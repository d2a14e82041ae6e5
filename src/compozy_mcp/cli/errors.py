"""How the CLI reports errors: exit codes and the redacted structured error, in one place."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from compozy_mcp import jsonutil
from compozy_mcp.errors import CompozyError, SetupError, ToolError

#: the reason of an --input the CLI could not read or parse
INPUT_NOT_JSON = "input_not_json"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_DENIED = 4
EXIT_CONFLICT = 5
EXIT_SETUP = 6

_EXIT_BY_CODE = {
    "tool_invalid_input": EXIT_USAGE,
    "invalid_request": EXIT_USAGE,
    "tool_not_found": EXIT_NOT_FOUND,
    "not_found": EXIT_NOT_FOUND,
    "tool_denied": EXIT_DENIED,
    "tool_conflict": EXIT_CONFLICT,
}


def exit_code(error: CompozyError) -> int:
    if isinstance(error, ToolError):
        return _EXIT_BY_CODE.get(error.error_code, EXIT_FAILED)
    if isinstance(error, SetupError):
        return EXIT_SETUP
    return _EXIT_BY_CODE.get(error.code, EXIT_FAILED)


def error_payload(error: CompozyError) -> dict[str, Any]:
    """``{"error": {...}}`` with input-error and denial messages redacted (spec, Errors)."""
    if isinstance(error, ToolError):
        return {"error": error.payload(redact=True)}
    return {"error": {"code": error.code, "reason": error.reason, "message": error.message}}


def report(
    error: CompozyError, *, json_output: bool, verbose: bool, out: TextIO | None = None
) -> int:
    """Print an error the way the chosen output format wants it; returns the exit code.

    With ``-o json`` the structured error is the one document on stdout, so that a script
    can parse it; readable output goes to stderr. ``-v`` adds the dispatch diagnostic.
    """
    payload = error_payload(error)["error"]
    if json_output:
        print(jsonutil.dumps_pretty({"error": payload}), file=out or sys.stdout)
    else:
        print(
            f"error: {payload['message']} ({payload['code']}: {payload['reason']})", file=sys.stderr
        )
    # The CLI's own failure to read --input is always explained; dispatch diagnostics on -v.
    explain = verbose or error.reason == INPUT_NOT_JSON
    if explain and payload["message"] != error.message:
        print(f"diagnostic: {error.message}", file=sys.stderr)
    return exit_code(error)
