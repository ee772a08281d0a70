"""Modules holding the real time functions read the virtual clock in every run."""

from __future__ import annotations

import asyncio
import sys
import time
import types
from typing import TYPE_CHECKING, Any

import pytest

from retrychaos.world.runtime import run_virtual

if TYPE_CHECKING:
    from collections.abc import Iterator

    from retrychaos.world.clock import VirtualClock


class _Lazy(types.ModuleType):
    """A module type of its own, as lazy-loading libraries make."""


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    """A module in sys.modules, removed after the test."""
    made = types.ModuleType("retrychaos_timepatch_probe")
    sys.modules[made.__name__] = made
    yield made
    del sys.modules[made.__name__]


async def _read(module: types.ModuleType, clock: VirtualClock) -> list[float]:
    await asyncio.sleep(7.0)
    return [module.monotonic(), module.wall() - clock.epoch]


async def _nothing(clock: VirtualClock) -> None:
    del clock
    await asyncio.sleep(1.0)


def _install(module: types.ModuleType, **names: Any) -> None:
    for name, value in names.items():
        setattr(module, name, value)


def test_a_module_holding_time_functions_reads_the_clock_and_real_time_after(
    module: types.ModuleType,
) -> None:
    """A module's own reference to time.monotonic reads virtual time in a run, real time after."""
    _install(module, monotonic=time.monotonic, wall=time.time)
    assert run_virtual(lambda clock: _read(module, clock)) == [7.0, 7.0]
    assert module.monotonic is time.monotonic
    assert module.wall() > 1.7e9


def test_a_reference_gained_between_runs_is_patched_in_the_next_run(
    module: types.ModuleType,
) -> None:
    """A module scanned in one run that later gains time references reads the clock in the next."""
    run_virtual(_nothing)  # the module is scanned, and holds nothing then
    _install(module, monotonic=time.monotonic, wall=time.time)
    assert run_virtual(lambda clock: _read(module, clock)) == [7.0, 7.0]


@pytest.mark.parametrize(
    ("removed", "kept"),
    [("other", {"other": 1, "another": 2}), ("wall", {"wall": 1, "other": 2})],
    ids=["another-name", "the-same-name-again"],
)
def test_a_name_rebound_to_a_time_function_between_runs_is_patched_in_the_next_run(
    module: types.ModuleType, removed: str, kept: dict[str, int]
) -> None:
    """A name deleted, then ``wall`` bound to time.time (same count of names) is scanned again.

    Deleting ``other`` swaps one name for another; deleting ``wall`` itself
    leaves the same names in another order.
    """
    _install(module, monotonic=time.monotonic, **kept)
    run_virtual(_nothing)
    delattr(module, removed)
    module.wall = time.time
    assert run_virtual(lambda clock: _read(module, clock)) == [7.0, 7.0]


@pytest.mark.parametrize("kind", ["subclass", "__getattr__"])
def test_a_module_that_is_not_plain_is_patched_too(kind: str) -> None:
    """A ModuleType subclass, or a module with its own __getattr__, reads the clock as well."""
    made = (
        _Lazy("retrychaos_timepatch_lazy")
        if kind == "subclass"
        else types.ModuleType("retrychaos_timepatch_lazy")
    )
    if kind == "__getattr__":
        made.__getattr__ = lambda name: None  # type: ignore[method-assign]
    _install(made, monotonic=time.monotonic, wall=time.time)
    sys.modules[made.__name__] = made
    try:
        assert run_virtual(lambda clock: _read(made, clock)) == [7.0, 7.0]
    finally:
        del sys.modules[made.__name__]


def test_a_lazy_module_s_attributes_are_not_loaded_by_a_run(module: types.ModuleType) -> None:
    """Entering a run looks only at what a lazy module has loaded: its __getattr__ is not called."""
    asked: list[str] = []

    def lazy(name: str) -> Any:
        asked.append(name)
        raise AttributeError(name)

    def listing() -> list[str]:
        return ["monotonic", "not_loaded_yet", "wall"]

    _install(module, __getattr__=lazy, __dir__=listing, monotonic=time.monotonic, wall=time.time)
    assert run_virtual(lambda clock: _read(module, clock)) == [7.0, 7.0]
    assert asked == []
