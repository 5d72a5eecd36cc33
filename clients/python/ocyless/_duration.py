"""The server's duration grammar (Ocypod's, from the humantime crate)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_UNITS_NS = {}
for _names, _ns in (
    (("nanos", "nsec", "ns"), 1),
    (("usec", "us"), 1_000),
    (("millis", "msec", "ms"), 1_000_000),
    (("seconds", "second", "secs", "sec", "s"), 1_000_000_000),
    (("minutes", "minute", "min", "mins", "m"), 60 * 1_000_000_000),
    (("hours", "hour", "hr", "hrs", "h"), 3600 * 1_000_000_000),
    (("days", "day", "d"), 86_400 * 1_000_000_000),
    (("weeks", "week", "w"), 7 * 86_400 * 1_000_000_000),
    (("months", "month", "M"), 2_630_016 * 1_000_000_000),
    (("years", "year", "y"), 31_557_600 * 1_000_000_000),
):
    for _n in _names:
        _UNITS_NS[_n] = _ns

_ITEM = re.compile(r"\s*(\d+)\s*([A-Za-z]*)")

_YEAR, _MONTH, _DAY = 31_557_600, 2_630_016, 86_400

Duration = "timedelta | int | float | str"
"""What the client accepts as a duration: a timedelta, seconds as a number,
or a string in the server's grammar ("1h 30m", "500ms")."""


def parse_duration(text: str) -> timedelta:
    """Reads a duration the server wrote ("10m", "1h 30m", "0s")."""
    pos, total = 0, 0
    text = text.strip()
    if not text:
        raise ValueError("duration: value was empty")
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"duration {text!r}: invalid character at {pos}")
        unit = m.group(2)
        if unit not in _UNITS_NS:
            raise ValueError(f"duration {text!r}: unknown time unit {unit!r}")
        total += int(m.group(1)) * _UNITS_NS[unit]
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return timedelta(microseconds=total // 1000)


def format_duration(value: "timedelta | int | float | str") -> str:
    """Writes a duration in the server's grammar, as the server itself
    formats it ("1h 30m", "1s 500ms", "0s"). A string is passed as it is
    (the server checks it); negative durations are refused."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError("duration: a bool is not a duration")
    if isinstance(value, timedelta):
        us = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    elif isinstance(value, (int, float)):
        us = round(value * 1_000_000)
    else:
        raise TypeError(f"duration: want timedelta, seconds or str, not {type(value).__name__}")
    if us < 0:
        raise ValueError(f"duration: negative duration {value!r}")
    if us == 0:
        return "0s"
    secs, micros = divmod(us, 1_000_000)
    years, ydays = divmod(secs, _YEAR)
    months, mdays = divmod(ydays, _MONTH)
    days, day_secs = divmod(mdays, _DAY)
    parts = []

    def item(v: int, unit: str, plural: bool = False) -> None:
        if v:
            parts.append(f"{v}{unit}{'s' if plural and v > 1 else ''}")

    item(years, "year", True)
    item(months, "month", True)
    item(days, "day", True)
    item(day_secs // 3600, "h")
    item(day_secs % 3600 // 60, "m")
    item(day_secs % 60, "s")
    item(micros // 1000, "ms")
    item(micros % 1000, "us")
    return " ".join(parts)


def seconds(value: "timedelta | int | float | str") -> float:
    """A duration in seconds."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, str):
        return parse_duration(value).total_seconds()
    return float(value)


_FRACTION = re.compile(r"\.(\d+)")


def parse_time(text: str) -> datetime:
    """Reads an RFC 3339 time of the server (nanoseconds cut to
    microseconds; "Z" accepted on Python 3.10)."""
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    s = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], s, count=1)
    t = datetime.fromisoformat(s)
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t


def format_time(t: datetime) -> str:
    """Writes a time as RFC 3339 in UTC (a naive datetime is taken as UTC)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
