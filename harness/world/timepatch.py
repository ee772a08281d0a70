"""Make every face of time read the virtual clock, for the length of a run.

Inside :func:`virtual_time`:

- ``time.monotonic``, ``time.perf_counter`` (and their ``_ns`` forms) read the
  clock's small monotonic face, the same value as the event loop's ``time()``;
- ``time.time``, ``datetime.datetime.now``/``utcnow``, ``datetime.date.today``,
  ``time.gmtime``, ``time.localtime`` and ``time.strftime`` read the clock's
  wall face (freezegun, driven by the clock instead of frozen); local time is
  the clock's ``timezone``, not the host's (:mod:`retrychaos.world.localtime`);
- ``time.sleep`` advances virtual time: in a baton thread it parks the thread
  until the loop reaches the wake-up time; on the loop's own thread it moves
  the clock forward at once, blocking every other task, as a real blocking
  sleep would. Any other thread (one started outside the run, so not under
  the clock's baton) sleeps for real and fails the run: its sleep would move
  virtual time at a moment the run does not choose.

freezegun already replaces module-level references to the real functions
(``from time import monotonic``); we hand it our monotonic functions so those
references read the same clock as the loop. freezegun's own monotonic would
read the wall face (~1.7e9 s), where float precision breaks asyncio timers.
Entering freezegun scans every loaded module, so a run enters it once; the
scan asks :func:`_time_attributes` which of a module's attributes are real
time functions (see there for why that is cheaper than freezegun's own check).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any

import freezegun
import freezegun.api as fz

from ..errors import RunAborted
from .localtime import local_zone

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .clock import VirtualClock
    from .loop import VirtualEventLoop

_UTC_EPOCH = dt.datetime(1970, 1, 1)  # noqa: DTZ001 (freezegun works on naive UTC)
_real_sleep = time.sleep
_freezegun_attributes = fz._get_cached_module_attributes  # noqa: SLF001
_SEEN: dict[str, tuple[ModuleType, tuple[str, ...], list[tuple[str, Any]]]] = {}

# Modules whose time must stay real: the test runner's own timing and the
# property-testing engine's deadlines (see NOTES: patched clocks around
# Hypothesis produce false DeadlineExceeded).
# The watchdog measures real time by definition.
_IGNORE = (
    "_pytest",
    "pytest",
    "hypothesis",
    "pluggy",
    "threading",
    "queue",
    "Queue",
    "retrychaos.world.watchdog",
)


class _WallFactory:
    """What freezegun asks for the current time: the clock's wall face, naive UTC."""

    __slots__ = ("clock",)

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock

    def __call__(self) -> dt.datetime:
        return _UTC_EPOCH + dt.timedelta(microseconds=self.clock.wall() * 1_000_000 // 1)

    def tick(self, delta: Any = None) -> dt.datetime:  # noqa: ARG002 (freezegun API)
        msg = "the virtual clock moves time; freezegun's tick() is not available in a run"
        raise RuntimeError(msg)

    def move_to(self, target: Any) -> None:  # noqa: ARG002 (freezegun API)
        msg = "the virtual clock moves time; freezegun's move_to() is not available in a run"
        raise RuntimeError(msg)


@contextmanager
def virtual_time(clock: VirtualClock, loop: VirtualEventLoop) -> Iterator[None]:
    """Patch every face of time onto ``clock`` (see the module docstring)."""
    ns = clock.now_ns

    def monotonic() -> float:
        return ns() / 1_000_000_000

    def monotonic_ns() -> int:
        return ns()

    owner = threading.get_ident()

    def sleep(seconds: float) -> None:
        if seconds < 0:
            msg = "sleep length must be non-negative"
            raise ValueError(msg)
        if loop.sleep_from_thread(seconds):
            return
        if threading.get_ident() == owner:
            clock.advance(seconds)
            return
        _outside_sleep(loop, seconds)

    saved = {
        name: getattr(fz, name)
        for name in (
            "fake_monotonic",
            "fake_perf_counter",
            "fake_monotonic_ns",
            "fake_perf_counter_ns",
        )
    }
    fz.fake_monotonic = monotonic
    fz.fake_perf_counter = monotonic
    fz.fake_monotonic_ns = monotonic_ns
    fz.fake_perf_counter_ns = monotonic_ns
    fz._get_cached_module_attributes = _time_attributes  # noqa: SLF001
    freezer = freezegun.freeze_time(
        _UTC_EPOCH + dt.timedelta(seconds=clock.epoch), ignore=list(_IGNORE)
    )
    try:
        freezer.start()
        fz.freeze_factories[-1] = _WallFactory(clock)  # type: ignore[call-overload]
    finally:
        for name, value in saved.items():
            setattr(fz, name, value)
        fz._get_cached_module_attributes = _freezegun_attributes  # noqa: SLF001
    time.sleep = sleep  # type: ignore[assignment]
    try:
        with local_zone(clock):
            yield
    finally:
        time.sleep = _real_sleep
        freezer.stop()


def _time_attributes(module: ModuleType) -> list[tuple[str, Any]]:
    """The attributes of ``module`` that hold real time functions.

    freezegun remembers each module's answer and reuses it while the hash of
    the module's ``dir()`` is unchanged: some 1,000 sorted ``dir()`` lists
    and frozensets every run (about 3 ms of a small case's 15-20). For a
    plain module ``dir()`` is its ``__dict__``'s keys, so the keys are
    remembered instead, as a tuple in the dict's order: the same keys give
    an equal tuple, compared item by item in C (an identical string is equal
    at once), four times as fast as comparing them as sets. Keys that only
    moved (a name deleted and bound again) give another tuple, and the
    module is read again: freezegun's own check, by the set of names, misses
    such a name when it now holds a time function.

    A module is read from its ``__dict__``, the values freezegun's
    ``getattr`` of each name gives a plain module. For a module with a
    ``__getattr__`` of its own that is also what keeps it lazy: freezegun's
    ``getattr`` of every name its ``dir()`` lists imports them all
    (``retrychaos``'s own exports alone pull in some 170 modules, Hypothesis
    and pydantic among them: 0.4 s of CPU in the first run of a process),
    and an attribute not loaded yet is a reference nobody holds. Any other
    module (a subclass of ``ModuleType``, or one with only its own
    ``__dir__``) gets freezegun's own check.
    """
    names = module.__dict__
    lazy = "__getattr__" in names
    if type(module) is not ModuleType or (not lazy and "__dir__" in names):
        return _freezegun_attributes(module)
    seen = _SEEN.get(module.__name__)
    keys = tuple(names)
    if seen is not None and seen[0] is module and keys == seen[1]:
        return seen[2]
    real = fz._real_time_object_ids  # noqa: SLF001
    found = [(name, value) for name, value in list(names.items()) if id(value) in real]
    _SEEN[module.__name__] = (module, keys, found)
    return found


def _outside_sleep(loop: VirtualEventLoop, seconds: float) -> None:
    """A thread outside the run slept: fail the run, and let the thread sleep for real."""
    name = threading.current_thread().name
    error = RunAborted(
        f"thread {name!r} called time.sleep({seconds:g}) during the run, but it does not "
        "run under the virtual clock (it was started before the run or from outside it), "
        "so its sleep would move virtual time at a moment the run does not choose: start "
        "background threads from the controller's factory or call, or run the work on the "
        "loop or in asyncio.to_thread"
    )
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop._abort, error)  # noqa: SLF001
    _real_sleep(seconds)


def real_sleep(seconds: float) -> None:
    """Sleep for real (for tests that prove the watchdog catches real blocking)."""
    _real_sleep(seconds)
