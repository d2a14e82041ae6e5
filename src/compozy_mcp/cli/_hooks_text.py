"""How ``compozy hooks`` shows hooks, runs and tests to a person (``-o json`` shows the data)."""

from __future__ import annotations

from typing import Any

from compozy_mcp import jsonutil

DETAIL_WIDTH = 60


def problem(found: dict[str, Any]) -> str:
    return f"{found['source']}: {found['message']}"


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def hook_table(hooks: list[dict[str, Any]]) -> list[str]:
    """One line per hook; FAILED and LAST say whether its guard really guards."""
    if not hooks:
        return ["no hooks"]
    width = max(len("ID"), *(len(h["id"]) for h in hooks))
    lines = [
        f"{'ID':<{width}}  {'EVENT':<15}  {'SOURCE':<9}  {'ENABLED':<7}  {'ON_ERROR':<8}  "
        f"{'RUNS':>5}  {'FAILED':>6}  LAST"
    ]
    for hook in hooks:
        stats = hook["stats"]
        lines.append(
            f"{hook['id']:<{width}}  {hook['event']:<15}  {hook['source']:<9}  "
            f"{'yes' if hook['enabled'] else 'no':<7}  {hook['on_error']:<8}  "
            f"{stats['runs']:>5}  {stats['failed']:>6}  {stats.get('last_outcome', '-')}"
        )
    return lines


def hook_lines(hook: dict[str, Any]) -> list[str]:
    runs = hook["command"] if "command" in hook else f"POST {hook['url']}"
    shown = runs if isinstance(runs, str) else jsonutil.dumps_text(runs)
    stats = hook["stats"]
    lines = [
        f"{hook['id']}  ({hook['source']}, {'enabled' if hook['enabled'] else 'disabled'})",
        f"  event:     {hook['event']}  {hook['mode']}, timeout {hook['timeout']:g} s, "
        f"on_error {hook['on_error']}",
        f"  matcher:   {jsonutil.dumps_text(hook['matcher']) if hook['matcher'] else 'every call'}",
        f"  runs:      {shown}",
    ]
    if hook.get("description"):
        lines.append(f"  about:     {hook['description']}")
    last = f", last {stats['last_outcome']} at {stats['last_run_at']}" if stats["runs"] else ""
    lines.append(f"  stats:     {stats['runs']} runs, {stats['failed']} failed{last}")
    return lines


def run_lines(runs: list[dict[str, Any]], *, full: bool) -> list[str]:
    if not runs:
        return ["no runs"]
    lines = []
    for run in runs:
        patched = " patched" if run["patch_applied"] else ""
        lines.append(
            f"{run['run_id']:>6}  {run['started_at']}  {run['hook_id']}  {run['event']}  "
            f"{run['tool_id']}  {run['tool_call_id']}  {run['outcome']} ({run['decision']})"
            f"{patched}  {run['duration_ms']:.1f} ms"
        )
        if run.get("detail"):
            lines.append(f"        {_cell(run['detail'], DETAIL_WIDTH * 2)}")
        if full and run.get("stderr_tail"):
            lines.extend(f"        | {line}" for line in run["stderr_tail"].splitlines()[-5:])
    return lines


def event_lines(catalog: dict[str, Any]) -> list[str]:
    lines = []
    for event in catalog["events"]:
        lines += [
            event["event"],
            f"  {event['description']}",
            f"  payload: {', '.join(event['payload_fields'])}",
            f"  patch:   {', '.join(event['patch_fields'])}",
        ]
    lines.append(
        f"A command hook reads the payload on stdin and prints a patch on stdout (nothing: no "
        f"patch); exit code {catalog['deny_exit_code']} denies with stderr as the reason."
    )
    return lines


def test_lines(result: dict[str, Any]) -> list[str]:
    code = result.get("exit_code")
    lines = [
        f"hook {result['hook_id']} on {result['event']}: {result['outcome']}, decision "
        f"{result['decision']} ({result['duration_ms']:.1f} ms"
        + (f", exit code {code})" if code is not None else ")"),
    ]
    if "detail" in result:
        lines.append(f"detail: {result['detail']}")
    if "patch" in result:
        lines.append(f"patch: {jsonutil.dumps_text(result['patch'])}")
    if "tool_input" in result:
        lines.append(
            f"tool_input (checked as the call would): {jsonutil.dumps_text(result['tool_input'])}"
        )
    if "result_view" in result:
        lines.append(f"result_view: {result['result_view']}")
    if "error" in result:
        error = result["error"]
        lines.append(f"the call would fail: {error['code']}/{error['reason']}: {error['message']}")
    lines.append("stderr:" if result["stderr"] else "stderr: (empty)")
    lines.extend(f"  {line}" for line in result["stderr"].splitlines())
    return lines
