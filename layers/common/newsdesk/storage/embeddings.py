"""Each article's title vector (issue 38, migration 0013): read for a window, written once.

A vector is kept with the model that made it and the title it was made of; one of another
model, or of a title the outlet has since revised, is not read (the caller embeds it again and
``store`` overwrites it). Vectors travel as float32 bytes, little-endian."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from psycopg2.extras import execute_values

from newsdesk.storage.database import Database

_FLOAT32 = np.dtype("<f4")


def stored(database: Database, article_ids: Sequence[int], model: str) -> dict[int, np.ndarray]:
    """The vectors of ``model`` kept for these articles' current titles, by article id."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            SELECT e.article_id, e.vector FROM article_embedding e
            JOIN raw_article a ON a.id = e.article_id AND a.title = e.title
            WHERE e.article_id = ANY(%s) AND e.model = %s
            """,
            (list(article_ids), model),
        )
        return {
            int(article_id): np.frombuffer(bytes(vector), dtype=_FLOAT32)
            for article_id, vector in cursor.fetchall()
        }


def store(database: Database, model: str, rows: Iterable[tuple[int, str, np.ndarray]]) -> int:
    """Keep ``(article_id, title, vector)`` rows of ``model``, replacing an article's earlier
    vector; how many."""
    values = [
        (article_id, model, title, np.asarray(vector, dtype=_FLOAT32).tobytes())
        for article_id, title, vector in rows
    ]
    if not values:
        return 0
    with database.transaction() as cursor:
        execute_values(
            cursor,
            """
            INSERT INTO article_embedding (article_id, model, title, vector) VALUES %s
            ON CONFLICT (article_id) DO UPDATE SET model = EXCLUDED.model,
                title = EXCLUDED.title, vector = EXCLUDED.vector, embedded_at = now()
            """,
            values,
        )
    return len(values)


def without_vector(
    database: Database, model: str, limit: int, after: int = 0
) -> list[tuple[int, str]]:
    """Up to ``limit`` articles (id above ``after``, ascending) whose current title has no
    vector of ``model``: ``(id, title)``."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            SELECT a.id, a.title FROM raw_article a
            LEFT JOIN article_embedding e
              ON e.article_id = a.id AND e.model = %s AND e.title = a.title
            WHERE e.article_id IS NULL AND a.id > %s
            ORDER BY a.id LIMIT %s
            """,
            (model, after, limit),
        )
        return [(int(i), str(t)) for i, t in cursor.fetchall()]
