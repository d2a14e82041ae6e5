"""The app's task group (:mod:`compozy_mcp.background`): hosted by a block or by itself, each
task a job that can be cancelled and waited for, a failing task logged and alone in failing."""

from __future__ import annotations

import logging

import anyio
import pytest

from compozy_mcp.background import AlreadyHosted, TaskOwner

pytestmark = pytest.mark.anyio


async def test_a_hosted_job_runs_in_the_block_and_is_cancelled_when_the_block_ends() -> None:
    owner = TaskOwner()
    started, ended = anyio.Event(), []
    async with owner.hosting():

        async def forever() -> None:
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                ended.append("cancelled")

        job = owner.start(forever, "forever")
        await started.wait()
        assert [j.name for j in owner.jobs("for")] == ["forever"]
        assert not job.done()
    assert ended == ["cancelled"]
    assert job.done()
    assert owner.jobs() == []


async def test_a_job_cancelled_by_its_starter_ends_and_its_wait_says_so() -> None:
    owner = TaskOwner()
    async with owner.hosting():
        job = owner.start(anyio.sleep_forever, "sleeper")
        assert await job.wait(0.01) is False  # still running
        job.cancel()
        assert await job.wait() is True


async def test_a_failing_job_is_logged_and_the_others_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    owner = TaskOwner()
    async with owner.hosting():

        async def broken() -> None:
            raise ValueError("boom")

        survivor = owner.start(anyio.sleep_forever, "survivor")
        failed = owner.start(broken, "broken")
        with caplog.at_level(logging.ERROR, logger="compozy_mcp.background"):
            assert await failed.wait() is True
        assert "background task broken failed" in caplog.text
        assert not survivor.done()
        survivor.cancel()


async def test_the_tasks_are_hosted_once_at_a_time() -> None:
    owner = TaskOwner()
    async with owner.hosting():
        with pytest.raises(AlreadyHosted):
            async with owner.hosting():
                pass


async def test_without_a_block_the_jobs_run_in_a_group_of_their_own_until_closed() -> None:
    owner = TaskOwner()
    ran = anyio.Event()

    async def mark() -> None:
        ran.set()

    job = owner.start(mark, "mark")
    with anyio.fail_after(5):
        await ran.wait()
        assert await job.wait() is True
    sleeper = owner.start(anyio.sleep_forever, "sleeper")
    await anyio.sleep(0)
    await owner.close_own()
    assert sleeper.done()


async def test_a_job_does_not_count_as_current_outside_itself() -> None:
    owner = TaskOwner()
    seen: list[bool] = []
    async with owner.hosting():
        holder: list[object] = []

        async def look() -> None:
            await anyio.sleep(0)
            seen.append(holder[0].is_current())  # type: ignore[attr-defined]

        job = owner.start(look, "look")
        holder.append(job)
        await job.wait()
        assert seen == [True]
        assert job.is_current() is False
