import math
import time

import pytest
from controller_fakes import WALL_EPOCH

from retrychaos.controller import parse_retry_after

# WALL_EPOCH = 1_790_000_000 is Mon, 21 Sep 2026 14:13:20 GMT


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", 3.0),
        ("0", 0.0),
        (" 12 ", 12.0),
        ("1.5", 1.5),
        ("-5", 0.0),
        ("+7", 7.0),
    ],
)
def test_delay_seconds(value, expected):
    """Delay-seconds are read as seconds; a negative delay means now."""
    assert parse_retry_after(value, wall=WALL_EPOCH) == expected


@pytest.mark.parametrize(
    "value",
    [
        "Mon, 21 Sep 2026 14:13:30 GMT",  # IMF-fixdate
        "Monday, 21-Sep-26 14:13:30 GMT",  # obsolete RFC 850
        "Mon Sep 21 14:13:30 2026",  # obsolete asctime
    ],
)
def test_http_date_forms_are_measured_against_the_injected_wall_clock(value):
    """All three HTTP-date forms give the seconds between the clock's wall time and the date."""
    assert parse_retry_after(value, wall=WALL_EPOCH) == 10.0


def test_asctime_with_a_single_digit_day():
    """Asctime pads one-digit days with a space."""
    wall = 1_788_134_400.0  # Mon, 31 Aug 2026 00:00:00 GMT
    assert parse_retry_after("Tue Sep  1 00:00:00 2026", wall=wall) == 86_400.0


def test_past_date_means_now():
    """A date in the past gives 0 s, never a negative wait."""
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", wall=WALL_EPOCH) == 0.0


def test_date_follows_the_injected_clock_not_the_machine():
    """The same date is 10 s away at one wall time and past at a later one."""
    value = "Mon, 21 Sep 2026 14:13:30 GMT"
    assert parse_retry_after(value, wall=WALL_EPOCH) == 10.0
    assert parse_retry_after(value, wall=WALL_EPOCH + 60) == 0.0


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "soon",
        "inf",
        "nan",
        "1e3",
        "0x10",
        "Mon, 31 Feb 2026 14:13:30 GMT",
        "Mon, 21 Sep 2026 14:13:30 UTC",
        "21 Sep 2026 14:13:30 GMT",
        "Mon, 21 Sep 2026 25:00:00 GMT",
    ],
)
def test_garbage_is_ignored(value):
    """Absent or unparseable values give None, so the normal backoff applies."""
    assert parse_retry_after(value, wall=WALL_EPOCH) is None


def test_absurd_values_are_returned_for_the_caller_to_cap():
    """Huge delays are not clipped here (the deadline check and cap belong to the decision)."""
    assert parse_retry_after("86400", wall=WALL_EPOCH) == 86_400.0
    assert parse_retry_after("9" * 400, wall=WALL_EPOCH) == math.inf


def test_two_digit_years_more_than_50_years_ahead_are_in_the_past():
    """RFC 850 years: '94' read in 2026 is 1994, so the date is past."""
    assert parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", wall=WALL_EPOCH) == 0.0
    assert parse_retry_after("Tuesday, 22-Sep-26 14:13:20 GMT", wall=WALL_EPOCH) == 86_400.0


@pytest.fixture
def host_far_east(monkeypatch):
    """Put the host on UTC+14 (already tomorrow there); put its own zone back afterwards."""
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


NEW_YEARS_EVE = 1_798_718_400.0  # Thu, 31 Dec 2026 12:00:00 GMT: 02:00 on 1 Jan 2027 at UTC+14


@pytest.mark.usefixtures("host_far_east")
@pytest.mark.parametrize(
    "value",
    [
        "Thu, 31 Dec 2026 12:00:05 GMT",
        "Thursday, 31-Dec-26 12:00:05 GMT",
        "Thu Dec 31 12:00:05 2026",
    ],
)
def test_http_dates_are_gmt_whatever_the_hosts_zone(value):
    """On a host fourteen hours ahead of UTC each date form is still read as GMT."""
    assert parse_retry_after(value, wall=NEW_YEARS_EVE) == 5.0


@pytest.mark.usefixtures("host_far_east")
def test_two_digit_years_count_from_the_utc_year_not_the_hosts():
    """'76' on 31 Dec 2026 UTC is 2076 (50 years ahead), though the host's local year is 2027."""
    fifty_years = 18_263 * 86_400.0
    assert parse_retry_after("Thursday, 31-Dec-76 12:00:00 GMT", wall=NEW_YEARS_EVE) == fifty_years
    assert parse_retry_after("Friday, 31-Dec-77 12:00:00 GMT", wall=NEW_YEARS_EVE) == 0.0


def test_a_two_digit_year_exactly_50_years_ahead_is_in_the_future():
    """RFC 850: only years MORE than 50 ahead are moved back a century."""
    wait = parse_retry_after("Monday, 21-Sep-76 14:13:20 GMT", wall=WALL_EPOCH)
    assert wait == 18_263 * 86_400.0


@pytest.mark.parametrize("wall", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize(
    "value", ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "3"]
)
def test_a_date_on_a_clock_that_is_not_a_number_is_ignored(wall, value):
    """Against an infinite or NaN wall clock a date means nothing (None); delay-seconds still do."""
    expected = 3.0 if value == "3" else None
    assert parse_retry_after(value, wall=wall) == expected


@pytest.mark.parametrize(
    ("value", "wait"),
    [
        ("Friday, 22-Sep-75 14:13:20 GMT", 17_898 * 86_400.0),
        ("Wednesday, 21-Sep-77 14:13:20 GMT", 0.0),
        ("Thursday, 21-Sep-00 14:13:20 GMT", 0.0),
        ("Saturday, 22-Sep-29 14:13:20 GMT", 1097 * 86_400.0),
    ],
)
def test_two_digit_years_fall_within_fifty_years_of_now(value, wait):
    """An RFC 850 year is the one with those digits at most 50 years ahead of the wall clock."""
    assert parse_retry_after(value, wall=WALL_EPOCH) == wait
