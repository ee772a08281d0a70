"""Entering the clock keeps the last run's walk of sys.modules: what each run must still see."""

from __future__ import annotations

import asyncio
import copyreg
import datetime as dt
import sys
import time
import types
from typing import TYPE_CHECKING, Any

import freezegun
import freezegun.api as fz
import pytest

from retrychaos.world import module_scan
from retrychaos.world.runtime import run_virtual

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from retrychaos.world.clock import VirtualClock

NAME = "retrychaos_timepatch_entry_probe"
REAL = {
    "monotonic": time.monotonic,
    "perf_counter": time.perf_counter,
    "sleep": time.sleep,
    "localtime": time.localtime,
    "wall": time.time,
    "datetime": dt.datetime,
}
"""The real functions, read outside any run."""

IMPORTS = (
    "from time import monotonic, perf_counter, sleep, localtime, time as wall\n"
    "from datetime import datetime\n"
)


@pytest.fixture
def probe() -> Iterator[Callable[..., types.ModuleType]]:
    """``probe(**names)``: a module in sys.modules holding ``names``, removed after the test."""

    def make(**names: Any) -> types.ModuleType:
        module = types.ModuleType(NAME)
        for name, value in names.items():
            setattr(module, name, value)
        sys.modules[NAME] = module
        return module

    yield make
    sys.modules.pop(NAME, None)


async def _nothing(clock: VirtualClock) -> None:
    del clock
    await asyncio.sleep(1.0)


async def _monotonic_after(module: types.ModuleType, seconds: float) -> float:
    await asyncio.sleep(seconds)
    return float(module.monotonic())


def test_a_module_imported_during_a_run_holds_the_real_functions_after_it() -> None:
    """Whatever faces a module bound while a run imported it, it holds the real ones after.

    The next run reads its own clock through them, not the finished run's.
    """

    async def first(clock: VirtualClock) -> list[float]:
        del clock
        await asyncio.sleep(3.0)
        module = types.ModuleType(NAME)
        sys.modules[NAME] = module
        exec(IMPORTS, module.__dict__)  # noqa: S102 (the import a controller's call would make)
        return [module.monotonic(), module.perf_counter()]

    try:
        assert run_virtual(first) == [3.0, 3.0]
        module = sys.modules[NAME]
        assert {name: getattr(module, name) for name in REAL} == REAL
        assert run_virtual(lambda clock: _monotonic_after(module, 5.0)) == 5.0
    finally:
        sys.modules.pop(NAME, None)


def test_a_module_added_or_replaced_between_runs_reads_the_clock(
    probe: Callable[..., types.ModuleType],
) -> None:
    """A module new to sys.modules since the last run, or a new object under its name, is read.

    The new object has the same names as the one it replaced.
    """
    run_virtual(_nothing)
    first = probe(monotonic=time.monotonic)
    assert run_virtual(lambda clock: _monotonic_after(first, 2.0)) == 2.0
    second = probe(monotonic=time.monotonic)
    assert run_virtual(lambda clock: _monotonic_after(second, 3.0)) == 3.0
    assert second.monotonic is time.monotonic


def test_a_reference_bound_to_another_value_between_runs_keeps_that_value(
    probe: Callable[..., types.ModuleType],
) -> None:
    """A module's name that held time.monotonic, then its own clock: the run leaves it alone."""
    module = probe(monotonic=time.monotonic)
    assert run_virtual(lambda clock: _monotonic_after(module, 4.0)) == 4.0

    def own() -> float:
        return 42.0

    module.monotonic = own
    assert run_virtual(lambda clock: _monotonic_after(module, 4.0)) == 42.0
    assert module.monotonic is own


def test_a_module_whose_names_are_unchanged_is_not_read_again(
    probe: Callable[..., types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk is kept: a module is read when it is new and when its names change, not else.

    Its names change when their count does, or the last of them.
    """
    read: list[tuple[str, ...]] = []
    reader = module_scan.time_attributes

    def counted(names: dict[str, Any]) -> list[tuple[str, Any]] | None:
        if names.get("__name__") == NAME:
            read.append(tuple(names))
        return reader(names)

    monkeypatch.setattr(module_scan, "time_attributes", counted)
    module = probe(monotonic=time.monotonic)
    for _ in range(3):
        assert run_virtual(lambda clock: _monotonic_after(module, 1.0)) == 1.0
    module.wall = time.time
    assert run_virtual(lambda clock: _monotonic_after(module, 1.0)) == 1.0
    own = [tuple(name for name in names if not name.startswith("__")) for names in read]
    assert own == [("monotonic",), ("monotonic", "wall")]


def test_a_module_freezegun_is_told_to_ignore_keeps_real_time(
    probe: Callable[..., types.ModuleType],
) -> None:
    """The ignore list of freezegun, extended between two runs, applies from the next run."""
    module = probe(monotonic=time.monotonic)
    assert run_virtual(lambda clock: _monotonic_after(module, 6.0)) == 6.0
    saved = list(freezegun.config.settings.default_ignore_list)
    freezegun.configure(extend_ignore_list=[NAME])
    try:

        async def held(clock: VirtualClock) -> bool:
            del clock
            return module.monotonic is REAL["monotonic"]

        assert run_virtual(held) is True
    finally:
        freezegun.configure(default_ignore_list=saved)
    assert run_virtual(lambda clock: _monotonic_after(module, 6.0)) == 6.0


def test_a_run_inside_freeze_time_leaves_freezegun_s_patch_in_place() -> None:
    """Under a started freeze_time the run reads its own wall clock, then freezegun's is back."""
    frozen = dt.datetime(2020, 1, 2, tzinfo=dt.UTC).timestamp()

    async def wall(clock: VirtualClock) -> float:
        await asyncio.sleep(2.5)
        return time.time() - clock.epoch

    with freezegun.freeze_time("2020-01-02"):
        assert run_virtual(wall) == 2.5
        assert time.time() == frozen
    assert time.time() > frozen
    assert time.time is REAL["wall"]


class _Refusing(types.ModuleType):
    """A module that refuses a fake monotonic (as a module with a strict __setattr__ might)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "monotonic" and value is not REAL["monotonic"]:
            msg = "no fakes here"
            raise RuntimeError(msg)
        super().__setattr__(name, value)


def test_a_failed_entry_puts_every_face_back(probe: Callable[..., types.ModuleType]) -> None:
    """A module that raises while the run patches it fails the run; nothing stays patched."""
    plain = probe(wall=time.time)
    refusing = _Refusing(f"{NAME}_refusing")
    refusing.monotonic = time.monotonic
    sys.modules[refusing.__name__] = refusing
    try:
        with pytest.raises(RuntimeError, match="no fakes here"):
            run_virtual(lambda clock: _monotonic_after(plain, 1.0))
    finally:
        del sys.modules[refusing.__name__]
    assert (time.time, time.monotonic, dt.datetime, plain.wall) == (
        REAL["wall"],
        REAL["monotonic"],
        REAL["datetime"],
        REAL["wall"],
    )
    assert fz.freeze_factories == []
    assert dt.datetime not in copyreg.dispatch_table
