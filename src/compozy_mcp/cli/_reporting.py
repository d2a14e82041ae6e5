"""How the CLI reports errors: exit codes and the redacted structured error, in one place."""

from __future__ import annotations

import sys
from typing import TextIO

from compozy_mcp import jsonutil
from compozy_mcp.codes import Code
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi.wire import error_body
from compozy_mcp.reasons import Reason

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_DENIED = 4
EXIT_CONFLICT = 5
EXIT_SETUP = 6
#: the call waits for a person's approval (answer it, then run the command again)
EXIT_APPROVAL = 7
#: the store was busy: nothing changed, the same command may be run again (EX_TEMPFAIL)
EXIT_RETRY = 75

#: error code -> exit code; every code an error class carries is listed (a test walks them)
EXIT_BY_CODE: dict[Code, int] = {
    Code.TOOL_INVALID_INPUT: EXIT_USAGE,
    Code.INVALID_REQUEST: EXIT_USAGE,
    Code.TOOL_NOT_FOUND: EXIT_NOT_FOUND,
    Code.NOT_FOUND: EXIT_NOT_FOUND,
    Code.TOOL_DENIED: EXIT_DENIED,
    Code.TOOL_APPROVAL_REQUIRED: EXIT_APPROVAL,
    Code.FORBIDDEN: EXIT_DENIED,
    Code.TOOL_CONFLICT: EXIT_CONFLICT,
    Code.CONFLICT: EXIT_CONFLICT,
    Code.MODEL_NOT_FOUND: EXIT_USAGE,  # a provider or model the user typed that is not there
    Code.REASONING_EFFORT_UNSUPPORTED: EXIT_FAILED,
    Code.WORKTREE_UNAVAILABLE: EXIT_FAILED,
    Code.PULL_REQUEST_UNAVAILABLE: EXIT_FAILED,
    Code.MERGE_CONFLICT: EXIT_CONFLICT,
    Code.LIMIT_EXCEEDED: EXIT_FAILED,
    Code.TOOL_RESULT_PERSISTENCE_FAILED: EXIT_FAILED,
    Code.TOOL_BACKEND_FAILED: EXIT_FAILED,
    Code.MCP_SERVER_UNAVAILABLE: EXIT_RETRY,
    Code.INTERNAL_ERROR: EXIT_FAILED,
    Code.METHOD_NOT_ALLOWED: EXIT_FAILED,
    Code.REQUEST_TOO_LARGE: EXIT_USAGE,
    Code.MISDIRECTED_REQUEST: EXIT_SETUP,
    Code.UNAUTHORIZED: EXIT_SETUP,
    Code.REGISTRATION_INVALID: EXIT_SETUP,
    Code.STORE_UNAVAILABLE: EXIT_SETUP,
    Code.CONFIG_INVALID: EXIT_SETUP,
    Code.DAEMON_UNREACHABLE: EXIT_SETUP,
    Code.STORE_BUSY: EXIT_RETRY,
}


def exit_code(error: CompozyError) -> int:
    return EXIT_BY_CODE.get(error.code, EXIT_FAILED)


def report(
    error: CompozyError,
    *,
    json_output: bool,
    verbose: bool,
    out: TextIO | None = None,
    hint: str | None = None,
    yaml_output: bool = False,
) -> int:
    """Print an error the way the chosen output format wants it; returns the exit code.

    With ``-o json`` (or ``-o yaml``) the structured error is the one document on stdout, so
    that a script can parse it; readable output goes to stderr. ``-v`` adds the dispatch
    diagnostic (a daemon's too, when it gave one: ``DIAGNOSTIC_HEADER`` in hostapi.wire);
    ``hint`` is what the user probably meant ("did you mean ...").
    """
    # The CLI's own failure to read --input is always explained; dispatch diagnostics on -v.
    explain = verbose or error.reason == Reason.INPUT_NOT_JSON
    payload = error_body(error, diagnostic=explain)["error"]
    if json_output:
        print(jsonutil.dumps_pretty({"error": payload}), file=out or sys.stdout)
    elif yaml_output:
        from compozy_mcp.cli._output import to_yaml

        print(to_yaml({"error": payload}), end="", file=out or sys.stdout)
    else:
        print(
            f"error: {payload['message']} ({payload['code']}: {payload['reason']})", file=sys.stderr
        )
    if explain and "diagnostic" in payload:
        print(f"diagnostic: {payload['diagnostic']}", file=sys.stderr)
    if hint:
        print(hint, file=sys.stderr)
    return exit_code(error)
