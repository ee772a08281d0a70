"""The run's local time follows the run's time zone, never the host's."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import os
import re
import time
from typing import TYPE_CHECKING, Any

import pytest

from retrychaos.world.runtime import run_virtual

if TYPE_CHECKING:
    from collections.abc import Iterator

    from retrychaos.world.clock import VirtualClock

HOST_ZONE = "Pacific/Chatham"  # UTC+12:45 (+13:45 in summer): far from any zone a run sets
SPRING_FORWARD = 1_772_953_198.0  # 2026-03-08T06:59:58Z: 01:59:58 EST, two seconds before EDT
NEW_YEAR = 1_767_225_600.0  # 2026-01-01T00:00:00Z, the default start


@pytest.fixture(autouse=True)
def host_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Put the host on a zone no run uses; put the host's own back afterwards."""
    monkeypatch.setenv("TZ", HOST_ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def local_faces() -> dict[str, Any]:
    """What every local-time face of time says now."""
    return {
        "localtime": time.strftime("%Y-%m-%d %H:%M:%S %Z %z", time.localtime()),
        "strftime": time.strftime("%H:%M:%S %Z"),
        "ctime": time.ctime(),
        "asctime": time.asctime(),
        "now": dt.datetime.now().isoformat(),
        "today": dt.datetime.today().isoformat(),  # noqa: DTZ002 (naive local time is the point)
        "date": dt.date.today().isoformat(),  # noqa: DTZ011
        "fromtimestamp": dt.datetime.fromtimestamp(time.time()).isoformat(),  # noqa: DTZ006
        "astimezone": dt.datetime.now(dt.UTC).astimezone().isoformat(),
        "zone": (time.timezone, time.altzone, time.daylight, time.tzname),
    }


def test_local_faces_follow_a_half_hour_zone() -> None:
    """In Asia/Kolkata every local face reads 05:30 at midnight UTC, whatever the host's zone."""

    async def main(clock: VirtualClock) -> dict[str, Any]:
        del clock
        return local_faces()

    assert run_virtual(main, timezone="Asia/Kolkata") == {
        "localtime": "2026-01-01 05:30:00 IST +0530",
        "strftime": "05:30:00 IST",
        "ctime": "Thu Jan  1 05:30:00 2026",
        "asctime": "Thu Jan  1 05:30:00 2026",
        "now": "2026-01-01T05:30:00",
        "today": "2026-01-01T05:30:00",
        "date": "2026-01-01",
        "fromtimestamp": "2026-01-01T05:30:00",
        "astimezone": "2026-01-01T05:30:00+05:30",
        "zone": (-19800, -19800, 0, ("IST", "IST")),
    }


def test_local_faces_cross_a_daylight_saving_change() -> None:
    """In New York the local faces jump from 01:59:58 EST to 03:00:02 EDT as the clock runs."""

    async def main(clock: VirtualClock) -> list[dict[str, Any]]:
        del clock
        before = local_faces()
        await asyncio.sleep(4)
        return [before, local_faces()]

    before, after = run_virtual(main, epoch=SPRING_FORWARD, timezone="America/New_York")
    assert before["localtime"] == "2026-03-08 01:59:58 EST -0500"
    assert before["now"] == "2026-03-08T01:59:58"
    assert before["astimezone"] == "2026-03-08T01:59:58-05:00"
    assert after["localtime"] == "2026-03-08 03:00:02 EDT -0400"
    assert after["strftime"] == "03:00:02 EDT"
    assert after["ctime"] == after["asctime"] == "Sun Mar  8 03:00:02 2026"
    assert after["now"] == after["fromtimestamp"] == "2026-03-08T03:00:02"
    assert after["astimezone"] == "2026-03-08T03:00:02-04:00"
    assert before["zone"] == after["zone"] == (18000, 14400, 1, ("EST", "EDT"))


def test_naive_local_time_converts_back_to_the_wall_clock() -> None:
    """time.mktime and a naive timestamp() read local time in the run's zone, on both sides of a change."""

    async def main(clock: VirtualClock) -> list[float]:
        seen = []
        for _ in range(2):
            seen += [
                time.mktime(time.localtime()) - int(clock.wall()),
                dt.datetime.now().timestamp() - clock.wall(),
            ]
            await asyncio.sleep(4)
        return seen

    assert run_virtual(main, epoch=SPRING_FORWARD, timezone="America/New_York") == [0.0] * 4


def test_http_date_read_as_local_time_moves_by_the_zone_offset() -> None:
    """time.mktime of a parsed GMT date is off by the run zone's offset, so that bug shows."""

    async def main(clock: VirtualClock) -> float:
        header = email.utils.formatdate(clock.wall(), usegmt=True)
        parsed = email.utils.parsedate(header)
        assert parsed is not None
        return time.mktime(parsed) - time.time()

    assert run_virtual(main, timezone="Asia/Kolkata") == -19800.0
    assert run_virtual(main, epoch=SPRING_FORWARD, timezone="America/New_York") == 14400.0
    assert run_virtual(main) == 0.0


def test_wall_faces_stay_utc() -> None:
    """time.time, time.gmtime and an aware now() are UTC in any run zone."""

    async def main(clock: VirtualClock) -> tuple[float, str, str]:
        del clock
        return (
            time.time(),
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            dt.datetime.now(dt.UTC).isoformat(),
        )

    assert run_virtual(main, timezone="Asia/Kolkata") == (
        NEW_YEAR,
        "2026-01-01T00:00:00",
        "2026-01-01T00:00:00+00:00",
    )


def test_default_zone_is_utc_not_the_host() -> None:
    """A run that sets no zone has UTC local time even on a host twelve hours away."""

    async def main(clock: VirtualClock) -> tuple[str, str, tuple[int, int, int]]:
        return (
            clock.timezone,
            time.strftime("%Y-%m-%d %H:%M %z"),
            (time.timezone, time.altzone, time.daylight),
        )

    assert run_virtual(main) == ("UTC", "2026-01-01 00:00 +0000", (0, 0, 0))


def test_host_zone_is_back_after_a_run() -> None:
    """After a run, TZ, the C library's zone and the real local faces are the host's again."""
    faces = (time.localtime, time.strftime, time.ctime, time.asctime)

    async def main(clock: VirtualClock) -> str:
        del clock
        return time.strftime("%Z")

    assert run_virtual(main, timezone="Asia/Kolkata") == "IST"
    assert os.environ["TZ"] == HOST_ZONE
    assert time.tzname == ("+1245", "+1345")
    assert (time.localtime, time.strftime, time.ctime, time.asctime) == faces


def test_unknown_zone_is_refused() -> None:
    """A run on a zone that does not exist fails before it starts, naming what was expected."""

    async def main(clock: VirtualClock) -> None:
        del clock

    expected = (
        "expected an IANA time zone name (like UTC, Asia/Kolkata or America/New_York), "
        "got 'Mars/Olympus_Mons'"
    )
    with pytest.raises(ValueError, match=re.escape(expected)) as caught:
        run_virtual(main, timezone="Mars/Olympus_Mons")
    assert str(caught.value) == expected
    assert os.environ["TZ"] == HOST_ZONE
