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
from sklearn.feature_extraction.text import TfidfVectorizer

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
    """The n-grams of a normalised title (see the module's docstring)."""
    words = text.split()
    grams: list[str] = []
    for word in words:
        padded = f" {word} "
        for size in (2, 3, 4):
            grams += [padded[k : k + size] for k in range(len(padded) - size + 1)]
            if size >= len(padded):
                break
    for left, right in itertools.pairwise(words):
        if _HANGUL_WORD.fullmatch(left) and _HANGUL_WORD.fullmatch(right):
            grams += [left[-1] + right[0], left[-1] + right[:2], left[-2:] + right[0]]
    return grams


def headline_vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """Rows of unit length (zero rows for titles with no n-gram)."""
    vectorizer = TfidfVectorizer(
        analyzer=_analyse, sublinear_tf=True, use_idf=False, dtype=np.float64
    )
    try:
        return vectorizer.fit_transform(titles).tocsr()
    except ValueError:  # no title has an n-gram
        return sp.csr_matrix((len(titles), 1), dtype=np.float64)


def _analyse(title: str) -> list[str]:
    return ngrams(normalise(title))
