"""A Korean headline's subject, as its form writes it: "주체, 서술" (``카카오뱅크, 역대급 실적에
급등``, ``한화오션, 목표가↑``). Two titles whose subjects differ, neither named in the other
title, report on two subjects, however alike their sentences: a broker's notes on two companies,
two firms' results, two ministries' briefings. The meaning method does not count their
embedding (issue 38): e5 puts such template headlines among each other's nearest.

On ko-dev's slices, of the 1,866 pairs of titles whose embedding would count, 249 have
different subjects, and 247 of those are of two stories (``docs/clustering.md``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from newsdesk.cluster.headline import normalise, strip_tags

# A subject is what comes before the first comma within this many characters: a longer lead
# is a clause, not a name.
LONGEST = 12
_QUOTES = "'\"‘’“”`"
_COMMA = re.compile(r"[,，]")


def _read(text: str) -> str:
    """The headline method's normal form (``headline.normalise``: Hanja abbreviations as their
    Hangul words, 李 → 이), without spaces."""
    return normalise(text).replace(" ", "")


def subject(title: str) -> str | None:
    """The last word before the title's first comma (tags such as ``[속보]`` and opening quotes
    aside), read as ``_read`` does; None when there is no such comma or the word is a single
    character."""
    if not _COMMA.search(title):  # most titles: nothing to strip and read
        return None
    text = strip_tags(title).lstrip(_QUOTES + " ")
    comma = _COMMA.search(text)
    if comma is None or comma.start() > LONGEST:
        return None
    words = text[: comma.start()].split()
    if not words:
        return None
    word = _read(words[-1])
    return word if len(word) >= 2 else None


def _bigrams(word: str) -> set[str]:
    return {word[i : i + 2] for i in range(len(word) - 1)}


def different_subjects(titles: Sequence[str], rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """For each pair (``rows[k]``, ``cols[k]``): whether both titles have a subject, the two
    share no two characters in a row, and neither title names the other's."""
    subjects = [subject(t) or "" for t in titles]
    has = np.array([bool(s) for s in subjects], dtype=bool)
    read: dict[int, str] = {}
    out = np.zeros(len(rows), dtype=bool)
    both = np.flatnonzero(has[rows] & has[cols])
    for k, i, j in zip(both.tolist(), rows[both].tolist(), cols[both].tolist(), strict=True):
        a, b = subjects[i], subjects[j]
        if a == b or _bigrams(a) & _bigrams(b):
            continue
        for n in (i, j):
            if n not in read:
                read[n] = _read(titles[n])
        out[k] = a not in read[j] and b not in read[i]
    return out
