"""The bounds of what newsdesk stores and sends: every key fits its index, every text its
consumers (issue 22). A feed or a page is the attacker's text, so each bound is applied where
the text is stored, whoever produced it.

- A key (a URL, a guid) is at most ``MAX_KEY_BYTES`` in UTF-8: PostgreSQL's btree indexes
  refuse an entry of much over 2,700 bytes (``index row size … exceeds btree version 4
  maximum 2704``), and no article needs a longer one (sitemaps.org caps URLs at 2,048
  characters). A longer key is not stored as a key: the entry is refused with a reason, or
  the key left out.
- A title is at most ``TITLE_MAX_CHARS``, a summary ``SUMMARY_MAX_CHARS``: what is longer is
  cut (ending in "…") and counted.
- Text holds no NUL (PostgreSQL refuses it) and no lone surrogate (UTF-8 cannot encode it).
"""

from __future__ import annotations

import re

MAX_KEY_BYTES = 2000
TITLE_MAX_CHARS = 500
SUMMARY_MAX_CHARS = 5000
ELLIPSIS = "…"

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def fits_a_key(text: str) -> bool:
    return len(text.encode("utf-8", "surrogatepass")) <= MAX_KEY_BYTES


def storable(text: str) -> str:
    """``text`` as PostgreSQL takes it: NUL dropped, a lone surrogate replaced (U+FFFD)."""
    if not _UNSTORABLE.search(text):
        return text
    return _UNSTORABLE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


def capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut said by an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
