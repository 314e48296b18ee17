"""An issue's dossier (issue 40): what a content generator is handed for one issue version,
built from the issue's articles as they are when the version is made, so that it can write
from it without the database.

- **Sentences.** A text is read line by line (a line is a paragraph; bylines, notices and a
  wire credit at a line's start dropped, as the copy hash drops them: ``core.similar``, and a
  short line that is a dateline, a resale notice or an outlet's slogan), at
  most ``READ_CHARS`` of it, and each paragraph split after ``.``, ``?``, ``!`` or ``。``
  (closing quotes and brackets kept with it) followed by a space; a "sentence" longer than
  ``SENTENCE_MAX_CHARS`` is cut at spaces into pieces that are not.
- **Repeats.** A sentence's fingerprint is the set of its normalised text's character
  ``SHINGLE``-grams (spaces removed) and the set of its numbers (each a CRC-32, as a signed
  32-bit integer). A sentence repeats an earlier one when at least ``REPEAT_CONTAINMENT`` of
  its shingles are in that one and each of its numbers is too: the same fact in other words
  keeps its names and numbers (``기준금리를 연 3.50%로 동결했다`` / ``기준금리를 3.50%에서
  묶었다``), another fact of the story brings a number or words of its own (``자동차 수출은
  62억달러로 5% 줄었다`` after ``반도체 수출은 142억달러로 28% 늘었다``).
- **The representative**: of the articles with text (page judged ok, text kept, not a copy),
  those whose similarity to the rest of the issue, as the clustering measured it, is within
  ``NEAR_TIE`` of the most central one's; the earliest of them (published, else collected;
  then id). Without a measure, the earliest with text. An issue none of whose articles has
  text has none, and says why each has none.
- **Supporting texts**: the others with text, each next the one whose sentences not yet
  carried add the most characters (the earliest on a tie); a sentence already carried by an
  earlier one is left out and counted. Copies are listed with their original, articles
  without text with their status and reason.
- **The budget**: at most ``max_chars`` characters of sentences in all; every article's first
  paragraph before any article's second, and so on; a sentence that does not fit ends the
  texts there (no sentence is cut); what was left out is counted.
- **What is new**: the sentences of the texts the issue had not read before this version
  that repeat nothing it had read (its newest ``CARRIED_MAX`` sentences) nor each other.
- **How big the story is**: distinct outlets, articles in the last hour and six hours, the
  first reporter (the earliest article that is not a copy) and by how long it led the next
  outlet; ``importance`` (``core.importance``).
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

import numpy as np
import scipy.sparse as sp

from newsdesk.core.importance import importance
from newsdesk.core.settings import ClusterSettings
from newsdesk.core.similar import SPACING, kept_line
from newsdesk.core.times import format_time

DOSSIER_VERSION = 1
DEFAULT_MAX_CHARS = ClusterSettings.dossier_max_chars
READ_CHARS = 20_000  # of each article's text: a 2 MB page costs what a long article does
SENTENCE_MAX_CHARS = 600
READ_SENTENCES = 1_500  # of an issue's texts: 12,000 characters hold about 250
# what a version's new sentences are compared with: the issue's newest read sentences (its
# texts read_before gives newest first), so that an issue of many versions costs what a big one
# does
CARRIED_MAX = 2_000
SHINGLE = 2  # characters: Korean paraphrases share names, numbers and stems, not words
# chosen on tests/fixtures/dossier/ko_sentence_pairs.csv (benchmarks/dossiers.py)
REPEAT_CONTAINMENT = 0.25
NEAR_TIE = 0.05  # of the mean similarity to the issue's other members
TEXT_OK = "extract_ok"
# how long before its collection an article's feed may say it was published, and be believed
TRUSTED_LEAD = timedelta(days=1)

# A short line that is an outlet's furniture rather than the story's (beyond the bylines and
# notices ``core.similar`` drops): a dateline, a resale notice, a slogan.
_FURNITURE = re.compile(
    r"^\d{4}[.-]\d{1,2}[.-]\d{1,2}\.? \d{1,2}:\d{2} 송고$|재판매|DB ?금지|공감언론|^[ⓒ©◎]"
)
FURNITURE_LINE_CHARS = 60
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# a sentence ends at . ? ! 。 (with closing quotes or brackets) before a space or the line's end
# (a run of stops is taken whole from its first: a long run is read once, not from each stop)
_SENTENCE = re.compile(r"\S.*?(?:(?<![.?!。])[.?!。]+[\"'”’」』)\]]*(?=\s|$)|$)")


@dataclass(frozen=True)
class Article:
    """An issue's article as the dossier reads it."""

    id: int
    outlet: str
    title: str
    url: str
    published_at: datetime | None
    collected_at: datetime
    status: str | None  # the page's judgement; None: not extracted yet
    reason: str | None
    text: str | None  # None: no text, or removed after ARTICLE_TEXT_RETENTION_DAYS
    copy_of: int | None = None
    copy_reason: str | None = None

    @property
    def has_text(self) -> bool:
        return self.status == TEXT_OK and bool(self.text) and self.copy_of is None

    @property
    def at(self) -> datetime:
        """When it was published, as its feed says, if that is within a day before it was
        collected (a feed's clock, or its time zone, may be wrong); else when it was
        collected."""
        published = self.published_at
        if (
            published is None
            or not self.collected_at - TRUSTED_LEAD <= published <= self.collected_at
        ):
            return self.collected_at
        return published


