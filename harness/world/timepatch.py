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

The faces are freezegun's fakes, its clock the run's wall face, but for the
monotonic ones (freezegun's read the wall face, ~1.7e9 s, where float
precision breaks asyncio timers). References to the real functions held by
modules (``from time import monotonic``) are swapped for the run, as by
freezegun's ``start()``, which walks and checks every loaded module in every
run (2.5 of a fuzz example's 6.6 ms): the walk is kept
(:class:`~retrychaos.world.module_scan.ModuleScan`).
A module imported during a run is put back on the real functions at its
end, whatever faces it bound: no later run reads a finished run's clock.
"""

from __future__ import annotations

import copyreg
import datetime as dt
import sys
import threading
import time
import uuid
import warnings
from contextlib import contextmanager
from operator import is_
from types import ModuleType
from typing import TYPE_CHECKING, Any

import freezegun
import freezegun.api as fz

from ..errors import RunAborted
from .localtime import local_zone
from .module_scan import SCAN, chosen

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .clock import VirtualClock
    from .loop import VirtualEventLoop

_UTC_EPOCH = dt.datetime(1970, 1, 1)  # noqa: DTZ001 (freezegun works on naive UTC)
_NO_OFFSET = dt.timedelta(0)
_real_sleep = time.sleep
_freezegun_attributes = fz._get_cached_module_attributes  # noqa: SLF001
_all_attributes = fz._get_module_attributes  # noqa: SLF001

# The time module's functions a run replaces, with the real ones freezegun saved;
# freezegun's own fakes go by their names in its module (and in any that
# re-exports them): a module imported during a run keeps what it holds there.
_NAMES: tuple[str, ...] = ("time", "monotonic", "perf_counter", "localtime", "gmtime", "strftime")
_NAMES += ("time_ns", "monotonic_ns", "perf_counter_ns")
_REAL_TIME = {name: getattr(fz, f"real_{name}") for name in _NAMES}
_FREEZEGUN_NAMES = frozenset({"FakeDate", "FakeDatetime", *(f"fake_{name}" for name in _NAMES)})

# Modules whose time must stay real: the test runner's own timing and the
# property-testing engine's deadlines (see NOTES: patched clocks around
# Hypothesis produce false DeadlineExceeded).
# The watchdog measures real time by definition.
_IGNORE: tuple[str, ...] = ("_pytest", "pytest", "hypothesis", "pluggy", "threading", "queue")
_IGNORE += ("Queue", "retrychaos.world.watchdog")


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
    """Patch every face of time onto ``clock`` (see the module docstring).

    Inside a freezegun ``freeze_time`` already started, the run only takes
    the top of freezegun's stacks, as a nested ``freeze_time`` would: the
    patching is the outer one's.
    """
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

    ignore = (*_IGNORE, *freezegun.config.settings.default_ignore_list)
    run = None if fz.freeze_factories else _Run(_faces(clock), ignore)
    fz.freeze_factories.append(_WallFactory(clock))  # type: ignore[arg-type]
    fz.tz_offsets.append(_NO_OFFSET)
    fz.ignore_lists.append(ignore)
    fz.tick_flags.append(False)
    try:
        if run is not None:
            run.enter()
        time.sleep = sleep  # type: ignore[assignment]
        try:
            with local_zone(clock) as local_faces:
                if run is not None:  # a module imported during the run is put back on these too
                    placed = [*local_faces, (sleep, _real_sleep)]
                    run.kept += placed
                    run.reals |= {id(face): real for face, real in placed}
                yield
        finally:
            time.sleep = _real_sleep
    finally:
        fz.freeze_factories.pop()
        fz.ignore_lists.pop()
        fz.tick_flags.pop()
        fz.tz_offsets.pop()
        if run is not None:
            run.leave()


def _faces(clock: VirtualClock) -> dict[str, Any]:
    """The run's face of each time function freezegun replaces, by its name in ``time``.

    Four monotonic functions: each face stands for one real function.
    """
    ns = clock.now_ns

    def monotonic() -> float:
        return ns() / 1_000_000_000

    def perf_counter() -> float:
        return ns() / 1_000_000_000

    def monotonic_ns() -> int:
        return ns()

    def perf_counter_ns() -> int:
        return ns()

    own = {"monotonic": monotonic, "perf_counter": perf_counter}
    own |= {"monotonic_ns": monotonic_ns, "perf_counter_ns": perf_counter_ns}
    return {name: own.get(name) or getattr(fz, f"fake_{name}") for name in _NAMES}


class _Run:
    """One run's patching: what it replaced, and the real function behind each face."""

    __slots__ = ("faces", "fakes", "ignore", "kept", "names", "objects", "reals", "undo")

    def __init__(self, faces: dict[str, Any], ignore: tuple[str, ...]) -> None:
        self.faces, self.ignore = faces, ignore
        pairs = [(fz.real_date, fz.FakeDate), (fz.real_datetime, fz.FakeDatetime)]
        pairs += [(real, faces[name]) for name, real in _REAL_TIME.items()]
        self.fakes = {id(real): fake for real, fake in pairs}
        self.reals = {id(fake): real for real, fake in pairs}
        self.kept: list[Any] = []  # what else reals holds the ids of: alive until the end
        self.undo: list[tuple[Any, str, Any]] = []
        self.names: tuple[str, ...] = ()
        self.objects: tuple[Any, ...] = ()

    def enter(self) -> None:
        """What freezegun's ``start()`` does for the first ``freeze_time``, the walk kept."""
        setattr(dt, "datetime", fz.FakeDatetime)  # noqa: B010 (mypy: a module's class)
        setattr(dt, "date", fz.FakeDate)  # noqa: B010
        for name, face in self.faces.items():
            setattr(time, name, face)
        _uuid_clock(None, None)
        copyreg.dispatch_table[fz.real_datetime] = fz.pickle_fake_datetime
        copyreg.dispatch_table[fz.real_date] = fz.pickle_fake_date
        plan, others = SCAN.refresh(self.ignore)
        self.names, self.objects = SCAN.names, SCAN.objects
        fakes, undo = self.fakes, self.undo
        for module, name, real, _own, _index in plan:
            setattr(module, name, fakes[id(real)])
            undo.append((module, name, real))
        if not others:
            return
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore")
            for module in others:
                for name, value in _freezegun_attributes(module):
                    fake = fakes.get(id(value))
                    if fake is not None:
                        setattr(module, name, fake)
                        undo.append((module, name, value))

    def leave(self) -> None:
        """What freezegun's ``stop()`` does for the last ``freeze_time``; safe if enter failed."""
        setattr(dt, "datetime", fz.real_datetime)  # noqa: B010
        setattr(dt, "date", fz.real_date)  # noqa: B010
        copyreg.dispatch_table.pop(fz.real_datetime, None)
        copyreg.dispatch_table.pop(fz.real_date, None)
        for module, name, real in self.undo:
            setattr(module, name, real)
        self.undo.clear()
        if self.names:
            self._put_back_imported()
        for name, real in _REAL_TIME.items():
            setattr(time, name, real)
        _uuid_clock(fz.real_uuid_generate_time, fz.real_uuid_create)
        self.kept.clear()

    def _put_back_imported(self) -> None:
        """Modules imported during the run: the real function wherever they hold a face."""
        modules = sys.modules
        if tuple(modules) == self.names and all(map(is_, modules.values(), self.objects)):
            return
        before = dict(zip(self.names, self.objects, strict=True))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, module in list(modules.items()):
                if before.get(name) is module or not chosen(name, module, self.ignore):
                    continue
                for attribute, value in _attributes(module):
                    real = self.reals.get(id(value))
                    if real is not None and attribute not in _FREEZEGUN_NAMES:
                        setattr(module, attribute, real)


def _uuid_clock(generate: Any, create: Any) -> None:
    """Set uuid's own clock functions, as freezegun does (None: uuid1 reads ``time``)."""
    if fz.uuid_generate_time_attr:
        setattr(uuid, fz.uuid_generate_time_attr, generate)
    uuid._UuidCreate = create  # type: ignore[attr-defined]  # noqa: SLF001
    uuid._last_timestamp = None  # type: ignore[attr-defined]  # noqa: SLF001


def _attributes(module: Any) -> list[tuple[str, Any]]:
    """All of a module's attributes, read as :func:`.module_scan.time_attributes` reads them."""
    if type(module) is ModuleType:
        names = module.__dict__
        if "__getattr__" in names or "__dir__" not in names:
            return list(names.items())
    return _all_attributes(module)


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
