"""The unit tier's loop guard (issue 24, item 6): a product callback that computes on the event
loop past 50 ms is caught; a wait that costs no CPU and the test's own work are not."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests import loopguard

pytestmark = pytest.mark.unit

#: a coroutine function defined as if in the product's source (the guard goes by where code is)
_PRODUCT: dict[str, Any] = {}
exec(  # a fixed snippet, compiled under a product-like file name
    compile(
        "import time\n"
        "async def busy(seconds):\n"
        "    end = time.thread_time() + seconds\n"
        "    while time.thread_time() < end:\n"
        "        pass\n"
        "async def collect(garbage):\n"
        "    import gc\n"
        "    garbage.clear()\n"
        "    gc.collect()\n",
        "/src/compozy_mcp/busy.py",
        "exec",
    ),
    _PRODUCT,
)


def _run(coro_factory: Any) -> list[loopguard.Offence]:
    async def main() -> None:
        await asyncio.create_task(coro_factory())

    with loopguard.guarded() as offences:
        asyncio.run(main())
    return list(offences)


def test_a_product_task_that_computes_past_the_bound_is_an_offence() -> None:
    [offence] = _run(lambda: _PRODUCT["busy"](0.08))
    assert offence.seconds >= loopguard.LIMIT_S
    assert "busy" in offence.callback
    assert "move the work to a worker thread" in loopguard.verdict([offence])


def test_short_work_and_a_wait_that_costs_no_cpu_are_not() -> None:
    assert _run(lambda: _PRODUCT["busy"](0.005)) == []

    async def sleeper() -> None:
        time.sleep(0.08)  # blocks, but computes nothing: not what the guard measures

    assert _run(sleeper) == []


def test_the_tests_own_code_is_not_watched() -> None:
    async def busy_here() -> None:
        end = time.thread_time() + 0.08
        while time.thread_time() < end:
            pass

    assert _run(busy_here) == []


def test_a_garbage_collection_pass_in_a_product_step_is_not_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full pass runs in whichever step allocates when it is due; what it costs is what the
    whole process keeps alive, not the work of that step."""
    monkeypatch.setattr(loopguard, "LIMIT_S", 0.005)  # the pass below costs several times that
    garbage: list[Any] = []
    for _ in range(200_000):  # cycles: only the collector frees them
        node: list[Any] = []
        node.append(node)
        garbage.append(node)
    started = time.thread_time()
    assert _run(lambda: _PRODUCT["collect"](garbage)) == []
    assert time.thread_time() - started > loopguard.LIMIT_S  # the pass did cost that much
