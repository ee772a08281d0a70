"""The run's time zone: what every local-time face of time follows in a run.

A run's wall clock is UTC (``time.time``, ``time.gmtime``, aware
``datetime.now(tz)``); its local time is the scenario's ``timezone`` (an IANA
name, ``UTC`` by default), never the host's. Inside :func:`local_zone`:

- ``TZ`` names the zone's TZif file and ``time.tzset()`` has read it, so the C
  library's local time is the zone's: ``time.mktime``, ``time.localtime(secs)``,
  ``time.timezone``/``altzone``/``daylight``/``tzname`` and naive
  ``datetime.timestamp()`` follow it, daylight saving time included;
- ``time.localtime()``, ``time.strftime``, ``time.ctime``, ``time.asctime``,
  naive ``datetime.now()``/``today()``/``fromtimestamp()``, ``astimezone()`` and
  ``date.today()`` read the virtual wall clock in that zone.

freezegun's own local faces add one fixed offset (the host's ``time.timezone``
or ``tz_offset``), which is wrong on either side of a daylight-saving change;
the faces here ask the zone for the offset at each instant instead.

The file is found where :mod:`zoneinfo` finds it (``zoneinfo.TZPATH``, then the
``tzdata`` package), so the C library and ``zoneinfo.ZoneInfo`` read the same
rules. Code that imported ``localtime`` by name before the run keeps
freezegun's fixed-offset face.
"""

from __future__ import annotations

import os
import time
import zoneinfo
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import freezegun.api as fz

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterator

    from .clock import VirtualClock

__all__ = ["DEFAULT_TIMEZONE", "ZONE_EXPECTED", "local_zone", "zone_error", "zone_file"]

DEFAULT_TIMEZONE: Final = "UTC"
ZONE_EXPECTED: Final = "an IANA time zone name (like UTC, Asia/Kolkata or America/New_York)"

# freezegun leaves these two alone. The real functions it does replace are read
# from freezegun at each call: its scan rewrites every module's references to
# them, a copy here included.
_real_ctime = time.ctime
_real_asctime = time.asctime


def zone_file(name: str) -> Path | None:
    """The TZif file of the IANA zone ``name``, or ``None`` if there is no such zone."""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    for root in zoneinfo.TZPATH:
        candidate = Path(root, name)
        if candidate.is_file():
            return candidate
    try:
        resource = resources.files("tzdata.zoneinfo").joinpath(*name.split("/"))
    except ModuleNotFoundError:
        return None
    path = Path(str(resource))
    return path if path.is_file() else None


def zone_error(name: object) -> str | None:
    """Why ``name`` is not a time zone a run can follow, or ``None`` if it is one."""
    if not isinstance(name, str) or zone_file(name) is None:
        return f"expected {ZONE_EXPECTED}, got {name!r}"
    if not hasattr(time, "tzset") and name != DEFAULT_TIMEZONE:
        return f"expected {DEFAULT_TIMEZONE} on this platform (it has no time.tzset), got {name!r}"
    return None


@contextmanager
def local_zone(clock: VirtualClock) -> Iterator[list[tuple[Any, Any]]]:
    """Make local time the clock's ``timezone`` (see the module docstring).

    Enter it inside freezegun's patch: it replaces the faces freezegun put in place.
    It gives the faces it put on ``time``, each with the real function it
    replaced: a module imported during the run that bound one is put back
    on the real function when the run ends (:mod:`retrychaos.world.timepatch`).
    """
    problem = zone_error(clock.timezone)
    if problem is not None:
        raise ValueError(problem)
    zone = zoneinfo.ZoneInfo(clock.timezone)
    saved_tz = os.environ.get("TZ")
    faces = _Faces(clock, zone)
    os.environ["TZ"] = f":{zone_file(clock.timezone)}"
    _tzset()
    try:
        with faces.patched() as placed:
            yield placed
    finally:
        if saved_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved_tz
        _tzset()


def _tzset() -> None:
    tzset = getattr(time, "tzset", None)
    if tzset is not None:
        tzset()


