"""The garbage collector's time is not the code under test blocking for real.

A collection runs in whichever thread allocates, and a large fleet's can
take seconds of real time; neither the loop's wait for a baton thread nor
the watchdog counts it. The slow collection here is a ``gc.callbacks``
entry, registered inside the run (after the harness's own), that blocks for
real in the collection's start phase: the time a long collection takes.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from retrychaos.errors import RealTimeBlockError
from retrychaos.world.runtime import run_virtual
from retrychaos.world.timepatch import real_sleep
from retrychaos.world.watchdog import COLLECTOR, real_elapsed, real_mark

if TYPE_CHECKING:
    from collections.abc import Iterator

    from retrychaos.world.clock import VirtualClock


@contextmanager
def _slow_collections(seconds: float) -> Iterator[None]:
    """Every collection inside takes ``seconds`` more of real time."""

    def slow(phase: str, info: dict[str, Any]) -> None:
        del info
        if phase == "start":
            real_sleep(seconds)

    gc.callbacks.append(slow)
    try:
        yield
    finally:
        gc.callbacks.remove(slow)


def _collect_slowly(seconds: float) -> int:
    # The youngest generation only: its collection is short whatever the process
    # holds, so the slow part is the callback's, as long as the test says.
    with _slow_collections(seconds):
        gc.collect(0)
    return 7


def test_a_slow_collection_in_a_sync_controller_s_thread_is_not_a_real_time_block() -> None:
    """A baton thread whose collection takes 3x the loop's real wait still returns its result."""

    async def main(clock: VirtualClock) -> int:
        del clock
        loop = asyncio.get_running_loop()
        return int(await loop.run_sync(lambda: _collect_slowly(0.3)))  # type: ignore[attr-defined]

    assert run_virtual(main, real_wait_s=0.1) == 7


def test_a_slow_collection_on_the_loop_does_not_fire_the_watchdog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A collection on the loop's thread taking 3x the watchdog's limit is not a block.

    Fired inside the collection, the watchdog's interrupt would be raised in
    the gc callback, which hands it to ``sys.unraisablehook``.
    """
    unraisable: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda hook: unraisable.append(hook.exc_value))

    async def main(clock: VirtualClock) -> int:
        del clock
        await asyncio.sleep(1.0)
        return _collect_slowly(0.6)

    assert run_virtual(main, watchdog_s=0.2) == 7
    assert unraisable == []


def test_a_real_block_after_a_collection_is_still_caught() -> None:
    """The collector's time is left out, the rest still counts: a real block fails the run."""

    def blocks() -> None:
        _collect_slowly(0.05)
        real_sleep(5)

    async def main(clock: VirtualClock) -> None:
        del clock
        await asyncio.get_running_loop().run_sync(blocks)  # type: ignore[attr-defined]

    # The loop's wait catches it (0.1 s); on a loaded machine the watchdog may first.
    with pytest.raises(RealTimeBlockError, match=r"more than (0\.1|5) s of real time"):
        run_virtual(main, real_wait_s=0.1)


def test_the_collector_is_counted_only_while_a_run_watches() -> None:
    """The harness's gc callback is registered for the length of a run, then removed."""

    async def main(clock: VirtualClock) -> bool:
        del clock
        since = real_mark()
        with _slow_collections(0.05):
            gc.collect(0)
        return COLLECTOR in gc.callbacks and real_elapsed(since) < 0.05

    assert COLLECTOR not in gc.callbacks
    assert run_virtual(main) is True
    assert COLLECTOR not in gc.callbacks
