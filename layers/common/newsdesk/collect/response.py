"""What an HTTP answer says about the next request: validators, whether anything changed, and
how long to wait (Retry-After, Cache-Control max-age, RSS ttl). Small pure functions, as
miniflux's response handler has them. The three numbers are read by one grammar,
``core.times.delta_seconds`` (ASCII digits, at most 2^31): anything else is ignored, never
raised; the schedule caps the wait they ask for (``core.schedule.MAX_FLOOR``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime

from newsdesk.core.times import delta_seconds

# the value's characters up to the next directive; delta_seconds judges them
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?([^,\"]*)\"?", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(?:no-cache|no-store)\b", re.IGNORECASE)


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value.strip()
    return ""


def validators(headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(ETag, Last-Modified) to send next time; none when the server asks for no caching
    (``Expires: 0``, as miniflux treats it)."""
    if _header(headers, "Expires") == "0":
        return None, None
    return _header(headers, "ETag") or None, _header(headers, "Last-Modified") or None


def body_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def is_modified(status: int, content_hash: str | None, last_hash: str | None) -> bool:
    """A 304, or a 200 with the very body of last time, is *not modified*."""
    if status == 304:
        return False
    return content_hash is None or content_hash != last_hash


def retry_after_seconds(value: str, now: datetime) -> float | None:
    """``Retry-After`` as delta-seconds or an HTTP date (RFC 9110, 10.2.3); None for
    anything else."""
    value = value.strip()
    if not value:
        return None
    seconds = delta_seconds(value)
    if seconds is not None:
        return float(seconds)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())


def max_age_seconds(cache_control: str) -> float | None:
    if not cache_control or _NO_CACHE.search(cache_control):
        return None
    match = _MAX_AGE.search(cache_control)
    seconds = delta_seconds(match.group(1)) if match else None
    return None if seconds is None else float(seconds)


def ttl_seconds(ttl: str | None) -> float | None:
    """RSS ``<ttl>``: minutes, a number as delta-seconds are written."""
    minutes = None if ttl is None else delta_seconds(str(ttl))
    return None if minutes is None else minutes * 60.0
