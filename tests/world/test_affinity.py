"""A run's baton threads share one CPU with the loop, and the loop's thread gets its CPUs back.

A hand-off between two threads on one core costs a fraction of one across
cores (retrychaos.world.affinity); nothing in a run runs in parallel anyway.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import TYPE_CHECKING

import pytest

from retrychaos.world.runtime import run_virtual

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity"), reason="threads have no CPU affinity on this system"
)


def test_a_sync_controller_s_thread_runs_on_one_cpu_and_the_loop_gets_its_cpus_back() -> None:
    """Inside the run the baton thread (and the thread it starts) has one CPU; after, all of them."""
    before = os.sched_getaffinity(0)
    seen: dict[str, set[int]] = {}

    def started() -> None:
        seen["started"] = os.sched_getaffinity(0)

    def sync_work() -> int:
        seen["baton"] = os.sched_getaffinity(0)
        thread = threading.Thread(target=started)
        thread.start()
        thread.join()
        return 3

    async def main(clock: VirtualClock) -> int:
        del clock
        return int(await asyncio.get_running_loop().run_sync(sync_work))  # type: ignore[attr-defined]

    assert run_virtual(main) == 3
    if len(before) > 1:
        assert len(seen["baton"]) == 1
        assert seen["baton"] <= before
    else:
        assert seen["baton"] == before
    assert seen["started"] == seen["baton"]
    assert os.sched_getaffinity(0) == before


def test_an_async_run_leaves_the_affinity_alone() -> None:
    """A run that starts no thread does not pin the loop's thread."""
    before = os.sched_getaffinity(0)

    async def main(clock: VirtualClock) -> set[int]:
        del clock
        await asyncio.sleep(1.0)
        return os.sched_getaffinity(0)

    assert run_virtual(main) == before
    assert os.sched_getaffinity(0) == before
