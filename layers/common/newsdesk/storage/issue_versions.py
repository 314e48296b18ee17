"""An issue version's event written with its dossier (issue 40), in the transaction that makes
the version: the event's detail (``storage.issue_events``) with the dossier's reference, and the
dossier itself (``core.dossier``, from the issue's articles as they are then), kept with the
outbox row; the fingerprints of the texts it read first kept with the issue, for the next
version's "what is new". Apart from ``issue_events``, so that what only reads the outbox (the
relay, the read function) loads no numeric stack."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg2.extras import Json

from newsdesk.core import dossier
from newsdesk.core.settings import ClusterSettings
from newsdesk.storage.issue_events import (
    CLOSED,
    detail_as_seen,
    dossier_json,
    dossier_key,
    fit_detail,
    last_dossier,
)


@dataclass(frozen=True)
class DossierPolicy:
    """How a version's dossier is made: its texts' budget, and each member's similarity to the
    rest of its issue as the clustering measured it (by article id; the representative's
    rule reads it)."""

    max_chars: int = ClusterSettings.dossier_max_chars
    centrality: Mapping[int, float] = field(default_factory=dict)


def write_event(
    cursor: Any,
    issue_id: int,
    event_type: str,
    added: Sequence[int],
    at: datetime,
    policy: DossierPolicy | None = None,
) -> None:
    """The issue's event for its current version, from the issue as this transaction sees it
    (so within the change's transaction), with its dossier (but ``IssueClosed``'s). A version
    has one event: writing it again is a no-op."""
    detail = detail_as_seen(cursor, issue_id, added, at)
    version = int(detail["version"])
    made = None
    if event_type == CLOSED:  # the last version's dossier: nothing new is written
        detail["dossier"] = last_dossier(cursor, issue_id, version - 1)
    else:
        made = _dossier(cursor, issue_id, detail, added, at, policy or DossierPolicy())
        body = made[0].encode()
        detail["dossier"] = {
            "key": dossier_key(issue_id, version),
            "size": len(body),
            "sha256": hashlib.sha256(body).hexdigest(),
        }
    cursor.execute(
        """
        INSERT INTO issue_event (issue_id, version, type, detail, dossier)
        VALUES (%s, %s, %s, %s, %s)
        ON CONFLICT (issue_id, version) DO NOTHING
        RETURNING 1
        """,
        (issue_id, version, event_type, Json(fit_detail(detail)), made and made[0]),
    )
    if made is not None and cursor.fetchone() is not None:
        _remember_read(cursor, issue_id, version, made[1])


# An issue's articles as its dossier reads them (a text's first READ_CHARS at most).
_ISSUE_ARTICLES = """
    SELECT a.id, a.source, a.title, a.origin_url, a.published_at, a.collected_at,
           e.status, e.reason, left(e.text, %s), e.copy_of, e.copy_reason
    FROM raw_article a LEFT JOIN article_extraction e ON e.article_id = a.id
    WHERE a.issue_id = %s
    ORDER BY a.id
"""


def _dossier(
    cursor: Any,
    issue_id: int,
    detail: Mapping[str, Any],
    added: Sequence[int],
    at: datetime,
    policy: DossierPolicy,
) -> tuple[str, dict[int, list[dossier.Fingerprint]]]:
    """The version's dossier as the JSON it is kept and published as, and the fingerprints of
    the texts it read first."""
    cursor.execute(_ISSUE_ARTICLES, (dossier.READ_CHARS, issue_id))
    articles = [dossier.Article(*row) for row in cursor.fetchall()]
    issue = dossier.Issue(
        issue_id,
        int(detail["version"]),
        str(detail["state"]),
        str(detail["category"]),
        datetime.fromisoformat(detail["first_article_at"]),
        datetime.fromisoformat(detail["last_article_at"]),
        int(detail["size"]),
    )
    built = dossier.build(
        issue,
        articles,
        at=at,
        centrality=policy.centrality,
        read_before=_read_before(cursor, issue_id),
        added=added,
        max_chars=policy.max_chars,
    )
    return dossier_json(built.dossier), built.read


def _read_before(cursor: Any, issue_id: int) -> dict[int, list[dossier.Fingerprint]]:
    """The fingerprints of the texts the issue's earlier versions read, by article, the newest
    first."""
    cursor.execute(
        "SELECT article_id, fingerprints FROM issue_text_read WHERE issue_id = %s"
        " ORDER BY version DESC, article_id DESC",
        (issue_id,),
    )
    return {
        int(article_id): [
            dossier.Fingerprint(frozenset(shingles), frozenset(numbers))
            for shingles, numbers in prints
        ]
        for article_id, prints in cursor.fetchall()
    }


def _remember_read(
    cursor: Any, issue_id: int, version: int, read: Mapping[int, list[dossier.Fingerprint]]
) -> None:
    for article_id, prints in sorted(read.items()):
        cursor.execute(
            "INSERT INTO issue_text_read (issue_id, article_id, version, fingerprints) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (
                issue_id,
                article_id,
                version,
                Json([[sorted(p.shingles), sorted(p.numbers)] for p in prints]),
            ),
        )