@dataclass(frozen=True)
class Issue:
    id: int
    version: int
    state: str
    category: str
    first_article_at: datetime
    last_article_at: datetime
    size: int  # the articles counted toward it (copies are not), as its event says


@dataclass(frozen=True)
class Fingerprint:
    """What a sentence is compared by: its shingles and its numbers, hashed."""

    shingles: frozenset[int]
    numbers: frozenset[int]


@dataclass(frozen=True)
class Sentence:
    paragraph: int
    text: str
    fingerprint: Fingerprint


@dataclass
class Built:
    """A dossier and the fingerprints of the texts it read for the first time (each article's
    sentences', to store with the issue for the next version's "what is new")."""

    dossier: dict[str, Any]
    read: dict[int, list[Fingerprint]] = field(default_factory=dict)


def sentences(text: str) -> list[Sentence]:
    """The text's sentences, paragraph by paragraph (``READ_CHARS`` of it at most)."""
    out: list[Sentence] = []
    paragraph = 0
    for line in unicodedata.normalize("NFKC", text[:READ_CHARS]).splitlines():
        kept = kept_line(line)
        if kept is None or (len(kept) <= FURNITURE_LINE_CHARS and _FURNITURE.search(kept)):
            continue
        pieces = [m.group().strip() for m in _SENTENCE.finditer(kept)]
        found = [s for piece in pieces if piece for s in _bounded(piece)]
        for s in found:
            out.append(Sentence(paragraph, s, fingerprint(s)))
        paragraph += bool(found)
    return out


def _bounded(sentence: str) -> Iterable[str]:
    """The sentence, or pieces of it at most SENTENCE_MAX_CHARS long, cut at spaces (or
    anywhere, in a run without one)."""
    while len(sentence) > SENTENCE_MAX_CHARS:
        cut = sentence.rfind(" ", 0, SENTENCE_MAX_CHARS + 1)
        cut = cut if cut > 0 else SENTENCE_MAX_CHARS
        yield sentence[:cut].strip()
        sentence = sentence[cut:].strip()
    if sentence:
        yield sentence


def fingerprint(sentence: str) -> Fingerprint:
    """The sentence's normalised characters' SHINGLE-grams and its numbers (``3.50``,
    ``1,200``: separators dropped), hashed."""
    squeezed = "".join(sentence.casefold().translate(SPACING).split())
    if 0 < len(squeezed) < SHINGLE:
        squeezed = squeezed.ljust(SHINGLE, "\0")
    grams = (squeezed[i : i + SHINGLE] for i in range(len(squeezed) - SHINGLE + 1))
    numbers = ("#" + n.replace(",", "").replace(".", "") for n in _NUMBER.findall(sentence))
    return Fingerprint(frozenset(map(_hashed, grams)), frozenset(map(_hashed, numbers)))


