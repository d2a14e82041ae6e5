"""The one error tree: every class is in ``errors.py`` and in the tree its docstring draws, and
every class maps to an HTTP status, a CLI exit code and an MCP answer, each surface in one place.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

import compozy_mcp
from compozy_mcp import errors
from compozy_mcp.api.responses import STATUS_BY_CODE, status_for
from compozy_mcp.cli._reporting import EXIT_BY_CODE, exit_code
from compozy_mcp.codes import Code
from compozy_mcp.errors import CompozyError
from compozy_mcp.proxy.server import mcp_error
from compozy_mcp.reasons import Reason

T = "compozy__session_status"


def _all_modules() -> None:
    for found in pkgutil.walk_packages(compozy_mcp.__path__, "compozy_mcp."):
        if found.name != "compozy_mcp.__main__":  # runs the CLI
            importlib.import_module(found.name)


def _subclasses(cls: type[CompozyError]) -> list[type[CompozyError]]:
    out: list[type[CompozyError]] = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


_all_modules()
CLASSES: list[type[CompozyError]] = [CompozyError, *_subclasses(CompozyError)]

#: one instance of every class, built the way the code builds it
SAMPLES: dict[type[CompozyError], Callable[[], CompozyError]] = {
    errors.CompozyError: lambda: errors.CompozyError("x"),
    errors.ToolError: lambda: errors.ToolError(T, "x"),
    errors.ToolNotFound: lambda: errors.ToolNotFound(T),
    errors.ToolApprovalRequired: lambda: errors.ToolApprovalRequired(T, "x"),
    errors.ToolInvalidInput: lambda: errors.ToolInvalidInput(T, "x"),
    errors.ResultViewInvalid: lambda: errors.ResultViewInvalid(T),
    errors.ResultViewNotAccepted: lambda: errors.ResultViewNotAccepted(T),
    errors.LoopInvalid: lambda: errors.LoopInvalid(
        T, [{"severity": "error", "code": "cycle", "message": "x"}]
    ),
    errors.ToolDenied: lambda: errors.ToolDenied(T, "x"),
    errors.ResultViewPinned: lambda: errors.ResultViewPinned(T, "full"),
    errors.HookDenied: lambda: errors.HookDenied(T, "guard", "frozen"),
    errors.HookFailed: lambda: errors.HookFailed(T, "guard", "timed out after 5 s"),
    errors.SpawnRefused: lambda: errors.SpawnRefused(T, "x"),
    errors.SessionEnded: lambda: errors.SessionEnded(T, "s", "stopped", "2026-11-10T14:02:11Z"),
    errors.ToolConflict: lambda: errors.ToolConflict(T, "x"),
    errors.StaleFence: lambda: errors.StaleFence(T, "s", "generation", 1, 2),
    errors.ActionContractStale: lambda: errors.ActionContractStale(
        "n", T, {"view": "full"}, "gone"
    ),
    errors.WorktreeDirty: lambda: errors.WorktreeDirty(T, "worktree", ["a.txt"], "force"),
    errors.MergeConflict: lambda: errors.MergeConflict(T, "compozy/x", "main", ["a.txt"]),
    errors.WorktreeUnavailable: lambda: errors.WorktreeUnavailable(T, "not a repository"),
    errors.PullRequestUnavailable: lambda: errors.PullRequestUnavailable(
        T, "gh is missing", reason=Reason.GH_MISSING, commands=["git push"]
    ),
    errors.ResourceNotFound: lambda: errors.ResourceNotFound(T, "session", "s"),
    errors.ModelNotFound: lambda: errors.ModelNotFound(T, "x"),
    errors.ReasoningEffortUnsupported: lambda: errors.ReasoningEffortUnsupported(T, "x"),
    errors.ToolResultPersistenceFailed: lambda: errors.ToolResultPersistenceFailed(T, "x"),
    errors.ToolBackendFailed: lambda: errors.ToolBackendFailed(T, "x"),
    errors.McpServerUnavailable: lambda: errors.McpServerUnavailable(
        "notes__lookup", "notes", "is restarting"
    ),
    errors.InvalidRequest: lambda: errors.InvalidRequest("x"),
    errors.AlreadyExists: lambda: errors.AlreadyExists("x", reason=Reason.PROFILE_EXISTS),
    errors.RequestBodyInvalid: lambda: errors.RequestBodyInvalid("x"),
    errors.StoreBusy: lambda: errors.StoreBusy("x"),
    errors.LimitExceeded: lambda: errors.LimitExceeded(
        "a line of the agent's stdout", limit="frame bytes", value=16, setting="X"
    ),
    errors.RemoteError: lambda: errors.RemoteError(
        {"code": "tool_denied", "reason": "permission_denied", "message": "m"}, 403
    ),
    errors.ApiError: lambda: errors.ApiError("x"),
    errors.Unauthorized: lambda: errors.Unauthorized("x"),
    errors.Forbidden: lambda: errors.Forbidden("x"),
    errors.RouteNotFound: lambda: errors.RouteNotFound("x"),
    errors.MethodNotAllowed: lambda: errors.MethodNotAllowed("x"),
    errors.RequestTooLarge: lambda: errors.RequestTooLarge("x"),
    errors.HostNotAllowed: lambda: errors.HostNotAllowed("x"),
    errors.InternalError: lambda: errors.InternalError("x"),
    errors.SetupError: lambda: errors.SetupError("x"),
    errors.ToolRegistrationError: lambda: errors.ToolRegistrationError(T, "x"),
    errors.StoreError: lambda: errors.StoreError("x"),
    errors.ConfigError: lambda: errors.ConfigError("x"),
    errors.DaemonUnreachable: lambda: errors.DaemonUnreachable("x"),
    errors.DaemonUnauthorized: lambda: errors.DaemonUnauthorized("x"),
}


def _tree() -> dict[str, int]:
    """The classes the docstring draws, with their depth in the tree."""
    depth: dict[str, int] = {}
    for line in (errors.__doc__ or "").splitlines():
        found = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z][A-Za-z]+)\b", line)
        if found:
            nested = len(found.group(1)) // 4 + (1 if "── " in line else 0)
            depth[found.group(2)] = nested
    return depth


def test_every_error_class_is_defined_in_errors_py() -> None:
    assert [c.__qualname__ for c in CLASSES if c.__module__ != "compozy_mcp.errors"] == []


def test_the_docstring_tree_shows_exactly_the_classes_and_their_parents() -> None:
    depth = _tree()
    assert sorted(depth) == sorted(c.__name__ for c in CLASSES)
    assert depth["CompozyError"] == 0
    for cls in CLASSES[1:]:
        parent = cls.__bases__[0]
        assert depth[cls.__name__] == depth[parent.__name__] + 1, cls.__name__


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_maps_to_an_http_status_an_exit_code_and_an_mcp_answer(
    cls: type[CompozyError],
) -> None:
    error = SAMPLES[cls]()
    assert type(error) is cls
    # every code is listed explicitly on every surface: no error reaches a fallback
    assert error.code in STATUS_BY_CODE
    assert error.code in EXIT_BY_CODE
    # a call waiting for approval is 202, as upstream; every other error is a 4xx or 5xx
    expected = range(202, 203) if error.code == "tool_approval_required" else range(400, 600)
    assert status_for(error) in expected
    assert exit_code(error) != 0
    if cls is errors.ToolNotFound:
        with pytest.raises(MCPError) as caught:
            mcp_error(error)
        assert caught.value.error.code == INVALID_PARAMS
    else:
        result = mcp_error(error)
        assert result.is_error is True
        assert isinstance(result.structured_content, dict)
        assert result.structured_content["error"]["code"] == error.code


def test_every_sample_is_of_a_class_that_exists() -> None:
    assert set(SAMPLES) == set(CLASSES)


def test_every_code_has_one_http_status_and_one_exit_code() -> None:
    """Issue 24, item 2: error codes are one enum, and both maps are keyed by it."""
    assert set(STATUS_BY_CODE) == set(Code)
    assert set(EXIT_BY_CODE) == set(Code)
    codes = {cls.code for cls in _subclasses(CompozyError)}
    assert codes <= set(Code)


def test_a_daemons_unknown_code_and_reason_are_kept_in_its_payload() -> None:
    error = errors.RemoteError({"code": "from_the_future", "reason": "new", "message": "m"}, 500)
    assert (error.code, error.reason) == (Code.INTERNAL_ERROR, Reason.INTERNAL_ERROR)
    assert error.payload(redact=True)["code"] == "from_the_future"
    assert exit_code(error) == EXIT_BY_CODE[Code.INTERNAL_ERROR]