class _Faces:
    """The local-time functions of one run, reading ``clock`` in ``zone``."""

    __slots__ = ("clock", "zone")

    def __init__(self, clock: VirtualClock, zone: zoneinfo.ZoneInfo) -> None:
        self.clock = clock
        self.zone = zone

    def local_now(self) -> dt.datetime:
        """The wall clock's time in the zone, naive (what a naive ``now()`` returns)."""
        utc = fz.get_current_time()
        return self.zone.fromutc(utc.replace(tzinfo=self.zone)).replace(tzinfo=None)

    def localtime(self, secs: float | None = None) -> time.struct_time:
        if secs is None and fz._should_use_real_time():  # noqa: SLF001 (pytest's own timing stays real)
            return fz.real_localtime()
        return fz.real_localtime(self.clock.wall() if secs is None else secs)

    def strftime(self, fmt: str, t: Any = None) -> str:
        return fz.real_strftime(fmt, self.localtime() if t is None else t)

    def ctime(self, secs: float | None = None) -> str:
        return _real_ctime(self.clock.wall() if secs is None else secs)

    def asctime(self, t: Any = None) -> str:
        return _real_asctime(self.localtime() if t is None else t)

    @contextmanager
    def patched(self) -> Iterator[list[tuple[Any, Any]]]:
        """Put the faces in place; put back what was there on the way out.

        It gives each face it put on ``time`` with the real function behind it.
        """
        on_time = {
            "localtime": self.localtime,
            "strftime": self.strftime,
            "ctime": self.ctime,
            "asctime": self.asctime,
        }
        saved_datetime = _swap(fz.FakeDatetime, _datetime_faces(self))
        saved_date = _swap(fz.FakeDate, {"today": classmethod(_date_today(self))})
        saved_time = _swap(time, on_time)
        # freezegun's strftime looks its localtime up by name at each call.
        saved_fz = _swap(fz, {"fake_localtime": self.localtime})
        reals = (fz.real_localtime, fz.real_strftime, _real_ctime, _real_asctime)
        try:
            yield list(zip(on_time.values(), reals, strict=True))
        finally:
            for target, saved in (
                (fz, saved_fz),
                (time, saved_time),
                (fz.FakeDate, saved_date),
                (fz.FakeDatetime, saved_datetime),
            ):
                _swap(target, saved)


def _swap(target: object, values: dict[str, Any]) -> dict[str, Any]:
    """Set ``values`` on ``target``; return what they replaced (as stored, descriptors kept)."""
    own = target.__dict__
    saved = {name: own[name] for name in values}
    for name, value in values.items():
        setattr(target, name, value)
    return saved


def _datetime_faces(faces: _Faces) -> dict[str, Any]:
    """FakeDatetime's local-time methods for one run (the wall clock in the run's zone)."""

    def now(cls: type, tz: dt.tzinfo | None = None) -> dt.datetime:  # noqa: ARG001 (classmethod)
        if tz is None:
            return fz.datetime_to_fakedatetime(faces.local_now())
        utc = fz.get_current_time().replace(tzinfo=tz)
        return fz.datetime_to_fakedatetime(tz.fromutc(utc))

    def fromtimestamp(cls: type, t: float, tz: dt.tzinfo | None = None) -> dt.datetime:  # noqa: ARG001
        return fz.datetime_to_fakedatetime(fz.real_datetime.fromtimestamp(t, tz))

    def timestamp(self: dt.datetime) -> float:
        return fz.real_datetime.timestamp(self)

    def astimezone(self: dt.datetime, tz: dt.tzinfo | None = None) -> dt.datetime:
        return fz.datetime_to_fakedatetime(fz.real_datetime.astimezone(self, tz))

    return {
        "now": classmethod(now),
        "today": classmethod(now),
        "fromtimestamp": classmethod(fromtimestamp),
        "timestamp": timestamp,
        "astimezone": astimezone,
    }


def _date_today(faces: _Faces) -> Any:
    def today(cls: type) -> dt.date:  # noqa: ARG001 (classmethod)
        return fz.date_to_fakedate(faces.local_now().date())

    return today