def _hashed(text: str) -> int:
    value = zlib.crc32(text.encode())
    return value - (1 << 32) if value >= 1 << 31 else value


def repeats(later: Sequence[Fingerprint], earlier: Sequence[Fingerprint]) -> sp.csr_matrix:
    """Which of ``later`` repeat which of ``earlier`` (``[i, j]``: later[i] repeats
    earlier[j]; a sentence without a shingle of its own repeats nothing here: the caller
    drops it), from one sparse product of their shingle sets."""
    columns: dict[int, int] = {}
    left, right = (_incidence(p, columns) for p in (later, earlier))
    width = len(columns)
    shared = (_shaped(left, width) @ _shaped(right, width).T).tocoo()
    sizes = np.array([len(p.shingles) for p in later], dtype=np.float64)
    enough = shared.data >= REPEAT_CONTAINMENT * sizes[shared.row]
    rows, cols = shared.row[enough], shared.col[enough]
    pairs = zip(rows.tolist(), cols.tolist(), strict=True)
    numbered = np.fromiter(
        (later[i].numbers <= earlier[j].numbers for i, j in pairs), dtype=bool, count=len(rows)
    )
    rows, cols = rows[numbered], cols[numbered]
    return sp.csr_matrix(
        (np.ones(len(rows), dtype=bool), (rows, cols)), shape=(len(later), len(earlier))
    )


def _incidence(
    prints: Sequence[Fingerprint], columns: dict[int, int]
) -> tuple[np.ndarray, np.ndarray, int]:
    indices = [columns.setdefault(s, len(columns)) for p in prints for s in p.shingles]
    indptr = np.concatenate(([0], np.cumsum([len(p.shingles) for p in prints])))
    return np.asarray(indices, dtype=np.int64), indptr, len(prints)


def _shaped(incidence: tuple[np.ndarray, np.ndarray, int], width: int) -> sp.csr_matrix:
    indices, indptr, height = incidence
    data = np.ones(len(indices), dtype=np.float32)
    return sp.csr_matrix((data, indices, indptr), shape=(height, width))


class Carried:
    """Sentences read so far, in order: a sentence repeats what was added before it."""

    def __init__(self, sentences: Sequence[Fingerprint]) -> None:
        self._between = repeats(sentences, sentences).tocsc()
        self._blank = np.array([not p.shingles for p in sentences], dtype=bool)
        self.covered = self._blank.copy()  # repeats what was added, or has nothing of its own

    def take(self, index: int) -> bool:
        """Add sentence ``index`` unless it repeats one added before; whether it was added."""
        if self.covered[index]:
            return False
        column = self._between[:, index]
        self.covered[column.indices] = True
        return True


def representative(articles: Sequence[Article], centrality: Mapping[int, float]) -> Article | None:
    """The module's rule: the earliest of the most central articles with text."""
    candidates = [a for a in articles if a.has_text]
    if not candidates:
        return None
    measured = [centrality[a.id] for a in candidates if a.id in centrality]
    if measured:
        best = max(measured)
        candidates = [a for a in candidates if centrality.get(a.id, -math.inf) >= best - NEAR_TIE]
    return min(candidates, key=_time)


