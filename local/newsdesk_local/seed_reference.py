"""The seed pipeline (seed 000) as its document writes it, for tests and benchmarks to measure
newsdesk against: never used by newsdesk itself.

- ``seed_clusters``: section 10's clustering — TF-IDF on titles (token ``\\w\\w+``), the dense
  cosine matrix, and the greedy pass (threshold 0.60, at least 3), returning indices.
- ``seed_collect``: the collection loop — one process walks every outlet and feed in order,
  ``requests.get(timeout=10)`` with a browser User-Agent, two failures stop an outlet, 0.1 s
  after each feed, feedparser, ``INSERT … ON CONFLICT (origin_url) DO NOTHING``.

``python -m newsdesk_local.seed_reference collect SOURCES [--timeout S]`` runs that loop as one
whole command on an embedded PostgreSQL in a temporary folder, as benchmarks time it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import feedparser
import numpy as np
import psycopg2
import psycopg2.extensions
import psycopg2.extras
import requests

from newsdesk.collect.photo import PhotoFilter
from newsdesk.core.settings import DEFAULT_PHOTO_TITLE_PATTERNS
from newsdesk.core.sources import Feed, group_by_outlet, load_sources

SEED_TABLE = (
    "CREATE TABLE IF NOT EXISTS raw_article (id BIGSERIAL PRIMARY KEY, origin_url TEXT UNIQUE,"
    " source TEXT, category TEXT, title TEXT, published TEXT)"
)


def seed_clusters(
    titles: Sequence[str], threshold: float = 0.60, min_size: int = 3
) -> list[list[int]]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    vectorizer = TfidfVectorizer(token_pattern=r"(?u)\b\w\w+\b")  # noqa: S106
    try:
        tfidf_matrix = vectorizer.fit_transform(titles)
        cosine_sim = cosine_similarity(tfidf_matrix)
    except ValueError:  # empty vocabulary: the seed crashes; every similarity is 0
        cosine_sim = np.zeros((len(titles), len(titles)))
    visited = [False] * len(titles)
    clusters = []
    for i in range(len(titles)):
        if visited[i]:
            continue
        similar_indices = [
            j for j, score in enumerate(cosine_sim[i]) if score >= threshold and not visited[j]
        ]
        if len(similar_indices) >= min_size:
            clusters.append(similar_indices)
            for idx in similar_indices:
                visited[idx] = True
    return clusters


def seed_collect(
    feeds: Sequence[Feed], conn: psycopg2.extensions.connection, timeout: float = 10.0
) -> tuple[int, int, int]:
    """(new articles, failed feeds, feeds skipped after two failures)."""
    photo = PhotoFilter(DEFAULT_PHOTO_TITLE_PATTERNS)
    headers = {"User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"}
    new = failed = skipped = 0
    for outlet in group_by_outlet(feeds):
        fail_count = 0
        for index, feed in enumerate(outlet.feeds):
            try:
                response = requests.get(feed.url, headers=headers, timeout=timeout)
                response.raise_for_status()
                parsed = feedparser.parse(response.content)
                articles = _seed_rows(parsed, outlet.name, feed.category, photo)
                with conn, conn.cursor() as cursor:
                    inserted = psycopg2.extras.execute_values(
                        cursor,
                        "INSERT INTO raw_article (origin_url, source, category, title, published)"
                        " VALUES %s ON CONFLICT (origin_url) DO NOTHING RETURNING id",
                        articles,
                        fetch=True,
                    )
                new += len(inserted)
            except Exception:  # the seed's own catch-all
                failed += 1
                fail_count += 1
                if fail_count >= 2:
                    skipped += len(outlet.feeds) - index - 1
                    break
            finally:
                time.sleep(0.1)
    return new, failed, skipped


def _seed_rows(
    parsed: Any, source: str, category: str, photo: PhotoFilter
) -> list[tuple[Any, ...]]:
    """The seed's rows of one parsed feed: every entry with a link, photo news left out."""
    return [
        (e.get("link"), source, category, e.get("title", "제목 없음"), e.get("published"))
        for e in parsed.entries
        if not photo.is_photo(e.get("title", "")) and e.get("link")
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the seed's collection loop, one round")
    parser.add_argument("command", choices=["collect"])
    parser.add_argument("sources", type=Path)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        folder = Path(tempfile.mkdtemp(prefix="seed-"))
        postgres = pgserver.get_server(folder / "pg", cleanup_mode="delete")
    conn = psycopg2.connect(postgres.get_uri())
    with conn, conn.cursor() as cursor:
        cursor.execute(SEED_TABLE)
    new, failed, skipped = seed_collect(load_sources(args.sources), conn, args.timeout)
    conn.close()
    print(f"seed: {new} new, {failed} failed, {skipped} skipped")


if __name__ == "__main__":
    main()
