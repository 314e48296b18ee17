"""Near-copies of articles: the shingle size, the threshold and MIN_SHARED, measured (issue 14,
point 4).

    .venv/bin/python benchmarks/near_duplicates.py
    .venv/bin/python benchmarks/near_duplicates.py --data PATH --sizes 4,5,6,7,8 --rounds 5

Two sets of pairs, each of near-copies (positives) and of different articles (negatives):

- **English**: the true texts of the article-extraction benchmark (``ground-truth.json``, by
  default ``../shared/data/article-extraction`` beside the repository, else
  /work/shared/data/article-extraction). Each text is edited as a republished wire copy is
  (``EDITS``: a new lead sentence, a byline and copyright lines, a changed dateline, a
  paragraph dropped, a paragraph added, and all five at once), each edit by a random number
  generator seeded with the text's key and the edit's name, so every run makes the same
  copies. Negatives: every pair of distinct articles.
- **Korean**: tests/pages/wire/ (its README): each agency story against its two republished
  copies (positives; the two copies against each other are shown apart), and negatives the
  other agency's own report of the same event against the story and its copies ("same
  event"), and all pairs of texts about different events.

Printed: per shingle size, each kind of pair's estimated similarity (min, 5th percentile,
median, 95th percentile, max) and the CPU microseconds per sketch; then, at newsdesk's shingle
size, the exact Jaccard similarity beside the estimate, precision and recall over a range of
thresholds, the chosen threshold's recall per edit, and how many pairs at or above it share
at least MIN_SHARED sketch values (the store's candidates: it must be all of them), with the
share of negatives that would be fetched as candidates.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from newsdesk.core import similar

ROOT = Path(__file__).resolve().parents[1]
WIRE = ROOT / "tests" / "pages" / "wire"
CANDIDATES = (
    ROOT.parent / "shared" / "data" / "article-extraction",
    Path("/work/shared/data/article-extraction"),
)
SEED = 14
THRESHOLDS = (0.25, 0.30, 0.35, 0.45)
EVERYTHING = 1 << 30  # a sketch size that keeps every shingle: the exact set

NAMES = ("Maria Lopez", "James O'Neill", "Priya Natarajan", "Tom Becker", "Aiko Tanaka")
OUTLETS = ("The Daily Ledger", "Harbor Times", "Metro Wire", "Northern Courier")
DATELINES = ("WASHINGTON (AP) — ", "LONDON (Reuters) - ", "NEW YORK (AP) — ", "PARIS (AFP) - ")
_SENTENCE_END = re.compile(r"(?<=[.!?\"”])\s+(?=[A-Z\"“])")


def default_data() -> Path:
    for path in CANDIDATES:
        if (path / "ground-truth.json").is_file():
            return path
    return CANDIDATES[0]


# --- the English copies --------------------------------------------------------------------


@dataclass(frozen=True)
class Article:
    key: str
    paragraphs: list[str]


def articles(data: Path) -> list[Article]:
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    found = []
    for key in sorted(truth):
        paragraphs = [p.strip() for p in (truth[key].get("articleBody") or "").splitlines()]
        if any(paragraphs):
            found.append(Article(key, [p for p in paragraphs if p]))
    return found


def sentences(paragraph: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(paragraph) if s.strip()]


class Copier:
    """Wire-copy edits of one article, with other articles' text to draw new sentences and
    paragraphs from (a republisher's own lead or paragraph is text the original lacks)."""

    def __init__(self, pool: Sequence[Article]) -> None:
        self.pool = pool

    def _other(self, rng: random.Random, article: Article) -> Article:
        while True:
            other = rng.choice(self.pool)
            if other.key != article.key:
                return other

    def lead(self, rng: random.Random, article: Article, paragraphs: list[str]) -> list[str]:
        """The first sentence replaced by another article's sentence (an article of one
        sentence keeps it, after the new one: replacing it would leave nothing of it)."""
        first = sentences(paragraphs[0])
        donor = [s for p in self._other(rng, article).paragraphs for s in sentences(p)]
        lead = rng.choice([s for s in donor if len(s) >= 40] or donor)
        if sum(len(sentences(p)) for p in article.paragraphs) == 1:
            return [f"{lead} {paragraphs[0]}", *paragraphs[1:]]
        first[0] = lead
        return [" ".join(first), *paragraphs[1:]]

    def byline(self, rng: random.Random, article: Article, paragraphs: list[str]) -> list[str]:
        """A byline on top, the reporter's address and a copyright notice below."""
        name, outlet = rng.choice(NAMES), rng.choice(OUTLETS)
        address = name.split()[-1].lower().replace("'", "") + "@" + outlet.split()[-1].lower()
        return [
            f"By {name}, {outlet}",
            *paragraphs,
            f"{address}.example",
            f"Copyright 2026 {outlet}. All rights reserved.",
        ]

    def dateline(self, rng: random.Random, article: Article, paragraphs: list[str]) -> list[str]:
        """A dateline put before the first paragraph (replacing a parenthesised one)."""
        first = re.sub(r"^\S*\s*\([A-Za-z .]{1,20}\)\s*[-—–]*\s*", "", paragraphs[0])
        return [rng.choice(DATELINES) + first, *paragraphs[1:]]

    def drop(self, rng: random.Random, article: Article, paragraphs: list[str]) -> list[str]:
        """One paragraph after the first dropped (of a one-paragraph text, one sentence)."""
        if len(paragraphs) > 1:
            index = rng.randrange(1, len(paragraphs))
            return paragraphs[:index] + paragraphs[index + 1 :]
        parts = sentences(paragraphs[0])
        if len(parts) > 1:
            del parts[rng.randrange(1, len(parts))]
        return [" ".join(parts)]

    def add(self, rng: random.Random, article: Article, paragraphs: list[str]) -> list[str]:
        """Another article's paragraph inserted after the first paragraph or later."""
        donor = self._other(rng, article).paragraphs
        paragraph = rng.choice([p for p in donor if len(p) >= 80] or donor)
        index = rng.randrange(1, len(paragraphs) + 1)
        return [*paragraphs[:index], paragraph, *paragraphs[index:]]

    def edits(self) -> dict[str, Callable[[random.Random, Article, list[str]], list[str]]]:
        return {
            "lead": self.lead,
            "byline": self.byline,
            "dateline": self.dateline,
            "drop": self.drop,
            "add": self.add,
        }

    def copies(self, article: Article) -> dict[str, str]:
        """Each edit alone, and all of them in turn ("all")."""
        out: dict[str, str] = {}
        edits = self.edits()
        for name, edit in edits.items():
            rng = random.Random(f"{SEED}:{article.key}:{name}")
            out[name] = "\n".join(edit(rng, article, list(article.paragraphs)))
        rng = random.Random(f"{SEED}:{article.key}:all")
        paragraphs = list(article.paragraphs)
        for edit in (edits["drop"], edits["add"], edits["lead"], edits["dateline"]):
            paragraphs = edit(rng, article, paragraphs)
        out["all"] = "\n".join(edits["byline"](rng, article, paragraphs))
        return out


# --- the pairs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    group: str  # what is printed: "en copy (lead)", "ko same event", …
    a: str
    b: str
    positive: bool
    language: str  # "en" or "ko"


def english_pairs(data: Path) -> list[Pair]:
    found = articles(data)
    copier = Copier(found)
    pairs = []
    for article in found:
        original = "\n".join(article.paragraphs)
        for edit, copy in copier.copies(article).items():
            pairs.append(Pair(f"en copy ({edit})", original, copy, True, "en"))
    for first, second in itertools.combinations(found, 2):
        a, b = "\n".join(first.paragraphs), "\n".join(second.paragraphs)
        pairs.append(Pair("en different articles", a, b, False, "en"))
    return pairs


def korean_pairs(wire: Path) -> list[Pair]:
    stories = {
        folder.name: {path.stem: path.read_text(encoding="utf-8") for path in folder.glob("*.txt")}
        for folder in sorted(wire.iterdir())
        if folder.is_dir()
    }
    pairs = []
    for texts in stories.values():
        for copy in ("copy-a", "copy-b"):
            pairs.append(Pair("ko copy", texts["original"], texts[copy], True, "ko"))
            pairs.append(Pair("ko same event", texts["other"], texts[copy], False, "ko"))
        pairs.append(Pair("ko copy of a copy", texts["copy-a"], texts["copy-b"], True, "ko"))
        pairs.append(Pair("ko same event", texts["other"], texts["original"], False, "ko"))
    named = [(story, text) for story, texts in stories.items() for text in texts.values()]
    for (story, a), (other, b) in itertools.combinations(named, 2):
        if story != other:
            pairs.append(Pair("ko different events", a, b, False, "ko"))
    return pairs


# --- measuring -----------------------------------------------------------------------------


def summary(values: Sequence[float]) -> str:
    ordered = sorted(values)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    return (
        f"{ordered[0]:5.2f} {at(0.05):5.2f} {statistics.median(ordered):6.2f}"
        f" {at(0.95):5.2f} {ordered[-1]:5.2f}"
    )


def sketches(texts: Iterable[str], shingle_size: int, size: int) -> dict[str, list[int]]:
    return {text: similar.sketch(text, shingle_size=shingle_size, size=size) for text in texts}


def cpu_per_sketch(texts: Sequence[str], shingle_size: int, rounds: int) -> float:
    """Least process-time microseconds per sketch over the rounds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for text in texts:
            similar.sketch(text, shingle_size=shingle_size)
        best = min(best, (time.process_time() - start) * 1e6 / len(texts))
    return best


def scored(pairs: Sequence[Pair], by_text: dict[str, list[int]]) -> list[tuple[Pair, float]]:
    return [(pair, similar.similarity(by_text[pair.a], by_text[pair.b])) for pair in pairs]


def groups(rows: Sequence[tuple[Pair, float]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for pair, value in rows:
        out.setdefault(pair.group, []).append(value)
    return out


def precision_recall(rows: Sequence[tuple[Pair, float]], threshold: float) -> tuple[float, float]:
    found = [pair.positive for pair, value in rows if value >= threshold]
    positives = sum(1 for pair, _ in rows if pair.positive)
    hits = sum(found)
    return (hits / len(found) if found else 1.0), (hits / positives if positives else 1.0)


def by_language(
    rows: Sequence[tuple[Pair, float]],
) -> tuple[list[tuple[Pair, float]], list[tuple[Pair, float]]]:
    return [r for r in rows if r[0].language == "en"], [r for r in rows if r[0].language == "ko"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the extraction benchmark")
    parser.add_argument("--sizes", default="4,5,6,7,8", help="shingle sizes to compare")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per shingle size")
    args = parser.parse_args()
    data = args.data or default_data()
    pairs = english_pairs(data) + korean_pairs(WIRE)
    texts = sorted({text for pair in pairs for text in (pair.a, pair.b)})
    counts = groups([(pair, 0.0) for pair in pairs])
    print(f"{len(texts)} texts from {data} and {WIRE.relative_to(ROOT)}; pairs:")
    print("  " + ", ".join(f"{group} {len(values)}" for group, values in counts.items()))
    print(f"sketch size {similar.SKETCH_SIZE}; estimated similarity min / p5 / median / p95 / max")
    print(f"{'n':>2s} {'pairs':24s} {'min':>5s} {'p5':>5s} {'median':>6s} {'p95':>5s} {'max':>5s}")
    sizes = [int(size) for size in args.sizes.split(",")]
    for n in sizes:
        rows = scored(pairs, sketches(texts, n, similar.SKETCH_SIZE))
        for group, values in groups(rows).items():
            print(f"{n:2d} {group:24s} {summary(values)}")
        recalls = []
        for t in THRESHOLDS:
            (_, er), (_, kr) = (precision_recall(part, t) for part in by_language(rows))
            false = sum(1 for pair, value in rows if value >= t and not pair.positive)
            recalls.append(f"{t:.2f}: {er:.3f} {kr:.3f} ({false} false)")
        print(f"{n:2d} recall en ko at " + ", ".join(recalls))
        micros = cpu_per_sketch(texts, n, max(1, args.rounds))
        chars = statistics.mean(len(text) for text in texts)
        print(f"{n:2d} CPU {micros:.0f} µs per sketch (texts of {chars:.0f} characters on average)")

    n, threshold = similar.SHINGLE_SIZE, similar.NEAR_DUPLICATE_THRESHOLD
    by_text = sketches(texts, n, similar.SKETCH_SIZE)
    rows = scored(pairs, by_text)
    exact = scored(pairs, sketches(texts, n, EVERYTHING))
    print(f"\nn = {n}: exact Jaccard beside the estimate (min / p5 / median / p95 / max)")
    estimated = groups(rows)
    for group, values in groups(exact).items():
        print(f"   {group:24s} exact {summary(values)}   estimate {summary(estimated[group])}")
    print(f"\nn = {n}: precision / recall by threshold (copies of a copy counted as positives)")
    print(f"{'threshold':>9s} {'en P':>6s} {'en R':>6s} {'ko P':>6s} {'ko R':>6s}")
    english, korean = by_language(rows)
    for step in range(20, 62, 5):
        t = step / 100
        (ep, er), (kp, kr) = precision_recall(english, t), precision_recall(korean, t)
        print(f"{t:9.2f} {ep:6.3f} {er:6.3f} {kp:6.3f} {kr:6.3f}")

    print("\nthe highest negatives:")
    for pair, value in sorted((r for r in rows if not r[0].positive), key=lambda r: -r[1])[:5]:
        print(f"   {value:.2f} {pair.group:24s} {pair.a[:30]!r} / {pair.b[:30]!r}")
    for size in (similar.SKETCH_SIZE // 2, similar.SKETCH_SIZE * 2):
        other = scored(pairs, sketches(texts, n, size))
        (ep, er), (kp, kr) = (precision_recall(part, threshold) for part in by_language(other))
        print(
            f"sketch size {size} instead, at {threshold}: en P {ep:.3f} R {er:.3f},"
            f" ko P {kp:.3f} R {kr:.3f}"
        )
    print(f"\nchosen: n = {n}, threshold {threshold}, MIN_SHARED {similar.MIN_SHARED}")
    for name, subset in (("en", english), ("ko", korean)):
        p, r = precision_recall(subset, threshold)
        false = sum(1 for pair, value in subset if value >= threshold and not pair.positive)
        print(f"   {name}: precision {p:.3f}, recall {r:.3f}, {false} false near-copies")
    print("   recall by kind of copy:")
    for group, values in estimated.items():
        if any(pair.positive for pair, _ in rows if pair.group == group):
            caught = sum(1 for value in values if value >= threshold)
            print(f"      {group:24s} {caught}/{len(values)}")
    above = [pair for pair, value in rows if value >= threshold]
    shared = [similar.shared(by_text[pair.a], by_text[pair.b]) for pair in above]
    kept = sum(1 for count in shared if count >= similar.MIN_SHARED)
    print(
        f"   pairs at or above the threshold sharing >= MIN_SHARED values: {kept}/{len(above)}"
        f" (fewest shared: {min(shared) if shared else '-'})"
    )
    negatives = [pair for pair, _ in rows if not pair.positive]
    loaded = sum(
        1
        for pair in negatives
        if similar.shared(by_text[pair.a], by_text[pair.b]) >= similar.MIN_SHARED
    )
    print(f"   negatives that would be fetched as candidates: {loaded}/{len(negatives)}")


if __name__ == "__main__":
    main()
