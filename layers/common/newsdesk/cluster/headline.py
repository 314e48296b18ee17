"""Headlines as the ``average`` method compares them (issue 24): a normal form, then
character n-grams that do not depend on the window.

The normal form: news tags removed (``[속보]``, ``(종합)``), Unicode NFKC (full-width forms,
``㎞`` → ``km``), lower case, thousands separators dropped (``3,500억`` → ``3500억``), the hanja
abbreviations of ``abbreviations`` read as their Hangul words (``北`` → ``북한``), and every other
mark a space, so that quotation marks and ellipses (``…``, ``“``, ``'``) join no n-gram.

The n-grams: those of 2–4 characters within each word, padded with a space at either end (as
scikit-learn's ``char_wb``), and, where two Hangul words stand side by side, the 2 and 3
characters across the space between them, so that a compound written solid (``서울지하철노조``)
shares n-grams with the same words spaced apart (``서울 지하철 노조``). Weighted by sublinear
count without IDF, rows of unit length: a title's vector is the same in any window.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from newsdesk.cluster.abbreviations import HANJA_ABBREVIATIONS

_TAG = r"[\[\(<【〈《][^\]\)>】〉》]{1,12}[\]\)>】〉》]"
_LEADING_TAGS = re.compile(rf"^\s*(?:{_TAG}\s*)+")
_TRAILING_TAGS = re.compile(rf"(?:\s*{_TAG})+\s*$")


def strip_tags(title: str) -> str:
    """``[속보] 기준금리 동결(종합2보)`` → ``기준금리 동결``; a title that is only tags stays."""
    stripped = _TRAILING_TAGS.sub("", _LEADING_TAGS.sub("", title)).strip()
    return stripped or title.strip()


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")
_ABBREVIATION = re.compile("|".join(map(re.escape, HANJA_ABBREVIATIONS)))
# Word characters, and a point or a percent sign inside or after a number ("3.5%").
_MARKS = re.compile(r"(?:(?<!\d)\.|\.(?!\d)|[^\w.%])+")
_HANGUL_WORD = re.compile(r"[\uac00-\ud7a3]+")


def normalise(title: str) -> str:
    """``[속보] 北, 동해상으로 “탄도미사일” 3,500발…`` → ``북한 동해상으로 탄도미사일 3500발``."""
    text = unicodedata.normalize("NFKC", strip_tags(title)).lower()
    text = _THOUSANDS.sub("", text)
    text = _ABBREVIATION.sub(lambda m: f" {HANJA_ABBREVIATIONS[m.group(0)]} ", text)
    return " ".join(_MARKS.sub(" ", text).split())


def ngrams(text: str) -> list[str]:
    """The n-grams of a normalised title (see the module's docstring), one by one: what
    ``gram_counts`` counts for many titles at once (tests/test_korean_similarity.py)."""
    words = text.split()
    grams: list[str] = []
    for word in words:
        padded = f" {word} "
        for size in (2, 3, 4):
            grams += [padded[k : k + size] for k in range(len(padded) - size + 1)]
    for left, right in itertools.pairwise(words):
        if _HANGUL_WORD.fullmatch(left) and _HANGUL_WORD.fullmatch(right):
            grams.append(left[-1] + right[0])
            if len(right) >= 2:
                grams.append(left[-1] + right[:2])
            if len(left) >= 2:
                grams.append(left[-2:] + right[0])
    return grams


# Characters are numbered within a window; an n-gram's key packs its characters' numbers in 16
# bits each (a window with more distinct characters than that shares the last number).
_BITS = np.uint64(16)
_LAST = np.uint64(0xFFFF)


def gram_counts(texts: Sequence[str]) -> sp.csr_matrix:
    """Each normalised title's n-gram counts, titles by n-grams (numbered in an order of
    their own), computed over all the titles at once in numpy: the titles are one array of
    code points, each title a space-padded run between separators, so that an n-gram within
    a padded word is any run of 2–4 with no separator and no space inside it."""
    joined = "\x00" + "\x00".join(f" {t} " if t else "" for t in texts) + "\x00"
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    separator = codes == 0
    space = codes == ord(" ")
    title_of = np.cumsum(separator) - 1
    present = np.zeros(0x110000, dtype=np.uint64)
    present[codes] = 1
    number = np.minimum(np.cumsum(present, dtype=np.uint64)[codes], _LAST)
    keys: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    for size in (2, 3, 4):
        count = max(len(codes) - size + 1, 0)
        fits = ~separator[:count]
        for k in range(1, size):
            fits &= ~separator[k : k + count]
        for k in range(1, size - 1):
            fits &= ~space[k : k + count]
        at = np.flatnonzero(fits)
        keys.append(_pack(number, [at + k for k in range(size)]))
        starts.append(at)
    for at, parts in _across_gaps(codes, separator, space):
        keys.append(_pack(number, parts))
        starts.append(at)
    rows = [title_of[at] for at in starts]
    return _counts(len(texts), np.concatenate(keys), np.concatenate(rows))


def _across_gaps(
    codes: np.ndarray, separator: np.ndarray, space: np.ndarray
) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """The n-grams across the space between two words of Hangul syllables only: each kind's
    gaps (the space's position) and its characters' positions (the last of the left word and
    the first of the right; the right's first two; the left's last two)."""
    in_word = ~space & ~separator
    word_of = np.cumsum(in_word & ~np.concatenate(([False], in_word[:-1]))) - 1
    words = int(word_of[-1]) + 1 if len(word_of) else 0
    hangul = (codes >= 0xAC00) & (codes <= 0xD7A3)
    length = np.bincount(word_of[in_word], minlength=words)
    foreign = np.bincount(word_of[in_word], weights=~hangul[in_word], minlength=words)
    gap = np.flatnonzero(space[1:-1] & in_word[:-2] & in_word[2:]) + 1
    gap = gap[(foreign[word_of[gap - 1]] == 0) & (foreign[word_of[gap + 1]] == 0)]
    right = gap[length[word_of[gap + 1]] >= 2]
    left = gap[length[word_of[gap - 1]] >= 2]
    return [
        (gap, [gap - 1, gap + 1]),
        (right, [right - 1, right + 1, right + 2]),
        (left, [left - 2, left - 1, left + 1]),
    ]


def _counts(n: int, key: np.ndarray, row: np.ndarray) -> sp.csr_matrix:
    """Titles by distinct keys (numbered in key order), each cell how often the title has it."""
    order = np.argsort(key)  # equal keys share a column whatever their order: no stable sort
    ordered = key[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    column = np.empty(len(key), dtype=np.int64)
    column[order] = np.cumsum(first) - 1
    columns = max(int(first.sum()), 1)
    counts = sp.coo_matrix(
        (np.ones(len(key)), (row, column)), shape=(n, columns), dtype=np.float64
    ).tocsr()  # duplicates summed
    counts.sort_indices()
    return counts


def _pack(number: np.ndarray, positions: list[np.ndarray]) -> np.ndarray:
    key: np.ndarray = number[positions[0]].copy()
    for k, at in enumerate(positions[1:], start=1):
        key |= number[at] << (_BITS * np.uint64(k))
    return key


# The IDF's prior: as if the window had PRIOR_TITLES more titles, in which every n-gram is in
# PRIOR_SHARE of them. A window of a few hundred titles is weighted almost evenly (its common
# n-grams lose little), one of 100,000 by its own document frequencies (issue 24).
PRIOR_TITLES = 5000.0
PRIOR_SHARE = 0.01


def headline_vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """Rows of unit length (zero rows for titles with no n-gram): sublinear counts of the
    n-grams of each title's normal form, times an IDF smoothed by a prior,
    ``ln((N + PRIOR_TITLES) / (df + PRIOR_TITLES · PRIOR_SHARE))``."""
    counts = gram_counts([normalise(t) for t in titles])
    counts.data = 1.0 + np.log(counts.data)
    frequency = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log((len(titles) + PRIOR_TITLES) / (frequency + PRIOR_TITLES * PRIOR_SHARE))
    counts.data *= idf[counts.indices]
    return normalize(counts, copy=False)
