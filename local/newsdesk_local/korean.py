"""Content morphemes of headlines, for the centroid method's ``"morph"`` and ``"char+morph"``
vectors, compared with the shipped analysers by benchmarks/korean_analyser.py and
tests/test_korean_similarity.py. Not in the runtime (issue 24): kiwipiepy is in no
requirements file, and nothing under ``layers/common/newsdesk`` imports this module.

A Korean headline's words carry particles and endings ("한국은행이", "동결했다") and its spacing
varies ("코스피2,700선회복"); Kiwi (kiwipiepy), a Korean morphological analyser, splits them
into morphemes, of which the content ones are kept: nouns (NN*), verb and adjective stems
(VV, VA), and foreign words, hanja and numbers (SL, SH, SN). A title with no Hangul is not
analysed: its tokens are its lowercased words, so English headlines pay nothing for Kiwi.

Kiwi is imported and built on the first title that needs it, once per process: its model takes
about a second to load and a few hundred MB of memory (benchmarks/korean_analyser.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

from newsdesk.cluster.vectors import ANALYSERS as SHIPPED
from newsdesk.cluster.vectors import centroid_vectors, char_vectors

if TYPE_CHECKING:
    from kiwipiepy import Kiwi

# Hangul syllables, jamo and compatibility jamo.
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_WORD = re.compile(r"(?u)\b\w\w+\b")
CONTENT_TAGS = ("NN", "VV", "VA", "SL", "SH", "SN")


def has_hangul(title: str) -> bool:
    return _HANGUL.search(title) is not None


@functools.cache
def kiwi() -> Kiwi:
    """The analyser, built once. The typo and multi-word dictionaries are not loaded: they
    double the loading time and memory, and headlines are edited text."""
    from kiwipiepy import Kiwi

    return Kiwi(load_typo_dict=False, load_multi_dict=False)


def content_morphemes(titles: Sequence[str]) -> list[list[str]]:
    """Each title's tokens: its content morphemes (lowercased) if it has Hangul, else its
    lowercased words of two characters or more."""
    tokens: list[list[str]] = [_WORD.findall(t.lower()) for t in titles]
    korean = [i for i, title in enumerate(titles) if has_hangul(title)]
    if korean:
        analysed = kiwi().tokenize([titles[i] for i in korean])
        for i, morphemes in zip(korean, analysed, strict=True):
            tokens[i] = [m.form.lower() for m in morphemes if m.tag.startswith(CONTENT_TAGS)]
    return tokens


ANALYSERS = (*SHIPPED, "morph", "char+morph")
# "char+morph": the share of the morpheme block in a row's squared length, so that where both
# blocks are non-zero the cosine is (1 - share) · char cosine + share · morpheme cosine.
MORPH_SHARE = 0.5


def analysed_vectors(titles: Sequence[str], analyser: str = "char") -> sp.csr_matrix:
    """``newsdesk.cluster.vectors.centroid_vectors``, and ``"morph"`` (TF-IDF over content
    morphemes; Kiwi runs on the titles with Hangul only) or ``"char+morph"`` (both side by
    side, weighted by ``MORPH_SHARE``, rows renormalised)."""
    if analyser == "morph":
        return morph_vectors(titles)
    if analyser == "char+morph":
        blocks = [
            (1 - MORPH_SHARE) ** 0.5 * char_vectors(titles),
            MORPH_SHARE**0.5 * morph_vectors(titles),
        ]
        return normalize(sp.hstack(blocks, format="csr"), copy=False)
    if analyser in SHIPPED:
        return centroid_vectors(titles, analyser)
    raise ValueError(f"unknown analyser {analyser!r}; expected one of {ANALYSERS}")


def morph_vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """Content morphemes, sublinear term frequency, no IDF (as ``char_vectors``), rows of unit
    length."""
    vectorizer = TfidfVectorizer(analyzer=_given_tokens, sublinear_tf=True, use_idf=False)
    try:
        return vectorizer.fit_transform(content_morphemes(titles)).tocsr()
    except ValueError:  # no title has a content morpheme
        return sp.csr_matrix((len(titles), 1), dtype=np.float64)


def _given_tokens(tokens: list[str]) -> list[str]:
    return tokens
