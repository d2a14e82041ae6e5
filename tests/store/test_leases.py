"""The store's part of several daemons on one store (migration 13), on each engine: leases
taken only when free, expired or already held (by one of three stores claiming at once);
renewed and dropped only by their holder; signals taken once; the reads an owner polls with."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from tests import pg

from compozy_mcp.store import Store
from compozy_mcp.store.base import SessionEventRow
from compozy_mcp.store.leases import LeaseRow, SignalRow


def _lease(daemon: str, expires: int, key: str = "session:s1") -> LeaseRow:
    return LeaseRow(key, daemon, f"http://{daemon}:1", expires, expires - 100)


def test_a_lease_is_taken_when_free_kept_from_others_until_it_expires(store: Store) -> None:
    with store.write() as writer:
        assert writer.claim_lease(_lease("a", 1_100), now=1_000) == _lease("a", 1_100)
        # another daemon is refused while it runs, and told who holds it
        assert writer.claim_lease(_lease("b", 1_150), now=1_050).daemon_id == "a"
        # its holder renews it by claiming again (acquired_at kept)
        again = writer.claim_lease(_lease("a", 1_200), now=1_100)
        assert (again.expires_at, again.acquired_at) == (1_200, 1_000)
        # once expired it is anyone's
        taken = writer.claim_lease(_lease("b", 1_400), now=1_200)
        assert (taken.daemon_id, taken.acquired_at) == ("b", 1_300)


def test_only_the_holder_renews_or_drops_a_lease(store: Store) -> None:
    with store.write() as writer:
        writer.claim_lease(_lease("a", 1_100), now=1_000)
        writer.claim_lease(_lease("b", 1_100, key="session:s2"), now=1_000)
        assert writer.renew_leases("a", ["session:s1", "session:s2", "session:s3"], 5_000) == {
            "session:s1"
        }
        assert writer.lease("session:s2") == _lease("b", 1_100, key="session:s2")
        assert writer.drop_lease("session:s2", "a") is False
        assert writer.drop_lease("session:s1", "a") is True
        assert [row.lease_key for row in writer.leases()] == ["session:s2"]


def test_signals_are_for_one_daemon_in_order_and_taken_once(store: Store) -> None:
    rows = [
        SignalRow("sig-2", "a", "s1", "permission_answer", '{"decision":"x"}', 20),
        SignalRow("sig-1", "a", "s1", "cancel", "{}", 10),
        SignalRow("sig-3", "b", "s2", "cancel", "{}", 5),
    ]
    with store.write() as writer:
        for row in rows:
            writer.send_signal(row)
    with store.read() as reader:
        assert [s.signal_id for s in reader.signals("a")] == ["sig-1", "sig-2"]
    with store.write() as writer:
        assert writer.drop_signals(["sig-1", "sig-2"]) == {"sig-1", "sig-2"}
        assert writer.drop_signals(["sig-1"]) == set()
        assert [s.signal_id for s in writer.signals("b")] == ["sig-3"]


def test_events_after_a_sequence_name_their_sessions(store: Store) -> None:
    with store.read() as reader:
        assert reader.event_sessions_after(0) == (0, set())
        assert reader.last_event_seq() == 0
    events = [
        SessionEventRow(0, session, None, "x", "2026-01-01T00:00:00Z", "{}")
        for session in ("s1", "s2", "s1")
    ]
    with store.write() as writer:
        writer.append_session_events(events)
    with store.read() as reader:
        last, sessions = reader.event_sessions_after(0)
        assert reader.last_event_seq() == last
        assert sessions == {"s1", "s2"}
        assert reader.event_sessions_after(last - 1) == (last, {"s1"})
        assert reader.event_sessions_after(last) == (last, set())


@pytest.mark.parametrize("engine", pg.ENGINES)
def test_of_three_stores_claiming_one_free_lease_at_once_one_holds_it(
    engine: str, request: pytest.FixtureRequest
) -> None:
    with pg.stores_on(engine, request, 3) as stores:
        start = threading.Barrier(len(stores))

        def claim(index: int) -> str:
            start.wait(timeout=30)
            with stores[index].write() as writer:
                return writer.claim_lease(_lease(f"d{index}", 5_000), now=1_000).daemon_id

        with ThreadPoolExecutor(max_workers=len(stores)) as pool:
            holders = list(pool.map(claim, range(len(stores))))
        assert len(set(holders)) == 1  # every store was told the same holder
        with stores[0].read() as reader:
            held = reader.lease("session:s1")
        assert held is not None
        assert held.daemon_id == holders[0]
