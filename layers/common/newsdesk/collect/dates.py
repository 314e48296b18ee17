"""Publication dates as outlets write them: feedparser's parsers, and before them handlers for
what Korean outlets write that feedparser misreads.

Registered with feedparser (``registerDateHandler`` puts them first), so its own parse and the
fast parser, which calls the same function, read every date alike:

- ``… KST``: feedparser knows no "KST" and reads it as UTC, nine hours late.
- ``Sun, 27 09 2026 10:00:00 +0900``: RFC 822 with a numeric month (feedparser: no date).
- ``Sun,27 Sep 2026 10:00:00 +0900``: no space after the comma (feedparser: no date).
- ``2024년 3월 1일 오후 3시``, ``2024.03.01 15:30``, ``2024/03/01``, ``2024-03-01 오후 3:20``:
  Korean dates, in Korea's time (feedparser guesses 2024-12-01). ISO 8601 dates without a zone
  (``2024-03-01 15:30:00``) are left to feedparser, which reads them as UTC.
"""

from __future__ import annotations

import calendar
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import feedparser
from feedparser.datetimes import _parse_date
from feedparser.datetimes.rfc822 import _parse_date_rfc822

KST = timedelta(hours=9)
# Dates outside these bounds are guesses at garbage ("99999…" becomes 9999-12-01) and are
# stored as no date.
EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)

_STRICT_RFC822 = re.compile(
    r"\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) "
    r"(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})\s*$"
)
# English whatever the locale (calendar.month_abbr follows it)
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}
_NO_SPACE_AFTER_COMMA = re.compile(r"^([A-Za-z]{3}),(?=\S)")
_NUMERIC_MONTH = re.compile(
    r"^(?:[A-Za-z]{3},\s*)?(\d{1,2})\s+(\d{1,2})\s+(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?"
    r"(?:\s+(.+))?$"
)
_KOREAN = re.compile(
    r"^(\d{4})\s*(?:년|[./-])\s*(\d{1,2})\s*(?:월|[./-])\s*(\d{1,2})\s*(?:일|\.)?"
    r"(?:\s*\([월화수목금토일]\))?"  # 2024.03.01(금)
    r"(?:\s*(오전|오후|AM|PM|am|pm))?"
    r"(?:\s*(\d{1,2})\s*(?:시|:)\s*(?:(\d{1,2})\s*(?:분|:)?\s*(?:(\d{1,2})\s*초?)?)?)?\s*$"
)
_KOREAN_MARK = re.compile(r"[년월일시분초]|오전|오후|\d{4}[./]")
_AFTERNOON = ("오후", "PM", "pm")
# What the Korean handler returns for a Korean date that cannot be (month 13): a time before
# EARLIEST, so it is no date rather than what feedparser's later handlers would guess.
_IMPOSSIBLE = time.struct_time((1989, 1, 1, 0, 0, 0, 6, 1, 0))


def _rfc822_kst(date: str) -> Any:
    """RFC 822 dates with Korea's zone name, or without the space after the day's comma."""
    text = _NO_SPACE_AFTER_COMMA.sub(r"\1, ", date.strip())
    if text.upper().endswith(" KST"):
        text = text[:-4] + " +0900"
    elif text == date.strip():
        return None  # plain RFC 822: feedparser's own parser reads it
    return _parse_date_rfc822(text)


def _numeric_month(date: str) -> Any:
    found = _NUMERIC_MONTH.match(date.strip())
    if not found:
        return None
    day, month, year, hour, minute, second, zone = found.groups()
    if not 1 <= int(month) <= 12:
        return None
    name = _MONTH_NAMES[int(month) - 1]
    text = f"{day} {name} {year} {hour}:{minute}:{second or '00'} {zone or '+0000'}"
    return _rfc822_kst(f"Mon, {text}") or _parse_date_rfc822(text)


def _korean(date: str) -> Any:
    text = date.strip()
    if not _KOREAN_MARK.search(text):
        return None  # 2024-03-01T… is ISO 8601: feedparser's
    found = _KOREAN.match(text)
    if not found:
        return None  # feedparser's own Korean handlers may read it
    year, month, day, meridiem, hour, minute, second = found.groups()
    hours = int(hour or 0)
    if meridiem in _AFTERNOON and hours < 12:
        hours += 12
    elif meridiem and meridiem not in _AFTERNOON and hours == 12:
        hours = 0  # 오전 12시 is midnight
    try:
        local = datetime(int(year), int(month), int(day), hours, int(minute or 0), int(second or 0))
    except ValueError:
        return _IMPOSSIBLE
    return (local - KST).timetuple()


for _handler in (_korean, _numeric_month, _rfc822_kst):  # the last registered is tried first
    feedparser.registerDateHandler(_handler)


def parse_struct(text: str) -> time.struct_time | None:
    """A feed's date string as feedparser reads it (with the handlers above), in UTC."""
    strict = _STRICT_RFC822.match(text)
    if strict:  # how nearly every feed writes it, read here in a fifth of feedparser's time
        day, month, year, hour, minute, second, sign, zone_hours, zone_minutes = strict.groups()
        offset = timedelta(hours=int(zone_hours), minutes=int(zone_minutes))
        try:
            at = datetime(int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second))
            return (at - offset if sign == "+" else at + offset).timetuple()
        except (ValueError, OverflowError):
            pass  # "32 Jan", or year 1 at +0900: feedparser's to judge
    parsed: time.struct_time | None = _parse_date(text)
    return parsed


def parse_date(text: str | None) -> datetime | None:
    """A feed's date string as a UTC datetime, or None (no date, or none that is plausible)."""
    return to_datetime(parse_struct(text)) if text else None


def to_datetime(parsed: time.struct_time | None) -> datetime | None:
    if parsed is None:
        return None
    try:
        at = datetime.fromtimestamp(calendar.timegm(parsed), tz=UTC)
    except (OverflowError, ValueError, TypeError):
        return None
    return at if EARLIEST <= at <= datetime.now(UTC) + FUTURE_SLACK else None
