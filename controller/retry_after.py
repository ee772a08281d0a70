"""Parse `Retry-After` (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date.

HTTP-dates are measured against the injected clock's wall time, never the
machine's (nor its time zone). Dates in the past and negative delays mean "now" (0 s); anything
unparseable is ignored (None) so the normal backoff applies.
"""

from __future__ import annotations

import datetime as dt
import math
import re

__all__ = ["parse_retry_after"]

_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
        start=1,
    )
}
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_LONG_DAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTH = r"(?P<month>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TIME = r"(?P<hour>\d\d):(?P<minute>\d\d):(?P<second>\d\d)"

# The three forms a recipient must accept (RFC 9110 section 5.6.7).
_IMF_FIXDATE = re.compile(rf"{_DAY}, (?P<day>\d\d) {_MONTH} (?P<year>\d{{4}}) {_TIME} GMT")
_RFC850_DATE = re.compile(rf"{_LONG_DAY}, (?P<day>\d\d)-{_MONTH}-(?P<year>\d\d) {_TIME} GMT")
_ASCTIME_DATE = re.compile(rf"{_DAY} {_MONTH} (?P<day>[ \d]\d) {_TIME} (?P<year>\d{{4}})")
_DELAY = re.compile(r"[+-]?\d+(?:\.\d+)?")
_TWO_DIGIT_YEAR_HORIZON = 50


def parse_retry_after(value: str | None, *, wall: float) -> float | None:
    """Return the seconds to wait from `wall` (epoch seconds), or None when absent or garbage.

    Delay-seconds may carry a fraction (lenient); a negative delay or a past date
    gives 0.0; a date is ignored (None) when `wall` is not a finite number. An
    absurdly long delay is returned as is (possibly `math.inf`): capping it
    against the deadline and `max_retry_after_s` is the caller's job.
    """
    if value is None:
        return None
    text = value.strip()
    if _DELAY.fullmatch(text):
        return max(0.0, float(text))
    if not math.isfinite(wall):  # no date can be measured against a clock that is not a number
        return None
    when = _parse_http_date(text, wall=wall)
    if when is None:
        return None
    return max(0.0, when - wall)


def _parse_http_date(text: str, *, wall: float) -> float | None:
    for pattern in (_IMF_FIXDATE, _RFC850_DATE, _ASCTIME_DATE):
        match = pattern.fullmatch(text)
        if match is None:
            continue
        year = int(match["year"])
        if pattern is _RFC850_DATE:
            year = _expand_two_digit_year(year, wall=wall)
        try:
            moment = dt.datetime(
                year,
                _MONTHS[match["month"]],
                int(match["day"].strip()),
                int(match["hour"]),
                int(match["minute"]),
                int(match["second"]),
                tzinfo=dt.UTC,
            )
        except ValueError:
            return None
        return moment.timestamp()
    return None


def _expand_two_digit_year(year: int, *, wall: float) -> int:
    # RFC 9110: a two-digit year more than 50 years in the future means the
    # most recent past year with those last two digits. So the year is the one
    # ending in those digits within (current - 50, current + 50].
    latest = dt.datetime.fromtimestamp(wall, tz=dt.UTC).year + _TWO_DIGIT_YEAR_HORIZON
    return latest - (latest - year) % 100
