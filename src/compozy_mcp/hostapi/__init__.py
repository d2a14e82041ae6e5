"""The Host API: the one typed, async boundary every surface calls.

- :mod:`.client`: :class:`~.client.HostClient`, the operations (tools, sessions, workspaces,
  profiles) as every caller sees them;
- :mod:`.local`: the in-process implementation over an :class:`~compozy_mcp.assembly.App`
  (store writes run in worker threads: see :mod:`compozy_mcp.blocking`);
- :mod:`.remote`: the implementation that talks to a daemon's HTTP API over TCP or its socket;
- :mod:`.target`: a daemon's address; :mod:`.wire`: what travels between the two (the session
  header, error payloads); :mod:`.inputs` and :mod:`.bodies`: the checks of request inputs.

The HTTP routes, the CLI and ``compozy mcp serve`` all run on a ``HostClient``, so each gives
the same answer in-process and against a daemon.
"""

from compozy_mcp.hostapi._client import HostClient

__all__ = ["HostClient"]
