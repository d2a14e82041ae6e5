"""Several daemons on one store (``docs/deployment.md``).

Every daemon serves every session's reads and writes; an agent process runs on exactly one
daemon, the holder of the session's lease (:mod:`.node`). Work for an agent that runs on another
daemon is durable in the store already (a queued turn) or left there as a signal (a cancel, a
permission answer), and the owner is woken by a short poll of the store (:mod:`.wakeup`: the
engine-neutral part; PostgreSQL's LISTEN/NOTIFY plugs in behind the same interface). A daemon
killed with -9 stops renewing its leases; once they expire another daemon marks the turns it
cut off (as a restart does) and binds the session's agent again.
"""

from compozy_mcp.cluster._identity import DaemonIdentity, daemon_identity
from compozy_mcp.cluster._node import ClusterNode

__all__ = ["ClusterNode", "DaemonIdentity", "daemon_identity"]