def build(
    issue: Issue,
    articles: Sequence[Article],
    *,
    at: datetime,
    centrality: Mapping[int, float],
    read_before: Mapping[int, Sequence[Fingerprint]],
    added: Iterable[int] = (),
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Built:
    """The dossier of ``issue`` at ``at``, the run's time; ``read_before``: the fingerprints of
    the texts earlier versions read, by article; ``added``: the articles this version added."""
    by_id = {a.id: a for a in articles}
    chosen = representative(articles, centrality)
    first = [chosen] if chosen is not None else []  # then the others by time
    with_text = first + sorted((a for a in articles if a.has_text and a is not chosen), key=_time)
    read, unread = _read(with_text)
    built = Built({})
    texts, repeated = _ordered(with_text, read)
    budgeted, over = _within(texts, max_chars)
    built.dossier = {
        "dossier_version": DOSSIER_VERSION,
        "issue": _issue(issue, articles),
        "made_at": format_time(at),
        "representative": None if chosen is None else _cited(chosen),
        "texts": [
            {**_cited(by_id[article_id]), "passages": passages} for article_id, passages in budgeted
        ],
        "left_out": {
            "repeated_sentences": repeated,
            "sentences_over_budget": over[0] + unread[0],
            "chars_over_budget": over[1] + unread[1],
        },
        "budget_chars": max_chars,
        **_without_text(articles),
        "added_article_ids": sorted(added),
        "new": _new(with_text, read, read_before, built),
        "size": story_size(articles, at),
    }
    return built


def _time(article: Article) -> tuple[datetime, int]:
    return article.at, article.id


def _issue(issue: Issue, articles: Sequence[Article]) -> dict[str, Any]:
    return {
        "id": issue.id,
        "version": issue.version,
        "state": issue.state,
        "category": issue.category,
        "first_article_at": format_time(issue.first_article_at),
        "last_article_at": format_time(issue.last_article_at),
        "size": issue.size,
        "outlets": sorted({a.outlet for a in articles}),
    }


def _without_text(articles: Sequence[Article]) -> dict[str, list[dict[str, Any]]]:
    """The copies, each with its original, and the other articles without text, each with
    why."""
    return {
        "copies": [
            {"id": a.id, "outlet": a.outlet, "copy_of": a.copy_of, "reason": a.copy_reason}
            for a in articles
            if a.copy_of is not None
        ],
        "without_text": [
            {"id": a.id, "outlet": a.outlet, "status": a.status, "reason": _why(a)}
            for a in articles
            if a.copy_of is None and not a.has_text
        ],
    }


def _cited(article: Article) -> dict[str, Any]:
    return {
        "article_id": article.id,
        "outlet": article.outlet,
        "title": article.title,
        "url": article.url,
        "published_at": format_time(article.published_at) if article.published_at else None,
    }


def _why(article: Article) -> str:
    if article.status is None:
        return "not_extracted_yet"
    if article.status == TEXT_OK:
        return "text_removed"  # kept ARTICLE_TEXT_RETENTION_DAYS, then emptied
    return article.reason or article.status


def _read(pool: Sequence[Article]) -> tuple[dict[int, list[Sentence]], tuple[int, int]]:
    """Each article's sentences, at most READ_SENTENCES in all: every article's first sentence
    before any article's second, and so on (a long article leaves no other unread); and those
    not read (sentences, characters)."""
    split = {a.id: sentences(a.text or "") for a in pool}
    places = sorted(
        (position, k, position) for k, a in enumerate(pool) for position in range(len(split[a.id]))
    )
    chosen = {(k, position) for _, k, position in places[:READ_SENTENCES]}
    read = {
        a.id: [s for position, s in enumerate(split[a.id]) if (k, position) in chosen]
        for k, a in enumerate(pool)
    }
    unread = [split[pool[k].id][position] for _, k, position in places[READ_SENTENCES:]]
    return read, (len(unread), sum(len(s.text) for s in unread))


def _ordered(
    pool: Sequence[Article], read: Mapping[int, list[Sentence]]
) -> tuple[list[tuple[int, list[Sentence]]], int]:
    """The articles with text (``pool``: the representative first, the others by time), each
    next the one whose sentences not yet carried add the most characters (the earliest on a
    tie), with the sentences each adds; and how many were left out as repeats."""
    flat = [(k, s) for k, a in enumerate(pool) for s in read[a.id]]
    owner = np.array([k for k, _ in flat], dtype=np.int64)
    chars = np.array([len(s.text) for _, s in flat], dtype=np.float64)
    starts = np.concatenate(([0], np.cumsum([len(read[a.id]) for a in pool])))
    carried = Carried([s.fingerprint for _, s in flat])
    done = np.zeros(len(pool), dtype=bool)
    order: list[tuple[int, list[Sentence]]] = []
    repeated = 0
    k = 0
    while len(order) < len(pool):
        done[k] = True
        adds = []
        for i in range(starts[k], starts[k + 1]):
            if carried.take(i):
                adds.append(flat[i][1])
            else:
                repeated += 1
        order.append((pool[k].id, adds))
        fresh = ~carried.covered
        gains = np.bincount(owner[fresh], weights=chars[fresh], minlength=len(pool))
        gains[done] = -1.0
        k = int(np.argmax(gains))  # the first of equals: the earliest
    return order, repeated


def _within(
    texts: list[tuple[int, list[Sentence]]], max_chars: int
) -> tuple[list[tuple[int, list[dict[str, Any]]]], tuple[int, int]]:
    """The sentences kept within ``max_chars``: the first paragraph of every article, then the
    second of every one, …; the first sentence that does not fit ends them. Each article's
    kept sentences as passages (one per paragraph), and what was left out (sentences,
    characters)."""
    places = sorted(
        (s.paragraph, k, position)
        for k, (_, adds) in enumerate(texts)
        for position, s in enumerate(adds)
    )
    room, kept = max_chars, set()
    for _, k, position in places:
        cost = len(texts[k][1][position].text) + 1  # and its separator
        if cost > room:
            break
        kept.add((k, position))
        room -= cost
    out = []
    for k, (article_id, adds) in enumerate(texts):
        passages: dict[int, list[str]] = defaultdict(list)
        for position, s in enumerate(adds):
            if (k, position) in kept:
                passages[s.paragraph].append(s.text)
        out.append(
            (article_id, [{"paragraph": p, "text": " ".join(t)} for p, t in passages.items()])
        )
    over = [
        s for k, (_, adds) in enumerate(texts) for p, s in enumerate(adds) if (k, p) not in kept
    ]
    return out, (len(over), sum(len(s.text) for s in over))


def _new(
    pool: Sequence[Article],
    read: Mapping[int, list[Sentence]],
    read_before: Mapping[int, Sequence[Fingerprint]],
    built: Built,
) -> dict[str, Any]:
    """The sentences of texts first read now that repeat nothing read before (nor each other,
    the texts taken by time); their fingerprints go to ``built.read``."""
    first_read = sorted((a for a in pool if a.id not in read_before), key=_time)
    flat = [(a.id, s) for a in first_read for s in read[a.id]]
    prints = [s.fingerprint for _, s in flat]
    carried = Carried(prints)
    earlier = list(islice((p for of in read_before.values() for p in of), CARRIED_MAX))
    if earlier and prints:
        carried.covered |= repeats(prints, earlier).getnnz(axis=1) > 0
    found = [
        {"article_id": article_id, "text": s.text}
        for i, (article_id, s) in enumerate(flat)
        if carried.take(i)
    ]
    for a in first_read:
        built.read[a.id] = [s.fingerprint for s in read[a.id]]
    return {
        "texts_read": [a.id for a in first_read],
        "sentences": found,
        "repeated_sentences": len(flat) - len(found),
        "nothing_new": not found,
    }


def story_size(articles: Sequence[Article], at: datetime) -> dict[str, Any]:
    """The counts a ranking reads, at ``at``, and the importance score (the module's formula)."""
    outlets = len({a.outlet for a in articles})
    last_hour = sum(at - timedelta(hours=1) <= a.collected_at <= at for a in articles)
    last_6h = sum(at - timedelta(hours=6) <= a.collected_at <= at for a in articles)
    originals = sorted((a for a in articles if a.copy_of is None), key=_time)
    first = originals[0] if originals else None
    follower = next((a for a in originals if first and a.outlet != first.outlet), None)
    return {
        "outlets": outlets,
        "articles": len(articles),
        "articles_last_hour": last_hour,
        "articles_last_6_hours": last_6h,
        "first_reporter": None
        if first is None
        else {"article_id": first.id, "outlet": first.outlet, "at": format_time(first.at)},
        "lead_seconds": None
        if first is None or follower is None
        else round((follower.at - first.at).total_seconds()),
        "importance": importance(outlets, last_6h, last_hour),
    }
