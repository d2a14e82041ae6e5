"""One lock per key: holders of one key take turns, other keys never wait, and a key's lock is
forgotten once nobody holds or waits for it."""

from __future__ import annotations

import anyio
import pytest

from compozy_mcp.keyed_locks import KeyedLocks

pytestmark = pytest.mark.anyio


async def test_holders_of_one_key_take_turns_and_other_keys_do_not_wait() -> None:
    locks = KeyedLocks()
    order: list[str] = []
    first_in, release_first = anyio.Event(), anyio.Event()

    async def first() -> None:
        async with locks.hold("a"):
            order.append("first in")
            first_in.set()
            await release_first.wait()
            order.append("first out")

    async def second() -> None:
        async with locks.hold("a"):
            order.append("second in")

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        await first_in.wait()
        group.start_soon(second)
        await anyio.wait_all_tasks_blocked()
        async with locks.hold("b"):  # another key: not held up by "a"
            order.append("other key")
            assert len(locks) == 2
        release_first.set()
    assert order == ["first in", "other key", "first out", "second in"]
    assert len(locks) == 0


async def test_a_holder_that_fails_or_is_cancelled_lets_the_key_go() -> None:
    locks = KeyedLocks()
    with pytest.raises(RuntimeError):
        async with locks.hold("a"):
            raise RuntimeError("boom")
    with anyio.move_on_after(0.01):
        async with locks.hold("a"):
            await anyio.sleep(10)
    assert len(locks) == 0
    with anyio.fail_after(5):
        async with locks.hold("a"):
            pass
