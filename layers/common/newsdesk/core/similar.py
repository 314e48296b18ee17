"""Keys for an article's text beyond its URL (issue 14, point 4): a content hash for copies and a
MinHash sketch for near-copies.

``normalised_text`` is what both read. It is the text in NFKC (full-width letters and digits
become ASCII ones, compatibility forms their plain letters), case-folded, with

- **e-mail addresses** removed wherever they are, and whole lines that are only a **byline**
  (``홍길동 기자``, ``By Jane Doe``) or a **copyright or reprint notice** (``<저작권자(c) 연합뉴스,
  무단 전재-재배포 금지>``, ``Copyright … All rights reserved``; a line of at most
  ``BOILERPLATE_LINE_CHARS`` characters that names one) dropped, and a wire story's
  **credit at the start of a line** (``(서울=연합뉴스) 홍길동 기자 =``, ``[서울=뉴시스]``,
  ``[한빛일보 김철수 기자]``, ``WASHINGTON (AP) —``) removed: these are what a republishing
  outlet changes first, and they say who printed the story, not what it says;
- **punctuation and symbols** turned into spaces (quotes “ ” " ' and ellipses … ... differ
  between outlets' editors and CMSs, not between stories), so ``1.5`` and ``15`` stay apart in
  the text the hash reads; format characters (zero-width spaces, soft hyphens) removed;
- **whitespace** collapsed to one space, the text's ends stripped.

Nothing else is dropped: a sentence that merely mentions a reporter stays, and so does a long
paragraph that contains the words of a notice (the length bound keeps a story about copyright
whole).

``content_hash`` is the SHA-256 of that text: equal for texts that differ only in whitespace,
width, case, punctuation and those lines. ``sketch`` is a bottom-k MinHash over the character
``SHINGLE_SIZE``-grams of the text with its spaces removed (Korean spacing and particles vary
between outlets, so characters, not words): each shingle's 64-bit BLAKE2b digest read as a
signed integer (PostgreSQL's BIGINT), the ``SKETCH_SIZE`` smallest kept, in ascending order.
``similarity`` estimates the two texts' Jaccard similarity of shingle sets from two sketches.
The shingle size, ``NEAR_DUPLICATE_THRESHOLD`` and ``MIN_SHARED`` were measured
(benchmarks/near_duplicates.py; docs/extraction.md, "Copies and near-copies"). A stored sketch
is comparable only with sketches of the same ``SHINGLE_SIZE`` and normalisation: a change to
either means sketching the stored texts again.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata

SHINGLE_SIZE = 6  # characters per shingle (measured: 4 to 8)
SKETCH_SIZE = 64  # values kept per text
NEAR_DUPLICATE_THRESHOLD = 0.30  # estimated Jaccard at or above which a text is a near-copy
# Stored articles sharing at least this many sketch values with a new one are its candidates.
# When both sketches are full (SKETCH_SIZE values: texts of that many distinct shingles or
# more), an estimate at or above the threshold implies at least ceil(threshold * SKETCH_SIZE)
# shared values, so no such pair is missed.
MIN_SHARED = math.ceil(NEAR_DUPLICATE_THRESHOLD * SKETCH_SIZE)
BOILERPLATE_LINE_CHARS = 200

# Every quantifier below is bounded or followed by what it cannot match, so that each pattern
# reads a line in linear time (an earlier byline pattern took 6 s over 25 "기자 " in a row,
# 25 times as long for every five more).
_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
# What a line that is a notice names, looked for with its spaces removed and case-folded.
_NOTICE_MARKERS = (
    "무단전재",
    "무단복제",
    "재배포금지",
    "저작권자",
    "copyright",
    "allrightsreserved",
    "©",
)
# A reporter's title (선임기자 and 특파원 end the same word), or the desk that signs a reprint.
_TITLE = r"[가-힣]{0,6}(?:기자|특파원|통신원|논설위원|뉴스팀|뉴스부|편집부|편집국)"
_WORDS = r"(?:[가-힣]{1,8}[\s·,]+){0,4}"  # up to four names or outlets, each ending at a space
_BYLINE_LINE = re.compile(
    # 홍길동 기자, [한빛일보 김철수 기자], 홍길동·이다솜 기자, 바른경제 디지털뉴스부
    rf"^\W*{_WORDS}{_TITLE}\W*$"
    r"|^by\s+[\w.'&-]{1,40}(?:[\s,]+[\w.'&-]{1,40}){0,5}$",  # By Jane Doe, CNN
    re.IGNORECASE,
)
_AGENCIES = r"AP|AFP|Reuters|Bloomberg|CNN|UPI|dpa|Xinhua|Yonhap|Kyodo"
_CREDIT = re.compile(
    # (서울=연합뉴스) 홍길동 이다솜 기자 =   【서울=뉴시스】   [세종=뉴스1]홍길동 기자 =
    rf"^\s*[(\[【<]\s*[^()\[\]【】<>=\n]{{1,20}}=[^()\[\]【】<>\n]{{1,20}}[)\]】>]\s*"
    rf"(?:{_WORDS}{_TITLE}\s*=\s*)?"
    # [한빛일보 김철수 기자]   (워싱턴 홍길동 특파원)
    rf"|^\s*[(\[【]\s*{_WORDS}{_TITLE}\s*[)\]】]\s*"
    # WASHINGTON (AP) —   LONDON, England (Reuters) -   (CNN)
    rf"|^\s*(?:[A-Z][A-Z.' -]{{1,30}}(?:,\s*[A-Z][\w.' ]{{1,20}})?\s*)?"
    rf"\((?:{_AGENCIES})\)\s*[-—–:]*\s*"
)


class _Spacing(dict[int, int | None]):
    """str.translate's table, filled as characters are met: punctuation, symbols, separators
    and controls to a space, format characters removed, everything else kept. Bounded, so a
    text of many distinct characters cannot grow it without end."""

    LIMIT = 1 << 16

    def __missing__(self, code: int) -> int | None:
        category = unicodedata.category(chr(code))
        value: int | None = code
        if category[0] in "PSZ" or category == "Cc":
            value = 0x20
        elif category == "Cf":
            value = None
        if len(self) < self.LIMIT:
            self[code] = value
        return value


SPACING = _Spacing()


def kept_line(line: str) -> str | None:
    """The line without e-mail addresses and a leading credit; None for a line that is only a
    byline or a notice."""
    line = _CREDIT.sub("", _EMAIL.sub(" ", line), count=1).strip()
    if not line:
        return None
    if len(line) <= BOILERPLATE_LINE_CHARS:
        squeezed = "".join(line.split()).casefold()
        if any(marker in squeezed for marker in _NOTICE_MARKERS) or _BYLINE_LINE.match(line):
            return None
    return line


def normalised_text(text: str) -> str:
    """The text that the hash and the sketch read (the module's docstring gives each rule)."""
    lines = (kept_line(line) for line in unicodedata.normalize("NFKC", text).splitlines())
    joined = " ".join(line for line in lines if line is not None)
    return " ".join(joined.casefold().translate(SPACING).split())


def content_hash(text: str) -> str:
    """Hex SHA-256 of ``normalised_text(text)``."""
    return hashlib.sha256(normalised_text(text).encode("utf-8")).hexdigest()


def sketch(text: str, *, shingle_size: int = SHINGLE_SIZE, size: int = SKETCH_SIZE) -> list[int]:
    """The ``size`` smallest 64-bit signed hashes of the text's ``shingle_size``-character
    shingles, ascending; all of them when it has fewer, [] when it is shorter than one
    shingle. (The keywords are for the benchmark; stored sketches use the defaults.)"""
    # UTF-32 gives every character four bytes, so a shingle is a fixed-width slice of bytes.
    data = "".join(normalised_text(text).split()).encode("utf-32-le")
    width = 4 * shingle_size
    shingles = {data[i : i + width] for i in range(0, len(data) - width + 1, 4)}
    values = sorted(
        int.from_bytes(hashlib.blake2b(shingle, digest_size=8).digest(), "big", signed=True)
        for shingle in shingles
    )
    return values[:size]


def similarity(a: list[int], b: list[int]) -> float:
    """The Jaccard similarity of two texts' shingle sets, estimated from their sketches: of the
    k smallest values of both together (k the shorter sketch's length), the share that is in
    both. 0.0 when either is empty."""
    k = min(len(a), len(b))
    if k == 0:
        return 0.0
    first, second = set(a), set(b)
    smallest = sorted(first | second)[:k]
    return sum(1 for value in smallest if value in first and value in second) / k


def shared(a: list[int], b: list[int]) -> int:
    """How many sketch values two sketches have in common (what the store's index counts)."""
    return len(set(a) & set(b))
