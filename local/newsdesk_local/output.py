"""What the ``newsdesk`` command gives back, the same way for every command: its exit codes, its
JSON (one object, UTF-8 as written, times in UTC), its words (an error in one line on standard
error, plurals), its times (the terminal's in NEWSDESK_TIMEZONE, ``2026-12-01 14:30 KST``;
JSON's ``…Z``: ``newsdesk.core.times``) and its text as a terminal shows it (``printable``:
what a terminal would act on escaped, as ls and git show names; issue 39)."""

from __future__ import annotations

import io
import json
import re
import sys
from datetime import datetime, tzinfo
from typing import Any, TextIO, cast

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


# What a terminal acts on rather than shows: C0 and C1 controls and DEL (a carriage return or a
# line feed forges a line, an escape sequence rewrites the screen), the bidirectional controls
# (an override reorders what follows it: ALM, LRM, RLM, LRE to RLO, LRI to PDI) and the line
# and paragraph separators.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` as a terminal should show it: each control and bidirectional formatting
    character escaped as Python writes it (``\\r``, ``\\x1b``, ``\\u202e``)."""
    return _UNPRINTABLE.sub(lambda found: found[0].encode("unicode_escape").decode(), text)


class TerminalText(io.TextIOBase):
    """A command's text output: every write shown ``printable``, but the line end ``print``
    writes apart, so that no value it prints, a title or a URL, can end its line or begin
    another. What prints several lines prints each with its own ``print``."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        self._out.write(text if text == "\n" else printable(text))
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return self._out.isatty()

    def fileno(self) -> int:
        return self._out.fileno()


def terminal_text(out: TextIO) -> TextIO:
    return cast(TextIO, TerminalText(out))


def error(message: str) -> None:
    """``newsdesk: MESSAGE`` on standard error, in one line, shown ``printable``."""
    print(f"newsdesk: {printable(one_line(message))}", file=sys.stderr)


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
