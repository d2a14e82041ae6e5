"""Tool hooks: ``tool.pre_call``, ``tool.post_call`` and ``tool.post_error``, aware of result
views.

- :mod:`.events`: the events and their payloads; :mod:`.model`: a hook and its matcher;
- where hooks come from: :mod:`.config` (``hooks.yaml`` files), the store (made by the hook
  tools), code (in-process); :mod:`.registry` keeps them current;
- how a hook runs: :mod:`.command` (a process group per run), :mod:`.webhook`, in-process
  (:mod:`.execution`);
- what its output means: :mod:`.patches`; a native tool's patched input: :mod:`.tool_input`;
- :mod:`.engine` runs an event's hooks for a call and :mod:`.runlog` records every run;
- :mod:`.admin` is what the hook tools manage; :mod:`.agent` fires the events for a tool call
  an ACP agent reports (the runtime's seam).
"""

from compozy_mcp.hooks._engine import HookEngine
from compozy_mcp.hooks._events import (
    POST_CALL,
    POST_ERROR,
    PRE_CALL,
    CallSubject,
    ToolHook,
    ToolReference,
)
from compozy_mcp.hooks._patches import Patch
from compozy_mcp.hooks._tool_input import patched_input

__all__ = [
    "POST_CALL",
    "POST_ERROR",
    "PRE_CALL",
    "CallSubject",
    "HookEngine",
    "Patch",
    "ToolHook",
    "ToolReference",
    "patched_input",
]
