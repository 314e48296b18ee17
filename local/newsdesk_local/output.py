"""What the ``newsdesk`` command gives back, the same way for every command: its exit codes, its
JSON (one object, UTF-8 as written, times in UTC), its words (an error in one line on standard
error, plurals) and its times (the terminal's in NEWSDESK_TIMEZONE, ``2026-12-01 14:30 KST``;
JSON's ``…Z``: ``newsdesk.core.times``)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, tzinfo
from typing import Any, TextIO

from newsdesk.core.times import format_time, local_time

# 0 done; 1 a message failed (SQS would retry it), or a feed `sources check --live` asked;
# 2 a configuration error or a service that cannot be reached; 3 feeds were attempted and not
# one succeeded; 130 interrupted (Ctrl-C); 143 and 129 stopped by SIGTERM and SIGHUP
# (``newsdesk_local.signals``: 128 and the signal's number).
EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_NO_FEED = 0, 1, 2, 3
EXIT_INTERRUPTED = 130


def dump(document: dict[str, Any], out: TextIO) -> None:
    """``--json``: the document as one line."""
    json.dump(document, out, ensure_ascii=False)
    out.write("\n")


def one_line(text: str) -> str:
    return " ".join(text.split())


def error(message: str) -> None:
    """``newsdesk: MESSAGE`` on standard error, in one line."""
    print(f"newsdesk: {one_line(message)}", file=sys.stderr)


def note(message: str) -> None:
    """``newsdesk: MESSAGE`` on standard error: what the command does differently, in one
    line, out of the way of its output (JSON included)."""
    error(message)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 feed``, ``0 feeds``, ``2 feeds``; ``1 copy``, ``2 copies`` (a consonant's y);
    ``many`` where English has its own (``plural(2, "list page")`` needs none). The count's
    noun is the phrase's last word: ``plural(1, "stale message")``."""
    if count == 1:
        return f"{count} {word}"
    if many is None:
        consonant_y = word.endswith("y") and word[-2:-1] not in tuple("aeiou")
        many = word[:-1] + "ies" if consonant_y else word + "s"
    return f"{count} {many}"


def json_time(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


def terminal_time(value: datetime | str | None, zone: tzinfo, absent: str = "never") -> str:
    return local_time(value, zone) if value is not None else absent
